"""Copies of a document are one relevance unit (corpus option ``duplicates``): sweep jobs on a corpus of
six identical documents with perfect retrieval, and hand cases for near copies and repeated texts.

The jobs run in-process with BM25 over whole documents (no embedding model), which ranks the six
copies first, in corpus order, for a question about them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from ragsweep.gen.chunking import RecursiveChunker
from ragsweep.gen.documents import Corpus, Document, Span, with_duplicates
from ragsweep.gen.testset import TestSample
from ragsweep.harness import sweep
from ragsweep.harness.pipeline.relevance import ChunkLocator, restate
from ragsweep.harness.records import Cut, Retrieved, RunSample, read_runs
from ragsweep.metrics.catalogue import spec_of
from ragsweep.metrics.retrieval import credit_once

SAME = "The harbour lighthouse at Port Ellen was first lit in 1871 and guided ships past the reef for a century."
OTHERS = ["The council of Brackwater has 45 members elected every four years.",
          "Rail services to the valley stopped in 1962 when the branch line closed.",
          "The annual fair sells wool, cheese and cider from the hill farms.",
          "A stone bridge over the river Tamsin was finished in 1903 after six years of work."]
QUESTION = "When was the harbour lighthouse at Port Ellen first lit?"
CHOICES = {"corpus": "folder", "chunker": "none", "embedder": "minilm", "index": "flat", "retrieval": "bm25"}
# Before: the question pinned to copy i is found at rank i + 1 (of six tied copies).
DEFLATED_NDCG = sum(1 / math.log2(r + 1) for r in range(1, 7)) / 6


def run_job(tmp: Path, name: str, corpus: list[str]) -> dict:
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[
            *corpus, "chunker=none", "retrieval=bm25", "answerer=none", "metrics.generation=[]",
            "metrics.retrieval=[hit@1,ndcg@10,recall@10,mrr@10]", "retriever.top_k=10",
            "retriever.latency_queries=0", f"cache.dir={tmp / 'cache'}", "progress=false"])
    job = tmp / name
    job.mkdir()
    return sweep.run_job(cfg, job, CHOICES)


def means(summary: dict) -> dict[str, float]:
    return {k: m["mean"] for k, m in summary["variants"][0]["metrics"].items()}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Six identical documents and four others; question i's evidence is pinned to copy i."""
    tmp = tmp_path_factory.mktemp("copies")
    kb = tmp / "kb"
    kb.mkdir()
    for i in range(6):
        (kb / f"copy{i}.txt").write_text(SAME)
    for i, text in enumerate(OTHERS):
        (kb / f"other{i}.txt").write_text(text)
    start = SAME.index("first lit in 1871")
    rows = [{"id": f"q{i}", "question": QUESTION, "reference": "1871",
             "evidence": [{"doc_id": f"copy{i}.txt", "start": start, "end": start + 17, "text": "first lit in 1871"}]}
            for i in range(6)]
    (tmp / "testset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp, ["corpus=folder", f"corpus.path={kb}", f"testset={tmp / 'testset.jsonl'}"]


@pytest.mark.parametrize("mode", ["equal", "drop"])
def test_six_identical_documents_with_perfect_retrieval_score_perfectly(folder, mode):
    tmp, corpus = folder
    summary = run_job(tmp, mode, [*corpus, f"corpus.duplicates={mode}"])
    assert means(summary) == {"hit@1": 1.0, "ndcg@10": 1.0, "recall@10": 1.0, "mrr@10": 1.0}
    assert summary["duplicates"]["copies"] == 5 and summary["duplicates"]["mode"] == mode
    runs = read_runs(tmp / mode / "runs.jsonl")
    assert {r.evidence for r in runs} == {(("copy0.txt", 41, 58),)}  # every question's evidence on the original
    if mode == "equal":  # all six found, the five copies standing for the original
        assert [r.same_as for r in runs[0].retrieved[:6]] == [None] + [("copy0.txt", 0, len(SAME))] * 5
        # ragsweep rescore reads the same records: the same scores
        spec = spec_of("ndcg@10")
        sample = runs[3].rag_sample(Cut("top_k", 10))
        assert spec.fn(**{f: sample.get(f) for f in (*spec.inputs, *spec.optional)}, **spec.options).value == 1.0


def test_keep_reproduces_the_deflated_scores(folder):
    tmp, corpus = folder
    got = means(run_job(tmp, "keep", [*corpus, "corpus.duplicates=keep"]))
    assert got["hit@1"] == pytest.approx(1 / 6) and got["recall@10"] == 1.0
    assert got["ndcg@10"] == pytest.approx(DEFLATED_NDCG)  # 0.551


@pytest.fixture(scope="module")
def beir(tmp_path_factory):
    """The same documents as a BEIR folder; query i judges only copy i relevant."""
    root = tmp_path_factory.mktemp("beir")
    docs = [(f"c{i}", SAME) for i in range(6)] + [(f"o{i}", t) for i, t in enumerate(OTHERS)]
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in docs))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": QUESTION}) + "\n" for i in range(6)))
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\tc{i}\t1\n" for i in range(6)))
    return root


