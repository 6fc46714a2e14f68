"""Replay the slot checks' penalty on rows the judge already scored, with no model (issue #31).

``adversarial_families.py --scores-out FILE`` keeps every faithfulness row with its claims: the blended P before
calibration (``p_blend``), the judge's and the word evidence's P, and each slot check's P(the claim's value). The
penalty the slot checks take (:func:`metrics.support.slot_penalty`) is applied last, so it can be taken off and put
back in another shape exactly: per kind, ``weight x min(0, logit(weakest slot's P) - logit(threshold))``; main's
is threshold 0.5 and :data:`metrics.support.SLOT_WEIGHTS`. A unit check keeps main's weight (it has no doubt in
it to reshape). Every row is first replayed with main's shape and must give the value it was dumped with; a dump
written by another judge is refused.

    python benchmarks/slot_replay.py tune1-24.jsonl tune25-48.jsonl --half tune
    python benchmarks/slot_replay.py DUMPS... --thresholds 0.5 0.3 0.2 --weights 0.5 1 2

It prints, per shape, the right answers' mean and the swaps caught (more than 0.1 below the right answer), as
``adversarial_families.py`` counts them, and the same with no slot penalty at all: what the slot checks cost the
right answers and what they buy on swaps.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adversarial_families as af  # noqa: E402

from ragsweep.metrics.support import CALIBRATION, SLOT_WEIGHTS, calibrate, logit, sigmoid, slot_penalty  # noqa: E402

Penalty = Callable[[Sequence[dict[str, Any]]], float]
EXACT = 1e-6


def shaped(threshold: float, weight: float) -> Penalty:
    """The penalty of one shape: numbers and names at ``weight`` below ``threshold``; units as on main."""
    def penalty(slots: Sequence[dict[str, Any]]) -> float:
        total = 0.0
        for kind in ("number", "name"):
            got = [s["p_claim"] for s in slots if s["kind"] == kind and s["p_claim"] is not None]
            if got:
                total += weight * min(0.0, logit(min(got), eps=1e-3) - logit(threshold))
        units = [s for s in slots if s["kind"] == "unit"]
        return total + (slot_penalty(units) if units else 0.0)
    return penalty


def claim_value(claim: dict[str, Any], penalty: Penalty) -> float:
    """A claim's calibrated P with ``penalty`` in place of the one it was scored with. A claim no slot was checked
    for, or one with no judge P (nothing to blend), keeps its value."""
    slots = claim.get("slots") or []
    if not slots or claim.get("p_blend") is None or claim.get("p_judge") is None:
        return float(claim["p_supported"])
    before = logit(claim["p_blend"]) - slot_penalty(slots)
    ab = CALIBRATION.get(str(claim.get("calibration")))
    return calibrate(sigmoid(before + penalty(slots)), ab)


def row_value(row: dict[str, Any], penalty: Penalty) -> float | None:
    """A faithfulness row's value (the mean over its claims) under ``penalty``; None for a row with no value."""
    if row.get("value") is None:
        return None
    claims = (row.get("explanation") or {}).get("claims") or []
    if not claims:
        return float(row["value"])
    return sum(claim_value(c, penalty) for c in claims) / len(claims)


def read_dumps(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"slot_replay: {path}: no such file")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SystemExit(f"slot_replay: {path}, line {n}: not JSON ({exc.msg})") from None
            if row.get("metric") == "faithfulness":
                rows.append(row)
    return rows


def check_exact(rows: Sequence[dict[str, Any]]) -> float:
    """The largest difference between a row's dumped value and main's shape replayed (0 when they agree)."""
    main = shaped(0.5, SLOT_WEIGHTS["name"])
    return max((abs(v - float(r["value"])) for r in rows if (v := row_value(r, main)) is not None), default=0.0)


def summary(rows: Sequence[dict[str, Any]], penalty: Penalty, built: dict[str, Any], half: str) -> dict[str, Any]:
    scores = {(r["sample_id"], "faithfulness"): v for r in rows if (v := row_value(r, penalty)) is not None}
    return af.summarise(scores, built, half)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="+", type=Path, help="files written by adversarial_families.py --scores-out")
    ap.add_argument("--half", choices=("tune", "report"), default="tune")
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 0.4, 0.3, 0.2, 0.1])
    ap.add_argument("--weights", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    args = ap.parse_args(argv)
    if SLOT_WEIGHTS["number"] != SLOT_WEIGHTS["name"]:
        raise SystemExit("slot_replay: main weighs numbers and names apart; this replay assumes one weight")
    bad = [t for t in args.thresholds if not 0 < t < 1]
    if bad:
        ap.error(f"--thresholds must lie strictly between 0 and 1, got {bad}")
    rows = read_dumps(args.dumps)
    if not rows:
        raise SystemExit("slot_replay: no faithfulness row in the dumps")
    off = check_exact(rows)
    if off > EXACT:
        raise SystemExit(f"slot_replay: main's penalty replayed moves a row by {off:.2g}: these dumps were written "
                         "by another judge (another blend, calibration or slot rule)")
    built = af.build()
    print(f"{len(rows)} rows, replayed exactly (largest difference {off:.1e}); half {args.half}\n")
    print("| threshold | weight | right answers, mean | swaps caught | by kind |\n|---|---|---|---|---|")
    shapes = [(None, None)] + [(t, w) for t in args.thresholds for w in args.weights]
    for t, w in shapes:
        got = summary(rows, (lambda s: 0.0) if t is None else shaped(t, w), built, args.half)
        kinds = ", ".join(f"{k} {v}" for k, v in got["swaps_by_kind"].items())
        label = ("no slot penalty", "–") if t is None else (f"{t:g}", f"{w:g}" + (" (main)" if (t, w) == (0.5, SLOT_WEIGHTS["name"]) else ""))
        caught = "–" if got["swaps_caught"] is None else f"{round(got['swaps_caught'] * got['n_swaps'])} / {got['n_swaps']}"
        mean = "–" if got["right_mean"] is None else f"{got['right_mean']:.3f} (n {got['n_right']})"
        print(f"| {label[0]} | {label[1]} | {mean} | {caught} | {kinds} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
