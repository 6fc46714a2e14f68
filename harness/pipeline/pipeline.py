"""One retrieval variant, stage by stage, each stage cached under a key of what changes it.

corpus fingerprint + chunker params            -> chunks       (json: doc_id, start, end)
chunks key + embedder identity                 -> chunk vectors (npy)
vectors key + index params                     -> FAISS index  (faiss)
query texts + embedder identity                -> query vectors (npy)
index key + query key + K + search params      -> top-K ids and scores (npz)
chunks key + context params                    -> the span passed on per chunk (json; context=window|parent)

Query rewrites (``query=multi_query|hyde``) are searched like queries, each text's ranking cached;
a reranker (``rerank=llm|cross_encoder``) reorders the chunks found before the context expands them
(its LLM calls cached in the LLM cache).

A repeated sweep recomputes nothing; a changed top-K or search parameter reuses the index; a changed
chunk size reuses nothing but the query vectors. Models are loaded only when a stage misses.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from ragsweep.gen import Chunk, Chunker, Corpus
from ragsweep.harness.cache import Cache, make_key
from ragsweep.harness.pipeline.context import Chunks, distinct, expand
from ragsweep.harness.pipeline.index import IndexSpec, search
from ragsweep.harness.pipeline.retrieval import Retrieval, rrf
from ragsweep.harness.records import Retrieved
from ragsweep.metrics import Embedder

log = logging.getLogger(__name__)

#: Texts embedded (and cached) per block when a stage embeds more: what a stopped run loses at most.
EMBED_BLOCK = 2048
#: The cache's kind for those blocks, removed once the whole stage is cached.
BLOCKS = "embed_blocks"

#: A reranker as the search calls it: (queries, chunks found per query) -> per query (new order, scores).
Rerank = Callable[[Sequence[str], Sequence[Sequence[Retrieved]]], Sequence[tuple[list[int], list[float]]]]


@dataclass
class Cost:
    """Where a variant's time went, and what it had to compute (cache misses) versus reuse."""

    seconds: dict[str, float] = field(default_factory=dict)
    embedded_texts: int = 0

    def timed(self, stage: str, start: float) -> None:
        self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - start


class CachedEmbedder:
    """The job's embedder with a memory of every vector it made and a disk cache for each batch.

    Metrics embed one or two texts per sample; :meth:`prime` embeds all of them in one batched,
    disk-cached call first, so the per-sample calls are lookups and a repeated sweep embeds nothing.
    """

    def __init__(self, embedder: Embedder, cache: Cache, identity: dict[str, Any]) -> None:
        self.embedder, self.cache, self._identity = embedder, cache, identity
        self._memo: dict[str, np.ndarray] = {}

    def identity(self) -> dict[str, Any]:
        return self._identity

    def prime(self, texts: Sequence[str], progress: bool = False) -> None:
        new = sorted({t for t in texts if t not in self._memo})
        if new:
            key = make_key("texts", hashlib.sha256("\0".join(new).encode()).hexdigest(), self._identity)
            vecs = self.cache.array("texts", key, lambda: self.embedder.embed(new, progress=progress))
            self._memo.update(zip(new, vecs))

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        self.prime(texts, progress)
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)


