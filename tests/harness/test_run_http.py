"""`ragsweep run target=http` against services on 127.0.0.1 started by the tests: the reference
pipeline behind HTTP scores exactly what it scores inside `ragsweep sweep`; a run killed half way,
or a service that goes down, resumes without calling an answered question again; secrets stay out
of every file; failed calls stay on the board as errors and survive a rescore."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from app_servers import AppServer, ReferencePipeline, chat_completion

from ragsweep.gen.documents import read_shipped, shipped_testset_path
from ragsweep.gen.testset import read_testset

CLI = (sys.executable, "-m", "ragsweep.harness.cli")
COMPARED = ("hit@10", "mrr@10", "span_recall", "span_precision", "span_iou")
QUESTIONS = {s.id: s.question for s in read_testset(shipped_testset_path())}


def scores(path: Path) -> dict[tuple[str, str], tuple[str, float | None]]:
    """(sample, metric) -> (status, value) of a job's only variant (or of its ``top_k=5`` one)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    variants = sorted({r["variant"] for r in rows})
    chosen = next((v for v in variants if v.endswith("top_k=5")), variants[0])
    return {(r["sample_id"], r["metric"]): (r["status"], r["value"]) for r in rows if r["variant"] == chosen}


def board(root: Path) -> list[dict[str, str]]:
    with (root / "leaderboard.csv").open() as fh:
        return list(csv.DictReader(fh))


def cheap_answer(body: dict) -> dict:
    """A fast application: the first paragraph of a document that shares most words with the question."""
    words = set(body["question"].lower().split())
    paragraphs = [p for d in read_shipped().documents for p in d.text.split("\n\n") if p.strip()]
    best = sorted(paragraphs, key=lambda p: -len(words & set(p.lower().split())))[:2]
    return {"answer": best[0][:80], "contexts": best}


@pytest.mark.slow
def test_reference_pipeline_behind_http_scores_as_in_the_sweep(tmp_path, ragsweep):
    cache = tmp_path / "cache"
    sweep = ragsweep("sweep", "chunker.size=512", "retriever.top_k=[5]", "progress=false",
                     "retriever.latency_queries=0", "hydra.sweep.dir=outs/sweep", cwd=tmp_path, cache=cache)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    args = ["run", "target=http", "target.contexts_path=sources.*.text", "target.params.top_k=5", "out=outs/app",
            "progress=false"]
    with AppServer(ReferencePipeline(cache, chunk_size=512)) as app:
        args.append(f"target.url={app.url}")
        # killed half way, then run again: the answered questions are not asked again
        proc = subprocess.Popen([*CLI, *args], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "RAGSWEEP_CACHE_DIR": str(cache)})
        app.on_call = lambda n: (proc.kill(), proc.wait()) if n == len(QUESTIONS) // 2 else None
        proc.wait(timeout=300)
        app.on_call = None
        answered = {r["question"] for r in map(json.loads, (tmp_path / "outs/app/0/calls.jsonl").open())
                    if r["status"] == "ok"}
        assert 0 < len(answered) < len(QUESTIONS)
        run = ragsweep(*args, cwd=tmp_path, cache=cache)
        assert run.returncode == 0, run.stderr[-3000:]
        assert all(app.calls[q] == 1 for q in answered) and set(app.calls) == set(QUESTIONS.values())
    ours, theirs = scores(tmp_path / "outs/sweep/0/scores.jsonl"), scores(tmp_path / "outs/app/0/scores.jsonl")
    for metric in COMPARED:
        for sid in QUESTIONS:
            assert theirs[(sid, metric)] == ours[(sid, metric)], (sid, metric)
    assert theirs[(next(iter(QUESTIONS)), "token_f1")] == ours[(next(iter(QUESTIONS)), "token_f1")]  # same answers
    summary = json.loads((tmp_path / "outs/app/0/summary.json").read_text())
    assert summary["contexts"]["returned"] == 5 * len(QUESTIONS) == summary["contexts"]["exact"]
    cost = summary["variants"][0]["cost"]
    assert cost["app_errors"] == 0 and cost["contexts_unlocated"] == 0
    assert cost["app_latency_p50_ms"] > 0 and cost["app_prompt_tokens"] > 0
    record = json.loads((tmp_path / "outs/app/0/runs.jsonl").read_text().splitlines()[0])
    assert record["latency_ms"] > 0 and record["usage"]["completion_tokens"] > 0 and "sources" in record["raw"]
    assert [m["method"] for m in record["located"]] == ["exact"] * 5
    row = board(tmp_path / "outs/app")[0]
    assert row["app_latency_p50_ms"] and row["contexts_unlocated"] == "0"


