"""gen's files (the test set, its report, the Parquet copy) are written all or none: a full disk half way
leaves the previous test set and report as they were."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from ragsweep.metrics.errors import InputError


def test_a_full_disk_while_the_report_is_written_keeps_the_old_test_set(tmp_path, monkeypatch):
    from hydra import compose, initialize_config_module

    from ragsweep.gen import app

    out = tmp_path / "set.jsonl"
    out.write_text('{"old": 1}\n')
    (tmp_path / "set.report.json").write_text('{"old": 1}\n')
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose("gen", overrides=["llm=none", "n=3", f"out={out}", "progress=false", "gates.embed=false"])
    real = Path.write_text

    def disk_full(self, text, *args, **kwargs):
        if self.name == "set.report.json":  # written after the test set
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full)
    # Every report write fails, here and in the run folder where the finished set would be kept: exit 2
    # saying so, and the old files stay as they were.
    with pytest.raises(InputError, match="No space left"):
        app.run(cfg, tmp_path / "run")
    monkeypatch.undo()
    assert out.read_text() == '{"old": 1}\n' and (tmp_path / "set.report.json").read_text() == '{"old": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["set.jsonl", "set.report.json"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ragsweep")]

    paths = app.run(cfg, tmp_path / "run")  # the disk has room again: both files are the new ones
    assert {k: paths[k] for k in ("testset", "report")} == {"testset": out, "report": tmp_path / "set.report.json"}
    assert '"old"' not in out.read_text() and len(out.read_text().splitlines()) == 3
