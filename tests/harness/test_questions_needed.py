"""The board's "questions needed" figure: checked by simulating the board's own paired test at it.

Paired differences are drawn with a known mean and spread, the figure is computed for them, and
:func:`harness.compare.compare` (bootstrap CI, sign-flip test, Holm) is run on that many questions
hundreds of times: the share of runs that separate the variant is the test's power at the figure.
Seeded throughout, so the rates below are fixed numbers; the tolerances are about three binomial
standard errors, so a different seed would pass too.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from ragsweep.harness.board.compare import compare
from ragsweep.harness.board.leaderboard import build
from ragsweep.metrics.stats import questions_needed

from tests.harness.test_compare import BASE, fake_sweep


def separated_share(draw, n: int, variants: int, reps: int, seed: int) -> list[float]:
    """Share of ``reps`` boards on which each runner-up is marked significantly worse than "best"."""
    rng = np.random.default_rng(seed)
    hits = np.zeros(variants)
    for rep in range(reps):
        base = rng.uniform(0.3, 0.7, n)
        scores = {"best": dict(enumerate(base.tolist()))}
        for j in range(variants):
            scores[f"v{j}"] = dict(enumerate((base - draw(rng, n)).tolist()))
        got = compare(scores, "ndcg@10", baseline="best", n_resamples=1000, seed=rep)
        hits += [got[f"v{j}"].verdict == "worse" for j in range(variants)]
    return (hits / reps).tolist()


def test_power_at_the_figure_is_0_8_for_one_runner_up():
    delta, sd = 0.1, 0.2
    n = questions_needed(delta, sd, alpha=0.05)
    assert n == 34  # the exact paired t-test figure for d = 0.5 (noncentral t) is 34 too
    [rate] = separated_share(lambda rng, k: rng.normal(delta, sd, k), n, 1, reps=1000, seed=7)
    assert rate == pytest.approx(0.8, abs=0.04)  # SE 0.013 at 1,000 boards
    # One question in eight fewer is visibly short of 0.8: the figure is not generous.
    [short] = separated_share(lambda rng, k: rng.normal(delta, sd, k), n - n // 8, 1, reps=1000, seed=7)
    assert short < rate - 0.03


def test_holm_with_three_runner_ups_keeps_power_at_least_0_8():
    """alpha / 3 per runner-up (Bonferroni) is enough for Holm, which rejects at least as much."""
    delta, sd = 0.1, 0.2
    n = questions_needed(delta, sd, alpha=0.05, comparisons=3)
    assert n == 45
    rates = separated_share(lambda rng, k: rng.normal(delta, sd, k), n, 3, reps=400, seed=8)
    assert min(rates) >= 0.8 - 0.06  # SE 0.02 at 400 boards; measured 0.87-0.92 (Holm is less strict)


def test_ties_in_discrete_differences_make_the_test_conservative():
    """0/1 metrics (hit@k): differences in {-1, 0, 1}, 55% zero. The sign-flip test is then an exact
    sign test on the untied pairs, whose discreteness costs power: 0.765 at the figure (exact
    binomial calculation), not 0.8. The README says to add about a tenth for such metrics."""
    values, probs = np.array([1.0, 0.0, -1.0]), np.array([0.3, 0.55, 0.15])
    delta = float(values @ probs)
    n = questions_needed(delta, float(np.sqrt(values**2 @ probs - delta**2)))
    assert n == 152
    [rate] = separated_share(lambda rng, k: rng.choice(values, size=k, p=probs), n, 1, reps=600, seed=9)
    assert rate == pytest.approx(0.765, abs=0.05)


def test_compare_reports_the_figure_from_the_observed_differences():
    worse = {i: v - (0.05 if i % 2 else 0.15) for i, v in enumerate(BASE)}  # diffs -0.15/-0.05: mean -0.1
    got = compare({"best": dict(enumerate(BASE)), "worse": worse, "same": dict(enumerate(BASE))}, "m",
                  n_resamples=1000)
    d = np.array([worse[i] - BASE[i] for i in range(20)])
    w = got["worse"]
    assert w.sd == pytest.approx(float(d.std(ddof=1)))
    assert w.questions_needed == questions_needed(-0.1, w.sd, alpha=0.05, comparisons=2)
    assert w.verdict == "worse" and w.questions_status == "separated"
    same = got["same"]
    assert same.questions_needed is None and same.questions_status == "no_difference"
    assert got["best"].questions_status == "baseline" and got["best"].questions_needed is None


def test_leaderboard_files_carry_the_column(tmp_path):
    rng = np.random.default_rng(0)
    close = [v - 0.02 + float(e) for v, e in zip(BASE, rng.normal(0, 0.1, 20))]
    sweep = fake_sweep(tmp_path, {
        "best": ({"top_k": 5}, {"ndcg@10": BASE}),
        "twin": ({"top_k": 10}, {"ndcg@10": BASE}),
        "close": ({"top_k": 3}, {"ndcg@10": close}),
        "worse": ({"top_k": 1}, {"ndcg@10": [v - 0.1 for v in BASE]}),
    })
    paths = build(sweep, "ndcg@10", n_resamples=1000)
    rows = {r["variant"]: r for r in csv.DictReader(paths["csv"].open())}
    assert (rows["best"]["questions_needed"], rows["best"]["questions_status"]) == ("", "baseline")
    assert (rows["twin"]["questions_needed"], rows["twin"]["questions_status"]) == ("", "no_difference")
    assert rows["worse"]["questions_status"] == "separated"
    # No spread: the floor of the sign-flip test, 2 / 2**7 <= 0.05 / 3 (three variants compared).
    assert rows["worse"]["questions_needed"] == "7"
    assert rows["close"]["verdict"] == "tie" and rows["close"]["questions_status"] == "not_separated"
    needed = int(rows["close"]["questions_needed"])
    assert needed > 20  # a tie at 20 pairs: more questions would be needed to separate it
    md = paths["md"].read_text()
    assert "| questions needed |" in md and "Questions needed:" in md
    assert f"{needed} (have 20)" in md and "already separated (n=20)" in md and "no difference observed" in md
    html = paths["html"].read_text()
    assert "questions needed" in html and f"{needed} (have 20)" in html
