"""LLM-judged generation and context metrics (Ragas, DeepEval, RAGChecker formulas).

Every metric takes plain strings and lists plus ``judge=`` (an :class:`metrics.llm.LLM`) and
returns a :class:`~metrics.values.MetricValue` whose explanation keeps the evidence.

Cost. The metrics share judge calls: each piece of evidence comes from one helper below, which
always sends the same prompt with the same inputs, so with a :class:`~metrics.llm.CachedLLM`
judge the second metric that needs it waits for (single-flight) or reads (cache) the first's
call. Per sample:

- ``claim_check``: faithfulness, context recall and context precision / utilization (the calibrated
  default): each sentence judged in one short call on the context sentences about it
  (:mod:`metrics.evidence`), plus one per open slot (:mod:`metrics.slots`); verdict probabilities
  from the log-probabilities, blended with the deterministic evidence of :mod:`metrics.offline`.
  Context precision asks it of each chunk alone (one call per chunk and reference sentence, each
  reply one token); with one context these are context recall's own calls.
- :func:`answer_claims` (``claims_verdicts``): the answer's claims, each checked against all
  contexts in one call -- hallucination, noise sensitivity, and faithfulness with
  ``claims="judge"`` (Ragas' decomposition).
- :func:`reference_claims` (``reference_claims_attribution``): the reference's claims
  attributed to the contexts in one call -- context recall, noise sensitivity.
- ``chunk_verdicts``: all chunks judged in one call with a written reason each -- context
  precision and utilization with ``claims="judge"`` (Ragas' recipe).
- ``answer_relevance`` (:mod:`metrics.relevancy`): does the answer respond to the question, one token --
  answer relevancy; ``question_generation``: n questions and the noncommittal flag in one call -- answer
  relevancy with ``method="questions"`` (Ragas' recipe).

A reply is one token for ``claim_check`` and dozens for the others: on a CPU model the written tokens,
not the prompt (llama.cpp keeps the shared prefix), are most of a call's time.

With ``llm=none``, faithfulness, context recall, precision and utilization run their deterministic
stand-ins, the checks of :mod:`metrics.offline` (each spec's ``offline_fn``; ``offline`` says what it
does); the other metrics here are ``undefined`` ("needs an LLM judge").
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from ragsweep.metrics import offline
from ragsweep.metrics.spec import MetricSpec
from ragsweep.metrics.judging import sentence_support
from ragsweep.metrics.relevancy import answer_relevancy, answer_relevancy_llm
from ragsweep.metrics.llm.base import LLM
from ragsweep.metrics.slots import with_units
from ragsweep.metrics.prompts import (
    CHUNK_VERDICTS,
    CLAIM_VERIFICATION,
    CLAIMS_VERDICTS,
    ENTITIES,
    REFERENCE_CLAIMS_ATTRIBUTION,
    STATEMENT_RELEVANCE,
    AttributionInput,
    Attributions,
    ChunkInput,
    ClaimsInput,
    ClaimsVerdicts,
    EntitiesInput,
    StatementInput,
    VerificationInput,
    ask,
)
from ragsweep.metrics.values import MetricValue

NEEDS_JUDGE = "needs an LLM judge"


def _numbers(indices: Sequence[int], n: int) -> list[int]:
    """The distinct passage numbers in 1..n (a judge may invent one that does not exist)."""
    return sorted({i for i in indices if 1 <= i <= n})


async def answer_claims(judge: LLM, question: str | None, answer: str, contexts: Sequence[str]) -> ClaimsVerdicts:
    """The answer's claims with verdicts against all contexts: one shared ``claims_verdicts`` call."""
    return await ask(judge, CLAIMS_VERDICTS, ClaimsInput(question=question, text=answer, passages=list(contexts)))


async def reference_claims(judge: LLM, question: str | None, reference: str, contexts: Sequence[str]) -> Attributions:
    """The reference's claims attributed to the contexts: one shared ``reference_claims_attribution`` call."""
    return await ask(judge, REFERENCE_CLAIMS_ATTRIBUTION,
                     AttributionInput(question=question, reference=reference, passages=list(contexts)))


