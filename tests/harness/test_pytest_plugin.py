"""The pytest plugin (harness/pytest_plugin.py): thresholds on a sweep's per-sample scores gate a test run."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from ragsweep.harness.pytest_plugin import ThresholdError, assert_thresholds
from test_compare import BASE, fake_sweep

PLUGIN_TEST = """
def test_quality(ragsweep_thresholds):
    ragsweep_thresholds({sweep!r}, {{"ndcg@10": 0.5, "recall@10": ">= 0.3"}}, variant={variant!r})
"""


@pytest.mark.parametrize("variant, code", [("good", 0), ("bad", 1), ({"top_k": 5}, 0)])
def test_pytest_plugin_fails_a_threshold_with_a_readable_table(tmp_path, variant, code):
    sweep = fake_sweep(tmp_path / "sweep", {
        "good": ({"top_k": 5}, {"ndcg@10": BASE, "recall@10": BASE}),
        "bad": ({"top_k": 1}, {"ndcg@10": [v / 2 for v in BASE], "recall@10": BASE[:5] + [None] * 15})})
    (tmp_path / "test_gate.py").write_text(PLUGIN_TEST.format(sweep=str(sweep), variant=variant))
    # Installed with its pytest11 entry point the plugin loads itself; -p would register it twice.
    installed = any(e.value == "ragsweep.harness.pytest_plugin" for e in entry_points(group="pytest11"))
    load = [] if installed else ["-p", "ragsweep.harness.pytest_plugin"]
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", *load, "test_gate.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == code, out.stdout[-2000:]
    if code:
        table = out.stdout
        assert "ragsweep thresholds for bad:" in table and "threshold" in table and "Traceback" not in table
        assert re.search(r"ndcg@10\s+0\.2625\s+\[.*\]\s+20\s+0\s+>= 0\.5\s+FAIL", table)
        assert re.search(r"recall@10\s+0\.4800\s+.*\s+5\s+15\s+>= 0\.3\s+ok", table)


def test_thresholds_on_a_scores_file_and_a_score_summary(tmp_path):
    sweep = fake_sweep(tmp_path / "sweep", {"v": ({"top_k": 5}, {"ndcg@10": BASE})})
    assert assert_thresholds(sweep / "0" / "scores.jsonl", {"ndcg@10": 0.5})[0].passed
    summary = tmp_path / "summary.csv"
    summary.write_text("metric,mean,ci_low,ci_high,n_ok,n_undefined,n_error\ntoken_f1,0.4,0.3,0.5,10,0,0\n")
    with pytest.raises(ThresholdError, match="token_f1"):
        assert_thresholds(summary, {"token_f1": 0.5})
    with pytest.raises(ThresholdError, match="no metric bleu"):
        assert_thresholds(summary, {"bleu": 0.5})
