"""The slot-penalty replay (issue #31): main's shape reproduces the dumped scores, and other shapes move them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import adversarial_families as af  # noqa: E402
import slot_replay as sr  # noqa: E402

from ragsweep.metrics.support import CALIBRATION, calibrate, logit, sigmoid, slot_penalty  # noqa: E402

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def _slot(kind: str, p: float) -> dict:
    return {"slot": "x", "kind": kind, "cloze": "___", "options": ["x", "y", "not stated"], "chosen": "x", "p_claim": p}


def _row(sample_id: str, before: float, slots: list[dict]) -> dict:
    """A dumped row as the judge writes it: p_blend holds the slot penalty, the value is calibrated."""
    p_blend = sigmoid(logit(before) + slot_penalty(slots))
    value = calibrate(p_blend, CALIBRATION[MODEL])
    claim = {"claim": "c", "p_supported": value, "p_blend": p_blend, "p_judge": 0.9, "slots": slots,
             "calibration": MODEL}
    return {"sample_id": sample_id, "metric": "faithfulness", "value": value, "status": "ok",
            "explanation": {"claims": [claim]}}


@pytest.mark.parametrize("slots", [[], [_slot("number", 0.3)], [_slot("name", 0.8), _slot("name", 0.2)],
                                   [_slot("number", 0.1), _slot("unit", 0.05)], [_slot("unit", 0.05)]])
def test_mains_shape_is_mains_penalty(slots):
    assert sr.shaped(0.5, 0.5)(slots) == pytest.approx(slot_penalty(slots))


def test_a_lower_threshold_forgives_mild_doubt_only():
    mild, strong = [_slot("name", 0.35)], [_slot("name", 0.05)]
    assert sr.shaped(0.2, 0.5)(mild) == 0.0 and sr.shaped(0.5, 0.5)(mild) < 0.0
    assert sr.shaped(0.2, 0.5)(strong) < 0.0


@pytest.fixture(scope="module")
def case():
    built = af.build()
    c = next(c for c in built["cases"] if c["half"] == "tune" and c["swaps"])
    return built, c


def test_replay_reproduces_and_reshapes(tmp_path, case, capsys):
    built, c = case
    rows = [_row(f"{c['id']}|right{i}", 0.95, [_slot("name", 0.9)]) for i in range(len(c["right"]))]
    kind = c["swaps"][0]["kind"]
    rows.append(_row(f"{c['id']}|swap:{kind}", 0.95, [_slot("name", 0.1)]))  # the cloze gives another value
    assert sr.check_exact(rows) < sr.EXACT
    main = sr.summary(rows, sr.shaped(0.5, 0.5), built, "tune")
    none = sr.summary(rows, lambda s: 0.0, built, "tune")
    assert main["swaps_caught"] == 1.0 and none["swaps_caught"] == 0.0  # the slot check is what catches it
    assert main["right_mean"] == pytest.approx(none["right_mean"])  # a confident right slot costs nothing
    dump = tmp_path / "rows.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert sr.main([str(dump), "--thresholds", "0.5", "0.2", "--weights", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "| 0.5 | 0.5 (main) |" in out and "| no slot penalty |" in out and "1 / 1" in out


def test_a_dump_from_another_judge_and_bad_files_are_refused(tmp_path, case):
    built, c = case
    row = _row(f"{c['id']}|right0", 0.95, [_slot("name", 0.3)])
    row["value"] += 0.05  # not what main's formula gives for these claims
    dump = tmp_path / "other.jsonl"
    dump.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="another judge"):
        sr.main([str(dump)])
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(row) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"broken.jsonl, line 2: not JSON"):
        sr.main([str(broken)])
    with pytest.raises(SystemExit, match="no such file"):
        sr.main([str(tmp_path / "missing.jsonl")])
    with pytest.raises(SystemExit):
        sr.main([str(dump), "--thresholds", "1.5"])
