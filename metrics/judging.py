"""Verdicts as probabilities: reading P(verdict) from a judge's log-probabilities, and the
calibrated sentence-support judge built on it (:func:`sentence_support`, used by faithfulness and
by factual correctness with ``claims="sentences"``).

A small judge's hard labels are coarse (most answers come out "all supported"); the probability
it gives the verdict token ranks answers far better. A backend that returns top
log-probabilities per generated position (llama.cpp, OpenAI) lets us read it for free from the
call that produced the verdicts.

The probabilities a backend reports are the model's own distribution *before* a JSON-schema
grammar masks it, so a position can list tokens the grammar would never allow. We therefore
renormalise over the allowed alternatives only: P(yes) = p(yes) / (p(yes) + p(no)). When only
one alternative is among the top tokens, the other is given the smallest probability listed
there (an upper bound on what it can have), so the verdict is confident but not certain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragsweep.metrics import offline
from ragsweep.metrics.evidence import EvidencePool, keys_of, read_in_context_words, semantic_coverage
from ragsweep.metrics.llm.base import LLM, Logprobs
from ragsweep.metrics.prompts import CLAIM_CHECK, CheckInput, complete
from ragsweep.metrics.slots import check as check_slots
from ragsweep.metrics.slots import confirmations, mismatches, unit_checks, with_units
from ragsweep.metrics.support import (  # noqa: F401 - re-exported: the blend's home was here
    BLEND,
    BLEND_BY_MODEL,
    CALIBRATION,
    SLOT_WEIGHTS,
    blend_for,
    calibrate,
    calibrate_rows,
    calibration_for,
    is_removed,
    logit,
    sigmoid,
    slot_confirmation,
    slot_penalty,
)

#: Below this share of a statement's content words found in the contexts (the evidence's
#: ``coverage``), the judge's verdict cannot raise it above the evidence's own probability: a
#: supported statement rarely leaves most of its words out of its sources, while an instruction
#: written into an answer, or a claim about something else, does. Chosen on the ``tune`` halves
#: (benchmarks/results/2026-11-26-judge-per-claim.md).
MIN_COVERAGE = 0.5


def _norm(token: str) -> str:
    return token.strip().strip('"').strip().lower()


def verdict_probability(position: Mapping[str, float], positive: str, negative: str) -> float | None:
    """P(positive) at one position, renormalised over {positive, negative}; None if neither is listed."""
    pos = neg = 0.0
    for token, lp in position.items():
        t = _norm(token)
        if t == positive:
            pos += math.exp(lp)
        elif t == negative:
            neg += math.exp(lp)
    if pos == 0 and neg == 0:
        return None
    floor = math.exp(min(position.values()))
    return (pos or floor) / ((pos or floor) + (neg or floor))


def verdict_probabilities(logprobs: Logprobs | None, verdicts: Sequence[str], positive: str = "yes",
                          negative: str = "no") -> list[float]:
    """P(positive) for each verdict the judge wrote, in order.

    The positions are found left to right: the next position listing either alternative among its
    top tokens belongs to the next verdict. Without logprobs, or when a verdict's position cannot
    be found, the written verdict stands as probability 1 or 0 -- so a scripted judge, or a
    backend without logprobs, gets the field's exact hard-label formula.
    """
    hard = [1.0 if _norm(v) == positive else 0.0 for v in verdicts]
    if not logprobs:
        return hard
    out: list[float] = []
    i = 0
    for k in range(len(verdicts)):
        p = None
        while i < len(logprobs) and p is None:
            p = verdict_probability(logprobs[i], positive, negative) if logprobs[i] else None
            i += 1
        out.append(hard[k] if p is None else p)
    return out


#: The score tokens of a 1-5 grade (G-Eval, graded correctness).
SCORES = (1, 2, 3, 4, 5)


def score_distribution(logprobs: Logprobs | None, chosen: int) -> dict[int, float] | None:
    """Probabilities of the score tokens at the position where the judge wrote its score.

    The position is the first one whose most likely token is a score digit equal to the parsed
    score; the probabilities of the digits among its top tokens are renormalised to sum to 1.
    None when there are no logprobs or no such position.
    """
    for position in logprobs or []:
        if not position:
            continue
        best = max(position, key=position.__getitem__).strip()
        if best != str(chosen):
            continue
        probs: dict[int, float] = {}
        for token, lp in position.items():
            t = token.strip()
            if t.isdigit() and int(t) in SCORES:
                probs[int(t)] = probs.get(int(t), 0.0) + math.exp(lp)
        total = sum(probs.values())
        return {s: p / total for s, p in sorted(probs.items())} if total > 0 else None
    return None


def expected_score(logprobs: Logprobs | None, chosen: int) -> tuple[float, dict[int, float] | None]:
    """The probability-weighted score sum_k p(k) k (G-Eval), or the written score when the backend
    gave no usable log-probabilities; with the distribution it came from."""
    dist = score_distribution(logprobs, chosen)
    return (float(chosen) if dist is None else sum(k * p for k, p in dist.items())), dist


def blended(blend: Mapping[str, float], judge_logit: float, p_offline: float) -> float:
    """The judge's logit and the deterministic evidence's probability combined with ``blend``."""
    return sigmoid(blend["judge"] * judge_logit + blend["offline"] * logit(p_offline) + blend["bias"])


async def blind_support(judge: LLM, question: str | None, statement: str) -> float | None:
    """P(yes) for ``statement`` when the judge is shown no passage at all: a judge that reads the
    evidence says no here, whatever the statement is; one that says yes is answering the statement
    itself. None when the backend gave no usable log-probabilities."""
    done = await complete(judge, CLAIM_CHECK, CheckInput(passages=[], question=question, statement=statement),
                          logprobs=True)
    if done.parsed is None or done.parsed.answer not in ("yes", "no") or not done.logprobs:
        return None
    return verdict_probabilities(done.logprobs, [done.parsed.answer])[0]


def word_evidence(statements: Sequence[str], passages: Sequence[str], question: str | None,
                  weights: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The deterministic evidence that enters a judge's blend (:func:`metrics.offline.judge_claims`), each
    statement read in the contexts' own words (:func:`metrics.evidence.read_in_context_words`): a right
    answer in other words is not held down as if it stated things the contexts lack. Rows keep the
    statement as written; their reason names the words read as others. The ``llm=none`` evidence is
    not read this way: its calibration map was fitted on words as they are."""
    read = [(s, {}) if is_removed(s) else read_in_context_words(s, question, passages, offline._EVIDENCE_EMBEDDER)
            for s in statements]
    rows = offline.judge_claims([text for text, _ in read], passages, question, weights=weights)
    for row, statement, (_, words) in zip(rows, statements, read):
        row["claim"] = statement
        if words:
            row["reason"] += "; read " + ", ".join(f"{a!r} as {b!r}" for a, b in words.items())
    return rows


