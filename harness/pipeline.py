"""One retrieval variant, stage by stage, each stage cached under a key of what changes it.

corpus fingerprint + chunker params            -> chunks       (json: doc_id, start, end)
chunks key + embedder identity                 -> chunk vectors (npy)
vectors key + index params                     -> FAISS index  (faiss)
query texts + embedder identity                -> query vectors (npy)
index key + query key + K + search params      -> top-K ids and scores (npz)

A repeated sweep recomputes nothing; a changed top-K or search parameter reuses the index; a changed
chunk size reuses nothing but the query vectors. Models are loaded only when a stage misses.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ragsweep.gen.chunking import Chunk, Chunker
from ragsweep.gen.documents import Corpus
from ragsweep.harness.cache import Cache, make_key
from ragsweep.harness.records import Retrieved
from ragsweep.harness.retriever import IndexSpec, search
from ragsweep.metrics.embedding import Embedder

log = logging.getLogger(__name__)


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
    """Chunks -> vectors -> index -> search for one (corpus, chunker, embedder, index) combination."""

    def __init__(self, corpus: Corpus, chunker: Chunker, embedder: Embedder, index: IndexSpec,
                 cache: Cache, progress: bool = False) -> None:
        self.corpus, self.chunker, self.embedder, self.spec = corpus, chunker, embedder, index
        self.cache, self.progress = cache, progress
        self.cost = Cost()

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

    def _embed(self, kind: str, key: str, texts: list[str]) -> np.ndarray:
        def compute() -> np.ndarray:
            t = time.perf_counter()
            vecs = self.embedder.embed(texts, progress=self.progress)
            self.cost.timed("embed", t)
            self.cost.embedded_texts += len(texts)
            return vecs

        return self.cache.array(kind, key, compute)

    @cached_property
    def vectors_key(self) -> str:
        return make_key("vectors", self.chunks_key, self.embedder_id)

    @cached_property
    def index_key(self) -> str:
        return make_key("index", self.vectors_key, self.spec.params())

    @cached_property
    def index(self) -> Any:
        def compute() -> Any:
            vecs = self._embed("vectors", self.vectors_key, [c.text for c in self.chunks])
            t = time.perf_counter()
            built = self.spec.build(vecs)
            self.cost.timed("index", t)
            return built

        index = self.cache.faiss_index(self.index_key, compute)
        self.spec.configure(index)
        return index

    def search(self, queries: Sequence[str], k: int) -> list[list[Retrieved]]:
        """Top-``k`` chunks per query, as :class:`Retrieved` in rank order."""
        qkey = make_key("queries", hashlib.sha256("\0".join(queries).encode()).hexdigest(), self.embedder_id)
        skey = make_key("search", self.index_key, qkey, k, self.spec)

        def compute() -> dict[str, np.ndarray]:
            qvecs = self._embed("queries", qkey, list(queries))
            index = self.index
            t = time.perf_counter()
            scores, ids = search(index, qvecs, k, progress=self.progress)
            self.cost.timed("search", t)
            return {"scores": scores, "ids": ids}

        found = self.cache.arrays("search", skey, compute)
        chunks = self.chunks
        results = []
        for srow, irow in zip(found["scores"], found["ids"]):
            results.append([Retrieved(chunks[i].id, chunks[i].doc_id, chunks[i].start, chunks[i].end,
                                      float(s), chunks[i].text) for s, i in zip(srow, irow) if i >= 0])
        return results
