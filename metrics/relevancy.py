"""Answer relevancy: does the answer respond to the question (a one-token verdict, or Ragas' generated questions),
and DeepEval's statement-level variant."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from ragsweep.metrics.judging import verdict_probabilities
from ragsweep.metrics.offline import content_words
from ragsweep.metrics.support import calibrate
from ragsweep.metrics.llm.base import LLM
from ragsweep.metrics.prompts import (
    ANSWER_RELEVANCE,
    QUESTION_GENERATION,
    STATEMENT_RELEVANCE,
    QuestionInput,
    ReplyInput,
    StatementInput,
    ask,
    complete,
)
from ragsweep.metrics.values import MetricValue


#: Platt scaling (a, b) of the answer_relevance verdict's P(yes), per model: sigmoid(a logit(p) + b). A small judge's
#: yes leans high even for a reply about something else or an evasion, while it ranks them
#: well below replies that respond, so the map moves the 0.5 line to where its verdicts separate. Fitted on the tune
#: half of ``benchmarks/answer_relevancy.py`` (HotpotQA train questions; that half's evasive templates).
RELEVANCE_CALIBRATION: dict[str, tuple[float, float]] = {
    "qwen2.5-coder-1.5b-instruct-q4_k_m": (3.04, -5.95),
}


#: Where a reply splits into parts that are judged alone: line breaks, sentence ends, and text set off in brackets,
#: braces, angle brackets or CJK brackets with space (or the reply's edge) on both sides (a note, a comment, a JSON
#: object planted in a reply is such a part). Brackets inside a word stay (``a[0]``, ``/items/{item_id}``), and so do
#: parentheses, which in prose often hold part of the answer ("in 1867 (aged 30)").
_PART = re.compile(r"\n+|(?<=[.!?\u3002\uff01\uff1f])\s+"
                   r"|(?:(?<=\s)|^)(\[[^\]]*\]|\{[^}]*\}|<[^>]*>|\u3010[^\u3011]*\u3011)(?=\s|$)")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)


def reply_parts(reply: str) -> list[str]:
    """The parts of a reply judged alone by the segment check: pieces that hold at least one letter or digit. A
    fenced code block is one part, never split at its lines."""
    pieces: list[str] = []
    at = 0
    for m in _FENCE.finditer(reply):
        pieces += _PART.split(reply[at:m.start()])
        pieces.append(m.group())
        at = m.end()
    pieces += _PART.split(reply[at:])
    pieces = [p.strip() for p in pieces if p and p.strip()]
    return [p for p in pieces if any(ch.isalnum() for ch in p)]


async def _verdict(question: str, reply: str, judge: LLM) -> tuple[str, float, float, bool] | None:
    """(verdict, P(yes) from the judge, calibrated P(yes), calibrated?) for one reply; None when no verdict."""
    done = await complete(judge, ANSWER_RELEVANCE, ReplyInput(question=question, reply=reply), logprobs=True)
    verdict = done.parsed.answer if done.parsed is not None else None
    if verdict not in ("yes", "no"):
        return None
    p_judge = verdict_probabilities(done.logprobs, [verdict])[0]
    # Hard verdicts (no logprobs) stand as 1 or 0; a probability is mapped by its model's calibration, if any.
    ab = RELEVANCE_CALIBRATION.get(str(getattr(judge, "model_id", ""))) if done.logprobs else None
    return verdict, p_judge, calibrate(p_judge, ab), ab is not None


def _likeliest(question: str, parts: list[str], k: int) -> list[str]:
    """The ``k`` parts that share the most content words with the question (earlier first on ties), in reply order:
    the ones likeliest to be the reply's answer, so that a long reply costs ``k`` more calls, not one per sentence."""
    asked = set(content_words(question))
    ranked = sorted(range(len(parts)), key=lambda i: (-len(asked & set(content_words(parts[i]))), i))
    return [parts[i] for i in sorted(ranked[:k])]