class Pipeline:
    """Chunks -> vectors -> index -> search for one (corpus, chunker, embedder, index, retrieval) combination.

    ``retrieval`` picks dense search (FAISS), BM25 over the chunk texts, or both fused
    (:mod:`ragsweep.harness.pipeline.retrieval`); each ranking is cached on its own, so a hybrid sweep reuses the
    dense vectors, index and search of a dense one. ``context`` expands each hit into what is passed
    on (:mod:`ragsweep.harness.pipeline.context`) after the search, so every context option shares one search.
    """

    def __init__(self, corpus: Corpus, chunker: Chunker, embedder: Embedder, index: IndexSpec,
                 cache: Cache, progress: bool = False, retrieval: Retrieval | None = None,
                 context: Chunks | None = None) -> None:
        self.corpus, self.chunker, self.embedder, self.spec = corpus, chunker, embedder, index
        self.cache, self.progress = cache, progress
        self.retrieval = retrieval or Retrieval()
        self.context = context or Chunks()
        self.cost = Cost()
        self.indexes: dict[str, dict[str, Any]] = {}   # per index: build seconds (when built) and bytes

    @cached_property
    def embedder_id(self) -> dict[str, Any]:
        return self.embedder.identity()

    @cached_property
    def cached_embedder(self) -> CachedEmbedder:
        """The job's embedder behind the disk cache, for texts other than chunks and queries."""
        return CachedEmbedder(self.embedder, self.cache, self.embedder_id)

    @cached_property
    def chunks_key(self) -> str:
        return make_key("chunks", self.corpus.fingerprint(), self.chunker.params())

    @cached_property
    def chunks(self) -> list[Chunk]:
        t = time.perf_counter()

        def compute() -> list[list[Any]]:
            return [[c.doc_id, c.start, c.end] for c in self.chunker.chunk(self.corpus.documents)]

        rows = self.cache.json("chunks", self.chunks_key, compute)
        out = []
        for doc_id, start, end in rows:
            text = self.corpus.get(doc_id).text[start:end]
            out.append(Chunk(f"{doc_id}#{start}-{end}", doc_id, start, end, text))
        self.cost.timed("chunk", t)
        return out

    @cached_property
    def passed_spans(self) -> list[tuple[int, int]] | None:
        """Per chunk position, the span of its document passed on for it; None for ``context=chunks``."""
        if not self.context.expands:
            return None
        t = time.perf_counter()
        key = make_key("context", self.chunks_key, self.context.params())
        rows = self.cache.json("context", key,
                               lambda: [list(s) for s in expand(self.context, self.corpus.documents, self.chunks)])
        self.cost.timed("context", t)
        return [(int(s), int(e)) for s, e in rows]

    @cached_property
    def units(self) -> list[Chunk]:
        """What can be passed on: the chunks, or the distinct spans the context expands them into.

        Span relevance counts its judged-relevant items among these (``n_relevant``).
        """
        if self.passed_spans is None:
            return self.chunks
        seen = {(c.doc_id, *span) for c, span in zip(self.chunks, self.passed_spans)}
        return [Chunk(f"{d}#{s}-{e}", d, s, e, self.corpus.get(d).text[s:e]) for d, s, e in sorted(seen)]

    def _embed(self, kind: str, key: str, texts: list[str]) -> np.ndarray:
        """The vectors of ``texts``, cached whole under ``key``. More than :data:`EMBED_BLOCK` texts are
        embedded block by block, each block cached as it is done: a run stopped part way through a large
        corpus (interrupted, killed, out of time) embeds only the blocks it had not finished. The blocks
        are removed once the whole is cached."""
        # Asymmetric embedders (e5: "query: " / "passage: ") embed queries their own way.
        fn = getattr(self.embedder, "embed_queries", self.embedder.embed) if kind == "queries" else self.embedder.embed
        starts = range(0, len(texts), EMBED_BLOCK)

        def embed(part: list[str]) -> np.ndarray:
            t = time.perf_counter()
            vecs = fn(part, progress=self.progress)
            self.cost.timed("embed", t)
            self.cost.embedded_texts += len(part)
            return vecs

        def block_key(start: int) -> str:
            return make_key(key, start, min(EMBED_BLOCK, len(texts) - start))

        def block(start: int) -> np.ndarray:
            part = texts[start: start + EMBED_BLOCK]
            return self.cache.array(BLOCKS, block_key(start), lambda: embed(part))

        def compute() -> np.ndarray:
            if len(texts) <= EMBED_BLOCK:
                return embed(texts)
            if self.progress:
                log.info("embedding %d texts in %d blocks of %d (each cached as it is done)",
                         len(texts), len(starts), EMBED_BLOCK)
            return np.concatenate([block(s) for s in starts])

        vecs = self.cache.array(kind, key, compute)
        if len(texts) > EMBED_BLOCK:
            for s in starts:
                self.cache.discard(BLOCKS, block_key(s), "npy")
        return vecs

    @cached_property
    def vectors_key(self) -> str:
        return make_key("vectors", self.chunks_key, self.embedder_id)

    @cached_property
    def index_key(self) -> str:
        return make_key("index", self.vectors_key, self.spec.params())

    def _built(self, name: str, key: str, seconds: float | None, nbytes: int) -> None:
        """Record an index's size, and its build time (kept beside the cached index for later hits)."""
        meta = self.cache.json("index_meta", key, lambda: {"build_seconds": seconds})
        self.indexes[name] = {"build_seconds": meta.get("build_seconds") if seconds is None else seconds,
                              "bytes": int(nbytes)}

    @cached_property
    def index(self) -> Any:
        import faiss

        built_in: list[float] = []

        def compute() -> Any:
            vecs = self._embed("vectors", self.vectors_key, [c.text for c in self.chunks])
            t = time.perf_counter()
            built = self.spec.build(vecs)
            built_in.append(time.perf_counter() - t)
            self.cost.timed("index", t)
            return built

        index = self.cache.faiss_index(self.index_key, compute)
        self.spec.configure(index)
        self._built("dense", self.index_key, built_in[0] if built_in else None,
                    faiss.serialize_index(index).nbytes)
        return index

    @cached_property
    def bm25_key(self) -> str:
        return make_key("bm25", self.chunks_key, self.retrieval.bm25.params())

    @cached_property
    def bm25(self) -> Any:
        spec = self.retrieval.bm25
        built_in: list[float] = []

        def build(folder: Any) -> None:
            t = time.perf_counter()
            spec.build([c.text for c in self.chunks], folder)
            built_in.append(time.perf_counter() - t)
            self.cost.timed("index", t)

        model = self.cache.folder("bm25", self.bm25_key, build, spec.load)
        nbytes = sum(np.asarray(a).nbytes for a in model.scores.values() if hasattr(a, "nbytes"))
        self._built("bm25", self.bm25_key, built_in[0] if built_in else None, nbytes)
        return model

    def _queries_key(self, queries: Sequence[str]) -> str:
        return hashlib.sha256("\0".join(queries).encode()).hexdigest()

    def _dense(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        qkey = make_key("queries", self._queries_key(queries), self.embedder_id)
        skey = make_key("search", self.index_key, qkey, k, self.spec)

        def compute() -> dict[str, np.ndarray]:
            qvecs = self._embed("queries", qkey, list(queries))
            index = self.index
            t = time.perf_counter()
            scores, ids = search(index, qvecs, k, progress=self.progress)
            self.cost.timed("search", t)
            return {"scores": scores, "ids": ids}

        found = self.cache.arrays("search", skey, compute)
        if "dense" not in self.indexes:
            self.index  # noqa: B018 - records the index's size (and build time) for the cost columns
        return found["scores"], found["ids"]

    def _lexical(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        skey = make_key("bm25_search", self.bm25_key, self._queries_key(queries), k)

        def compute() -> dict[str, np.ndarray]:
            model = self.bm25
            t = time.perf_counter()
            scores, ids = self.retrieval.bm25.search(model, queries, k)
            self.cost.timed("search", t)
            return {"scores": scores, "ids": ids}

        found = self.cache.arrays("search", skey, compute)
        if "bm25" not in self.indexes:
            self.bm25  # noqa: B018 - records the index's size (and build time)
        return found["scores"], found["ids"]

    def rank(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` (scores, chunk positions) per query under the retrieval mode; -1 pads."""
        mode = self.retrieval
        if mode.mode == "dense":
            return self._dense(queries, k)
        if mode.mode == "bm25":
            return self._lexical(queries, k)
        depth = max(k, mode.depth)
        return mode.fuse(self._dense(queries, depth), self._lexical(queries, depth), k)

    def rank_rewrites(self, texts: Sequence[Sequence[str]], k: int, rrf_k: float = 60.0) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` per query when each query searches with several texts (``query=multi_query``): every
        text ranked ``max(k, retrieval.depth)`` deep, then fused by reciprocal-rank fusion. A query with
        one text (``plain``, ``hyde``) is that text's ranking."""
        flat = [t for ts in texts for t in ts]
        if all(len(ts) == 1 for ts in texts):
            return self.rank(flat, k)
        s_all, i_all = self.rank(flat, max(k, self.retrieval.depth))
        scores = np.full((len(texts), k), -np.inf, dtype=np.float32)
        ids = np.full((len(texts), k), -1, dtype=np.int64)
        start = 0
        for row, ts in enumerate(texts):
            part = [(s_all[j:j + 1], i_all[j:j + 1]) for j in range(start, start + len(ts))]
            fused_s, fused_i = rrf(part, k, rrf_k)
            scores[row], ids[row] = fused_s[0], fused_i[0]
            start += len(ts)
        return scores, ids

    def search(self, queries: Sequence[str], k: int, *, texts: Sequence[Sequence[str]] | None = None,
               rrf_k: float = 60.0, rerank: Rerank | None = None) -> list[list[Retrieved]]:
        """Top-``k`` chunks per query, as :class:`Retrieved` in rank order.

        ``texts``: per query, what is searched instead of it (``query=multi_query|hyde``,
        :meth:`rank_rewrites`). ``rerank``: called with the queries and the chunks found; it returns
        each query's new order and scores (``harness/pipeline/rerank.py``), applied before any expansion.
        With an expanding context each hit is its expanded span (``hit``: the chunk found), and a hit
        whose span lies inside a better-ranked one is dropped, so a query may get fewer than ``k``.
        """
        scores, ids = self.rank(queries, k) if texts is None else self.rank_rewrites(texts, k, rrf_k)
        chunks = self.chunks
        results = []
        for srow, irow in zip(scores, ids):
            results.append([Retrieved(chunks[i].id, chunks[i].doc_id, chunks[i].start, chunks[i].end,
                                      float(s), chunks[i].text) for s, i in zip(srow, irow) if i >= 0])
        positions = [irow[irow >= 0] for irow in ids]
        if rerank is not None:
            t = time.perf_counter()
            orders = rerank(queries, results)
            results = [[replace(got[j], score=float(s)) for j, s in zip(order, sc)]
                       for got, (order, sc) in zip(results, orders)]
            positions = [pos[order] for pos, (order, _) in zip(positions, orders)]
            self.cost.timed("rerank", t)
        if self.passed_spans is None:
            return results
        return [self._expanded(found, pos) for found, pos in zip(results, positions)]

    def _expanded(self, found: list[Retrieved], ids: np.ndarray) -> list[Retrieved]:
        spans = [(r.doc_id, *self.passed_spans[i]) for r, i in zip(found, ids)]  # type: ignore[index]
        out = []
        for j in distinct(spans):
            r, (d, s, e) = found[j], spans[j]
            out.append(Retrieved(r.chunk_id, d, s, e, r.score, self.corpus.get(d).text[s:e], hit=(r.start, r.end)))
        return out

    def latency(self, queries: Sequence[str], k: int, n: int = 50) -> dict[str, float] | None:
        """Per-query search latency (ms, p50 and p95) over up to ``n`` queries sent one at a time:
        the query's encoding (embedding, tokenising) and search, uncached, as an application would
        serve them. One warm-up query first; None when ``n`` is 0."""
        if n <= 0 or not queries:
            return None
        mode = self.retrieval
        index = self.index if mode.dense else None
        model = self.bm25 if mode.lexical else None
        embed = getattr(self.embedder, "embed_queries", self.embedder.embed) if mode.dense else None
        depth = max(k, mode.depth) if mode.mode == "hybrid" else k

        def one(q: str) -> None:
            dense = lexical = None
            if index is not None and embed is not None:
                dense = search(index, np.asarray(embed([q]), dtype=np.float32), depth)
            if model is not None:
                lexical = mode.bm25.search(model, [q], depth)
            if dense is not None and lexical is not None:
                mode.fuse(dense, lexical, k)

        sample = list(queries[:n])
        one(sample[0])
        times = []
        for q in sample:
            t = time.perf_counter()
            one(q)
            times.append((time.perf_counter() - t) * 1000)
        return {"p50_ms": float(np.percentile(times, 50)), "p95_ms": float(np.percentile(times, 95)),
                "n_queries": len(times)}
