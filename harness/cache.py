"""Content-addressed on-disk cache for chunks, embeddings, indexes and search results.

A key is the sha256 of a canonical JSON of everything that changes the result (corpus fingerprint,
chunker parameters, embedder identity, index parameters...). Writes go to a temporary file in the
same folder and are renamed into place, so a crash or a parallel job never leaves a half file, and
two jobs that compute the same entry at once both end with a complete one.

Every entry carries a checksum (sha256 of its bytes): a file entry in a ``<file>.sha256`` beside it, a
folder entry (a BM25 index) in its ``.complete`` marker. An entry whose bytes do not match, or that
cannot be loaded, is moved aside into ``<cache>/quarantine/<kind>/``, named in one warning, and computed
again -- never used, never failing every run, never deleted unseen. An entry without a checksum (written
before checksums, or by a writer stopped between the entry and its checksum) is a miss: it is computed
again and overwritten, since nothing tells a sound one from flipped bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ragsweep.metrics import scrub_all

T = TypeVar("T")
log = logging.getLogger(__name__)

#: The folder of a cache root that bad entries are moved into.
QUARANTINE = "quarantine"
_MISS: Any = object()


def make_key(*parts: Any) -> str:
    """sha256 (hex, 32 chars) of the canonical JSON of ``parts``."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _umask() -> int:
    """The process's umask, read without changing it where the OS allows (Linux), so no other
    thread ever creates a file under a wrong umask."""
    try:
        with open("/proc/self/status", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``.

    The file gets the permissions a plain ``open(path, "w")`` would give it (0o666 less the umask),
    not the owner-only 0o600 of the temporary file: caches and sweep folders are often shared.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            os.fchmod(fd, 0o666 & ~_umask())
        finally:
            os.close(fd)
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    """A run's record (a summary, a marker), every string scrubbed of credentials (:func:`metrics.errors.scrub_all`)."""
    _write_raw_json(path, scrub_all(obj))


def _write_raw_json(path: Path, obj: Any) -> None:
    # Cache entries hold the corpus's own text, kept exact: scrubbing would change what the chunks say.
    atomic_write(path, lambda tmp: Path(tmp).write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8"))


def file_digest(path: Path) -> str:
    """sha256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def folder_digest(path: Path) -> str:
    """sha256 (hex) over a folder's files, each by its relative name and bytes (``.complete`` left out)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and p.name != ".complete"):
        digest.update(f"{file.relative_to(path).as_posix()}\0{file_digest(file)}\n".encode())
    return digest.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


class Cache:
    """A folder of entries ``<kind>/<key>.<ext>``; ``enabled=False`` computes everything afresh."""

    def __init__(self, root: str | Path, enabled: bool = True) -> None:
        self.root = Path(root).expanduser()
        self.enabled = enabled
        self.hits = 0
        self.misses = 0
        self.quarantined: list[Path] = []  # where this process moved bad entries

    def path(self, kind: str, key: str, ext: str) -> Path:
        return self.root / kind / f"{key}.{ext}"

    def quarantine(self, path: Path, reason: str) -> None:
        """Move a bad entry (and its checksum) into ``<root>/quarantine/<kind>/`` and say so once."""
        kind = path.parent.relative_to(self.root) if path.parent != self.root else Path(".")
        dest = self.root / QUARANTINE / kind / f"{path.name}.{time.time_ns()}"
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
        except FileNotFoundError:  # another job moved or replaced it first
            return
        except OSError as exc:  # cannot move it: remove it, so it fails no later run
            log.warning("cache entry %s %s; it could not be moved aside (%s) and is removed", path, reason,
                        exc.strerror or exc)
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            return
        if _sidecar(path).exists():
            os.replace(_sidecar(path), dest.with_name(dest.name + ".sha256"))
        self.quarantined.append(dest)
        log.warning("cache entry %s %s; moved to %s and computed again", path, reason, dest)

    def _checked(self, path: Path, load: Callable[[Path], T]) -> T:
        """The entry loaded if its checksum holds, else :data:`_MISS` (a bad entry quarantined)."""
        try:
            expected = _sidecar(path).read_text(encoding="utf-8").strip()
            digest = file_digest(path)
        except FileNotFoundError:
            # No checksum (see the module docstring), or another job removed the entry since it was
            # seen (embedding blocks are removed once their stage is cached): computed again.
            return _MISS
        return self._load_if(digest == expected, path, load)

    def _get(self, path: Path, load: Callable[[Path], T], compute: Callable[[], T],
             save: Callable[[Path, T], None]) -> T:
        if self.enabled and path.is_file():
            value = self._checked(path, load)
            if value is not _MISS:
                self.hits += 1
                return value
        self.misses += 1
        value = compute()
        if self.enabled:
            save(path, value)
            # After the entry: a reader never finds a checksum for an entry not yet in place.
            digest = file_digest(path)
            atomic_write(_sidecar(path), lambda tmp: Path(tmp).write_text(digest, encoding="utf-8"))
        return value

    def discard(self, kind: str, key: str, ext: str) -> None:
        """Remove an entry and its checksum, if there."""
        path = self.path(kind, key, ext)
        _sidecar(path).unlink(missing_ok=True)  # first: a checksum never outlives its entry
        path.unlink(missing_ok=True)

    def json(self, kind: str, key: str, compute: Callable[[], Any]) -> Any:
        return self._get(self.path(kind, key, "json"),
                         lambda p: json.loads(p.read_text(encoding="utf-8")), compute, _write_raw_json)

    def array(self, kind: str, key: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
        def save(p: Path, v: np.ndarray) -> None:
            def write(tmp: str) -> None:
                with open(tmp, "wb") as fh:
                    np.save(fh, v, allow_pickle=False)
            atomic_write(p, write)

        return self._get(self.path(kind, key, "npy"), lambda p: np.load(p, allow_pickle=False), compute, save)

    def arrays(self, kind: str, key: str, compute: Callable[[], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        def load(p: Path) -> dict[str, np.ndarray]:
            with np.load(p, allow_pickle=False) as z:
                return {k: z[k] for k in z.files}

        def save(p: Path, v: dict[str, np.ndarray]) -> None:
            def write(tmp: str) -> None:
                with open(tmp, "wb") as fh:
                    np.savez(fh, **v)
            atomic_write(p, write)

        return self._get(self.path(kind, key, "npz"), load, compute, save)

    def faiss_index(self, key: str, compute: Callable[[], Any]) -> Any:
        import faiss

        def save(p: Path, index: Any) -> None:
            atomic_write(p, lambda tmp: faiss.write_index(index, tmp))

        return self._get(self.path("index", key, "faiss"), lambda p: faiss.read_index(str(p)), compute, save)

    def folder(self, kind: str, key: str, build: Callable[[Path], None], load: Callable[[Path], T]) -> T:
        """An entry that is a folder of files (a BM25 index): built into a temporary folder, its checksum
        written into its ``.complete`` marker, then renamed into place, so a reader never sees a
        half-written index."""
        path = self.root / kind / key
        if self.enabled and (path / ".complete").is_file():
            value = self._checked_folder(path, load)
            if value is not _MISS:
                self.hits += 1
                return value
        self.misses += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=path.parent))
        try:
            build(tmp)
            (tmp / ".complete").write_text(folder_digest(tmp), encoding="utf-8")
            value = load(tmp)
            if self.enabled:
                shutil.rmtree(path, ignore_errors=True)
                try:
                    tmp.rename(path)
                except OSError:  # another process put the same entry in place first
                    pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return value

    def _checked_folder(self, path: Path, load: Callable[[Path], T]) -> T:
        expected = (path / ".complete").read_text(encoding="utf-8").strip()
        if not expected:  # a marker from before checksums: see the module docstring
            return _MISS
        return self._load_if(folder_digest(path) == expected, path, load)

    def _load_if(self, matches: bool, path: Path, load: Callable[[Path], T]) -> T:
        """``load(path)`` when its checksum ``matches``; otherwise, or when it cannot be loaded, the entry
        is moved aside and the caller recomputes it."""
        if not matches:
            self.quarantine(path, "does not match its checksum")
            return _MISS
        try:
            return load(path)
        except Exception as exc:  # noqa: BLE001 - an entry that cannot be loaded is as bad as a corrupt one
            self.quarantine(path, f"cannot be loaded ({type(exc).__name__}: {exc})")
            return _MISS
