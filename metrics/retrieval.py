"""Per-query retrieval metrics with trec_eval semantics, and character-span overlap metrics.

Every rank function takes ``gains``: the graded relevance of each retrieved item in rank order
(``gains[0]`` is rank 1; 0 means not relevant). Binary metrics count an item as relevant when its
gain is > 0; with integer grades this is trec_eval's default threshold (rel >= 1). Each function
returns the score of one query; averaging, confidence intervals and significance tests live in
``metrics.stats``.

A query with no relevant item in its judgements scores 0.0 on every metric here, as in trec_eval.
Such a query has no defined recall, AP or nDCG, so callers mark it ``undefined`` instead of
averaging the 0.0 in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ragsweep.metrics.spec import MetricSpec, Span
from ragsweep.metrics.values import MetricValue


#: Why a sample with an empty evidence list (an ``unanswerable`` question of ``ragsweep gen``) has no
#: retrieval score: nothing in the corpus is relevant, so recall, rank and span metrics do not apply.
NO_RELEVANT = "no relevant documents: the question has no evidence (unanswerable: its answer is not in the corpus)"


RankMetric = Callable[[Sequence[float], int, Sequence[float]], float]
"""Uniform signature of ``RANK_METRICS`` entries: ``(gains, k, ideal_gains) -> score``."""


def rank(scores: Mapping[str, float]) -> list[str]:
    """Rank item ids the way trec_eval does.

    Order: score descending, then id descending. trec_eval breaks ties by ``strcmp`` on the docno,
    descending; Python compares ``str`` by code point, which orders exactly like ``strcmp`` on UTF-8
    bytes, so the two agree on any id. Checked against pytrec_eval (e.g. four tied ids rank
    ``d9, d10, c, b``). Scores are compared as full doubles, as trec_eval does.

    Args:
        scores: Retrieval score of each item id.

    Returns:
        Item ids, best first.

    Raises:
        ValueError: If a score is NaN, which has no place in an order.
    """
    if any(math.isnan(s) for s in scores.values()):
        raise ValueError("rank: NaN score")
    return sorted(scores, key=lambda item: (scores[item], item), reverse=True)


def _check(gains: Sequence[float], k: int) -> None:
    # Cut-offs below 1 and negative or NaN grades have no trec_eval meaning; fail instead of guessing.
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if any(not (math.isfinite(g) and g >= 0) for g in gains):
        raise ValueError("gains must be finite numbers >= 0")


def _n_relevant(ideal_gains: Sequence[float]) -> int:
    return sum(1 for g in ideal_gains if g > 0)


def _hits(gains: Sequence[float], k: int, n_relevant: int) -> int:
    hits = sum(1 for g in gains[:k] if g > 0)
    # More relevant items retrieved than exist means the judgements and the run disagree (for
    # instance several chunks credited for one gold span); a recall above 1 would hide that.
    if n_relevant < 0 or hits > n_relevant:
        raise ValueError(f"{hits} relevant items retrieved but n_relevant={n_relevant}")
    return hits


def hit_at_k(gains: Sequence[float], k: int) -> float:
    """Hit@k (trec_eval ``success_k``): whether any of the top k items is relevant.

    hit@k = 1 if gains[i] > 0 for some i < k, else 0. Range {0, 1}, higher is better.
    """
    _check(gains, k)
    return 1.0 if any(g > 0 for g in gains[:k]) else 0.0


def precision_at_k(gains: Sequence[float], k: int) -> float:
    """Precision@k (trec_eval ``P_k``): share of the top k ranks holding a relevant item.

    P@k = |{i < k : gains[i] > 0}| / k. The denominator is k even when fewer than k items were
    retrieved, as in trec_eval. Range [0, 1], higher is better.
    """
    _check(gains, k)
    return sum(1 for g in gains[:k] if g > 0) / k


def recall_at_k(gains: Sequence[float], k: int, n_relevant: int) -> float:
    """Recall@k (trec_eval ``recall_k``): share of the relevant items found in the top k.

    R@k = |{i < k : gains[i] > 0}| / n_relevant. Range [0, 1], higher is better.

    Args:
        gains: Grade of each retrieved item, in rank order.
        k: Cut-off, >= 1.
        n_relevant: Number of judged items with gain > 0, retrieved or not.

    Returns:
        The recall; 0.0 when ``n_relevant == 0`` (undefined; callers mark the query so).

    Raises:
        ValueError: If k < 1, a gain is negative, or more relevant items are retrieved than
            ``n_relevant``.
    """
    _check(gains, k)
    hits = _hits(gains, k, n_relevant)
    return hits / n_relevant if n_relevant else 0.0


def mrr_at_k(gains: Sequence[float], k: int) -> float:
    """Reciprocal rank@k (trec_eval ``recip_rank`` on the run cut to k).

    RR@k = 1 / r, where r is the 1-based rank of the first item with gain > 0, if r <= k;
    0 if no relevant item is in the top k. Range [0, 1], higher is better.
    """
    _check(gains, k)
    for r, g in enumerate(gains[:k], start=1):
        if g > 0:
            return 1.0 / r
    return 0.0


def _dcg(gains: Sequence[float]) -> float:
    # rank r (1-based) is discounted by log2(r + 1); enumerate gives i = r - 1.
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(gains: Sequence[float], k: int, ideal_gains: Sequence[float]) -> float:
    """nDCG@k with linear gain (trec_eval ``ndcg_cut_k``).

    DCG@k = sum_{r=1..k} gain_r / log2(r + 1); nDCG@k = DCG@k / IDCG@k, where IDCG@k is the DCG of
    ``ideal_gains`` sorted descending and cut to k. Range [0, 1], higher is better.

    Args:
        gains: Grade of each retrieved item, in rank order.
        k: Cut-off, >= 1.
        ideal_gains: Grade of every judged item (zeros allowed), retrieved or not.

    Returns:
        The nDCG; 0.0 when no judged item has gain > 0 (undefined; callers mark the query so).

    Raises:
        ValueError: If k < 1, a gain is negative, or DCG exceeds IDCG (run and judgements disagree).
    """
    _check(gains, k)
    _check(ideal_gains, k)
    idcg = _dcg(sorted(ideal_gains, reverse=True)[:k])
    if idcg == 0.0:
        return 0.0
    score = _dcg(gains[:k]) / idcg
    # Tolerance only for summation order; a real excess means gains not covered by ideal_gains.
    if score > 1.0 + 1e-12:
        raise ValueError(f"DCG exceeds IDCG (nDCG={score}); gains are not among ideal_gains")
    return score


def average_precision_at_k(gains: Sequence[float], k: int, n_relevant: int) -> float:
    """Average precision@k (trec_eval ``map_cut_k``).

    AP@k = (1 / n_relevant) * sum_{r <= k, gain_r > 0} P@r. The divisor is the number of relevant
    items, not min(k, n_relevant), so a perfect top 2 out of 5 relevant scores 2/5.
    Range [0, 1], higher is better.

    Args:
        gains: Grade of each retrieved item, in rank order.
        k: Cut-off, >= 1.
        n_relevant: Number of judged items with gain > 0, retrieved or not.

    Returns:
        The AP; 0.0 when ``n_relevant == 0`` (undefined; callers mark the query so).

    Raises:
        ValueError: If k < 1, a gain is negative, or more relevant items are retrieved than
            ``n_relevant``.
    """
    _check(gains, k)
    _hits(gains, k, n_relevant)
    if n_relevant == 0:
        return 0.0
    hits = 0
    total = 0.0
    for r, g in enumerate(gains[:k], start=1):
        if g > 0:
            hits += 1
            total += hits / r
    return total / n_relevant


def _merge(spans: Sequence[Span]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the union of the spans as sorted, disjoint ``(start, end)`` ranges."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in spans:
        if start < 0 or end < start:
            raise ValueError(f"bad span ({doc_id!r}, {start}, {end}): need 0 <= start <= end")
        if end > start:  # an empty span covers no character
            by_doc.setdefault(doc_id, []).append((start, end))
    merged: dict[str, list[tuple[int, int]]] = {}
    for doc_id, ranges in by_doc.items():
        out: list[tuple[int, int]] = []
        for start, end in sorted(ranges):
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        merged[doc_id] = out
    return merged


def _length(merged: dict[str, list[tuple[int, int]]]) -> int:
    return sum(end - start for ranges in merged.values() for start, end in ranges)


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Characters shared by two sorted, disjoint range lists (two-pointer sweep)."""
    i = j = shared = 0
    while i < len(a) and j < len(b):
        shared += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        # Advance whichever range ends first; it cannot meet anything further in the other list.
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return shared