def test_a_killed_run_resumes_without_calling_answered_questions(tmp_path):
    env = {**os.environ, "RAGSWEEP_CACHE_DIR": str(tmp_path / "cache")}
    args = [*CLI, "run", "target=http", "out=outs/app", "progress=false", "call.concurrency=2"]
    with AppServer(cheap_answer) as app:
        args.append(f"target.url={app.url}")
        proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def kill_at_twelve(n: int) -> None:
            if n == 12:
                proc.kill()  # the run dies with calls in flight
                proc.wait()

        app.on_call = kill_at_twelve
        proc.wait(timeout=120)
        assert proc.returncode != 0
        calls = tmp_path / "outs/app/0/calls.jsonl"
        first = [json.loads(line) for line in calls.read_text().splitlines()]
        answered = {r["question"] for r in first if r["status"] == "ok"}
        assert 6 <= len(answered) < 12
        app.on_call = None
        again = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr[-3000:]
        for question in answered:
            assert app.calls[question] == 1, question  # counted at the service: never called again
        assert set(app.calls) == set(QUESTIONS.values())
    runs = [json.loads(line) for line in (tmp_path / "outs/app/0/runs.jsonl").read_text().splitlines()]
    assert len(runs) == len(QUESTIONS) and {r.get("status", "ok") for r in runs} == {"ok"}


def test_a_service_that_goes_down_leaves_error_rows_that_a_rerun_retries(tmp_path, ragsweep):
    with AppServer(cheap_answer) as app:
        app.fail_after = 10
        args = ["run", "target=http", f"target.url={app.url}", "out=outs/app", "progress=false",
                "call.retries=1", "call.backoff_s=0", "call.concurrency=1"]
        first = ragsweep(*args, cwd=tmp_path)
        assert first.returncode == 0, first.stderr[-3000:]
        summary = json.loads((tmp_path / "outs/app/0/summary.json").read_text())
        cost = summary["variants"][0]["cost"]
        assert cost["app_errors"] == len(QUESTIONS) - 10 and cost["app_calls"] == 10 + 2 * (len(QUESTIONS) - 10)
        rows = scores(tmp_path / "outs/app/0/scores.jsonl")
        failed = {sid for (sid, _), (status, _) in rows.items() if status == "error"}
        assert len(failed) == len(QUESTIONS) - 10  # every metric of a failed call is an error, none dropped
        assert all(status == "error" for (sid, _), (status, _) in rows.items() if sid in failed)
        stats = summary["variants"][0]["metrics"]["mrr@10"]
        assert (stats["n_ok"], stats["n_error"]) == (10, len(QUESTIONS) - 10)
        assert int(board(tmp_path / "outs/app")[0]["app_errors"]) == len(QUESTIONS) - 10

        # rescore keeps the error rows as errors
        rescored = ragsweep("rescore", "outs/app", "metrics=[faithfulness,hit@5]", "llm=none", cwd=tmp_path)
        assert rescored.returncode == 0, rescored.stderr[-3000:]
        rows = scores(tmp_path / "outs/app/0/scores.jsonl")
        assert {rows[(sid, "faithfulness")][0] for sid in failed} == {"error"}
        assert {rows[(sid, "hit@5")][0] for sid in QUESTIONS if sid not in failed} == {"ok"}

        app.fail_after = None
        before = dict(app.calls)
        again = ragsweep(*args, cwd=tmp_path)
        assert again.returncode == 0, again.stderr[-3000:]
        called_again = {q for q in app.calls if app.calls[q] > before.get(q, 0)}
        assert called_again == {QUESTIONS[sid] for sid in failed}
    stats = json.loads((tmp_path / "outs/app/0/summary.json").read_text())["variants"][0]["metrics"]["mrr@10"]
    assert (stats["n_ok"], stats["n_error"]) == (len(QUESTIONS), 0)


