"""Aggregation of per-query scores: bootstrap confidence intervals, paired tests, Holm correction,
and the number of questions a paired test needs (power).

Inputs are per-query scores from the metric functions (one float per query, undefined queries
already removed by the caller). All randomness comes from ``numpy.random.default_rng(seed)``, so a
seed recorded with a run reproduces its intervals and p-values exactly. NaN or infinite inputs
raise ``ValueError`` instead of being skipped, so a failing metric cannot silently raise a mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_EXACT_MAX_N = 16  # 2**16 sign patterns: exact enumeration is cheaper than 10,000 random draws


def _as_array(values: Sequence[float], name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name}: need a non-empty 1-D sequence of scores")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: scores must be finite (no NaN or inf)")
    return x


def _paired(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x, y = _as_array(a, "a"), _as_array(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"paired scores differ in length: {x.size} vs {y.size}")
    return x - y


def mean_ci(
    values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean with a percentile bootstrap confidence interval.

    Draws ``n_resamples`` resamples of size n with replacement (one ``(n_resamples, n)`` index
    array, so memory is about ``8 * n_resamples * n`` bytes), takes each resample's mean, and
    returns the (1 - confidence)/2 and (1 + confidence)/2 quantiles of those means (percentile
    method; Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 13).

    Args:
        values: Per-query scores.
        confidence: Coverage of the interval, in (0, 1).
        n_resamples: Number of bootstrap resamples, >= 1.
        seed: Seed for ``numpy.random.default_rng``.

    Returns:
        ``(mean, lo, hi)``. A single value v gives ``(v, v, v)``.

    Raises:
        ValueError: If ``values`` is empty or not finite, or an option is out of range.
    """
    x = _as_array(values, "values")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    mean = float(x.mean())
    if x.size == 1:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_resamples, x.size))
    means = x[idx].mean(axis=1)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(means, [alpha / 2, 1.0 - alpha / 2])
    return mean, float(lo), float(hi)


