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

from ragsweep.metrics.support import (  # noqa: E402
    CALIBRATION,
    calibrate,
    logit,
    sigmoid,
    slot_confirmation,
    slot_penalty,
)

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def _slot(kind: str, p: float) -> dict:
    return {"slot": "x", "kind": kind, "cloze": "___", "options": ["x", "y", "not stated"], "chosen": "x", "p_claim": p}


def _row(sample_id: str, before: float, slots: list[dict], *, old: bool = False, capped: bool = False) -> dict:
    """A dumped row as the judge writes it: p_blend holds the slot term, the value is calibrated. ``old``: as the
    judge before slot confirmation wrote it (no gain, no slot_logit); ``capped``: the coverage cap held the gain."""
    term = slot_penalty(slots) + (0.0 if old or capped else slot_confirmation(slots))
    p_blend = sigmoid(logit(before) + term)
    value = calibrate(p_blend, CALIBRATION[MODEL])
    claim = {"claim": "c", "p_supported": value, "p_blend": p_blend, "p_judge": 0.9, "slots": slots,
             "calibration": MODEL}
    if not old:
        claim["slot_logit"] = term
    return {"sample_id": sample_id, "metric": "faithfulness", "value": value, "status": "ok",
            "explanation": {"claims": [claim]}}


@pytest.mark.parametrize("slots", [[], [_slot("number", 0.3)], [_slot("name", 0.8), _slot("name", 0.2)],
                                   [_slot("number", 0.1), _slot("unit", 0.05)], [_slot("unit", 0.05)]])
def test_mains_shape_is_the_judges_slot_term(slots):
    assert sr.BEFORE_CONFIRM.term(slots) == pytest.approx(slot_penalty(slots))
    assert sr.MAIN.term(slots) == pytest.approx(slot_penalty(slots) + slot_confirmation(slots))
    assert sr.NONE.term(slots) == 0.0


def test_a_lower_threshold_forgives_mild_doubt_only():
    mild, strong = [_slot("name", 0.35)], [_slot("name", 0.05)]
    assert sr.Shape(0.2, 0.5, 0).term(mild) == 0.0 and sr.Shape(0.5, 0.5, 0).term(mild) < 0.0
    assert sr.Shape(0.2, 0.5, 0).term(strong) < 0.0


def test_confirmation_needs_every_slot_and_no_unit_mismatch():
    assert slot_confirmation([_slot("name", 0.9), _slot("number", 0.8)]) == pytest.approx(0.5 * logit(0.8, 1e-3))
    assert slot_confirmation([_slot("name", 0.9), _slot("number", 0.4)]) == 0.0  # one slot doubts it
    assert slot_confirmation([_slot("name", 0.9), _slot("unit", 0.05)]) == 0.0  # a number of something else
    assert slot_confirmation([]) == 0.0 and slot_confirmation([{**_slot("name", 0.9), "p_claim": None}]) == 0.0


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
    assert sr.check_exact(rows) < sr.EXACT and sr.check_exact(rows, sr.BEFORE_CONFIRM) > sr.EXACT
    main = sr.summary(rows, sr.MAIN, built, "tune")
    before = sr.summary(rows, sr.BEFORE_CONFIRM, built, "tune")
    none = sr.summary(rows, sr.NONE, built, "tune")
    assert main["swaps_caught"] == 1.0 and none["swaps_caught"] == 0.0  # the slot check is what catches it
    assert before["right_mean"] == pytest.approx(none["right_mean"])  # a confident right slot costs nothing
    assert main["right_mean"] > before["right_mean"]  # and, confirmed, it counts for the claim
    dump = tmp_path / "rows.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert sr.main([str(dump), "--thresholds", "0.5", "0.2", "--weights", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "| 0.5 | 0.5 | 0.5 (main) |" in out and "| no slot term |" in out and "1 / 1" in out
    assert "written by today's judge" in out


def test_old_dumps_and_capped_claims_replay_exactly(case):
    built, c = case
    old = [_row(f"{c['id']}|right0", 0.95, [_slot("name", 0.9)], old=True)]
    assert sr.check_exact(old, sr.BEFORE_CONFIRM) < sr.EXACT and sr.check_exact(old) > sr.EXACT
    held = [_row(f"{c['id']}|right0", 0.95, [_slot("name", 0.9)], capped=True)]
    assert sr.capped(held[0]["explanation"]["claims"][0])
    assert sr.check_exact(held) < sr.EXACT  # main's shape gives a capped claim no gain


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as got:
        sr.main(argv)
    assert got.value.code == 2
    return capsys.readouterr().err


def test_a_dump_from_another_judge_and_bad_files_are_refused(tmp_path, case, capsys):
    built, c = case
    row = _row(f"{c['id']}|right0", 0.95, [_slot("name", 0.3)])
    row["value"] += 0.05  # not what main's formula gives for these claims
    dump = tmp_path / "other.jsonl"
    dump.write_text(json.dumps(row) + "\n", encoding="utf-8")
    assert "another judge" in _refused([str(dump)], capsys)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(row) + "\n{not json\n", encoding="utf-8")
    assert "broken.jsonl, line 2: not valid JSON" in _refused([str(broken)], capsys)
    broken.write_text(json.dumps(row) + "\n[1, 2]\n", encoding="utf-8")  # JSON, but not a row
    assert "broken.jsonl, line 2: expected a JSON object" in _refused([str(broken)], capsys)
    assert "no such file" in _refused([str(tmp_path / "missing.jsonl")], capsys)
    assert "strictly between 0 and 1" in _refused([str(dump), "--thresholds", "1.5"], capsys)
