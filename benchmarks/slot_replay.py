"""Replay the slot checks' penalty on rows the judge already scored, with no model (issue #31).

``adversarial_families.py --scores-out FILE`` keeps every faithfulness row with its claims: the blended P before
calibration (``p_blend``), the judge's and the word evidence's P, each slot check's P(the claim's value) and what
the slots added (``slot_logit``). The slot term is applied last, so it can be taken off and put back in another
shape exactly. Down: per kind, ``weight x min(0, logit(weakest slot's P) - logit(threshold))``; up: ``confirm x
logit(weakest slot's P)`` when every number and name slot is at 0.5 or more and no unit check fired
(:func:`metrics.support.slot_confirmation`). Main's shape is threshold 0.5, :data:`metrics.support.SLOT_WEIGHTS`
and :data:`metrics.support.SLOT_CONFIRM`. A unit check keeps main's weight (it has no doubt in it to reshape). Every
row is first replayed with main's shape, or with the judge's before slot confirmation (2026-11-28), and must give
the value it was dumped with; a dump written by another judge is refused.

    python benchmarks/slot_replay.py tune1-24.jsonl tune25-48.jsonl --half tune
    python benchmarks/slot_replay.py DUMPS... --thresholds 0.5 0.3 0.2 --weights 0.5 1 2 --confirm 0 0.5 1

It prints, per shape, the right answers' mean and the swaps caught (more than 0.1 below the right answer), as
``adversarial_families.py`` counts them, and the same with no slot penalty at all: what the slot checks cost the
right answers and what they buy on swaps.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adversarial_families as af  # noqa: E402

from ragsweep.gen.documents import iter_jsonl  # noqa: E402
from ragsweep.metrics.errors import InputError  # noqa: E402

from ragsweep.metrics.support import (  # noqa: E402
    CALIBRATION,
    SLOT_CONFIRM,
    SLOT_WEIGHTS,
    calibrate,
    logit,
    sigmoid,
    slot_confirmation,
    slot_penalty,
)

EXACT = 1e-6


@dataclass(frozen=True)
class Shape:
    """One shape of the slot term: numbers and names lose ``weight`` x their weakest logit below ``threshold``'s,
    and a claim every slot confirms gains ``confirm`` x the weakest slot's logit; units as on main. ``None`` for
    every field: no slot term at all."""

    threshold: float | None = 0.5
    weight: float = SLOT_WEIGHTS["name"]
    confirm: float = SLOT_CONFIRM

    def term(self, slots: Sequence[dict[str, Any]], gain: bool = True) -> float:
        if self.threshold is None:
            return 0.0
        total = self.confirm / SLOT_CONFIRM * slot_confirmation(slots) if gain and self.confirm else 0.0
        for kind in ("number", "name"):
            got = [s["p_claim"] for s in slots if s["kind"] == kind and s["p_claim"] is not None]
            if got:
                total += self.weight * min(0.0, logit(min(got), eps=1e-3) - logit(self.threshold))
        units = [s for s in slots if s["kind"] == "unit"]
        return total + (slot_penalty(units) if units else 0.0)


MAIN = Shape()
BEFORE_CONFIRM = Shape(confirm=0.0)  # the judge's slot term until 2026-11-28
NONE = Shape(threshold=None)


def capped(claim: dict[str, Any]) -> bool:
    """Whether the coverage cap kept this claim's slots from raising it: its recorded slot term holds no gain
    though every slot confirmed it."""
    slots = claim.get("slots") or []
    return ("slot_logit" in claim and slot_confirmation(slots) > 0
            and abs(claim["slot_logit"] - slot_penalty(slots)) < EXACT)


def claim_value(claim: dict[str, Any], shape: Shape) -> float:
    """A claim's calibrated P with ``shape``'s slot term in place of the one it was scored with (its
    ``slot_logit``; a dump from before that field holds only the downward term). A claim no slot was checked for,
    or one with no judge P (nothing to blend), keeps its value; a capped claim gains nothing."""
    slots = claim.get("slots") or []
    if not slots or claim.get("p_blend") is None or claim.get("p_judge") is None:
        return float(claim["p_supported"])
    before = logit(claim["p_blend"]) - float(claim.get("slot_logit", slot_penalty(slots)))
    ab = CALIBRATION.get(str(claim.get("calibration")))
    return calibrate(sigmoid(before + shape.term(slots, gain=not capped(claim))), ab)


def row_value(row: dict[str, Any], shape: Shape) -> float | None:
    """A faithfulness row's value (the mean over its claims) under ``shape``; None for a row with no value."""
    if row.get("value") is None:
        return None
    claims = (row.get("explanation") or {}).get("claims") or []
    if not claims:
        return float(row["value"])
    return sum(claim_value(c, shape) for c in claims) / len(claims)


