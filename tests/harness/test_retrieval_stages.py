"""The cache, the FAISS indexes and span relevance, on small constructed data (fast, no model)."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest
from ragsweep.gen.chunking import Chunk
from ragsweep.gen.documents import Span
from ragsweep.gen.testset import TestSample
from ragsweep.harness.cache import Cache, atomic_write, make_key, write_json
from ragsweep.harness.pipeline.index import IndexSpec, search
from ragsweep.harness.pipeline.relevance import ChunkLocator
from ragsweep.harness.records import Cut, Retrieved, RunSample
from ragsweep.metrics.catalogue import spec_of


def test_cache_computes_once_and_survives_a_corrupt_entry(tmp_path):
    cache = Cache(tmp_path)
    calls = []
    key = make_key("x", 1)
    for _ in range(3):
        got = cache.array("vec", key, lambda: calls.append(1) or np.arange(4, dtype=np.float32))
    assert len(calls) == 1 and got.tolist() == [0, 1, 2, 3]
    assert (cache.hits, cache.misses) == (2, 1)
    cache.path("vec", key, "npy").write_bytes(b"garbage")
    assert cache.array("vec", key, lambda: np.ones(2)).tolist() == [1, 1]
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporary files


@pytest.mark.parametrize("umask, mode", [("022", "644"), ("027", "640"), ("002", "664")])
def test_atomic_writes_get_the_permissions_of_a_plain_open(tmp_path, umask, mode):
    old = os.umask(int(umask, 8))
    try:
        write_json(tmp_path / "summary.json", {"a": 1})
        atomic_write(tmp_path / "deep" / "x.bin", lambda tmp: open(tmp, "wb").close())
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    for name in ("summary.json", "deep/x.bin", "plain"):
        assert oct(stat.S_IMODE((tmp_path / name).stat().st_mode)) == f"0o{mode}", name  # not mkstemp's 0o600
    assert (tmp_path / "summary.json").read_text() == '{"a": 1}'


def test_disabled_cache_writes_nothing(tmp_path):
    cache = Cache(tmp_path / "c", enabled=False)
    cache.json("j", "k", lambda: {"a": 1})
    assert not (tmp_path / "c").exists()


def test_keys_depend_on_every_part():
    assert make_key("a", {"x": 1, "y": 2}) == make_key("a", {"y": 2, "x": 1})
    assert make_key("a", {"x": 1}) != make_key("a", {"x": 2})


def _unit(rng, n, d=16):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_indexes_find_the_exact_neighbours_on_easy_data(kind):
    rng = np.random.default_rng(0)
    base = _unit(rng, 2000)
    queries = base[:50] + 0.01 * _unit(rng, 50)
    spec = IndexSpec(kind=kind, nprobe=64)
    index = spec.build(base)
    spec.configure(index)
    _, ids = search(index, queries, 5)
    assert (ids[:, 0] == np.arange(50)).mean() >= 0.96


def test_ties_are_broken_by_position_and_k_is_capped():
    spec = IndexSpec()
    vecs = np.tile(np.eye(4, dtype=np.float32)[:1], (6, 1))  # six identical vectors
    index = spec.build(vecs)
    scores, ids = search(index, vecs[:1], 4)
    assert ids[0].tolist() == [0, 1, 2, 3]
    _, ids = search(index, vecs[:1], 50)
    assert ids.shape == (1, 6)


def _chunk(doc, s, e):
    return Chunk(f"{doc}#{s}-{e}", doc, s, e, "x" * (e - s))


def _ret(c, score=1.0):
    return Retrieved(c.id, c.doc_id, c.start, c.end, score, c.text)


def _scores(run: RunSample, top_k: int, names: list[str]) -> dict:
    """Each metric through the catalogue, on the run record as the variant passing on ``top_k`` items."""
    sample = run.rag_sample(Cut("top_k", top_k))
    out = {}
    for name in names:
        spec = spec_of(name)
        call = {f: sample.get(f) for f in (*spec.inputs, *spec.optional)} | dict(spec.options)
        out[name.split("@")[0]] = spec.fn(**call)
    return out


RANKED = ["hit@3", "mrr@3", "precision@3", "recall@3", "ndcg@3", "span_recall", "span_precision", "span_iou"]


def test_span_relevance_by_overlap_on_a_hand_case():
    chunks = [_chunk("a", 0, 100), _chunk("a", 80, 180), _chunk("a", 160, 260), _chunk("b", 0, 100)]
    sample = TestSample("q", "?", "", (Span("a", 90, 120),))  # overlaps chunks 0 and 1
    locator = ChunkLocator(chunks)
    assert locator.n_relevant(sample) == 2
    ranked = [_ret(chunks[3]), _ret(chunks[1]), _ret(chunks[2]), _ret(chunks[0])]
    run = RunSample("q", "v", tuple(ranked), evidence=(("a", 90, 120),), n_relevant=2)
    got = _scores(run, 3, RANKED)
    assert got["hit"].value == 1.0
    assert got["mrr"].value == 0.5
    assert got["precision"].value == pytest.approx(1 / 3)
    assert got["recall"].value == 0.5  # one of the two overlapping chunks is in the top 3
    assert got["ndcg"].value == pytest.approx((1 / np.log2(3)) / (1 + 1 / np.log2(3)))
    # characters: gold 30 (90..120); retrieved a:80..260 (180) + b:0..100 (100); overlap 30
    assert got["span_recall"].value == 1.0
    assert got["span_precision"].value == pytest.approx(30 / 280)
    assert got["span_iou"].value == pytest.approx(30 / 280)
    assert got["hit"].explanation["relevant_retrieved"] == ["a:80-180"]
    # The same record as a variant that passes on only its first item: nothing relevant is passed on,
    # while ndcg@3 keeps its ideal of two relevant items.
    one = _scores(run, 1, RANKED)
    assert one["hit"].value == 0.0 and one["recall"].value == 0.0 and one["span_recall"].value == 0.0
    assert one["precision"].value == 0.0 and one["hit"].explanation["n_passed"] == 1


def test_no_overlapping_chunk_is_undefined_not_zero():
    chunks = [_chunk("a", 0, 10)]
    sample = TestSample("q", "?", "", (Span("zzz", 0, 5),))
    run = RunSample("q", "v", (_ret(chunks[0]),), evidence=(("zzz", 0, 5),),
                    n_relevant=ChunkLocator(chunks).n_relevant(sample))
    got = _scores(run, 1, ["ndcg@1"])
    assert got["ndcg"].status == "undefined" and got["ndcg"].value is None
    assert "no item of this chunking" in got["ndcg"].explanation["reason"]


def test_qrels_mode_collapses_chunks_to_documents():
    chunks = [_chunk("d1", 0, 10), _chunk("d1", 10, 20), _chunk("d2", 0, 10), _chunk("d3", 0, 10)]
    run = RunSample("q", "v", tuple(_ret(c) for c in chunks), qrels={"d2": 1, "d9": 1})
    got = _scores(run, 2, ["mrr@2", "recall@2", "precision@2", "hit@2"])
    # top_k=2 counts documents: d1 (its best chunk) and d2
    assert got["mrr"].value == 0.5 and got["recall"].value == 0.5 and got["precision"].value == 0.5
    assert got["hit"].explanation["relevant_retrieved"] == ["d2:0-10"]


class _Dies:
    """A hashing embedder that raises after embedding ``lives`` calls' worth, as a killed process would."""

    def __init__(self, lives: int) -> None:
        self.lives, self.embedded = lives, 0

    def identity(self) -> dict:
        return {"name": "dies", "dim": 8}

    def embed(self, texts, progress=False):
        if self.lives == 0:
            raise KeyboardInterrupt
        self.lives -= 1
        self.embedded += len(texts)
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, hash(t) % 8] = 1.0
        return out


