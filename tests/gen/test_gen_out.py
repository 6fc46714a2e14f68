"""``ragsweep gen``'s ``out``: checked before any work, and finished work kept when writing it fails at the end."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from ragsweep.gen import app
from ragsweep.metrics.errors import InputError


@pytest.mark.parametrize("where, message", [
    ("afile/testset.jsonl", "afile is a file, not a folder"),
    ("adir", "is a folder; name the test-set file"),
])
def test_an_out_that_cannot_be_written_exits_2_before_generating(tmp_path, ragsweep, where, message):
    (tmp_path / "afile").write_text("a file where a folder should be")
    (tmp_path / "adir").mkdir()
    proc = ragsweep("gen", "llm=none", "n=2", "progress=false", f"out={tmp_path / where}", cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert "by kind:" not in proc.stdout  # refused before any question was written


def test_a_write_that_fails_at_the_end_keeps_the_test_set_in_the_run_folder(tmp_path, monkeypatch):
    out = tmp_path / "wanted" / "testset.jsonl"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    real = app.write_testset

    def full_disk(samples, path, corpus=None):
        if out.parent in Path(path).parents:  # the target folder, or the staging folder inside it
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(samples, path, corpus)

    monkeypatch.setattr(app, "write_testset", full_disk)
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose("gen", overrides=["llm=none", "n=2", "progress=false", "gates.embed=false", f"out={out}",
                                        f"cache.dir={tmp_path / 'cache'}"])
    with pytest.raises(InputError) as err:
        app.run(cfg, run_dir)
    kept = run_dir / "testset.jsonl"
    assert f"out={out}: could not write the test set (No space left on device)" in str(err.value)
    assert f"kept in {kept}" in str(err.value)
    assert len(kept.read_text().splitlines()) == 2 and not out.exists()
    assert json.loads((run_dir / "testset.report.json").read_text())["seed"] == 0
