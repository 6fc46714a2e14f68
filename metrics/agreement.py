"""How well a metric agrees with people: ROC-AUC, pairwise accuracy, Spearman and Pearson.

Used by the calibration benchmark on the human-labelled sets. All functions take plain sequences
(one score per item) and handle ties exactly; none returns NaN: an undefined statistic (one class
only, a constant vector) raises ``ValueError`` so the caller reports it instead of averaging it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def average_ranks(x: Sequence[float]) -> np.ndarray:
    """1-based ranks with ties given the mean of the ranks they span (as in Spearman's rho)."""
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a), dtype=float)
    sorted_a = a[order]
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and sorted_a[j + 1] == sorted_a[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def roc_auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve = P(score of a positive > score of a negative) + 0.5 P(tie).

    Computed from the Mann-Whitney U statistic on average ranks, so ties count half.

    Raises:
        ValueError: if only one class is present.
    """
    y = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC-AUC needs both positive and negative items")
    ranks = average_ranks(scores)
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def pairwise_accuracy(better: Sequence[float], worse: Sequence[float]) -> float:
    """Share of pairs where the item people prefer scores higher; a tie counts half.

    Raises:
        ValueError: if the sequences differ in length or are empty.
    """
    a, b = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if len(a) != len(b) or len(a) == 0:
        raise ValueError("pairwise accuracy needs two non-empty sequences of equal length")
    return float(((a > b).sum() + 0.5 * (a == b).sum()) / len(a))


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r. Raises ``ValueError`` when either vector is constant (r undefined)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) != len(b) or len(a) < 2:
        raise ValueError("correlation needs two sequences of equal length >= 2")
    da, db = a - a.mean(), b - b.mean()
    denom = np.sqrt((da * da).sum() * (db * db).sum())
    if denom == 0:
        raise ValueError("correlation is undefined for a constant vector")
    return float((da * db).sum() / denom)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson's r of the average ranks (ties handled as in scipy.stats.spearmanr)."""
    return pearson(average_ranks(x), average_ranks(y))


def expected_calibration_error(scores: Sequence[float], labels: Sequence[bool], bins: int = 10) -> float:
    """ECE: sum over equal-width score bins of (share of the scores in the bin) x |mean label - mean
    score| in it (Naeini, Cooper & Hauskrecht, AAAI 2015). 0 means a score of p is right a share p of
    the time; a score read against a threshold needs it small.

    Raises:
        ValueError: Empty input, lengths that differ, or a score outside [0, 1].
    """
    if not scores or len(scores) != len(labels):
        raise ValueError(f"need as many labels as scores (>= 1), got {len(scores)} and {len(labels)}")
    if any(not 0.0 <= s <= 1.0 for s in scores):
        raise ValueError("scores must lie in [0, 1]")
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        idx = [i for i, s in enumerate(scores) if lo <= s < hi or (b == bins - 1 and s == 1.0)]
        if idx:
            gap = abs(sum(labels[i] for i in idx) / len(idx) - sum(scores[i] for i in idx) / len(idx))
            total += len(idx) / len(scores) * gap
    return total
