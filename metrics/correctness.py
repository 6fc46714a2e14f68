"""Correctness against a reference answer, and the harmonic-mean summary score.

Factual correctness follows Ragas ``FactualCorrectness`` (and RAGChecker's claim-level
precision/recall): the answer's claims are checked against the reference (TP supported, FP
not) and the reference's claims against the answer (FN not attributable). Both checks reuse
the generation metrics' prompts -- ``claims_verdicts`` with the reference as the only passage,
``reference_claims_attribution`` with the answer as the only passage -- so answer correctness
and factual correctness with the same settings share the same two calls per sample.

With ``llm=none``, factual correctness runs its deterministic stand-in
(:func:`metrics.offline.factual_correctness`: the answer's and the reference's sentences checked
against each other by numbers, names and words); the others are ``undefined``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from ragsweep.metrics import offline
from ragsweep.metrics.spec import MetricSpec
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.evidence import EvidencePool
from ragsweep.metrics.generation import NEEDS_JUDGE
from ragsweep.metrics.judging import expected_score, sentence_support
from ragsweep.metrics.llm.base import LLM
from ragsweep.metrics.slots import check
from ragsweep.metrics.prompts import (
    CLAIMS_VERDICTS,
    CORRECTNESS_GRADE,
    REFERENCE_CLAIMS_ATTRIBUTION,
    AttributionInput,
    ClaimsInput,
    GradeInput,
    ask,
    complete,
)
from ragsweep.metrics.values import MetricValue, one_side

MODES = ("precision", "recall", "f1")
CLAIMS = ("judge", "sentences", "graded")
#: ``claims="graded"``: the weight of the judge's 1-5 grade; the rest is the deterministic
#: evidence's score. On 76 RAGChecker ``tune`` pairs (1.5B) correctness Pearson was 0.47 for the
#: evidence alone, 0.48 for the grade alone and 0.52 / 0.54 / 0.53 at weights 0.25 / 0.5 / 0.75:
#: the two make different mistakes. Blending the grade into the precision only (recall left to
#: the evidence, then F1) did worse: 0.50. Held out (all 140 pairs, question-aware evidence;
#: reported, not tuned on): blend 0.468, evidence alone 0.445, weighted grade alone 0.398,
#: written grade alone 0.263. Rechecked on all 140 ``tune`` pairs with that evidence: blend 0.544
#: at 0.5 (0.526 / 0.523 at 0.25 / 0.75), grade + evidence precision only 0.533, evidence 0.489.
#: With the evidence's declined-answer and yes/no checks, as F-0.5 (the calibration's setting),
#: on the same 140 ``tune`` pairs: 0.575 / 0.605 / 0.609 / 0.603 / 0.588 / 0.550 / 0.460 at
#: w = 0 / 0.25 / 0.4 / 0.5 / 0.6 / 0.75 / 1 -- flat around 0.5, which stays. A second grade in
#: the same call (how much of the reference the answer covers) did not help: 0.606 at best.
GRADE_WEIGHT = 0.5


def f_beta(tp: int, fp: int, fn: int, beta: float = 1.0) -> float:
    """F-beta from counts: (1 + b^2) P R / (b^2 P + R), P = TP/(TP+FP), R = TP/(TP+FN); 0 when TP = 0.

    With beta = 1 this is 2TP / (2TP + FP + FN) = TP / (TP + (FP + FN)/2).
    """
    if tp == 0:
        return 0.0
    p, r = tp / (tp + fp), tp / (tp + fn)
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r)


async def factual_correctness(answer: str, reference: str, *, judge: LLM, mode: str = "f1", beta: float = 1.0,
                              atomicity: str = "low", coverage: str = "low", claims: str = "judge",
                              question: str | None = None, cosine: bool = False) -> MetricValue:
    """Claim-level precision, recall or F-beta of the answer against the reference (Ragas
    ``FactualCorrectness``).

    TP = answer claims the reference supports, FP = answer claims it does not, FN = reference
    claims the answer does not support. precision = TP/(TP+FP), recall = TP/(TP+FN),
    F-beta = (1+b^2)PR/(b^2 P + R) (see :func:`f_beta`). ``atomicity`` and ``coverage``
    ("low"/"high", Ragas' defaults low/low) set how finely both texts are decomposed.
    Range [0, 1], higher is better. Blank reference -> undefined; precision with no answer
    claim, recall with no reference claim, F with neither -> undefined; TP = 0 otherwise -> 0.
    Calls: one ``claims_verdicts`` (always: TP comes from it) and one
    ``reference_claims_attribution`` (skipped for ``mode="precision"``); then each TP claim's open
    numbers and names are slot-checked against the reference sentences about it (one short
    ``claim_check`` each), and a claim whose value the reference gives otherwise is an FP.
    Evidence: TP/FP/FN claim lists with reasons.

    ``claims="sentences"``: the claims are the two texts' sentences, judged with probabilities
    (each on the other text's sentences about it, with slot checks, blended with the deterministic
    evidence as in faithfulness: :func:`metrics.judging.sentence_support`); TP = sum of P(answer sentence supported by the reference), FP = |answer
    sentences| - TP, FN = sum of 1 - P(reference sentence supported by the answer).

    ``claims="graded"``: one short call per answer. The sentences are matched both ways by the
    deterministic evidence (exactly as ``llm=none``: expected TP/FP/FN with what is missing, and
    its precision/recall/F for ``mode``), and the judge grades the whole answer against the
    reference from 1 to 5, read as the probability-weighted grade g = sum_k p(k) k from the score
    token's log-probabilities (G-Eval). value = w (g - 1)/4 + (1 - w) x evidence score, with
    w = :data:`GRADE_WEIGHT`. ``mode="recall"`` is the evidence's recall and makes no call. The
    reference comes before the answer in the prompt, so answers to the same question share its
    KV cache.

    ``cosine=True`` adds the embedding cosine (packaged MiniLM) to the deterministic evidence of
    ``claims="graded"`` (and of ``llm=none``); the other ``claims`` settings do not use that
    evidence and ignore it.
    """
    if mode not in MODES:
        raise InputError(f"factual_correctness mode must be one of {', '.join(MODES)}, got {mode!r}")
    if beta <= 0:
        raise InputError(f"factual_correctness beta must be > 0, got {beta}")
    if not isinstance(cosine, bool):
        raise InputError(f"factual_correctness cosine must be true or false, got {cosine!r}")
    if not reference.strip():
        return MetricValue.undefined("empty reference")
    if claims == "sentences":
        return await _sentence_correctness(answer, reference, judge, mode, beta)
    if claims == "graded":
        return await _graded_correctness(question, answer, reference, judge, mode, beta, cosine)
    if claims != "judge":
        raise InputError(f"factual_correctness claims must be one of {', '.join(CLAIMS)}, got {claims!r}")
    grain = {"atomicity": atomicity, "coverage": coverage}
    forward = ask(judge, CLAIMS_VERDICTS, ClaimsInput(text=answer, passages=[reference], **grain))
    if mode == "precision":
        answer_side, reference_side = await forward, None
    else:
        backward = ask(judge, REFERENCE_CLAIMS_ATTRIBUTION,
                       AttributionInput(reference=reference, passages=[answer], **grain))
        answer_side, reference_side = await asyncio.gather(forward, backward)
    tp = [{"claim": c.claim, "reason": c.reason} for c in answer_side.claims if c.verdict == "supported"]
    fp = [{"claim": c.claim, "reason": c.reason} for c in answer_side.claims if c.verdict != "supported"]
    tp, caught = await _slot_checked(judge, question, tp, reference)
    fp += caught
    fn = ([] if reference_side is None else
          [{"claim": c.claim, "reason": c.reason} for c in reference_side.claims if not c.attributed])
    evidence: dict[str, Any] = {"mode": mode, "tp": tp, "fp": fp, "fn": fn, **grain}
    n_ref = 0 if reference_side is None else len(reference_side.claims)
    precision = len(tp) / (len(tp) + len(fp)) if tp or fp else None
    recall = (len(tp) / (len(tp) + len(fn)) if tp or fn else 0.0) if n_ref else None
    evidence.update(precision=precision, recall=recall)
    if (one := one_side(mode, precision, recall, evidence)) is not None:
        return one
    if not answer_side.claims and not n_ref:
        return MetricValue.undefined("no claims extracted from the answer or the reference", **evidence)
    return MetricValue.ok(f_beta(len(tp), len(fp), len(fn), beta), beta=beta, **evidence)


async def _slot_checked(judge: LLM, question: str | None, tp: list[dict[str, Any]],
                        reference: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The claims the judge found supported, checked slot by slot against the reference sentences
    about them (:mod:`metrics.slots`): one whose number or name the reference fills with another
    value moves to FP, with that value in its reason. Returns (still TP, moved to FP)."""
    pool = EvidencePool([reference])
    kept, moved = [], []
    for row in tp:
        shown = [s.text for s in pool.select(row["claim"], question)]
        slots = await check(judge, row["claim"], question, shown) if shown else []
        wrong = [s for s in slots if s["p_claim"] is not None and s["p_claim"] < 0.5 and s["chosen"] is not None]
        if wrong:
            moved.append({"claim": row["claim"], "reason": "; ".join(
                f"for {s['cloze']!r} the reference gives {s['chosen']!r}, not {s['slot']!r}" for s in wrong),
                "slots": slots})
        else:
            kept.append({**row, "slots": slots} if slots else row)
    return kept, moved


async def _sentence_correctness(answer: str, reference: str, judge: LLM, mode: str, beta: float) -> MetricValue:
    a_claims, r_claims = offline.sentences(answer), offline.sentences(reference)
    weights = offline.CORRECTNESS_WEIGHTS
    a_rows = await sentence_support(judge, None, a_claims, [reference], weights) if a_claims else []
    r_rows = (await sentence_support(judge, None, r_claims, [answer], weights)
              if mode != "precision" and r_claims else [])
    tp = sum(r["p_supported"] for r in a_rows)
    fp = len(a_rows) - tp
    fn = sum(1 - r["p_supported"] for r in r_rows)
    precision = tp / len(a_rows) if a_rows else None
    recall = (tp / (tp + fn) if tp + fn > 0 else 0.0) if r_rows else None
    evidence: dict[str, Any] = {"mode": mode, "claims": "sentences", "precision": precision, "recall": recall,
                                "tp": [r for r in a_rows if r["verdict"] == "supported"],
                                "fp": [r for r in a_rows if r["verdict"] != "supported"],
                                "fn": [r for r in r_rows if r["verdict"] != "supported"]}
    if (one := one_side(mode, precision, recall, evidence)) is not None:
        return one
    if precision is None and recall is None:
        return MetricValue.undefined("no claims extracted from the answer or the reference", **evidence)
    if tp <= 0:
        return MetricValue.ok(0.0, beta=beta, **evidence)
    p, r = tp / (tp + fp), tp / (tp + fn)
    b2 = beta * beta
    return MetricValue.ok((1 + b2) * p * r / (b2 * p + r), beta=beta, **evidence)


async def _graded_correctness(question: str | None, answer: str, reference: str, judge: LLM, mode: str,
                              beta: float, cosine: bool = False) -> MetricValue:
    found = offline.factual_correctness(answer, reference, mode=mode, beta=beta, question=question, cosine=cosine)
    ev = dict(found.explanation)
    a_rows, r_rows = ev.pop("answer_claims"), ev.pop("reference_claims")
    evidence: dict[str, Any] = {
        "mode": mode, "claims": "graded", "cosine": cosine, "precision": ev.get("precision"), "recall": ev.get("recall"),
        "evidence_score": found.value,
        "tp": [r for r in a_rows if r["verdict"] == "supported"],
        "fp": [r for r in a_rows if r["verdict"] != "supported"],
        "fn": [r for r in r_rows if r["verdict"] != "supported"]}
    if found.value is None or mode == "recall" or not a_rows:
        # Recall is the evidence's alone, and an answer with no sentence has nothing to grade.
        return MetricValue(found.value, found.status, {**evidence, **({"reason": ev["reason"]} if "reason" in ev else {})})
    done = await complete(judge, CORRECTNESS_GRADE, GradeInput(question=question, reference=reference, answer=answer),
                          logprobs=True)
    grade, dist = expected_score(done.logprobs, done.parsed.score)
    value = GRADE_WEIGHT * (grade - 1) / 4 + (1 - GRADE_WEIGHT) * found.value
    evidence.update(grade=done.parsed.score, weighted_grade=grade, grade_weight=GRADE_WEIGHT,
                    grade_probabilities=None if dist is None else {str(k): p for k, p in dist.items()})
    return MetricValue.ok(value, **({"beta": beta} if mode == "f1" else {}), **evidence)


def _similarity_weighted(options: Mapping[str, Any]) -> bool:
    """answer_correctness embeds unless its similarity weight is 0 (a malformed weight is reported by the metric)."""
    try:
        return float(list(options.get("weights") or (0, 1))[1]) > 0
    except (TypeError, ValueError, IndexError):
        return True


async def answer_correctness(answer: str, reference: str, *, judge: LLM, embedder: Any,
                             weights: Sequence[float] = (0.75, 0.25), beta: float = 1.0,
                             threshold: float | None = None, atomicity: str = "low",
                             coverage: str = "low") -> MetricValue:
    """Weighted mean of factual F-beta and semantic similarity (Ragas ``AnswerCorrectness``).

    score = (w1 x F-beta + w2 x cos) / (w1 + w2), with F-beta from :func:`factual_correctness`
    (same calls, so scoring both costs nothing extra) and cos from
    :func:`metrics.lexical.answer_semantic_similarity`; Ragas' default weights [0.75, 0.25].
    With ``threshold`` the score becomes 1 if score >= threshold else 0. Range [0, 1], higher
    is better. Factual part undefined -> undefined. w2 = 0 skips the embedder.
    """
    from ragsweep.metrics.lexical import answer_semantic_similarity

    w = [float(x) for x in weights]
    if len(w) != 2 or min(w) < 0 or sum(w) <= 0:
        raise InputError(f"answer_correctness weights must be two non-negative numbers, not both 0; got {weights!r}")
    fact = await factual_correctness(answer, reference, judge=judge, mode="f1", beta=beta,
                                     atomicity=atomicity, coverage=coverage)
    if fact.value is None:
        return MetricValue(None, fact.status, {**fact.explanation, "weights": w})
    sim = 0.0
    if w[1] > 0:
        sim_value = answer_semantic_similarity(answer, reference, embedder=embedder)
        if sim_value.value is None:
            return MetricValue.undefined(f"similarity: {sim_value.explanation.get('reason')}")
        sim = sim_value.value
    score = (w[0] * fact.value + w[1] * sim) / sum(w)
    evidence = {"factual_f": fact.value, "similarity": sim, "weights": w, "weighted": score,
                **{k: fact.explanation[k] for k in ("tp", "fp", "fn", "precision", "recall")}}
    if threshold is None:
        return MetricValue.ok(score, **evidence)
    return MetricValue.ok(float(score >= threshold), threshold=threshold, **evidence)


_A_R = ("answer", "reference")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("factual_correctness", factual_correctness, _A_R, optional=("question",), needs_judge=True,
               offline_fn=offline.factual_correctness,
               offline="F of expected TP/FP/FN from sentence-level number, name and word checks both ways; "
                       "declined answers and contradicted yes/no count against it; cosine=true adds MiniLM similarity",
               options={"mode": "f1", "beta": 1.0, "atomicity": "low", "coverage": "low", "claims": "judge",
                        "cosine": False},
               description="claim-level precision/recall/F of the answer against the reference"),
    MetricSpec("answer_correctness", answer_correctness, _A_R, needs_judge=True, needs_embedder=True,
               embeds=_similarity_weighted,
               value_range=(-1.0, 1.0),  # its cosine part can be negative (with w2 > 0)
               offline=NEEDS_JUDGE, options={"weights": (0.75, 0.25), "beta": 1.0, "threshold": None,
                                             "atomicity": "low", "coverage": "low"},
               description="0.75 x factual F1 + 0.25 x semantic similarity (weights configurable)"),
)