@pytest.mark.parametrize("mode, hit, ndcg", [("equal", 1.0, 1.0), ("drop", 1.0, 1.0), ("keep", 1 / 6, DEFLATED_NDCG)])
def test_document_judgements_judge_a_group_of_copies_once(beir, tmp_path, mode, hit, ndcg):
    got = means(run_job(tmp_path, mode, ["corpus=beir", f"corpus.path={beir}", f"corpus.duplicates={mode}"]))
    assert got["hit@1"] == pytest.approx(hit) and got["ndcg@10"] == pytest.approx(ndcg)
    assert got["recall@10"] == 1.0


def test_a_chunk_of_a_near_copy_stands_for_the_original_chunk_with_the_same_text():
    body = " ".join(f"Sentence {n} of the harbour history says the pier was rebuilt in {1800 + n}." for n in range(12))
    copy = "Foreword. " + body.replace("Sentence 1 of", "Line 1 of")  # shifted offsets, one word changed
    corpus = with_duplicates(Corpus([Document("orig", body), Document("copy", copy), Document("x", OTHERS[0])], "kb"))
    assert corpus.duplicates.kind == {"copy": "near"}
    chunks = RecursiveChunker(size=200, overlap=0).chunk(corpus.documents)
    locator = ChunkLocator(chunks)
    where = copy.index("rebuilt in 1808")
    sample = restate([TestSample("q", "When was the pier rebuilt?", "1808", (Span("copy", where, where + 15),))],
                     corpus)[0]
    assert sample.evidence[0].doc_id == "orig" and body[sample.evidence[0].start:sample.evidence[0].end] == "rebuilt in 1808"
    assert locator.n_relevant(sample) == 1  # one chunk of the original holds it; the copy's does not count
    in_copy = next(c for c in chunks if c.doc_id == "copy" and c.start <= where < c.end)
    in_orig = next(c for c in chunks if c.doc_id == "orig" and c.start <= sample.evidence[0].start < c.end)
    other = next(c for c in chunks if c.doc_id == "x")
    ranked = [[in_copy, in_orig, other]]
    retrieved = [[Retrieved(c.id, c.doc_id, c.start, c.end, 1.0, c.text) for c in got] for got in ranked]
    run = sweep.run_records("v", [sample], retrieved, corpus, locator, {})[0]
    assert run.retrieved[0].same_as == ("orig", in_orig.start, in_orig.end)
    scores = {}
    for name in ("hit@1", "recall@10", "ndcg@10", "precision@3"):
        spec = spec_of(name)
        rs = run.rag_sample(Cut("top_k", 3))
        scores[name] = spec.fn(**{f: rs.get(f) for f in (*spec.inputs, *spec.optional)}, **spec.options).value
    # The copy's chunk is the find; the original's chunk right after it repeats it and gains nothing.
    assert scores == {"hit@1": 1.0, "recall@10": 1.0, "ndcg@10": 1.0, "precision@3": pytest.approx(1 / 3)}


def test_the_same_text_passed_on_twice_is_found_once():
    spans = [("a", 0, 100), ("b", 0, 50), ("a", 0, 100), ("a", 10, 60), ("a", 80, 200)]
    assert credit_once(spans, [1, 0, 1, 1, 1]) == [1, 0, 0, 0, 1]  # a repeat, and a part of an earlier find
    # An application returning one context twice: recall is 1, not 2 (which would be refused).
    ctx = Retrieved("a#0-100", "a", 0, 100, 1.0, None)
    run = RunSample("q", "app", (ctx, ctx), evidence=(("a", 20, 30),), n_relevant=1)
    spec = spec_of("recall@2")
    rs = run.rag_sample(Cut("top_k", 2))
    assert spec.fn(**{f: rs.get(f) for f in (*spec.inputs, *spec.optional)}, **spec.options).value == 1.0
