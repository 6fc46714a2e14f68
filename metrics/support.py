"""What a statement's P(supported) is made of, and what it means: the blend of a judge's verdict
probability with the deterministic evidence, and the final calibration that lets a score carry a
threshold. Kept apart from :mod:`metrics.judging` (which calls the judge) so that the ``llm=none``
evidence of :mod:`metrics.offline` is calibrated by the same map without importing the prompts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

#: What :mod:`metrics.guard` puts in place of a sentence addressed to the evaluator (in a context or
#: an answer). It starts with a capital so that it stays a sentence of its own.
REMOVED = "[Removed: text addressed to the evaluator]"


def is_removed(sentence: str) -> bool:
    """Whether a claim is (or holds) the placeholder of a removed sentence."""
    return REMOVED in (sentence or "")


#: How a claim's judge probability and its deterministic evidence combine:
#: logit P = judge x logit P(judge says yes) + offline x logit P(offline) + bias. The judge sees only
#: the sentences about the claim (:mod:`metrics.evidence`), so its verdict carries most of the weight;
#: the evidence's share is what sinks a value the contexts never state, which a small judge shown
#: sentences that hold every other word of the claim still accepts. Chosen on the ``tune`` half of
#: the adversarial families (``benchmarks/adversarial_families.py``) over offline weights 0-1.
BLEND = {"judge": 1.0, "offline": 0.3, "bias": 0.0}
#: How much a slot check (:mod:`metrics.slots`) that finds another value for one of the claim's
#: numbers or names lowers it: logit P += weight x min(0, logit P(the claim's value)), per kind, with
#: the claim's weakest slot of that kind. Chosen with :data:`BLEND` on the same ``tune`` half. A
#: unit check fires only where the contexts give the claim's number of something else, with no judge's
#: doubt in it, so it takes a confident yes below 0.5.
SLOT_WEIGHTS = {"number": 0.5, "name": 0.5, "unit": 1.0}
#: How much a claim gains when its slot checks confirm it (:func:`slot_confirmation`), at the weight a
#: contradicting slot costs. A yes/no verdict says yes to a swapped value too (every word of it is in
#: the evidence); a cloze that picks the claim's own value among the evidence's rival values of its kind
#: has read which value belongs where, which the verdict does not show. So agreement counts as evidence
#: both ways, as in QAGS and QAFactEval, which score by it.
SLOT_CONFIRM = 0.5
#: Judges whose verdicts measured no better than chance get their own blend. The packaged 0.5B's
#: verdict probabilities on 60 HaluEval ``tune`` pairs ranked 0.50 pairwise / 0.43 ROC-AUC alone,
#: and every judge weight above 0 lowered the blend (0.86 / 0.88 at 0; 0.83 / 0.86 at 0.1 to 1):
#: with it, sentence support is the evidence's alone and no call is made.
BLEND_BY_MODEL: dict[str, dict[str, float]] = {
    "qwen2.5-coder-0.5b-instruct-q4_k_m": {"judge": 0.0, "offline": 1.0, "bias": 0.0},
}
#: The final mapping of a statement's blended P(supported) to a calibrated probability (Platt
#: scaling: P = sigmoid(a x logit(p) + b)), per judge model id, and "none" for the evidence alone
#: (``llm=none``, and judges whose blend gives their verdicts no weight). Fitted by
#: ``python benchmarks/calibrate.py --fit --split tune --llm none local`` on the ``tune`` halves of
#: HaluEval, QAGS and BEGIN: each set weighted equally, every statement labelled with its text's human
#: label, and within a set the supported and unsupported statements weighted to a base rate of 69%
#: supported (QAGS' real summarizer sentences; HaluEval is 1:1 by construction, which a plain fit
#: would bake in). The 1.5B's map is refitted whenever the sentence judge changes (the per-claim
#: evidence and slot checks: 20 HaluEval pairs, 10 QAGS summaries, 20 BEGIN responses of ``tune``).
#: Platt, not isotonic: a monotone map with no flat steps keeps every ranking figure as it was, and
#: two parameters cannot overfit a few hundred labels. A judge not listed here is not calibrated
#: (a = 1, b = 0) and its explanations say so. Held-out figures: docs/trust/judged-metrics.md.
CALIBRATION: dict[str, tuple[float, float]] = {
    "none": (1.318, 0.440),
    "qwen2.5-coder-1.5b-instruct-q4_k_m": (0.906, -0.493),
}


def logit(p: float, eps: float = 1e-4) -> float:
    """log(p / (1 - p)), with p clipped to [eps, 1 - eps]."""
    p = min(max(p, eps), 1 - eps)
    return math.log(p / (1 - p))


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def calibration_for(judge: Any) -> tuple[str, tuple[float, float] | None]:
    """The calibration key and its (a, b) for this judge: "none" when its verdicts carry no weight
    (or there is no judge), else its model id; None when that key was never calibrated."""
    key = "none" if judge is None or blend_for(judge)["judge"] == 0 else str(getattr(judge, "model_id", ""))
    return key, CALIBRATION.get(key)


def calibrate(p: float, ab: tuple[float, float] | None) -> float:
    """Platt scaling of a probability: sigmoid(a logit(p) + b); p itself without a mapping."""
    if ab is None:
        return p
    return sigmoid(ab[0] * logit(p) + ab[1])


def calibrate_rows(rows: list[dict[str, Any]], judge: Any) -> list[dict[str, Any]]:
    """Each row's ``p_supported`` mapped by :func:`calibration_for` in place; the blended value is
    kept as ``p_blend`` and the verdict follows the calibrated one. A removed sentence stays 0."""
    key, ab = calibration_for(judge)
    for row in rows:
        row["p_blend"] = row["p_supported"]
        if not is_removed(row["claim"]):
            row["p_supported"] = calibrate(row["p_supported"], ab)
        row["calibration"] = key if ab is not None else "none fitted for this judge"
        if ab is not None and row.get("verdict") in ("supported", "not_supported", "not_found"):
            negative = row["verdict"] if row["verdict"] != "supported" else "not_supported"
            row["verdict"] = "supported" if row["p_supported"] >= 0.5 else negative
    return rows


def blend_for(judge: Any) -> dict[str, float]:
    """The blend weights for this judge: :data:`BLEND_BY_MODEL` by its model id, else :data:`BLEND`."""
    return BLEND_BY_MODEL.get(str(getattr(judge, "model_id", "")), BLEND)


def slot_confirmation(slots: Sequence[dict[str, Any]]) -> float:
    """The logit a claim gains from its slot checks: :data:`SLOT_CONFIRM` x the logit of its weakest number or
    name slot's P(claim's value), when every such slot is filled with the claim's value (the weakest at 0.5 or
    more) and no unit check found the number given of something else; else 0. A claim with no slot checked
    gains nothing."""
    checked = [s["p_claim"] for s in slots if s["kind"] in ("number", "name") and s["p_claim"] is not None]
    if not checked or min(checked) < 0.5 or any(s["kind"] == "unit" and s["p_claim"] is not None for s in slots):
        return 0.0
    return SLOT_CONFIRM * logit(min(checked), eps=1e-3)


def slot_penalty(slots: Sequence[dict[str, Any]]) -> float:
    """The logit a claim loses to its slot checks: per kind, :data:`SLOT_WEIGHTS` x the logit of its
    weakest slot's P(claim's value) when that is below 0.5 (:mod:`metrics.slots`; used with and without a judge)."""
    total = 0.0
    for kind, weight in SLOT_WEIGHTS.items():
        got = [s["p_claim"] for s in slots if s["kind"] == kind and s["p_claim"] is not None]
        if got:
            total += weight * min(0.0, logit(min(got), eps=1e-3))
    return total
