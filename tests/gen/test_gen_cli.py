"""`ragsweep gen` as a user runs it: subprocesses on the shipped corpus, then a sweep over the result."""

from __future__ import annotations

import csv
import json

import pytest

from ragsweep.gen.documents import read_shipped
from ragsweep.gen.testset import check_against, read_testset


@pytest.fixture(scope="module")
def rules_testset(tmp_path_factory, ragsweep):
    cwd = tmp_path_factory.mktemp("gen")
    cache = tmp_path_factory.mktemp("cache")
    out = cwd / "ts.jsonl"
    done = ragsweep("gen", "llm=none", "n=15", f"out={out}", "progress=false", cwd=cwd, cache=cache)
    assert done.returncode == 0, done.stderr[-3000:]
    return cwd, cache, out, done


# Its speed is measured in benchmarks/gen.py, not asserted here (a loaded CI machine is not slow code).
def test_llm_none_writes_a_usable_testset(rules_testset):
    cwd, _, out, done = rules_testset
    assert f"test set: {out}" in done.stdout
    assert "overlap:  0." in done.stdout or "overlap:  1.00" in done.stdout  # the end-of-run overlap line
    report = json.loads(out.with_name("ts.report.json").read_text())
    assert report["accepted"] == 15 and report["complete"] is True
    # The default mix: llm=none writes single_hop, unanswerable (no evidence) and follow_up (0.4 : 0.1 : 0.1).
    assert report["accepted_by_kind"] == {"single_hop": 10, "unanswerable": 3, "follow_up": 2}
    assert report["overlap"]["n"] == 12 and report["overlap"]["warning"]  # whole-clause questions copy their evidence
    assert "lexical retrieval" in done.stderr
    assert report["backend"] == "rules" and "rejected" in report
    samples = read_testset(out)
    assert len(samples) == 15
    check_against(samples, read_shipped(), str(out))  # every quoted span verbatim

    import datasets

    ds = datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=str(cwd / "hf"))
    assert ds.num_rows == 15
    assert {"id", "question", "reference", "evidence", "kind", "provenance"} <= set(ds.column_names)


@pytest.mark.slow
def test_generated_testset_drives_a_sweep(rules_testset, ragsweep):
    cwd, cache, out, _ = rules_testset
    swept = ragsweep("sweep", f"testset={out}", "chunker.size=256", "retriever.top_k=[1,5]", "progress=false",
                     cwd=cwd, cache=cache)
    assert swept.returncode == 0, swept.stderr[-3000:]
    sweeps = sorted((cwd / "outputs" / "sweeps").iterdir())
    with (sweeps[-1] / "leaderboard.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert sorted(int(r["top_k"]) for r in rows) == [1, 5]
    assert "| # |" in (sweeps[-1] / "leaderboard.md").read_text()
    # Unanswerable questions have no relevant document: their retrieval scores are undefined, never 0.
    unanswerable = {s.id for s in read_testset(out) if s.kind == "unanswerable"}
    scores = [json.loads(line) for f in sweeps[-1].rglob("scores.jsonl") for line in f.read_text().splitlines()]
    mine = [r for r in scores if r["sample_id"] in unanswerable and r["metric"].startswith(("ndcg", "recall", "span"))]
    assert unanswerable and mine
    assert all(r["status"] == "undefined" and "no relevant documents" in r["explanation"]["reason"] for r in mine)


def test_parquet_option(tmp_path, ragsweep):
    out = tmp_path / "ts.jsonl"
    done = ragsweep("gen", "llm=none", "n=3", f"out={out}", "parquet=true", "progress=false", "gates.embed=false",
                    cwd=tmp_path, cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr[-3000:]
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "ts.parquet").num_rows == 3


@pytest.mark.parametrize("args, message", [
    (["n=0"], "n must be a positive integer"),
    (["n=abc"], "n must be a positive integer"),
    (["corpus=folder", "corpus.path=EMPTY"], "no .txt"),
    (["corpus=folder", "corpus.path=SHORT"], "too short to question"),
])
def test_bad_input_exits_2_without_traceback(tmp_path, args, message, ragsweep):
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "SHORT").mkdir()
    (tmp_path / "SHORT" / "a.txt").write_text("Too short.\n\nAlso short.")
    done = ragsweep("gen", "llm=none", "progress=false", *args, f"out={tmp_path / 'x.jsonl'}",
                    cwd=tmp_path, cache=tmp_path / "cache", timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def _packaged_small_model_ready() -> str | None:
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return "xllamacpp is not installed"
    from ragsweep.metrics.errors import InputError
    from ragsweep.metrics.llm.models import part_paths

    try:
        part_paths("qwen2.5-coder-0.5b-instruct-q4_k_m")
    except InputError as exc:
        return str(exc)
    return None


@pytest.mark.model
@pytest.mark.slow
def test_real_small_model_writes_two_questions(tmp_path, ragsweep, small_model_cache):
    cache = small_model_cache
    out = tmp_path / "ts.jsonl"
    done = ragsweep("gen", "llm=local_small", "n=2", "kinds.multi_hop=0", "kinds.comparative=0",
                    "kinds.conditional=0", f"out={out}", "progress=false", cwd=tmp_path, cache=cache, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    samples = read_testset(out)
    check_against(samples, read_shipped(), str(out))
    assert 1 <= len(samples) <= 2
    assert all(s.provenance["model"] == "qwen2.5-coder-0.5b-instruct-q4_k_m" for s in samples)