def test_secret_headers_come_from_the_environment_and_are_written_nowhere(tmp_path, ragsweep):
    secret = "s3cr3t-" + str(time.time_ns())
    with AppServer(cheap_answer) as app:
        out = ragsweep("run", "target=http", f"target.url={app.url}", "out=outs/app", "progress=false",
                       "target.env_headers.Authorization='Bearer $APP_TOKEN'", "target.headers.X-Client=tests",
                       cwd=tmp_path, env={"APP_TOKEN": secret})
        assert out.returncode == 0, out.stderr[-3000:]
        assert app.headers["Authorization"] == f"Bearer {secret}" and app.headers["X-Client"] == "tests"
    files = [p for p in (tmp_path / "outs").rglob("*") if p.is_file()]
    assert any(p.name == "config.yaml" for p in files)
    for path in files:
        assert secret not in path.read_text(errors="replace"), path
    config = (tmp_path / "outs/app/0/.hydra/config.yaml").read_text()
    assert "$APP_TOKEN" in config
    missing = ragsweep("run", "target=http", f"target.url={app.url}", "out=outs/other", "progress=false",
                       "target.env_headers.Authorization='Bearer $APP_TOKEN'", cwd=tmp_path, env={"APP_TOKEN": None})
    assert missing.returncode == 2 and "variable APP_TOKEN (for the header Authorization" in missing.stderr


def test_openai_compatible_endpoint_alone_and_behind_the_reference_retriever(tmp_path, ragsweep):
    with AppServer(chat_completion) as chat:
        base = chat.url.rsplit("/", 1)[0] + "/v1"
        rag = ragsweep("run", "target=openai", "target.model=tiny", f"target.base_url={base}", "target.retrieve=true",
                       "target.params.top_k=3", "target.params.temperature=0", "out=outs/rag", "progress=false",
                       cwd=tmp_path, env={"OPENAI_API_KEY": None})
        assert rag.returncode == 0, rag.stderr[-3000:]
        closed = ragsweep("run", "target=openai", "target.model=tiny", f"target.base_url={base}", "out=outs/closed",
                          "progress=false", cwd=tmp_path, env={"OPENAI_API_KEY": None})
        assert closed.returncode == 0, closed.stderr[-3000:]
        assert sum(chat.calls.values()) == 2 * len(QUESTIONS)
    summary = json.loads((tmp_path / "outs/rag/0/summary.json").read_text())
    assert summary["contexts"]["returned"] == 3 * len(QUESTIONS) == summary["contexts"]["exact"]
    cost = summary["variants"][0]["cost"]
    assert cost["app_prompt_tokens"] > 0 and cost["app_completion_tokens"] > 0
    assert {"mrr@10", "span_recall", "token_f1"} <= set(summary["variants"][0]["metrics"])
    record = json.loads((tmp_path / "outs/rag/0/runs.jsonl").read_text().splitlines()[0])
    assert record["answers"]["top_k=3"] and record["raw"]["choices"][0]["message"]["content"]
    closed_metrics = json.loads((tmp_path / "outs/closed/0/summary.json").read_text())["variants"][0]["metrics"]
    assert "token_f1" in closed_metrics and "mrr@10" not in closed_metrics