def span_char_metrics(retrieved: Sequence[Span], gold: Sequence[Span]) -> tuple[float, float, float]:
    """Character-level recall, precision and IoU of retrieved spans against gold spans.

    Following Smith & Troynikov (2024), "Evaluating Chunking Strategies for Retrieval" (Chroma),
    with characters in place of tokens. Overlapping spans are merged within each set first, so a
    character counts once. With R and G the sets of (doc_id, character) covered:
    recall = |R ∩ G| / |G|, precision = |R ∩ G| / |R|, IoU = |R ∩ G| / |R ∪ G|.
    Each in [0, 1], higher is better.

    Args:
        retrieved: Retrieved spans ``(doc_id, start, end)``, half-open, in any order.
        gold: Gold evidence spans, same form.

    Returns:
        ``(recall, precision, iou)``. Nothing retrieved (no character covered) gives precision 0.0,
        and recall and IoU 0.0 too.

    Raises:
        ValueError: If gold covers no character (recall is undefined), or a span has
            start < 0 or end < start.
    """
    r, g = _merge(retrieved), _merge(gold)
    g_len = _length(g)
    if g_len == 0:
        raise ValueError("span_char_metrics: gold spans cover no character")
    r_len = _length(r)
    shared = sum(_overlap(r[doc], g[doc]) for doc in r.keys() & g.keys())
    precision = shared / r_len if r_len else 0.0
    return shared / g_len, precision, shared / (r_len + g_len - shared)


