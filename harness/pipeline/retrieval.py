"""Lexical and hybrid retrieval: BM25 over the chunks, and fusion of BM25 with the dense ranking.

The ``retrieval`` config group picks one:

- ``dense``: the embedder's vectors in the FAISS index (``harness/pipeline/index.py``).
- ``bm25``: Okapi BM25 over the chunk texts with ``bm25s`` (Lù, 2024: sparse-matrix BM25, the
  Lucene, Robertson, ATIRE, BM25L and BM25+ variants, numpy only, an index that saves to plain
  arrays). Chosen over ``rank_bm25`` (pure-Python scoring, too slow for a BEIR corpus) and
  Pyserini (needs a JVM). Tokens are lowercased words, English stopwords dropped and Snowball-
  stemmed (PyStemmer), as Lucene's English analyzer does for BEIR's BM25 baseline.
- ``hybrid``: both, fused by reciprocal-rank fusion (Cormack et al., SIGIR 2009:
  score(d) = sum over rankings of 1 / (rrf_k + rank(d)), rank from 1) or by a convex combination of
  min-max normalised scores (alpha x dense + (1 - alpha) x BM25; a candidate missing from one list
  scores 0 there).

Ties are broken by the lower chunk position, as in dense search, so a ranking is reproducible.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsweep.metrics import InputError

METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
FUSIONS = ("rrf", "convex")


@dataclass(frozen=True)
class BM25Spec:
    """BM25 parameters and tokenisation; ``params()`` goes into the index's cache key."""

    k1: float = 1.2
    b: float = 0.75
    method: str = "lucene"
    stemmer: str | None = "english"
    stopwords: str | None = "en"
    lower: bool = True

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"retrieval.method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if not (isinstance(self.k1, (int, float)) and self.k1 >= 0):
            raise InputError(f"retrieval.k1 must be a number >= 0, got {self.k1!r}")
        if not (isinstance(self.b, (int, float)) and 0 <= self.b <= 1):
            raise InputError(f"retrieval.b must be in [0, 1], got {self.b!r}")

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "method": self.method, "stemmer": self.stemmer,
                "stopwords": self.stopwords, "lower": self.lower, "bm25s": _bm25s_version()}

    def _stem(self) -> Any:
        if not self.stemmer:
            return None
        try:
            import Stemmer
        except ImportError as exc:
            raise InputError("BM25 stemming needs PyStemmer: pip install PyStemmer "
                             "(or retrieval.stemmer=null)") from exc
        try:
            return Stemmer.Stemmer(self.stemmer).stemWords
        except KeyError as exc:
            raise InputError(f"retrieval.stemmer: no Snowball stemmer for {self.stemmer!r}") from exc

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        out = bm25s.tokenize(list(texts), lower=self.lower, stopwords=self.stopwords or [], stemmer=self._stem(),
                             return_ids=False, show_progress=False)
        return [list(t) for t in out]

    def build(self, texts: Sequence[str], folder: Path) -> None:
        """Index ``texts`` (in order: position = chunk position) and save the index into ``folder``."""
        import bm25s

        model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        model.index(self.tokenize(texts), show_progress=False)
        model.save(str(folder), show_progress=False)
        (folder / "n_docs.json").write_text(json.dumps(len(texts)), encoding="utf-8")

    @staticmethod
    def load(folder: Path) -> Any:
        import bm25s

        model = bm25s.BM25.load(str(folder), show_progress=False, verbosity=0)
        model.n_docs = json.loads((folder / "n_docs.json").read_text(encoding="utf-8"))
        return model

    def search(self, model: Any, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` (scores, positions) per query; -1 pads (no word of the query matches any chunk)."""
        n = int(model.n_docs)
        k = max(1, min(k, n))
        tokens = self.tokenize(queries)
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        vocab = model.vocab_dict
        for row, toks in enumerate(tokens):
            known = [t for t in toks if t in vocab]
            if not known:
                continue
            full = np.asarray(model.get_scores(known), dtype=np.float64)
            hit = np.flatnonzero(full > 0)
            # Rank by score, then by position (a stable, reproducible order for ties).
            order = hit[np.lexsort((hit, -np.round(full[hit], 6)))][:k]
            scores[row, :len(order)] = full[order]
            ids[row, :len(order)] = order
        return scores, ids


def _bm25s_version() -> str:
    try:
        import bm25s
    except ImportError as exc:
        raise InputError("retrieval=bm25 needs bm25s: pip install bm25s PyStemmer") from exc
    return str(bm25s.__version__)


@dataclass(frozen=True)
class Retrieval:
    """The ``retrieval`` group: ``mode`` dense, bm25 or hybrid, with BM25's and the fusion's settings.

    Attributes:
        mode: ``dense``, ``bm25`` or ``hybrid``.
        bm25: The BM25 settings (bm25 and hybrid).
        fusion: ``rrf`` or ``convex`` (hybrid).
        rrf_k: RRF's rank offset (60 in Cormack et al.).
        alpha: Weight of the dense score in the convex combination (1: dense only, 0: BM25 only).
        depth: Candidates taken from each ranking before fusing (at least the K searched).
    """

    mode: str = "dense"
    bm25: BM25Spec = BM25Spec()
    fusion: str = "rrf"
    rrf_k: float = 60.0
    alpha: float = 0.5
    depth: int = 100

    def __post_init__(self) -> None:
        if self.mode not in ("dense", "bm25", "hybrid"):
            raise InputError(f"retrieval.mode must be dense, bm25 or hybrid, got {self.mode!r}")
        if self.fusion not in FUSIONS:
            raise InputError(f"retrieval.fusion must be rrf or convex, got {self.fusion!r}")
        if not (isinstance(self.alpha, (int, float)) and 0 <= self.alpha <= 1):
            raise InputError(f"retrieval.alpha must be in [0, 1], got {self.alpha!r}")
        if not (isinstance(self.rrf_k, (int, float)) and self.rrf_k >= 0):
            raise InputError(f"retrieval.rrf_k must be a number >= 0, got {self.rrf_k!r}")
        if not (isinstance(self.depth, int) and self.depth >= 1):
            raise InputError(f"retrieval.depth must be a positive integer, got {self.depth!r}")

    @property
    def dense(self) -> bool:
        return self.mode in ("dense", "hybrid")

    @property
    def lexical(self) -> bool:
        return self.mode in ("bm25", "hybrid")

    def params(self) -> dict[str, Any]:
        """What names a variant (and keys the fused search)."""
        if self.mode == "dense":
            return {}
        if self.mode == "bm25":
            return {k: v for k, v in self.bm25.params().items() if k != "bm25s"}
        fused = {"fusion": self.fusion, "depth": self.depth}
        fused.update({"rrf_k": self.rrf_k} if self.fusion == "rrf" else {"alpha": self.alpha})
        return fused

    def fuse(self, dense: tuple[np.ndarray, np.ndarray], lexical: tuple[np.ndarray, np.ndarray],
             k: int) -> tuple[np.ndarray, np.ndarray]:
        """Fuse two rankings per query into the top ``k`` (scores, positions)."""
        if self.fusion == "rrf":
            return rrf([dense, lexical], k, self.rrf_k)
        n_q = len(dense[0])
        scores = np.full((n_q, k), -np.inf, dtype=np.float32)
        ids = np.full((n_q, k), -1, dtype=np.int64)
        for row in range(n_q):
            combined: dict[int, float] = {}
            for (s_all, i_all), weight in ((dense, self.alpha), (lexical, 1.0 - self.alpha)):
                valid = i_all[row] >= 0
                s, i = s_all[row][valid].astype(np.float64), i_all[row][valid]
                if not len(i):
                    continue
                span = s.max() - s.min()
                contrib = weight * ((s - s.min()) / span if span > 0 else np.ones_like(s))
                for pos, c in zip(i.tolist(), contrib.tolist()):
                    combined[pos] = combined.get(pos, 0.0) + c
            _put(scores, ids, row, combined, k)
        return scores, ids


def _put(scores: np.ndarray, ids: np.ndarray, row: int, combined: dict[int, float], k: int) -> None:
    """The top ``k`` of fused scores into row ``row``, ties by the lower position."""
    ranked = sorted(combined.items(), key=lambda kv: (-round(kv[1], 12), kv[0]))[:k]
    for j, (pos, value) in enumerate(ranked):
        scores[row, j], ids[row, j] = value, pos


def rrf(rankings: Sequence[tuple[np.ndarray, np.ndarray]], k: int, rrf_k: float = 60.0) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal-rank fusion of any number of rankings of the same queries (each (scores, positions),
    -1 padding): the top ``k`` of sum 1 / (rrf_k + rank), rank from 1, ties by the lower position.
    Hybrid retrieval fuses its dense and BM25 rankings with it, ``query=multi_query`` its rewrites'."""
    n_q = len(rankings[0][0])
    scores = np.full((n_q, k), -np.inf, dtype=np.float32)
    ids = np.full((n_q, k), -1, dtype=np.int64)
    for row in range(n_q):
        combined: dict[int, float] = {}
        for _, i_all in rankings:
            i = i_all[row][i_all[row] >= 0]
            for pos, c in zip(i.tolist(), (1.0 / (rrf_k + np.arange(1, len(i) + 1))).tolist()):
                combined[pos] = combined.get(pos, 0.0) + c
        _put(scores, ids, row, combined, k)
    return scores, ids


def retrieval(mode: str = "dense", *, fusion: str = "rrf", rrf_k: float = 60.0, alpha: float = 0.5,
              depth: int = 100, k1: float = 1.2, b: float = 0.75, method: str = "lucene",
              stemmer: str | None = "english", stopwords: str | None = "en", lower: bool = True) -> Retrieval:
    """Build the ``retrieval`` group's object from its flat config keys."""
    return Retrieval(mode, BM25Spec(k1, b, method, stemmer, stopwords, lower), fusion, rrf_k, alpha, depth)
