"""BM25, hybrid fusion and context budgets: hand-checked cases and runs on the shipped corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest
import ragsweep
from ragsweep.harness.pipeline.retrieval import BM25Spec, Retrieval, retrieval
from ragsweep.harness.records import Cut, Retrieved
from ragsweep.metrics.errors import InputError

DOCS = [
    "The harbour lighthouse was first lit in 1871.",
    "Runners were running along the river bridge, which opened in 1903.",
    "A council of 45 members governs the city.",
    "The lighthouse keeper ran the light for forty years.",
]


@pytest.fixture(scope="module")
def bm25(tmp_path_factory):
    spec = BM25Spec()
    folder = tmp_path_factory.mktemp("bm25")
    spec.build(DOCS, folder)
    return spec, BM25Spec.load(folder)


def test_bm25_ranks_by_stemmed_words_and_drops_stopwords(bm25):
    spec, model = bm25
    scores, ids = spec.search(model, ["when was the lighthouse lit", "who runs", "the of and"], 4)
    assert ids[0][:2].tolist() == [0, 3]          # both mention the lighthouse; doc 0 also "lit"
    assert ids[0][2:].tolist() == [-1, -1]        # no other document shares a word: not ranked at all
    assert ids[1].tolist() == [1, -1, -1, -1]     # "runs" and "running" share the stem "run"; "ran" does not
    assert ids[2].tolist() == [-1, -1, -1, -1]    # only stopwords: nothing matches, nothing is invented
    assert np.all(np.diff(scores[0][:2]) <= 0)


def test_bm25_settings_are_checked():
    with pytest.raises(InputError, match="retrieval.b must be in"):
        BM25Spec(b=1.5)
    with pytest.raises(InputError, match="retrieval.method"):
        BM25Spec(method="tfidf")
    with pytest.raises(InputError, match="retrieval.alpha"):
        retrieval("hybrid", fusion="convex", alpha=2)
    with pytest.raises(InputError, match="retrieval.fusion"):
        retrieval("hybrid", fusion="max")


def _rankings():
    # dense: a(0) > b(1) > c(2); bm25: c(2) > a(0); -1 pads
    dense = (np.array([[0.9, 0.8, 0.1]], dtype=np.float32), np.array([[0, 1, 2]]))
    lexical = (np.array([[7.0, 3.0, -np.inf]], dtype=np.float32), np.array([[2, 0, -1]]))
    return dense, lexical


def test_reciprocal_rank_fusion_by_hand():
    dense, lexical = _rankings()
    scores, ids = Retrieval("hybrid", fusion="rrf", rrf_k=60).fuse(dense, lexical, 3)
    # a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62
    assert ids[0].tolist() == [0, 2, 1]
    assert scores[0].tolist() == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62])


def test_convex_fusion_at_its_ends_is_each_ranking():
    dense, lexical = _rankings()
    assert Retrieval("hybrid", fusion="convex", alpha=1.0).fuse(dense, lexical, 2)[1][0].tolist() == [0, 1]
    assert Retrieval("hybrid", fusion="convex", alpha=0.0).fuse(dense, lexical, 2)[1][0].tolist() == [2, 0]
    # alpha 0.5: a = 0.5*1 + 0.5*0 = 0.5, b = 0.5*0.875, c = 0 + 0.5*1 = 0.5 -> a and c tie, a first by position
    scores, ids = Retrieval("hybrid", fusion="convex", alpha=0.5).fuse(dense, lexical, 3)
    assert ids[0].tolist() == [0, 2, 1]
    assert scores[0].tolist() == pytest.approx([0.5, 0.5, 0.5 * 0.7 / 0.8])


def _item(doc, start, end):
    return Retrieved(f"{doc}#{start}", doc, start, end, 1.0, "w " * ((end - start) // 2))


def test_a_character_budget_passes_whole_chunks_then_cuts_the_last_to_fit():
    ranked = (_item("a", 0, 300), _item("b", 100, 500), _item("c", 0, 50))
    got = Cut("budget", 500).passed(ranked)
    assert [(r.doc_id, r.start, r.end) for r in got] == [("a", 0, 300), ("b", 100, 300)]
    assert sum(r.end - r.start for r in got) == 500 and len(got[1].text) == 200
    assert Cut("budget", 1000).passed(ranked) == ranked           # everything fits
    assert Cut("top_k", 2).passed(ranked) == ranked[:2]


def test_a_token_budget_counts_wordpiece_tokens():
    text = "the lighthouse was first lit in 1871 and the bridge opened in 1903"
    item = Retrieved("a#0", "a", 0, len(text), 1.0, text)
    got = Cut("budget", 5, "tokens").passed((item,))
    assert got[0].text == "the lighthouse was first lit"   # five WordPiece tokens
    assert got[0].end == len("the lighthouse was first lit")
    with pytest.raises(InputError, match="positive integer"):
        Cut("budget", 0)


def _board_rows(board):
    return {(r["chunker.size"], r.get("top_k") if "top_k" in r else r.get("budget")): r
            for r in board.to_pandas().to_dict(orient="records")}


@pytest.mark.slow
def test_at_an_equal_budget_big_chunks_no_longer_win_by_construction(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    by_k = ragsweep.sweep("chunker.size=256,1024", "retriever.top_k=1", "answerer=none", "progress=false",
                          dir=tmp_path / "k")
    by_budget = ragsweep.sweep("chunker.size=256,1024", "retriever.budget=500", "answerer=none", "progress=false",
                               dir=tmp_path / "budget")
    k_rows = {r["chunker.size"]: r for r in by_k.to_pandas().to_dict(orient="records")}
    b_rows = {r["chunker.size"]: r for r in by_budget.to_pandas().to_dict(orient="records")}
    # At top_k=1 the 1024-character chunks pass on four times the text and win span recall by a mile...
    assert k_rows[1024]["span_recall"] - k_rows[256]["span_recall"] > 0.3
    # ...at an equal 500-character budget they pass on the same amount of text, and the advantage is gone.
    assert b_rows[1024]["span_recall"] <= b_rows[256]["span_recall"]
    for job in ("0", "1"):
        runs = [json.loads(line) for line in (tmp_path / "budget" / job / "runs.jsonl").read_text().splitlines()]
        summary = json.loads((tmp_path / "budget" / job / "summary.json").read_text())
        assert summary["variants"][0]["budget"] == 500 and summary["variants"][0]["budget_unit"] == "chars"
        passed = [Cut("budget", 500).passed(tuple(Retrieved(**r) for r in run["retrieved"])) for run in runs]
        assert all(sum(r.end - r.start for r in p) == 500 for p in passed)


@pytest.mark.slow
def test_bm25_and_hybrid_sweep_reuse_the_dense_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    dense = ragsweep.sweep("chunker.size=512", "retriever.top_k=5", "progress=false", dir=tmp_path / "dense")
    both = ragsweep.sweep("chunker.size=512", "retriever.top_k=5", "retrieval=bm25,hybrid", "progress=false",
                          dir=tmp_path / "both")
    rows = {r["retrieval"]: r for r in both.to_pandas().to_dict(orient="records")}
    assert set(rows) == {"bm25", "hybrid"}
    assert rows["hybrid"]["embedded_texts"] == 0        # chunk and query vectors came from the dense run
    assert dense.to_pandas()["embedded_texts"].iloc[0] > 0
    for r in rows.values():
        assert r["latency_p50_ms"] > 0 and r["latency_p95_ms"] >= r["latency_p50_ms"] and r["index_mb"] > 0
    assert pd_isna(rows["bm25"].get("index", float("nan")))  # BM25 searches no FAISS index


def pd_isna(value):
    return value is None or value != value or value == ""
