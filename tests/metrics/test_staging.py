"""Output files written all or nothing (metrics/staging.py): a failure while writing, flushing or moving the
files in leaves the folder's files as they were."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ragsweep.metrics import staging
from ragsweep.metrics.staging import is_path_problem, staged


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir()}


def test_the_files_move_in_together_and_other_files_stay(tmp_path):
    (tmp_path / "a.csv").write_text("old a")
    (tmp_path / "mine.txt").write_text("mine")
    with staged(tmp_path) as into:
        assert into.parent == tmp_path and into.name.startswith(staging.STAGING_PREFIX)
        (into / "a.csv").write_text("new a")
        (into / "b.json").write_text("new b")
        (into / "sub").mkdir()
        (into / "sub" / "c").write_text("c")
    assert {p.name for p in tmp_path.iterdir()} == {"a.csv", "b.json", "mine.txt", "sub"}
    assert (tmp_path / "a.csv").read_text() == "new a" and (tmp_path / "sub" / "c").read_text() == "c"


def test_a_write_that_fails_half_way_leaves_the_old_files(tmp_path):
    (tmp_path / "a.csv").write_text("old a")
    (tmp_path / "b.json").write_text("old b")
    with pytest.raises(OSError) as err, staged(tmp_path) as into:
        (into / "a.csv").write_text("new a")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert err.value.errno == errno.ENOSPC
    assert _files(tmp_path) == {"a.csv": "old a", "b.json": "old b"}


def test_a_move_that_fails_half_way_puts_every_file_back(tmp_path, monkeypatch):
    (tmp_path / "a.csv").write_text("old a")
    (tmp_path / "b.json").write_text("old b")
    real = os.replace
    moved_in = []

    def replace(src, dst):
        if Path(dst).parent == tmp_path:  # moving a new file in (or an old one back)
            moved_in.append(Path(dst).name)
            if Path(dst).name == "b.json" and Path(src).parent.name.startswith(staging.STAGING_PREFIX):
                raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(staging.os, "replace", replace)
    with pytest.raises(OSError, match="Input/output error"), staged(tmp_path) as into:
        (into / "a.csv").write_text("new a")
        (into / "b.json").write_text("new b")
    assert "a.csv" in moved_in  # a.csv was in before b.json failed
    assert _files(tmp_path) == {"a.csv": "old a", "b.json": "old b"}


def test_a_full_disk_found_when_flushing_leaves_the_old_files(tmp_path, monkeypatch):
    (tmp_path / "a.csv").write_text("old a")

    def fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(staging.os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left"), staged(tmp_path) as into:
        (into / "a.csv").write_text("new a")
    assert _files(tmp_path) == {"a.csv": "old a"}


def test_a_folder_made_for_a_failed_write_is_removed(tmp_path):
    with pytest.raises(OSError), staged(tmp_path / "new") as into:
        (into / "a").write_text("x")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("exc, path", [(PermissionError(errno.EACCES, "Permission denied"), True),
                                       (OSError(errno.EROFS, "Read-only file system"), True),
                                       (OSError(errno.ENOSPC, "No space left on device"), False),
                                       (OSError(errno.EIO, "Input/output error"), False)])
def test_path_problems_are_told_from_machine_failures(exc, path):
    assert is_path_problem(exc) is path
