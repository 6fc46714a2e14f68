"""Paired comparison of every variant with one baseline on per-sample scores.

For one metric, each variant is paired with the baseline on the samples both scored ``ok``
(matched by ``sample_id``, so a variant that failed on some samples is compared on the rest and the
number of pairs says so). Per variant we report the mean difference ``variant - baseline`` with a
paired bootstrap 95% CI and a paired randomisation (sign-flip) p-value; the p-values of all
variants are then Holm-adjusted together, because a sweep makes many comparisons at once and the
chance that one of them looks significant by luck grows with their number.

The verdict uses the adjusted p-value only (the CI is shown for size, not used to decide):

- ``baseline``: the variant everything is compared with (by default the best mean),
- ``worse`` / ``better``: adjusted p <= alpha, by the sign of the difference,
- ``tie``: not significantly different from the baseline,
- ``n/a``: nothing to compare (no shared ok sample, or the variant has no score for the metric).

Per variant it also says how many paired questions a test would need to separate it from the
baseline at the observed mean difference and spread of the differences, with power 0.8
(:func:`metrics.stats.questions_needed`, alpha split over the variants tested, which is enough under
Holm). It is a planning figure computed from the observed difference, so for a tie it is almost always
more than the questions there are (Hoenig & Heisey 2001, "The Abuse of Power", The American
Statistician 55(1):19-24: power from an observed effect restates the p-value); it answers "how many
would a difference this size need", not "is there a difference".

Everything is seeded: the same scores and seed give the same intervals, p-values and verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ragsweep.metrics import InputError, holm, paired_bootstrap_diff, paired_permutation_test, questions_needed

# sample_id -> value (None when the sample's status was not ok)
SampleScores = Mapping[str, "float | None"]

MARKS = {"baseline": "★", "worse": "▼", "better": "▲", "tie": "≈", "n/a": ""}
POWER = 0.8  # chance that a test with ``questions_needed`` pairs separates a true difference of this size


@dataclass(frozen=True)
class Comparison:
    """One variant against the baseline on one metric."""

    variant: str
    baseline: str
    metric: str
    n_pairs: int
    diff: float | None = None       # mean of variant - baseline over the paired samples
    ci_low: float | None = None     # paired bootstrap CI of ``diff``
    ci_high: float | None = None
    p: float | None = None          # raw two-sided randomisation p-value
    p_holm: float | None = None     # Holm-adjusted over all variants of this comparison
    verdict: str = "n/a"            # baseline | worse | better | tie | n/a
    sd: float | None = None         # standard deviation of the paired differences (ddof=1)
    questions_needed: int | None = None  # pairs a test needs at ``diff`` and ``sd`` with power POWER

    @property
    def mark(self) -> str:
        return MARKS[self.verdict]

    @property
    def questions_status(self) -> str:
        """What ``questions_needed`` means for this row.

        ``baseline``; ``separated`` (the test already separates it: more questions are not needed to
        tell it apart); ``not_separated`` (a tie: ``questions_needed`` is the planning figure to compare
        with ``n_pairs``); ``no_difference`` (mean difference exactly 0: no number of questions
        separates it); ``n/a`` (fewer than two pairs: no spread to plan with).
        """
        if self.verdict in ("baseline", "worse", "better"):
            return "separated" if self.verdict != "baseline" else "baseline"
        if self.verdict != "tie" or self.sd is None:
            return "n/a"
        return "no_difference" if self.questions_needed is None else "not_separated"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pairs(a: SampleScores, b: SampleScores) -> tuple[list[float], list[float]]:
    """Values of ``a`` and ``b`` on the samples both scored ok, in sorted sample-id order."""
    ids = sorted(i for i in a.keys() & b.keys() if a[i] is not None and b[i] is not None)
    return [float(a[i]) for i in ids], [float(b[i]) for i in ids]  # type: ignore[arg-type]


def _mean(scores: SampleScores) -> float | None:
    ok = [v for v in scores.values() if v is not None]
    return sum(ok) / len(ok) if ok else None


def best_variant(scores: Mapping[str, SampleScores], higher_is_better: bool = True) -> str | None:
    """The variant with the best mean ok score (ties broken by name, so the choice is stable)."""
    means = {v: m for v, s in scores.items() if (m := _mean(s)) is not None}
    if not means:
        return None
    sign = -1.0 if higher_is_better else 1.0
    return min(means, key=lambda v: (sign * means[v], v))


def compare(
    scores: Mapping[str, SampleScores],
    metric: str,
    *,
    baseline: str | None = None,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    n_resamples: int = 10000,
    seed: int = 0,
) -> dict[str, Comparison]:
    """Compare every variant with ``baseline`` on one metric.

    Args:
        scores: variant -> sample_id -> value (``None`` for an undefined or failed sample).
        metric: The metric's name (recorded in the result only).
        baseline: The variant to compare with; ``None``: the best mean.
        higher_is_better: Direction of the metric (decides the default baseline and which sign is
            "worse").
        alpha: Family-wise error rate for the Holm-adjusted p-values.
        n_resamples: Bootstrap resamples and random sign vectors (exact enumeration for <= 16 pairs).
        seed: Seed of every resampling.

    Returns:
        variant -> :class:`Comparison`, for every variant in ``scores``; ``{}`` when no variant has
        an ok score.

    Raises:
        InputError: If ``baseline`` is not one of the variants, or has no ok score.
    """
    if baseline is None:
        baseline = best_variant(scores, higher_is_better)
        if baseline is None:
            return {}
    elif baseline not in scores:
        raise InputError(f"baseline={baseline!r} is not a variant of this sweep; "
                         f"variants: {', '.join(sorted(scores)[:5])}{' ...' if len(scores) > 5 else ''}")
    if _mean(scores[baseline]) is None:
        raise InputError(f"baseline={baseline!r} has no ok score for {metric}")

    out: dict[str, Comparison] = {baseline: Comparison(baseline, baseline, metric,
                                                       sum(v is not None for v in scores[baseline].values()),
                                                       0.0, 0.0, 0.0, 1.0, 1.0, "baseline")}
    tested: list[Comparison] = []
    for variant in sorted(scores):
        if variant == baseline:
            continue
        a, b = pairs(scores[variant], scores[baseline])
        if not a:
            out[variant] = Comparison(variant, baseline, metric, 0)
            continue
        diff, lo, hi = paired_bootstrap_diff(a, b, n_resamples=n_resamples, seed=seed)
        p = paired_permutation_test(a, b, n_resamples=n_resamples, seed=seed)
        sd = float(np.std(np.subtract(a, b), ddof=1)) if len(a) > 1 else None
        tested.append(Comparison(variant, baseline, metric, len(a), diff, lo, hi, p, sd=sd))
    adjusted = holm([c.p for c in tested])  # type: ignore[misc]
    for c, p_adj in zip(tested, adjusted):
        # A difference within rounding of 0 (equal scores summed in another order) is no difference.
        planned = 0.0 if abs(c.diff) < 1e-12 else c.diff  # type: ignore[arg-type]
        needed = (questions_needed(planned, c.sd, alpha=alpha, power=POWER, comparisons=len(tested))
                  if c.sd is not None else None)
        if p_adj <= alpha and c.diff != 0.0:
            worse = (c.diff < 0) == higher_is_better  # type: ignore[operator]
            verdict = "worse" if worse else "better"
        else:
            verdict = "tie"
        out[c.variant] = Comparison(c.variant, baseline, metric, c.n_pairs, c.diff, c.ci_low, c.ci_high,
                                    c.p, p_adj, verdict, c.sd, needed)
    return out
