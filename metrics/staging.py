"""A command's output files written all or nothing.

A command writes several files that belong together (``result.csv`` with its ``explanations.jsonl`` and
``config.yaml``; a job's ``scores.jsonl`` with its ``summary.json``; the three leaderboard files). Writing
them one by one into the folder means a full disk half way leaves new files beside old ones, which read
as one consistent run. So :func:`staged` has them written into a hidden staging folder *inside* the
target folder first -- the same file system, so moving a file in is a rename that needs no free space --
flushed to disk (a full disk often shows only when the data is flushed), and only then moved in, each
old file set aside until every new one is in place. A failure at any point leaves the folder's files
as they were.

The staging folder is inside the target, not beside it, because the target may be the current folder
(``out=.``) or hold the user's own files, so it cannot be swapped as a whole, and its parent may not be
writable.

Every stage writes output files (``gen`` its test set, ``harness`` its results and boards) and ``metrics`` is
the leaf package they all may import, so this lives here.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Name prefix of the staging folder inside a target folder (removed when the write ends, either way).
STAGING_PREFIX = ".ragsweep-staging-"
_OLD = ".ragsweep-replaced"  # inside the staging folder: the entries the new ones replace

#: Errors that mean the path or its permissions are wrong (the user's to fix: exit code 2), rather than
#: the machine failing half way (a full disk, an I/O error).
PATH_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.ENOENT,
                         errno.ENAMETOOLONG, errno.EEXIST})


@contextmanager
def staged(folder: Path) -> Iterator[Path]:
    """Yield a staging folder to write into; on a clean exit move everything written there into ``folder``.

    Every top-level entry of the staging folder (a file or a folder) replaces the entry of that name in
    ``folder``; other entries of ``folder`` are left alone. If the body raises, or flushing or moving
    fails, ``folder`` keeps the entries it had (a folder this call created is removed again) and the
    error propagates.

    Raises:
        OSError: The staging folder could not be made, written, flushed or moved in.
    """
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    except OSError:
        _remove_if_empty(folder, created)
        raise
    try:
        yield tmp
        _flush(tmp)
        _swap_in(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_if_empty(folder, created)
        raise
    shutil.rmtree(tmp, ignore_errors=True)


def _remove_if_empty(folder: Path, created: bool) -> None:
    if created:
        try:
            folder.rmdir()
        except OSError:
            pass


def _flush(tmp: Path) -> None:
    """fsync every staged file: with delayed allocation a full disk may surface only here."""
    for path in tmp.rglob("*"):
        if path.is_file() and not path.is_symlink():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _swap_in(tmp: Path, folder: Path) -> None:
    """Move ``tmp``'s entries into ``folder``; on a failure put every entry back as it was."""
    old = tmp / _OLD
    old.mkdir()
    moved: list[str] = []  # names now holding the new entry
    kept: list[str] = []  # names whose old entry is in ``old``
    try:
        for entry in sorted(p for p in tmp.iterdir() if p != old):
            target = folder / entry.name
            if target.exists() or target.is_symlink():
                os.replace(target, old / entry.name)
                kept.append(entry.name)
            os.replace(entry, target)
            moved.append(entry.name)
    except BaseException:
        for name in moved:
            _remove(folder / name)
        for name in kept:
            try:
                os.replace(old / name, folder / name)
            except OSError:  # put back what can be; the rest stays in the staging folder, not deleted
                tmp.rename(tmp.with_name(tmp.name.replace(STAGING_PREFIX, ".ragsweep-unrestored-")))
                raise
        raise


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def is_path_problem(exc: OSError) -> bool:
    """Whether a failed write is the path's or its permissions' fault (exit code 2) rather than the machine's."""
    return exc.errno in PATH_ERRNOS or isinstance(exc, (PermissionError, NotADirectoryError, IsADirectoryError))
