"""The calibration map (metrics.support): applied per judge, fitted by Platt scaling."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

from ragsweep.metrics import support
from ragsweep.metrics.llm.scripted import ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]


def rows(*ps):
    return [{"claim": f"Claim {i}.", "p_supported": p, "verdict": "supported" if p >= 0.5 else "not_found"}
            for i, p in enumerate(ps)]


def test_the_map_is_applied_by_judge_and_keeps_the_blend_and_the_order(monkeypatch):
    monkeypatch.setitem(support.CALIBRATION, "judge-x", (2.0, -1.0))
    got = support.calibrate_rows(rows(0.3, 0.6, 0.9), ScriptedLLM([], model_id="judge-x"))
    assert [r["p_blend"] for r in got] == [0.3, 0.6, 0.9]
    expect = [1 / (1 + math.exp(-(2 * math.log(p / (1 - p)) - 1))) for p in (0.3, 0.6, 0.9)]
    assert [r["p_supported"] for r in got] == pytest.approx(expect)
    assert [r["verdict"] for r in got] == ["not_found", "not_supported", "supported"]  # 0.6 -> 0.47
    assert all(r["calibration"] == "judge-x" for r in got)
    other = support.calibrate_rows(rows(0.6), ScriptedLLM([], model_id="never-fitted"))
    assert other[0]["p_supported"] == 0.6 and other[0]["calibration"] == "none fitted for this judge"
    removed = support.calibrate_rows([{"claim": support.REMOVED, "p_supported": 0.0, "verdict": "not_supported"}],
                                     None)
    assert removed[0]["p_supported"] == 0.0  # the "none" map would lift 0 above 0; a removed sentence stays 0


def test_platt_recovers_a_known_map_and_the_prior_moves_only_the_intercept():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from calibrate import platt

    rng = random.Random(0)
    xs = [rng.uniform(-4, 4) for _ in range(20000)]
    ys = [rng.random() < 1 / (1 + math.exp(-(1.5 * x - 0.5))) for x in xs]
    a, b = platt(xs, ys, [1.0] * len(xs))
    assert a == pytest.approx(1.5, abs=0.08) and b == pytest.approx(-0.5, abs=0.08)
    n_yes = sum(ys)
    w = [0.8 / n_yes if y else 0.2 / (len(ys) - n_yes) for y in ys]  # reweighted to 80% supported
    a2, b2 = platt(xs, ys, w)
    shift = math.log(0.8 / 0.2) - math.log(n_yes / (len(ys) - n_yes))
    assert a2 == pytest.approx(a, abs=0.06) and b2 == pytest.approx(b + shift, abs=0.1)
