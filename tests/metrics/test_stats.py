"""Tests for metrics.stats: bootstrap intervals, paired permutation test, Holm correction."""

from __future__ import annotations

import numpy as np
import pytest

from ragsweep.metrics.stats import holm, mean_ci, paired_bootstrap_diff, paired_permutation_test, questions_needed


@pytest.fixture
def sample() -> list[float]:
    return np.random.default_rng(1).uniform(0.0, 1.0, size=50).tolist()


def test_mean_ci_contains_mean(sample) -> None:
    mean, lo, hi = mean_ci(sample)
    assert mean == pytest.approx(float(np.mean(sample)), abs=1e-15)
    assert lo < mean < hi


def test_mean_ci_is_seeded(sample) -> None:
    assert mean_ci(sample, seed=7) == mean_ci(sample, seed=7)
    assert mean_ci(sample, seed=7) != mean_ci(sample, seed=8)


def test_mean_ci_narrows_with_confidence(sample) -> None:
    _, lo95, hi95 = mean_ci(sample, confidence=0.95)
    _, lo50, hi50 = mean_ci(sample, confidence=0.50)
    assert lo95 < lo50 < hi50 < hi95


def test_mean_ci_small_and_bad_inputs() -> None:
    assert mean_ci([0.3]) == (0.3, 0.3, 0.3)
    assert mean_ci([0.25, 0.25, 0.25]) == (0.25, 0.25, 0.25)
    with pytest.raises(ValueError):
        mean_ci([])
    with pytest.raises(ValueError):  # a NaN must not be skipped into the mean
        mean_ci([0.5, float("nan")])
    with pytest.raises(ValueError):
        mean_ci([0.5, 0.6], confidence=1.0)


def test_paired_bootstrap_diff(sample) -> None:
    assert paired_bootstrap_diff(sample, sample) == (0.0, 0.0, 0.0)
    shifted = [x + 0.1 for x in sample]
    diff, lo, hi = paired_bootstrap_diff(shifted, sample)
    # Every pair differs by 0.1, so every resample mean is 0.1 (up to rounding).
    assert (diff, lo, hi) == pytest.approx((0.1, 0.1, 0.1), abs=1e-12)
    with pytest.raises(ValueError):
        paired_bootstrap_diff([0.1, 0.2], [0.1])


def test_permutation_identical_is_one(sample) -> None:
    assert paired_permutation_test(sample[:10], sample[:10]) == 1.0  # exact path
    assert paired_permutation_test(sample, sample) == 1.0  # Monte-Carlo path


def test_permutation_constant_shift_is_significant() -> None:
    a = np.random.default_rng(2).uniform(0.2, 0.8, size=30)
    p = paired_permutation_test(a + 0.05, a)
    assert p < 0.01
    # Only the two all-same-sign vectors (chance 2 / 2**30 per draw) reach |sum| = 30 * 0.05, so
    # no draw counts and p is its floor: the +1 correction keeps it off zero.
    assert p == 1 / 10001


def test_permutation_exact_hand_cases() -> None:
    # d = [1, 2]: |sums| over signs are 3, 1, 1, 3; observed 3 -> p = 2/4.
    assert paired_permutation_test([1.0, 2.0], [0.0, 0.0]) == 0.5
    # d = [1, 1, 1]: |sum| = 3 only for +++ and --- -> p = 2/8.
    assert paired_permutation_test([1.0, 1.0, 1.0], [0.0, 0.0, 0.0]) == 0.25
    # n = 1: both signs give the same |d| -> p = 1.
    assert paired_permutation_test([0.9], [0.1]) == 1.0


def test_permutation_monte_carlo_close_to_exact() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.15, 1.0, size=17)  # n = 17: just past the exact-enumeration limit
    bits = (np.arange(2**17)[:, None] >> np.arange(17)) & 1
    exact = float(np.mean(np.abs((1 - 2 * bits) @ d) >= abs(d.sum()) - 1e-12))
    p = paired_permutation_test(d, np.zeros(17), n_resamples=20000, seed=0)
    assert p == pytest.approx(exact, abs=0.02)
    assert p == paired_permutation_test(d, np.zeros(17), n_resamples=20000, seed=0)


def test_holm_hand_example() -> None:
    # Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)


def test_holm_caps_and_edges() -> None:
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # 0.5*2 = 1.0, then max(1.0, 0.6)
    assert holm([0.02]) == [0.02]
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([0.1, 1.5])
    with pytest.raises(ValueError):
        holm([float("nan")])


@pytest.mark.parametrize("diff, sd, comparisons, expected", [
    (0.5, 1.0, 1, 34),     # d = 0.5: the exact paired t-test figure (noncentral t) is 34
    (0.2, 1.0, 1, 199),    # d = 0.2: exact 199
    (-0.1, 0.2, 1, 34),    # only |diff| / sd counts
    (0.1, 0.2, 3, 45),     # alpha / 3 for three comparisons: z = 2.394
    (0.1, 0.0, 1, 6),      # no spread: the sign-flip test still needs 2 / 2**n <= 0.05
])
def test_questions_needed_hand_cases(diff, sd, comparisons, expected) -> None:
    assert questions_needed(diff, sd, alpha=0.05, power=0.8, comparisons=comparisons) == expected


def test_questions_needed_without_a_difference_and_bad_input() -> None:
    assert questions_needed(0.0, 0.3) is None
    for bad in ({"diff": float("nan"), "sd": 1.0}, {"diff": 0.1, "sd": -1.0}, {"diff": 0.1, "sd": 1.0, "alpha": 0},
                {"diff": 0.1, "sd": 1.0, "comparisons": 0}):
        with pytest.raises(ValueError):
            questions_needed(**bad)