def _refuse(message: str) -> NoReturn:
    """Bad input: one line on stderr and exit 2, as the other benchmark scripts do."""
    print(f"slot_replay: {message}", file=sys.stderr)
    raise SystemExit(2)


def read_dumps(paths: Iterable[Path]) -> list[dict[str, Any]]:
    rows = []
    for path in paths:
        if not path.is_file():
            _refuse(f"{path}: no such file")
        try:
            rows += [row for _, row in iter_jsonl(path) if row.get("metric") == "faithfulness"]
        except InputError as exc:
            _refuse(str(exc))
    return rows


def check_exact(rows: Sequence[dict[str, Any]], shape: Shape = MAIN) -> float:
    """The largest difference between a row's dumped value and ``shape`` replayed (0 when they agree)."""
    return max((abs(v - float(r["value"])) for r in rows if (v := row_value(r, shape)) is not None), default=0.0)


def summary(rows: Sequence[dict[str, Any]], shape: Shape, built: dict[str, Any], half: str) -> dict[str, Any]:
    scores = {(r["sample_id"], "faithfulness"): v for r in rows if (v := row_value(r, shape)) is not None}
    return af.summarise(scores, built, half)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="+", type=Path, help="files written by adversarial_families.py --scores-out")
    ap.add_argument("--half", choices=("tune", "report"), default="tune")
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 0.4, 0.3, 0.2, 0.1])
    ap.add_argument("--weights", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--confirm", type=float, nargs="+", default=[0.0, SLOT_CONFIRM],
                    help="weights of the gain when every slot confirms the claim (0: none)")
    args = ap.parse_args(argv)
    if SLOT_WEIGHTS["number"] != SLOT_WEIGHTS["name"]:
        _refuse("main weighs numbers and names apart; this replay assumes one weight")
    bad = [t for t in args.thresholds if not 0 < t < 1]
    if bad:
        ap.error(f"--thresholds must lie strictly between 0 and 1, got {bad}")
    rows = read_dumps(args.dumps)
    if not rows:
        _refuse("no faithfulness row in the dumps")
    fits = {name: check_exact(rows, shape) for name, shape in (("today's judge", MAIN),
                                                                  ("the judge before slot confirmation", BEFORE_CONFIRM))}
    writer, off = min(fits.items(), key=lambda kv: kv[1])
    if off > EXACT:
        _refuse(f"the slot term replayed moves a row by {off:.2g}: these dumps were written by another judge "
                "(another blend, calibration or slot rule)")
    built = af.build()
    print(f"{len(rows)} rows, written by {writer}, replayed exactly (largest difference {off:.1e}); "
          f"half {args.half}\n")
    print("| threshold | weight | confirm | right answers, mean | swaps caught | by kind |\n|---|---|---|---|---|---|")
    shapes = [NONE] + [Shape(t, w, c) for c in args.confirm for t in args.thresholds for w in args.weights]
    for shape in shapes:
        got = summary(rows, shape, built, args.half)
        kinds = ", ".join(f"{k} {v}" for k, v in got["swaps_by_kind"].items())
        label = (["no slot term", "–", "–"] if shape == NONE
                 else [f"{x:g}" for x in (shape.threshold, shape.weight, shape.confirm)])
        if shape == MAIN:
            label[2] += " (main)"
        caught = "–" if got["swaps_caught"] is None else f"{round(got['swaps_caught'] * got['n_swaps'])} / {got['n_swaps']}"
        mean = "–" if got["right_mean"] is None else f"{got['right_mean']:.3f} (n {got['n_right']})"
        print(f"| {' | '.join(label)} | {mean} | {caught} | {kinds} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
