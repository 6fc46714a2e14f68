"""Paired comparisons with a baseline: constructed cases whose verdicts are known by construction."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from ragsweep.harness.board.compare import best_variant, compare, pairs
from ragsweep.harness.board.leaderboard import build
from ragsweep.metrics.errors import InputError


def fake_sweep(root: Path, variants: Mapping[str, tuple[dict, Mapping[str, Sequence[float | None]]]],
               cost: dict | None = None) -> Path:
    """Write one job folder per variant (summary.json + scores.jsonl), as ``ragsweep sweep`` does.

    ``variants``: name -> (params, metric -> per-sample values; ``None`` writes an ``error`` sample).
    """
    for j, (name, (params, by_metric)) in enumerate(variants.items()):
        job = root / str(j)
        job.mkdir(parents=True)
        with (job / "scores.jsonl").open("w") as fh:
            for metric, values in by_metric.items():
                for i, v in enumerate(values):
                    fh.write(json.dumps({"sample_id": f"q{i:03d}", "variant": name, "metric": metric, "value": v,
                                         "status": "ok" if v is not None else "error", "explanation": {}}) + "\n")
        job_cost = cost or {"seconds": {"embed": 1.0, "search": 0.5, "total": 2.0 + j}, "embedded_texts": 10 * j}
        (job / "summary.json").write_text(json.dumps({"variants": [{"variant": name, "params": params}],
                                                      "cost": job_cost, "seed": 0}))
    return root


BASE = [0.2, 0.9, 0.5, 0.7, 0.1, 0.8, 0.6, 0.4, 0.3, 1.0, 0.55, 0.65, 0.35, 0.45, 0.75, 0.85, 0.15, 0.95, 0.25, 0.05]


def test_identical_variants_tie_with_zero_difference():
    got = compare({"a": dict(enumerate(BASE)), "b": dict(enumerate(BASE))}, "ndcg@10", baseline="a")
    assert got["a"].verdict == "baseline"
    b = got["b"]
    assert (b.diff, b.ci_low, b.ci_high, b.p, b.p_holm, b.verdict) == (0.0, 0.0, 0.0, 1.0, 1.0, "tie")
    assert b.n_pairs == 20


def test_a_variant_worse_on_every_sample_is_significantly_worse():
    worse = {i: v - 0.1 for i, v in enumerate(BASE)}
    got = compare({"good": dict(enumerate(BASE)), "bad": worse}, "ndcg@10")
    assert got["good"].verdict == "baseline"  # default baseline: the best mean
    bad = got["bad"]
    assert bad.verdict == "worse" and bad.mark == "▼"
    assert bad.diff == pytest.approx(-0.1) and bad.ci_high == pytest.approx(-0.1)
    # 20 pairs all of one sign: only 2 of 2**20 sign vectors reach |T|, so no random draw does
    # and p is the floor of the randomisation test, 1 / (n_resamples + 1)
    assert bad.p == pytest.approx(1 / 10001)


def test_holm_correction_needs_more_evidence_when_more_variants_are_compared():
    # 6 samples, all lower: exact p = 2/64 = 0.03125 (only the all-minus and all-plus sign vectors
    # reach |T|). Alone that is significant at 0.05; two such comparisons adjust to 2 * 2/64 > 0.05.
    base = {i: 0.5 for i in range(6)}
    low = {i: 0.4 for i in range(6)}
    alone = compare({"base": base, "low": low}, "m", baseline="base")
    assert alone["low"].p == pytest.approx(2 / 64) and alone["low"].verdict == "worse"
    two = compare({"base": base, "low": low, "lower": {i: 0.1 for i in range(6)}}, "m", baseline="base")
    assert [two[v].p_holm for v in ("low", "lower")] == pytest.approx([4 / 64, 4 / 64])
    assert two["low"].verdict == two["lower"].verdict == "tie"


def test_a_configured_baseline_can_be_beaten():
    low = {i: v - 0.2 for i, v in enumerate(BASE)}
    got = compare({"low": low, "high": dict(enumerate(BASE))}, "m", baseline="low")
    assert got["high"].verdict == "better" and got["high"].diff == pytest.approx(0.2)


def test_lower_is_better_flips_the_default_baseline_and_the_verdict():
    cheap = dict(enumerate(BASE))
    dear = {i: v + 1.0 for i, v in enumerate(BASE)}
    got = compare({"cheap": cheap, "dear": dear}, "seconds", higher_is_better=False)
    assert got["cheap"].verdict == "baseline" and got["dear"].verdict == "worse"


def test_samples_are_paired_by_id_and_missing_or_failed_ones_dropped():
    a, b = {"x": 1.0, "y": None, "z": 0.5}, {"z": 0.25, "x": 0.0, "w": 1.0}
    assert pairs(a, b) == ([1.0, 0.5], [0.0, 0.25])
    got = compare({"a": a, "b": b}, "m", baseline="b")
    assert got["a"].n_pairs == 2 and got["a"].diff == pytest.approx(0.625)


def test_comparisons_are_reproducible_with_a_seed():
    rng_like = {i: (v * 7919) % 1 for i, v in enumerate(BASE * 3)}
    scores = {"a": dict(enumerate(BASE * 3)), "b": rng_like}
    assert compare(scores, "m", seed=3) == compare(scores, "m", seed=3)


def test_best_variant_breaks_ties_by_name_and_unknown_baseline_is_an_input_error():
    assert best_variant({"b": {"q": 1.0}, "a": {"q": 1.0}}) == "a"
    assert best_variant({"a": {"q": None}}) is None
    with pytest.raises(InputError, match="nope"):
        compare({"a": {"q": 1.0}}, "m", baseline="nope")


def test_leaderboard_marks_worse_and_tied_variants(tmp_path):
    worse = [v - 0.1 for v in BASE]
    sweep = fake_sweep(tmp_path, {
        "best": ({"chunker.size": 512, "top_k": 5}, {"ndcg@10": BASE}),
        "twin": ({"chunker.size": 512, "top_k": 10}, {"ndcg@10": BASE}),
        "worse": ({"chunker.size": 256, "top_k": 5}, {"ndcg@10": worse}),
        "broken": ({"chunker.size": 256, "top_k": 10}, {"ndcg@10": worse[:10] + [None] * 10}),
    })
    paths = build(sweep, "ndcg@10", n_resamples=2000)
    rows = {r["variant"]: r for r in csv.DictReader(paths["csv"].open())}
    assert rows["best"]["verdict"] == "baseline"  # ties in mean with "twin", first by name
    assert rows["twin"]["verdict"] == "tie" and float(rows["twin"]["p_holm"]) == 1.0
    assert rows["worse"]["verdict"] == "worse"
    assert rows["broken"]["n_pairs"] == "10" and rows["broken"]["ndcg@10_n_error"] == "10"
    md = paths["md"].read_text()
    assert "▼ worse" in md and "≈ tie" in md and "baseline ★" in md


def test_board_baseline_option_and_top_view(tmp_path):
    sweep = fake_sweep(tmp_path, {f"v{i}": ({"top_k": i}, {"ndcg@10": [v - 0.01 * i for v in BASE]})
                                  for i in range(1, 7)})
    paths = build(sweep, "ndcg@10", baseline="v3", top=2, html=False)
    rows = list(csv.DictReader(paths["csv"].open()))
    assert len(rows) == 6 and all(r["baseline"] == "v3" for r in rows)
    assert {r["variant"]: r["verdict"] for r in rows}["v1"] == "better"
    md = paths["md"].read_text()
    assert md.count("\n| ") == 1 + 3  # header + top 2 + the baseline further down
    assert "4 more rows in leaderboard.csv" in md and "html" not in paths