def _claim_rows(verdicts: ClaimsVerdicts, n: int) -> list[dict[str, Any]]:
    return [{"claim": c.claim, "verdict": c.verdict, "reason": c.reason,
             "supporting": _numbers(c.supporting, n), "contradicting": _numbers(c.contradicting, n)}
            for c in verdicts.claims]


async def faithfulness(question: str | None, answer: str, contexts: Sequence[str], *, judge: LLM,
                       claims: str = "sentences") -> MetricValue:
    """Share of the answer's claims that the contexts support (Ragas ``Faithfulness``).

    faithfulness = sum_i P(claim i supported) / |claims|. Range [0, 1], higher is better.
    No claim (e.g. an empty answer) -> undefined.

    ``claims="sentences"`` (default, the calibrated judge): the claims are the answer's sentences,
    each judged by :func:`metrics.judging.sentence_support` on the context sentences about it, with
    the question (so a bare "Conyers" is judged as the answer to it) and its slot checks; P(supported)
    is read from the log-probability of the verdict token and blended with the deterministic
    number/name/word evidence of :mod:`metrics.offline` (weights :data:`metrics.judging.BLEND`).
    Evidence per claim: the sentences shown, the judge's verdict and probability, the slots, the
    evidence's probability, missing numbers and names. Without logprobs the verdicts count 1/0 and
    the formula is Ragas' exactly.

    ``claims="judge"``: Ragas' recipe in one call: the judge decomposes the answer into atomic
    claims and gives each a verdict, a reason and the supporting/contradicting context numbers
    (``claims_verdicts``, shared with hallucination and noise sensitivity); value =
    |supported| / |claims|.
    """
    if claims == "judge":
        rows = _claim_rows(await answer_claims(judge, question, answer, contexts), len(contexts))
        if not rows:
            return MetricValue.undefined("no claims extracted from the answer", claims=[])
        supported = sum(r["verdict"] == "supported" for r in rows)
        return MetricValue.ok(supported / len(rows), supported=supported, total=len(rows), claims=rows)
    if claims != "sentences":
        raise ValueError(f"faithfulness claims must be 'sentences' or 'judge', got {claims!r}")
    statements = offline.sentences(answer)
    if not statements:
        return MetricValue.undefined("no claims extracted from the answer", claims=[])
    rows = await sentence_support(judge, question, statements, contexts)
    value = sum(r["p_supported"] for r in rows) / len(rows)
    supported = sum(r["verdict"] == "supported" for r in rows)
    return MetricValue.ok(value, supported=supported, total=len(rows), claims=rows)


async def hallucination(question: str, answer: str, contexts: Sequence[str], *, judge: LLM) -> MetricValue:
    """Share of the contexts that the answer contradicts (DeepEval ``HallucinationMetric``).

    hallucination = |{contexts contradicted by at least one answer claim}| / |contexts|.
    Range [0, 1], LOWER is better. No context, or no claim extracted -> undefined. Shares the
    ``claims_verdicts`` call with faithfulness.
    """
    if not contexts:
        return MetricValue.undefined("no contexts")
    rows = _claim_rows(await answer_claims(judge, question, answer, contexts), len(contexts))
    if not rows:
        return MetricValue.undefined("no claims extracted from the answer", claims=[])
    contradicted = sorted({i for r in rows for i in r["contradicting"]})
    return MetricValue.ok(len(contradicted) / len(contexts), contradicted_contexts=contradicted,
                          contexts=len(contexts), claims=rows)