def paired_bootstrap_diff(
    a: Sequence[float],
    b: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean paired difference ``a - b`` with a percentile bootstrap confidence interval.

    Resamples queries, not systems: the per-query differences d_i = a_i - b_i are bootstrapped
    with ``mean_ci`` (Efron & Tibshirani 1993, ch. 13), which keeps each query's pairing.

    Args:
        a: Per-query scores of system A.
        b: Per-query scores of system B, same queries in the same order.
        confidence: Coverage of the interval, in (0, 1).
        n_resamples: Number of bootstrap resamples, >= 1.
        seed: Seed for ``numpy.random.default_rng``.

    Returns:
        ``(mean_diff, lo, hi)``; identical inputs give ``(0.0, 0.0, 0.0)``.

    Raises:
        ValueError: If the inputs are empty, not finite, or differ in length.
    """
    return mean_ci(_paired(a, b), confidence=confidence, n_resamples=n_resamples, seed=seed)


def paired_permutation_test(
    a: Sequence[float], b: Sequence[float], *, n_resamples: int = 10000, seed: int = 0
) -> float:
    """Two-sided p-value for a zero mean paired difference, by random sign flipping.

    Under the null hypothesis each d_i = a_i - b_i is as likely to be -d_i, so the statistic
    T = |mean(s * d)| is compared over sign vectors s in {-1, +1}^n. p = share of sign vectors with
    T >= the observed T. For n <= 16 all 2^n vectors are enumerated (exact p). Otherwise
    ``n_resamples`` random vectors are drawn and p = (count + 1) / (n_resamples + 1), which counts
    the observed data as one draw and so never returns 0 (Phipson & Smyth 2010, "Permutation
    P-values Should Never Be Zero"). Identical inputs give p = 1.0.

    Args:
        a: Per-query scores of system A.
        b: Per-query scores of system B, same queries in the same order.
        n_resamples: Random sign vectors for n > 16, >= 1.
        seed: Seed for ``numpy.random.default_rng`` (unused when enumeration is exact).

    Returns:
        The p-value, in (0, 1].

    Raises:
        ValueError: If the inputs are empty, not finite, or differ in length.
    """
    d = _paired(a, b)
    n = d.size
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    # Compare sums, not means (same test, fewer roundings). Sign-flipped sums that equal the
    # observed one mathematically can differ in the last bits; the tolerance counts them as ties.
    observed = abs(d.sum())
    tol = 1e-10 * np.abs(d).sum()
    if n <= _EXACT_MAX_N:
        bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
        signs = 1.0 - 2.0 * bits
        stats = np.abs(signs @ d)
        return float(np.mean(stats >= observed - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, n))
    count = int(np.sum(np.abs(signs @ d) >= observed - tol))
    return (count + 1) / (n_resamples + 1)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (Holm 1979, "A Simple Sequentially Rejective Multiple
    Test Procedure", Scand. J. Statist. 6:65-70).

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m), the adjusted value is
    p~_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j)). Rejecting where p~ <= alpha controls the
    family-wise error rate at alpha. The running max keeps the adjusted values monotone.

    Args:
        pvalues: Raw p-values, each in [0, 1].

    Returns:
        Adjusted p-values in the input order; ``[]`` for no input.

    Raises:
        ValueError: If a p-value is outside [0, 1] or NaN.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return []
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("p-values must be in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = (m - np.arange(m)) * p[order]
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(scaled))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted.tolist()


def questions_needed(
    diff: float, sd: float, *, alpha: float = 0.05, power: float = 0.8, comparisons: int = 1
) -> int | None:
    """Paired questions a two-sided test needs to detect a mean difference ``diff`` with ``power``.

    The one-sample (paired) sample size from the normal approximation with Guenther's correction for
    the t distribution (Guenther 1981, "Sample Size Formulas for Normal Theory T Tests", The American
    Statistician 35(4):243-244):

        n = ((z_{1-a/2} + z_{power}) * sd / |diff|)^2 + z_{1-a/2}^2 / 2,   a = alpha / comparisons,

    rounded up. It is the paired t-test's size to within one question (d = 0.5 gives 34, as the
    exact noncentral-t calculation does); the paired randomisation test of
    :func:`paired_permutation_test` has the t-test's power for large n. ``comparisons`` > 1 spends
    alpha Bonferroni-style, which is enough under Holm's correction (Holm rejects whatever Bonferroni
    rejects). The result is at least the smallest n at which the sign-flip test can reach p <= a at
    all (all 2^n sign vectors: p >= 2 / 2^n), so a difference without spread still needs a few questions.

    Args:
        diff: The mean paired difference to detect.
        sd: Standard deviation of the paired differences (>= 0).
        alpha: Two-sided significance level (family-wise when ``comparisons`` > 1), in (0, 1).
        power: Chance of a rejection when the true difference is ``diff``, in (0, 1).
        comparisons: Tests the alpha is shared by (>= 1).

    Returns:
        The number of paired questions, or ``None`` when ``diff`` is 0 (no difference to detect).

    Raises:
        ValueError: If an argument is out of range or not finite.
    """
    from statistics import NormalDist

    if not (math.isfinite(diff) and math.isfinite(sd) and sd >= 0):
        raise ValueError(f"need a finite diff and a finite sd >= 0, got {diff}, {sd}")
    if not (0 < alpha < 1 and 0 < power < 1) or comparisons < 1:
        raise ValueError(f"need alpha and power in (0, 1) and comparisons >= 1, got {alpha}, {power}, {comparisons}")
    if diff == 0:
        return None
    a = alpha / comparisons
    z_a, z_b = NormalDist().inv_cdf(1 - a / 2), NormalDist().inv_cdf(power)
    n = ((z_a + z_b) * sd / abs(diff)) ** 2 + z_a**2 / 2
    smallest = math.ceil(1 - math.log2(a))  # 2 / 2^n <= a
    # A tiny tolerance keeps a value that is an integer on paper from rounding up through float noise.
    return max(math.ceil(n - 1e-9), smallest, 2)
