"""Agreement statistics: hand cases and scipy on random data with ties."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragsweep.metrics.agreement import average_ranks, pairwise_accuracy, pearson, roc_auc, spearman


def test_hand_cases():
    assert average_ranks([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]
    # positives 0.9, 0.5; negatives 0.5, 0.1 -> pairs: (0.9>0.5) (0.9>0.1) (0.5=0.5 half) (0.5>0.1) = 3.5/4
    assert roc_auc([0.9, 0.5, 0.5, 0.1], [True, True, False, False]) == 0.875
    assert pairwise_accuracy([1, 0.5, 0.2], [0, 0.5, 0.9]) == pytest.approx(0.5)
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)


def test_undefined_statistics_raise_instead_of_nan():
    with pytest.raises(ValueError, match="both"):
        roc_auc([0.1, 0.2], [True, True])
    with pytest.raises(ValueError, match="constant"):
        pearson([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError):
        pairwise_accuracy([], [])


def test_against_scipy_with_ties():
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(5, 60))
        x = rng.integers(0, 5, n).astype(float)  # many ties
        y = x + rng.integers(-2, 3, n)
        labels = rng.random(n) < 0.4
        if labels.all() or not labels.any() or len(set(x)) < 2 or len(set(y)) < 2:
            continue
        assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
        u = stats.mannwhitneyu(x[labels], x[~labels]).statistic
        assert roc_auc(x, labels) == pytest.approx(u / (labels.sum() * (~labels).sum()), abs=1e-12)


def test_expected_calibration_error_by_hand():
    from ragsweep.metrics.agreement import expected_calibration_error as ece

    # bin [0.8, 0.9): scores 0.8, 0.8 with labels 1, 0 -> |0.5 - 0.8| = 0.3, weight 2/4;
    # bin [0.2, 0.3): 0.2, 0.2 with labels 0, 0 -> |0 - 0.2| = 0.2, weight 2/4
    assert ece([0.8, 0.8, 0.2, 0.2], [True, False, False, False]) == pytest.approx(0.25)
    assert ece([1.0, 0.0], [True, False]) == 0.0 and ece([1.0], [False]) == 1.0
    with pytest.raises(ValueError):
        ece([0.5], [True, False])
    with pytest.raises(ValueError):
        ece([1.2], [True])