def average_precision(verdicts: Sequence[bool]) -> float:
    """AP over ranked binary verdicts: sum_k (precision@k x v_k) / sum_k v_k; 0 when none is relevant."""
    hits, total = 0, 0.0
    for k, v in enumerate(verdicts, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


async def _chunk_ap(question: str, target: str, contexts: Sequence[str], judge: LLM) -> MetricValue:
    if not contexts:
        return MetricValue.undefined("no contexts")
    out = await ask(judge, CHUNK_VERDICTS, ChunkInput(question=question, answer=target, chunks=list(contexts)))
    by_chunk: dict[int, Any] = {}
    for v in out.verdicts:
        by_chunk.setdefault(v.chunk, v)
    missing = [k for k in range(1, len(contexts) + 1) if k not in by_chunk]
    if missing:
        return MetricValue.error(f"the judge gave no verdict for chunk(s) {missing}",
                                 verdicts=[v.model_dump() for v in out.verdicts])
    rows = [by_chunk[k].model_dump() for k in range(1, len(contexts) + 1)]
    flags = [r["relevant"] for r in rows]
    ap = average_precision(flags)
    extra = {} if any(flags) else {"reason": "no chunk is relevant"}
    return MetricValue.ok(ap, relevant=sum(flags), total=len(flags), verdicts=rows, **extra)


def _chunk_value(per_chunk: Sequence[list[dict[str, Any]]], what: str, **extra: Any) -> MetricValue:
    """AP over the chunks from each chunk's claim rows: chunk k is relevant when its best claim is supported."""
    rows = []
    for k, claims in enumerate(per_chunk, start=1):
        best = max(claims, key=lambda r: r["p_supported"])
        reason = best.get("evidence", best.get("reason", ""))
        rows.append({"chunk": k, "relevant": best["verdict"] == "supported", "p_useful": round(best["p_supported"], 4),
                     "claim": best["claim"], "judge_verdict": best.get("judge_verdict", "not asked"),
                     "shown": best.get("shown", []), "reason": reason if isinstance(reason, str) else ""})
    flags = [r["relevant"] for r in rows]
    if not any(flags):
        extra["reason"] = f"no chunk supports a sentence of the {what}"
    return MetricValue.ok(average_precision(flags), relevant=sum(flags), total=len(flags), verdicts=rows, **extra)


def _chunk_inputs(contexts: Sequence[str], target: str, what: str) -> list[str] | MetricValue:
    """The target's sentences, or why the chunks cannot be judged against it."""
    if not contexts:
        return MetricValue.undefined("no contexts")
    if not target.strip():
        return MetricValue.undefined(f"empty {what}")
    return offline.sentences(target) or MetricValue.undefined(f"no claims extracted from the {what}", verdicts=[])


async def _chunk_support(question: str, target: str, contexts: Sequence[str], judge: LLM, what: str) -> MetricValue:
    """AP over the chunks, chunk k relevant when it supports at least one of ``target``'s sentences on its own.

    Each chunk is judged alone with the sentence judge of faithfulness (:func:`sentence_support`: the chunk's
    sentences about each claim, one-token verdicts with their probability, slot checks). With one context the calls
    are the same as context recall's (a cached judge answers them once)."""
    statements = _chunk_inputs(contexts, target, what)
    if isinstance(statements, MetricValue):
        return statements
    per_chunk = await asyncio.gather(*(sentence_support(judge, question, statements, [c]) for c in contexts))
    return _chunk_value(per_chunk, what)


def offline_context_precision(question: str, contexts: Sequence[str], reference: str, *,
                              embedder: Any = None) -> MetricValue:
    """Context precision with no judge: chunk k is useful when the number, name and word checks of
    :mod:`metrics.offline` find a sentence of the reference supported by it alone; AP over the chunks."""
    statements = _chunk_inputs(contexts, reference, "reference")
    if isinstance(statements, MetricValue):
        return statements
    return _chunk_value([offline.judge_claims(statements, [c], question, embedder) for c in contexts], "reference",
                        backend="none")


def offline_context_utilization(question: str, answer: str, contexts: Sequence[str], *,
                                embedder: Any = None) -> MetricValue:
    """:func:`offline_context_precision` against the answer instead of the reference."""
    statements = _chunk_inputs(contexts, answer, "answer")
    if isinstance(statements, MetricValue):
        return statements
    return _chunk_value([offline.judge_claims(statements, [c], question, embedder) for c in contexts], "answer",
                        backend="none")


async def context_precision(question: str, contexts: Sequence[str], reference: str, *, judge: LLM,
                            claims: str = "sentences") -> MetricValue:
    """Average precision of the ranked contexts, judged against the reference (Ragas
    ``LLMContextPrecisionWithReference``).

    v_k = 1 when chunk k was useful to arrive at the reference. AP = sum_k (precision@k x v_k) /
    sum_k v_k with precision@k = sum_{i<=k} v_i / k. No relevant chunk -> 0 (with the reason);
    no context -> undefined. Range [0, 1], higher is better.

    ``claims="sentences"`` (default): chunk k is useful when, read alone, it supports one of the reference's
    sentences, judged as faithfulness judges a claim (its sentences about the claim, a one-token verdict and its
    probability, slot checks); the verdicts list each chunk's best claim and P. A chunk that only bridges to the
    answer (the first hop of a two-hop question) supports no sentence of the reference alone, so it counts as not
    useful. ``claims="judge"``: Ragas' recipe, all chunks in one ``chunk_verdicts`` call with a written reason
    each; a chunk without a verdict -> error.
    """
    if claims == "sentences":
        return await _chunk_support(question, reference, contexts, judge, "reference")
    if claims != "judge":
        raise ValueError(f"context_precision claims must be 'sentences' or 'judge', got {claims!r}")
    return await _chunk_ap(question, reference, contexts, judge)


async def context_utilization(question: str, answer: str, contexts: Sequence[str], *, judge: LLM,
                              claims: str = "sentences") -> MetricValue:
    """Context precision judged against the answer instead of the reference (Ragas
    ``LLMContextPrecisionWithoutReference`` / ``ContextUtilization``): same AP formula, edge
    cases and ``claims`` choice as :func:`context_precision`."""
    if claims == "sentences":
        return await _chunk_support(question, answer, contexts, judge, "answer")
    if claims != "judge":
        raise ValueError(f"context_utilization claims must be 'sentences' or 'judge', got {claims!r}")
    return await _chunk_ap(question, answer, contexts, judge)


async def context_recall(question: str, contexts: Sequence[str], reference: str, *, judge: LLM,
                         claims: str = "sentences") -> MetricValue:
    """Share of the reference's claims attributable to the contexts (Ragas ``LLMContextRecall``).

    recall = sum_i P(reference claim i supported by the contexts) / |claims|. Range [0, 1], higher is
    better. Blank reference or no claim -> undefined.

    ``claims="sentences"`` (default): the reference's sentences, each judged on the context sentences
    about it with its slot checks -- the sentence judge of faithfulness (:func:`sentence_support`),
    whose replies are one token each. ``claims="judge"``: Ragas' recipe, one
    ``reference_claims_attribution`` call (shared with noise sensitivity) in which the judge
    decomposes the reference and attributes each claim; value = |attributed| / |claims|.
    """
    if not reference.strip():
        return MetricValue.undefined("empty reference")
    if claims == "sentences":
        statements = offline.sentences(reference)
        if not statements:
            return MetricValue.undefined("no claims extracted from the reference", claims=[])
        rows = await sentence_support(judge, question, statements, contexts)
        value = sum(r["p_supported"] for r in rows) / len(rows)
        return MetricValue.ok(value, attributed=sum(r["verdict"] == "supported" for r in rows), total=len(rows),
                              claims=rows)
    if claims != "judge":
        raise ValueError(f"context_recall claims must be 'sentences' or 'judge', got {claims!r}")
    out = await reference_claims(judge, question, reference, contexts)
    rows = [{**c.model_dump(), "passages": _numbers(c.passages, len(contexts))} for c in out.claims]
    if not rows:
        return MetricValue.undefined("no claims extracted from the reference", claims=[])
    attributed = sum(r["attributed"] for r in rows)
    return MetricValue.ok(attributed / len(rows), attributed=attributed, total=len(rows), claims=rows)


async def context_relevancy(question: str, contexts: Sequence[str], *, judge: LLM) -> MetricValue:
    """Share of the contexts' statements relevant to the question (DeepEval ``ContextualRelevancyMetric``).

    relevancy = |statements with verdict yes| / |statements in all contexts|. Range [0, 1], higher
    is better. No context or no statement -> undefined. All contexts in one
    ``statement_relevance`` call.
    """
    if not contexts:
        return MetricValue.undefined("no contexts")
    out = await ask(judge, STATEMENT_RELEVANCE, StatementInput(question=question, texts=list(contexts)))
    rows = [s.model_dump() for s in out.statements]
    if not rows:
        return MetricValue.undefined("no statements extracted from the contexts", statements=[])
    relevant = sum(r["verdict"] == "yes" for r in rows)
    return MetricValue.ok(relevant / len(rows), relevant=relevant, total=len(rows), statements=rows)


def _entity_key(entity: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", entity).casefold().split())


async def context_entity_recall(contexts: Sequence[str], reference: str, *, judge: LLM) -> MetricValue:
    """Share of the reference's entities found in the contexts (Ragas ``ContextEntityRecall``).

    recall = |E(reference) ∩ E(contexts)| / |E(reference)|, entities compared after Unicode NFKC,
    case folding and whitespace squeezing. Range [0, 1], higher is better. No reference entity ->
    undefined. Both entity lists come from one ``entities`` call (Ragas makes two), which also
    lets the judge spell an entity the same way on both sides.
    """
    out = await ask(judge, ENTITIES, EntitiesInput(reference=reference, passages=list(contexts)))
    ref = {_entity_key(e): e for e in out.reference_entities if e.strip()}
    ctx = {_entity_key(e) for e in out.passage_entities if e.strip()}
    if not ref:
        return MetricValue.undefined("no entities in the reference", context_entities=sorted(ctx))
    found = [e for k, e in ref.items() if k in ctx]
    missing = [e for k, e in ref.items() if k not in ctx]
    return MetricValue.ok(len(found) / len(ref), found=found, missing=missing,
                          reference_entities=list(ref.values()), context_entities=out.passage_entities)


async def noise_sensitivity(question: str, answer: str, contexts: Sequence[str], reference: str, *,
                            judge: LLM, mode: str = "relevant") -> MetricValue:
    """Share of the answer's claims that are wrong yet supported by a relevant (or irrelevant)
    context (RAGChecker noise sensitivity; Ragas ``NoiseSensitivity``).

    A context is relevant when at least one reference claim is attributed to it. An answer claim
    is incorrect when the reference does not support it. With ``mode="relevant"``:
    score = |incorrect claims supported by a relevant context| / |answer claims|; with
    ``mode="irrelevant"``: |incorrect claims supported by an irrelevant context and by no
    relevant one| / |answer claims| (the denominator is every answer claim, as in RAGChecker
    and Ragas). Range [0, 1], LOWER is better. No answer claim -> undefined.

    Calls: the ``claims_verdicts`` call of faithfulness (answer claims vs contexts), the
    ``reference_claims_attribution`` call of context recall, and one ``claim_verification`` of
    the same answer claims against the reference -- one call of its own.
    """
    if mode not in ("relevant", "irrelevant"):
        raise ValueError(f"noise_sensitivity mode must be 'relevant' or 'irrelevant', got {mode!r}")
    n = len(contexts)
    claims, ref = await asyncio.gather(answer_claims(judge, question, answer, contexts),
                                       reference_claims(judge, question, reference, contexts))
    rows = _claim_rows(claims, n)
    if not rows:
        return MetricValue.undefined("no claims extracted from the answer", claims=[])
    relevant = {i for c in ref.claims if c.attributed for i in _numbers(c.passages, n)}
    check = await ask(judge, CLAIM_VERIFICATION,
                      VerificationInput(claims=[r["claim"] for r in rows], passages=[reference]))
    if len(check.claims) != len(rows):
        return MetricValue.error(f"the judge checked {len(check.claims)} of {len(rows)} claims "
                                 "against the reference", claims=rows)
    for row, v in zip(rows, check.claims):
        by_relevant = any(i in relevant for i in row["supporting"])
        by_irrelevant = any(i not in relevant for i in row["supporting"]) and not by_relevant
        row.update(correct=v.verdict == "supported", reference_reason=v.reason,
                   in_relevant=by_relevant, in_irrelevant=by_irrelevant)
    key = "in_relevant" if mode == "relevant" else "in_irrelevant"
    noisy = [r["claim"] for r in rows if not r["correct"] and r[key]]
    return MetricValue.ok(len(noisy) / len(rows), mode=mode, noisy_claims=noisy, total=len(rows),
                          relevant_contexts=sorted(relevant), claims=rows)


def offline_faithfulness(question: str, answer: str, contexts: Sequence[str], *, embedder: Any = None) -> MetricValue:
    """Faithfulness with no judge: :func:`metrics.offline.faithfulness` with the unit checks of
    :func:`metrics.slots.with_units`."""
    return offline.faithfulness(question, answer, contexts, embedder=embedder, check=with_units)


def _questions_method(options: Mapping[str, Any]) -> bool:
    """Answer relevancy embeds only in Ragas' generated-questions method; the judge method reads no embedding."""
    return options.get("method") == "questions"


_Q_A_C = ("question", "answer", "contexts")
_Q_C_R = ("question", "contexts", "reference")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("faithfulness", faithfulness, ("answer", "contexts"), optional=("question",), needs_judge=True,
               offline_fn=offline_faithfulness, options={"claims": "sentences"},
               # The last user turn alone: each claim is judged on the context sentences about it, and a
               # transcript in the question pulls a small judge off the response it judges.
               reads_history=False,
               offline="mean P(supported) of the answer's sentences from number, name and word checks",
               description="share of the answer's claims supported by the contexts"),
    MetricSpec("hallucination", hallucination, _Q_A_C, needs_judge=True, higher_is_better=False,
               offline=NEEDS_JUDGE, description="share of contexts the answer contradicts"),
    MetricSpec("answer_relevancy", answer_relevancy, ("question", "answer"), needs_judge=True,
               needs_embedder=True, embeds=_questions_method,
               offline=NEEDS_JUDGE, options={"method": "judge", "n": 3, "max_parts": 3},
               value_range=(-1.0, 1.0),
               reads_history=False,  # the last question: a transcript would dilute it (and the embeddings)
               description="P(the answer responds to what the question asks); method=questions: mean cosine "
                           "of the question and questions generated from the answer (Ragas)"),
    MetricSpec("answer_relevancy_llm", answer_relevancy_llm, ("question", "answer"), needs_judge=True,
               offline=NEEDS_JUDGE, description="share of the answer's statements relevant to the question"),
    MetricSpec("context_precision", context_precision, _Q_C_R, needs_judge=True,
               offline_fn=offline_context_precision, options={"claims": "sentences"}, reads_history=False,
               offline="AP of the contexts, each useful when number, name and word checks find a sentence of the "
                       "reference supported by it alone",
               description="average precision of the contexts judged useful for the reference"),
    MetricSpec("context_utilization", context_utilization, _Q_A_C, needs_judge=True,
               offline_fn=offline_context_utilization, options={"claims": "sentences"}, reads_history=False,
               offline="AP of the contexts, each useful when number, name and word checks find a sentence of the "
                       "answer supported by it alone",
               description="average precision of the contexts judged useful for the answer"),
    MetricSpec("context_recall", context_recall, _Q_C_R, needs_judge=True, offline_fn=offline.context_recall,
               options={"claims": "sentences"}, reads_history=False,
               offline="mean P(supported) of the reference's sentences from number, name and word checks",
               description="share of the reference's claims attributable to the contexts"),
    MetricSpec("context_relevancy", context_relevancy, ("question", "contexts"), needs_judge=True,
               offline=NEEDS_JUDGE, description="share of the contexts' statements relevant to the question"),
    MetricSpec("context_entity_recall", context_entity_recall, ("contexts", "reference"), needs_judge=True,
               offline=NEEDS_JUDGE, description="share of the reference's entities present in the contexts"),
    MetricSpec("noise_sensitivity", noise_sensitivity, (*_Q_A_C, "reference"), needs_judge=True,
               higher_is_better=False, offline=NEEDS_JUDGE, options={"mode": "relevant"},
               description="share of the answer's wrong claims supported by a relevant context"),
    MetricSpec("noise_sensitivity_irrelevant", noise_sensitivity, (*_Q_A_C, "reference"), needs_judge=True,
               higher_is_better=False, offline=NEEDS_JUDGE, options={"mode": "irrelevant"},
               description="share of the answer's wrong claims supported only by irrelevant contexts"),
)
