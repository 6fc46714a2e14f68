"""The reference dense retriever: FAISS over L2-normalised embeddings (inner product = cosine).

Index options (the Hydra ``index`` group):

- ``flat``: exact search (``IndexFlatIP``). The default, and the reference the others are judged by.
- ``hnsw``: graph search (``IndexHNSWFlat``, inner-product metric); ``m`` links per node,
  ``ef_construction`` and ``ef_search`` trade build/search time for recall.
- ``ivf``: inverted lists (``IndexIVFFlat``) with ``nlist`` k-means cells (capped so every cell can
  be trained) and ``nprobe`` cells visited per query.

Ties in score are broken by the lower chunk position, so a ranking is the same on every run.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexSpec:
    """What kind of FAISS index to build; ``params()`` goes into the cache key."""

    kind: str = "flat"
    m: int = 32
    ef_construction: int = 200
    ef_search: int = 128
    nlist: int = 0  # 0: about 4 * sqrt(n)
    nprobe: int = 8
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("flat", "hnsw", "ivf"):
            from ragsweep.metrics import InputError

            raise InputError(f"index.kind must be flat, hnsw or ivf, got {self.kind!r}")

    def params(self) -> dict[str, Any]:
        if self.kind == "flat":
            return {"kind": "flat"}
        if self.kind == "hnsw":
            return {"kind": "hnsw", "m": self.m, "ef_construction": self.ef_construction}
        return {"kind": "ivf", "nlist": self.nlist, "seed": self.seed}

    def build(self, vectors: np.ndarray) -> Any:
        import faiss

        n, dim = vectors.shape
        if self.kind == "flat":
            index = faiss.IndexFlatIP(dim)
        elif self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, self.m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.ef_construction
        else:
            # FAISS wants ~39 training points per centroid; fewer cells than that degrade silently.
            nlist = self.nlist or int(4 * math.sqrt(n))
            nlist = max(1, min(nlist, n // 39 or 1))
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = self.seed
            index.train(vectors)
        index.add(vectors)
        return index

    def configure(self, index: Any) -> None:
        """Search-time parameters: not part of the index key, so changing them reuses the index."""
        if self.kind == "hnsw":
            index.hnsw.efSearch = max(self.ef_search, 1)
        elif self.kind == "ivf":
            index.nprobe = max(1, min(self.nprobe, index.nlist))


def search(index: Any, queries: np.ndarray, k: int, batch_size: int = 256, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, positions) per query, ties broken by position; -1 pads short result lists."""
    from tqdm.auto import tqdm

    k = max(1, min(k, index.ntotal))
    # Ask for a few more than k so that ties straddling the cut are resolved by position, not by FAISS.
    extra = min(index.ntotal, k + 8)
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    ids = np.full((len(queries), k), -1, dtype=np.int64)
    for lo in tqdm(range(0, len(queries), batch_size), disable=not progress, desc="search", leave=False):
        s, i = index.search(np.ascontiguousarray(queries[lo : lo + batch_size]), extra)
        for row in range(len(s)):
            valid = i[row] >= 0
            sr, ir = s[row][valid], i[row][valid]
            # Round so float noise between index types does not reorder genuine ties.
            order = np.lexsort((ir, -np.round(sr, 6)))[:k]
            scores[lo + row, : len(order)] = sr[order]
            ids[lo + row, : len(order)] = ir[order]
    return scores, ids