def test_a_stopped_embedding_resumes_from_its_last_finished_block(tmp_path, monkeypatch):
    import ragsweep.harness.pipeline.pipeline as pipeline
    from ragsweep.gen import Corpus, Document
    from ragsweep.gen.chunking import RecursiveChunker

    monkeypatch.setattr(pipeline, "EMBED_BLOCK", 4)
    corpus = Corpus([Document(f"d{i}.txt", f"Document number {i} is about topic {i * 7}.") for i in range(10)], "t")

    def pipe(embedder):
        return pipeline.Pipeline(corpus, RecursiveChunker(512, 0), embedder, IndexSpec(), Cache(tmp_path))

    first = _Dies(lives=2)  # two blocks of 4 done, stopped in the third
    with pytest.raises(KeyboardInterrupt):
        pipe(first).index
    assert first.embedded == 8
    second = _Dies(lives=5)
    p = pipe(second)
    assert p.index.ntotal == 10
    assert second.embedded == 2 and p.cost.embedded_texts == 2  # only the unfinished block
    assert not list((tmp_path / pipeline.BLOCKS).glob("*.npy"))  # blocks go once the whole is cached
    whole = _Dies(lives=5)
    assert pipe(whole).index.ntotal == 10 and whole.embedded == 0  # and the whole is a hit
    fresh = Cache(tmp_path / "fresh")
    alone = pipeline.Pipeline(corpus, RecursiveChunker(512, 0), _Dies(lives=5), IndexSpec(), fresh)
    vecs = alone._embed("vectors", alone.vectors_key, [c.text for c in alone.chunks])
    assert np.array_equal(vecs, np.load(Cache(tmp_path).path("vectors", p.vectors_key, "npy")))


def test_an_entry_another_job_removes_while_it_is_read_is_computed_again(tmp_path, monkeypatch):
    import ragsweep.harness.cache as cache_module

    cache = Cache(tmp_path)
    key = make_key("block", 0)
    cache.array("embed_blocks", key, lambda: np.zeros(3, dtype=np.float32))
    real = cache_module.file_digest
    removed = []

    def removed_first(path):  # the other job's discard lands between the checksum read and the digest
        if path.suffix == ".npy" and not removed:
            removed.append(path)
            cache.discard("embed_blocks", key, "npy")
        return real(path)

    monkeypatch.setattr(cache_module, "file_digest", removed_first)
    got = cache.array("embed_blocks", key, lambda: np.ones(3, dtype=np.float32))
    assert removed and got.tolist() == [1, 1, 1] and not cache.quarantined
    assert cache.array("embed_blocks", key, lambda: np.full(3, 2.0)).tolist() == [1, 1, 1]  # and cached again