async def _responds(question: str, answer: str, judge: LLM, max_parts: int) -> MetricValue:
    whole = await _verdict(question, answer, judge)
    if whole is None:
        return MetricValue.error("the judge gave no yes/no verdict")
    verdict, p_judge, p, calibrated = whole
    facts: dict[str, Any] = {"method": "judge", "verdict": verdict, "p_judge": round(p_judge, 4),
                             "calibrated": calibrated}
    parts = reply_parts(answer)
    # A reply read whole can be talked into a yes by a part addressed to the judge ("the answer above is correct").
    # Read alone, such a part responds to nothing, and neither does the evasion beside it: so a reply counts as
    # responding only as far as its best part, read alone, does. The parts are read even when the whole does not
    # respond: a planted part still lifts a low score a little, and the reply's own part, read alone, scores as the
    # reply without it would.
    if len(parts) > 1 and max_parts > 0:
        chosen = _likeliest(question, parts, max_parts)
        best = None
        for part, got in zip(chosen, await asyncio.gather(*(_verdict(question, part, judge) for part in chosen))):
            if got is not None and (best is None or got[2] > best[1][2]):
                best = (part, got)
        if best is not None:
            facts.update(whole_score=round(p, 4), best_part=best[0], best_part_score=round(best[1][2], 4),
                         parts=len(parts))
            p = min(p, best[1][2])
    return MetricValue.ok(p, **facts, reason="responds to the question" if p >= 0.5 else
                          "does not respond to what the question asks (another subject, a refusal or an evasion)")


async def answer_relevancy(question: str, answer: str, *, judge: LLM, embedder: Any, n: int = 3,
                           method: str = "judge", max_parts: int = 3) -> MetricValue:
    """How well the answer addresses the question.

    ``method="judge"`` (default): the judge reads the question and the answer and says whether the answer responds
    to what was asked (the kind of thing asked for, about what it asks, right or wrong; not a refusal or evasion);
    relevancy = P(yes) from the verdict token's log-probability, Platt-scaled for a calibrated model
    (:data:`RELEVANCE_CALIBRATION`); the hard verdict, 1 or 0, without log-probabilities. One call, one token.
    When the reply has several parts (:func:`reply_parts`: sentences, lines, bracketed text), up to ``max_parts``
    of them (those sharing most words with the question) are also judged alone and the score is at most the best
    one's: text planted in a reply to steer the judge responds to no question by itself. One more one-token call
    per part judged; ``max_parts=0`` reads the reply whole only.

    ``method="questions"``: Ragas ``ResponseRelevancy``. The judge writes ``n`` questions the answer answers (all
    in one call) and flags a noncommittal answer; relevancy = mean_i cos(E(question), E(q_i)) x (0 if
    noncommittal else 1), cos as in :func:`metrics.lexical.answer_semantic_similarity`. Range [-1, 1] (in
    practice [0, 1]). A short answer ("Delhi") implies no particular question, so a right one scores low.

    Higher is better. A blank answer -> 0; no question generated -> error.
    """
    from ragsweep.metrics.lexical import answer_semantic_similarity

    if not answer.strip():
        return MetricValue.ok(0.0, reason="empty answer", questions=[], similarities=[])
    if method == "judge":
        return await _responds(question, answer, judge, max_parts)
    if method != "questions":
        raise ValueError(f"answer_relevancy method must be 'judge' or 'questions', got {method!r}")
    out = await ask(judge, QUESTION_GENERATION, QuestionInput(answer=answer, n=n))
    questions = [q for q in out.questions if q.strip()]
    if not questions:
        return MetricValue.error("the judge generated no question", noncommittal=out.noncommittal)
    sims = []
    for q in questions:
        sim = answer_semantic_similarity(q, question, embedder=embedder)
        if sim.value is None:
            return MetricValue.undefined(f"question: {sim.explanation.get('reason', 'not comparable')}")
        sims.append(sim.value)
    mean = sum(sims) / len(sims)
    return MetricValue.ok(0.0 if out.noncommittal else mean, mean_similarity=mean,
                          noncommittal=out.noncommittal, questions=questions, similarities=sims)


async def answer_relevancy_llm(question: str, answer: str, *, judge: LLM) -> MetricValue:
    """Share of the answer's statements relevant to the question (DeepEval ``AnswerRelevancyMetric``).

    relevancy = |statements with verdict yes or idk| / |statements| (an ambiguous statement is
    not held against the answer, as in DeepEval). Range [0, 1], higher is better. No statement
    -> undefined. One ``statement_relevance`` call on the answer alone.
    """
    out = await ask(judge, STATEMENT_RELEVANCE, StatementInput(question=question, texts=[answer]))
    rows = [s.model_dump() for s in out.statements]
    if not rows:
        return MetricValue.undefined("no statements extracted from the answer", statements=[])
    relevant = sum(r["verdict"] != "no" for r in rows)
    return MetricValue.ok(relevant / len(rows), relevant=relevant, total=len(rows), statements=rows)


