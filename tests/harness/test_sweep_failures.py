"""Sweeps and runs whose jobs fail: exit 3 when every job failed, 4 when some did (the rest still ranked)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from embedding_server import EmbeddingServer, dead_url

from ragsweep.harness.outputs import jobs_outcome

# A small, fast sweep on the shipped corpus; the embedder is the only thing that varies.
SMALL = ("chunker.size=1024", "retriever.top_k=1", "retriever.latency_queries=0", "max_queries=4",
         "progress=false", "embedder=openai", "embedder.max_retries=0", "embedder.timeout_s=5")
ENV = {"OPENAI_API_KEY": "sk-test-embeddings-0000"}


def test_a_sweep_whose_every_job_fails_exits_3(tmp_path, ragsweep):
    proc = ragsweep("sweep", *SMALL, f"embedder.base_url={dead_url()}", f"hydra.sweep.dir={tmp_path / 'sw'}",
                    cwd=tmp_path, env=ENV)
    assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
    assert "every job failed (1 of 1), nothing was measured" in proc.stderr
    assert (tmp_path / "sw" / "0" / "error.json").is_file()


def test_a_sweep_where_some_jobs_fail_exits_4_and_ranks_the_others(tmp_path, ragsweep):
    with EmbeddingServer() as url:
        proc = ragsweep("sweep", *SMALL, f"embedder.base_url={url},{dead_url()}",
                        f"hydra.sweep.dir={tmp_path / 'sw'}", cwd=tmp_path, env=ENV)
    assert proc.returncode == 4, (proc.returncode, proc.stderr[-2000:])
    assert "1 of 2 jobs failed (1); the leaderboard ranks the others" in proc.stderr
    with (tmp_path / "sw" / "leaderboard.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [bool(r["error"]) for r in rows] == [False, True]  # the good job ranked, the failed one listed


def _job(root: Path, name: str, error: str | None = None, **summary: object) -> None:
    (root / name).mkdir(parents=True)
    if error is not None:
        (root / name / "error.json").write_text(json.dumps({"error": error}))
    else:
        (root / name / "summary.json").write_text(json.dumps(summary))


def test_jobs_outcome_counts_failed_and_empty_jobs(tmp_path):
    assert jobs_outcome(tmp_path / "none") == (0, "")
    _job(tmp_path, "0", variants=[{"n_samples": 3, "cost": {"app_errors": 1}}])
    (tmp_path / ".hydra").mkdir()  # not a job
    assert jobs_outcome(tmp_path) == (0, "")
    _job(tmp_path, "1", variants=[{"n_samples": 3, "cost": {"app_errors": 3}}])  # every call failed
    code, message = jobs_outcome(tmp_path)
    assert code == 4 and "1 of 2 jobs failed (1)" in message and "every call to the application failed" in message
    (tmp_path / "0" / "summary.json").unlink()
    (tmp_path / "0" / "error.json").write_text(json.dumps({"error": "OSError: read-only cache"}))
    code, message = jobs_outcome(tmp_path)
    assert code == 3 and "every job failed (2 of 2)" in message and "read-only cache" in message