async def sentence_support(judge: LLM, question: str | None, statements: Sequence[str], passages: Sequence[str],
                           weights: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """P(supported) of each statement against the passages, each judged on its own evidence.

    Per statement: the few passage sentences that bear on it (:mod:`metrics.evidence`) are the only
    text the judge sees, numbered; one ``claim_check`` call gives P(yes) from the verdict
    token's log-probability, and each open number or name of the statement gets a slot check
    (:mod:`metrics.slots`, one ``claim_check`` call each, same prompt prefix). The judge's probability and the
    deterministic evidence's (:func:`word_evidence`, the statement read in the contexts' words) are blended in
    logit space with :data:`BLEND`; a slot filled with another value lowers it (:func:`slot_penalty`), and
    slots that all confirm the statement's values raise it (:func:`slot_confirmation`). Slots are asked only
    of a statement the judge does not already reject.
    Without logprobs the judge's hard verdicts stand alone (1 or 0).

    Returns one row per statement: claim, p_supported, verdict, judge_verdict, p_judge, p_offline,
    evidence (what the deterministic check found missing), shown (the sentences the judge saw),
    slots, slot_logit (what the slots added), best_sentence, features.
    """
    blend = blend_for(judge)
    if blend["judge"] == 0:  # this judge's verdicts carry no signal: the evidence decides, no call
        rows = offline.judge_claims(statements, passages, question, weights=weights)
        for row in with_units(rows, question, passages):
            p_off = row["p_supported"]
            row.update(p_supported=0.0 if is_removed(row["claim"]) else sigmoid(blend["offline"] * logit(p_off)
                                                                               + blend["bias"]),
                       judge_verdict="not asked", p_judge=None, p_offline=p_off, evidence=row.pop("reason"))
        return calibrate_rows(rows, judge)
    rows = word_evidence(statements, passages, question, weights)
    pool = EvidencePool(passages, offline._EVIDENCE_EMBEDDER)
    with_logprobs = False
    for row, statement in zip(rows, statements):
        p_off = row.pop("p_supported")
        shown = pool.select(statement, question)
        texts = [s.text for s in shown]
        if not texts or is_removed(statement):
            # Nothing in the passages is about this statement: it is not supported, and there is nothing
            # to ask the judge. A statement with nothing checkable in it ("Yes.") keeps the evidence's 0.5.
            checkable = bool(keys_of(statement))
            row.update(p_supported=0.0 if checkable or is_removed(statement) else p_off,
                       judge_verdict="not asked: no passage sentence is about it", p_judge=None, p_offline=p_off,
                       evidence=row.pop("reason"), shown=[], slots=[])
            row["verdict"] = "supported" if row["p_supported"] >= 0.5 else "not_supported"
            continue
        done = await complete(judge, CLAIM_CHECK, CheckInput(passages=texts, question=question, statement=statement),
                              logprobs=True)
        got = [done.parsed.answer] if done.parsed is not None and done.parsed.answer in ("yes", "no") else []
        verdict = got[0] if got else "missing"
        pj = verdict_probabilities(done.logprobs, got)[0] if got else 0.5
        with_logprobs = with_logprobs or bool(done.logprobs)
        # Hard verdicts (no logprobs) stand alone, so the formula is the field's exactly.
        p = pj if not done.logprobs else blended(blend, logit(pj), p_off)
        # The same question with no passages: the part of a yes the judge also gives blind comes from the
        # statement (an instruction inside it, a claim taken on faith), not from the evidence, so only
        # what the passages add over it counts. Asked only when the judge lifted the statement.
        p_blind = await blind_support(judge, question, statement) if done.logprobs and p > p_off else None
        if p_blind is not None and p_blind > 0.5:
            p = blended(blend, logit(pj) - logit(p_blind), p_off)
        # A judge's yes needs the statement's words to be in the contexts: when most of its content words
        # are not (an instruction written into the answer, a claim about something else), the judge's
        # verdict cannot lift it above what the evidence alone says.
        # Words the contexts say otherwise ("finished" for "completed") count as there.
        coverage = row.get("features", {}).get("coverage")
        capped = bool(done.logprobs and coverage is not None and coverage < MIN_COVERAGE and semantic_coverage(
            statement, question, passages, offline._EVIDENCE_EMBEDDER) < MIN_COVERAGE)
        if capped:  # hard verdicts stand alone
            p = min(p, p_off)
        p, slots, slot_logit, explained = await _with_slots(judge, statement, question, texts, passages, p,
                                                            capped, bool(done.logprobs))
        row.update(p_supported=p, judge_verdict={"yes": "supported", "no": "not_supported"}.get(
            verdict, verdict), p_judge=pj, p_offline=p_off, evidence=row.pop("reason") + explained, shown=texts,
            slots=slots, p_blind=p_blind, slot_logit=slot_logit)
        row["verdict"] = "supported" if row["p_supported"] >= 0.5 else "not_supported"
    return calibrate_rows(rows, judge) if with_logprobs else rows


async def _with_slots(judge: LLM, statement: str, question: str | None, texts: Sequence[str], passages: Sequence[str],
                      p: float, capped: bool, logprobs: bool) -> tuple[float, list[dict[str, Any]], float, str]:
    """A statement's P after its slot and unit checks: (P, the slots, the logit they added, what the explanation
    adds). Slots are asked only of a statement not already unsupported. A number the contexts give of another
    unit lowers it with no call. Slots that confirm every value raise it, but not past the coverage cap
    (``capped``): a confirmed value does not put the statement's other words in the contexts."""
    slots = await check_slots(judge, statement, question, texts) if p >= 0.5 else []
    slots += unit_checks(statement, question, passages, offline._EVIDENCE_EMBEDDER)
    slot_logit = gain = 0.0
    if slots and logprobs:
        gain = 0.0 if capped else slot_confirmation(slots)
        slot_logit = slot_penalty(slots) + gain
        p = sigmoid(logit(p) + slot_logit)
    elif slots:  # hard verdicts: a slot filled with another value makes the claim unsupported
        p = min([p, *(s["p_claim"] for s in slots if s["p_claim"] is not None)])
    return p, slots, slot_logit, mismatches(slots) + (confirmations(slots) if gain > 0 else "")