def span_gains(retrieved: Sequence[Span], gold: Sequence[Span]) -> list[float]:
    """Binary gain per retrieved span: 1.0 if it shares at least one character with a gold span.

    gain_i = 1 if some gold span has the same doc_id and max(starts) < min(ends), else 0.
    An empty span shares no character, so it scores 0.0.

    Args:
        retrieved: Retrieved spans ``(doc_id, start, end)``, half-open, in rank order.
        gold: Gold evidence spans, same form.

    Returns:
        One gain per retrieved span, in the same order.
    """
    gold_by_doc = _merge(gold)  # merged and validated; overlap with the union = overlap with one
    gains = []
    for doc_id, start, end in retrieved:
        if start < 0 or end < start:
            raise ValueError(f"bad span ({doc_id!r}, {start}, {end}): need 0 <= start <= end")
        hit = any(max(start, s) < min(end, e) for s, e in gold_by_doc.get(doc_id, ()))
        gains.append(1.0 if hit else 0.0)
    return gains


def credit_once(retrieved: Sequence[Span], gains: Sequence[float]) -> list[float]:
    """The gains with each relevant text credited once: an item lying inside an earlier relevant item
    (same document, ``start >= its start``, ``end <= its end``) gains 0.

    The same text passed on twice (a copy of a document standing for its original, an application
    that returns one context twice, a context cut to a budget inside one already passed on) is one
    find, so hits never outnumber the judged-relevant items.
    """
    out = list(gains)
    found: list[Span] = []
    for i, ((doc_id, start, end), g) in enumerate(zip(retrieved, gains)):
        if g <= 0:
            continue
        if any(d == doc_id and s <= start and end <= e for d, s, e in found):
            out[i] = 0.0
        else:
            found.append((doc_id, start, end))
    return out


# Uniform (gains, k, ideal_gains) signature so a sweep can compute any family by name;
# n_relevant is the count of ideal gains > 0, as trec_eval counts rel >= 1.
RANK_METRICS: dict[str, RankMetric] = {
    "hit": lambda gains, k, ideal_gains: hit_at_k(gains, k),
    "precision": lambda gains, k, ideal_gains: precision_at_k(gains, k),
    "recall": lambda gains, k, ideal_gains: recall_at_k(gains, k, _n_relevant(ideal_gains)),
    "mrr": lambda gains, k, ideal_gains: mrr_at_k(gains, k),
    "ndcg": ndcg_at_k,
    "map": lambda gains, k, ideal_gains: average_precision_at_k(gains, k, _n_relevant(ideal_gains)),
}


# ---- The retrieval metrics of the catalogue: relevance decided once, here, from a sample's fields ----

def _documents(retrieved: Sequence[Span]) -> list[Span]:
    """Each document's best-ranked item, in rank order (max-passage aggregation for document qrels)."""
    seen: set[str] = set()
    out = []
    for item in retrieved:
        if item[0] not in seen:
            seen.add(item[0])
            out.append(item)
    return out


