"""The pooled line of benchmarks/gen.py over several seeds, on hand-computed runs (no model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "gen.py"


def _module():
    spec = importlib.util.spec_from_file_location("ragsweep_benchmark_gen", FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(accepted, minutes, calls, tokens):
    return {"backend": "local", "model": "m", "accepted": accepted, "rejected": 10, "minutes": minutes,
            "accepted_per_minute": accepted / minutes, "tokens_per_accepted": tokens, "evaluated_per_accepted": 100.0,
            "completion_tokens_per_accepted": 50.0, "calls_per_accepted": calls}


def test_the_pooled_line_sums_runs_rather_than_averaging_their_rates():
    # 20 in 4 min (5.0 a minute) and 20 in 8 min (2.5): pooled 40 in 12 = 3.3, not the mean rate 3.75
    line = _module().pooled([_run(20, 4.0, 4.0, 300.0), _run(20, 8.0, 6.0, 500.0)])
    first, second = line.split("\n")
    cells = first.split()
    assert cells[:4] == ["local", "all", "m", "40"] and cells[4] == "20"            # accepted, rejected summed
    assert cells[5] == "12.00" and cells[6] == "3.3"                             # minutes summed, 40 / 12
    assert cells[7] == "400.0" and cells[10] == "5.00"                           # per accepted, weighted
    assert "2.5 to 5.0 accepted a minute over 2 seeds" in second
