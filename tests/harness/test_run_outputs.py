"""A run's job folder gets its scores.jsonl and summary.json together or neither: a full disk while the
summary is written leaves no scores without their summary, and the rerun writes both."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import ragsweep


def test_a_full_disk_at_the_summary_leaves_no_scores_without_it(tmp_path, monkeypatch, cache_dir):
    import ragsweep.harness.run as run_module

    monkeypatch.chdir(tmp_path)
    real = run_module.write_json

    def disk_full(path, obj):
        if Path(path).name == "summary.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, obj)

    def app(question: str) -> str:
        return "The harbour opened in 1890."

    monkeypatch.setattr(run_module, "write_json", disk_full)
    try:
        ragsweep.run("progress=false", app=app, dir="runs", name="v1")
    except Exception:  # noqa: BLE001 - how the API reports the failed job is not what this test is about
        pass
    job = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    assert not (job / "summary.json").exists() and not (job / "scores.jsonl").exists()
    assert (job / "error.json").is_file() or (job / "runs.jsonl").is_file()
    assert not [p for p in job.iterdir() if p.name.startswith(".ragsweep-staging-")]

    monkeypatch.setattr(run_module, "write_json", real)
    ragsweep.run("progress=false", app=app, dir="runs", name="v1")
    summary = json.loads((job / "summary.json").read_text())
    n = sum(1 for _ in (job / "scores.jsonl").open())
    assert n and n == sum(m["n_ok"] + m["n_undefined"] + m["n_error"]
                          for m in summary["variants"][0]["metrics"].values())


def test_a_rescore_that_fails_at_the_summary_leaves_the_jobs_scores_as_they_were(tmp_path, monkeypatch, cache_dir):
    import ragsweep.harness.rescore as rescore_module

    monkeypatch.chdir(tmp_path)
    ragsweep.run("progress=false", app=lambda question: "The harbour opened in 1890.", dir="runs", name="v1")
    job = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    before = {name: (job / name).read_bytes() for name in ("scores.jsonl", "summary.json")}

    def disk_full(path, obj):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(rescore_module, "write_json", disk_full)
    try:
        rescore_module.rescore(tmp_path / "runs", ["rouge_l"])
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    else:
        raise AssertionError("the failed write was not reported")
    assert {name: (job / name).read_bytes() for name in before} == before
    assert not [p for p in job.iterdir() if p.name.startswith(".ragsweep-staging-")]