def judged_gains(retrieved: Sequence[Span], top_k: int | None, evidence: Sequence[Span] | None,
                 qrels: Mapping[str, int] | None,
                 n_relevant: int | None) -> tuple[list[float], list[float], list[Span]] | MetricValue:
    """Gains of what the pipeline passes on, the ideal gains, and the items passed on.

    With ``qrels`` (document judgements, BEIR): items are collapsed to their documents first and
    ``top_k`` counts documents. With ``evidence``: an item is relevant when it overlaps a gold span,
    and the judged-relevant set has ``n_relevant`` members (the items of this chunking that overlap
    the evidence). Returns an ``undefined`` MetricValue when relevance cannot be judged, or when the
    evidence is empty (:data:`NO_RELEVANT`; never a 0 averaged in).
    """
    if qrels is not None:
        passed = _documents(retrieved)[:top_k]
        gains = [float(max(qrels.get(doc, 0), 0)) for doc, _, _ in passed]
        ideal = [float(v) for v in qrels.values() if v > 0]
        if not ideal:
            return MetricValue.undefined("the query has no positive judgement")
        return gains, ideal, passed
    if evidence is None:
        return MetricValue.undefined("no evidence spans and no qrels to judge relevance by")
    if not evidence:
        return MetricValue.undefined(NO_RELEVANT)
    if n_relevant is None:
        return MetricValue.undefined("no judged-relevant count (n_relevant) for span relevance")
    if n_relevant == 0:
        return MetricValue.undefined("no item of this chunking overlaps the evidence")
    passed = list(retrieved[:top_k])
    # A repeat of an earlier relevant item (the same text passed on twice) is found once.
    return credit_once(passed, span_gains(passed, evidence)), [1.0] * n_relevant, passed


def _rank_spec(name: str, description: str) -> MetricSpec:
    fn = RANK_METRICS[name]

    def metric(retrieved: Sequence[Span], *, k: int, top_k: int | None = None,
               evidence: Sequence[Span] | None = None, qrels: Mapping[str, int] | None = None,
               n_relevant: int | None = None) -> MetricValue:
        judged = judged_gains(retrieved, top_k, evidence, qrels, n_relevant)
        if isinstance(judged, MetricValue):
            return judged
        gains, ideal, passed = judged
        relevant = [f"{d}:{s}-{e}" for (d, s, e), g in zip(passed[:k], gains) if g > 0]
        return MetricValue.ok(fn(gains, k, ideal), relevant_retrieved=relevant, n_relevant=len(ideal),
                              n_passed=len(passed))

    metric.__name__ = f"{name}_at_k"
    metric.__doc__ = f"{description} of what the pipeline passes on (its top_k), cut at k."
    return MetricSpec(name, metric, ("retrieved",), optional=("top_k", "evidence", "qrels", "n_relevant"),
                      param="k", family="retrieval", description=description)


def _span_spec(name: str, index: int, description: str) -> MetricSpec:
    def metric(retrieved: Sequence[Span], evidence: Sequence[Span], *, top_k: int | None = None) -> MetricValue:
        if not evidence:
            return MetricValue.undefined(NO_RELEVANT)
        passed = list(retrieved[:top_k])
        return MetricValue.ok(span_char_metrics(passed, evidence)[index], n_passed=len(passed))

    metric.__name__ = name
    metric.__doc__ = f"{description} (Smith & Troynikov 2024, on characters) of what the pipeline passes on."
    return MetricSpec(name, metric, ("retrieved", "evidence"), optional=("top_k",), family="retrieval",
                      description=description)


SPECS: tuple[MetricSpec, ...] = (
    _rank_spec("ndcg", "nDCG@k, linear gain (trec_eval ndcg_cut)"),
    _rank_spec("recall", "recall@k: share of the judged-relevant items in the top k"),
    _rank_spec("mrr", "reciprocal rank of the first relevant item within k"),
    _rank_spec("map", "average precision@k (trec_eval map_cut)"),
    _rank_spec("hit", "1 if any of the top k is relevant (trec_eval success)"),
    _rank_spec("precision", "precision@k: relevant items in the top k, divided by k (trec_eval P)"),
    _span_spec("span_recall", 0, "share of the evidence characters passed on"),
    _span_spec("span_precision", 1, "share of the characters passed on that are evidence"),
    _span_spec("span_iou", 2, "intersection over union of the characters passed on and the evidence"),
)
