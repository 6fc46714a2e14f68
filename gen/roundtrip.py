"""The round-trip check: answer a written question from its evidence alone, and compare.

Alberti et al. (ACL 2019, "Synthetic QA corpora generation with roundtrip consistency") keep a
generated question only when a reader, given the question and its passage, finds the answer that
was generated with it. Here the reader is the judge (by default the model that wrote the question,
in a fresh call that sees only the evidence sentences and the question, never the reference), and
the comparison is lexical and offline (:func:`agreement`), so a wrong reference ("Lodoicea has about
350 species" when the evidence gives them to Cissus) or a question its evidence does not settle is
rejected as ``roundtrip_disagrees``.

What agreement means, on the content words of both answers (:func:`metrics.offline.content_words`:
stop words dropped, words cut to five letters, number words as digits):

- the round trip did not decline ("not stated", "the sentences do not say", ...);
- no number clash: when both name numbers, they share one ("330 metres" against "319 metres" differs);
- the words agree: token F1 of the two at least ``min_f1``, or every content word of the shorter
  one is in the longer one ("1890" and "in 1890"; "Reye's syndrome" and "the risk of Reye's syndrome").

Known limits: a reference that names both compared items contains either one; and the same model
can make the same mistake twice, so the check catches a reference its own evidence contradicts, not
every wrong reference.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragsweep.gen.drafts import Passed
from ragsweep.gen.prompts import ANSWER_FROM_EVIDENCE, RoundTripInput
from ragsweep.gen.testset import UNANSWERABLE_KIND
from ragsweep.metrics import (LLM, Completion, JudgeError, complete, content_words, declines, lines_prompt, numbers,
                              supports_lines)

# Ways a reader says the sentences leave the question open, beyond metrics.refusal.declines.
_NOT_ANSWERED = re.compile(
    r"\b(?:not (?:stated|given|mentioned|specified|provided|said)|(?:do|does|did) ?(?:not|n't) (?:say|state|mention|"
    r"specify|give|answer|provide)|no (?:answer|information|mention))\b", re.I)


@dataclass(frozen=True)
class Agreement:
    """How a round-trip answer compares with the reference."""

    agree: bool
    f1: float              # token F1 of the two answers' content words
    contained: bool        # every content word of the shorter answer is in the longer one
    reason: str | None     # why not: "not_stated", "numbers_differ", "words_differ"; None when they agree

    def to_dict(self) -> dict[str, Any]:
        return {"agree": self.agree, "f1": round(self.f1, 3), "contained": self.contained, "reason": self.reason}


def _f1(a: Sequence[str], b: Sequence[str]) -> float:
    common = sum((Counter(a) & Counter(b)).values())
    if not common:
        return 0.0
    p, r = common / len(a), common / len(b)
    return 2 * p * r / (p + r)


def agreement(answer: str, reference: str, min_f1: float = 0.5) -> Agreement:
    """Whether ``answer`` (the round trip's) and ``reference`` (the writer's) say the same thing."""
    a, r = content_words(answer), content_words(reference)
    if not a or declines(answer) or _NOT_ANSWERED.search(answer):
        return Agreement(False, 0.0, False, "not_stated")
    f1 = _f1(a, r) if r else 0.0
    shorter, longer = (a, r) if len(a) <= len(r) else (r, a)
    contained = bool(shorter) and set(shorter) <= set(longer)
    na, nr = numbers(answer), numbers(reference)
    if na and nr and not na & nr:
        return Agreement(False, f1, contained, "numbers_differ")
    if f1 >= min_f1 or contained:
        return Agreement(True, f1, contained, None)
    return Agreement(False, f1, contained, "words_differ")


async def answer_from_evidence(judge: LLM, question: str, sentences: Sequence[str],
                               max_tokens: int | None = None, section: str | None = None) -> Completion:
    """The judge's answer to ``question`` from ``sentences`` alone (:data:`gen.prompts.ANSWER_FROM_EVIDENCE`);
    ``parsed.answer`` holds it. Raises :class:`~metrics.errors.JudgeError` when the call fails for good."""
    data = RoundTripInput(question=question, sentences=list(sentences), section=section or None)
    # a model held to lines by grammar writes "answer: ..." in fewer tokens than {"answer": "..."}
    return await complete(judge, _LINES_TRIP if supports_lines(judge) else ANSWER_FROM_EVIDENCE, data,
                          max_tokens=max_tokens)


_LINES_TRIP = lines_prompt(ANSWER_FROM_EVIDENCE)


def _trip_failed(p: Passed, exc: JudgeError) -> Passed:
    """``p`` rejected because its round-trip call failed (the error is kept in the report's example)."""
    return replace(p, reason="roundtrip_failed", outcome="failed",
                   example={**p.example, "roundtrip_error": str(exc)[:300]})


async def round_trip(p: Passed, judge: LLM | None, min_f1: float, hops: bool = True) -> Passed:
    """Answer ``p``'s question from its evidence with ``judge`` and compare with its reference.

    ``hops``: a multi_hop or comparative question that agrees is asked again of each evidence sentence
    alone; when one sentence alone gives the reference, the question does not need the other (a single-hop shortcut,
    Min et al., ACL 2019: "Compositional questions do not necessitate multi-hop reasoning") and is
    rejected as ``one_sentence_answers``."""
    if judge is None or not p.texts:
        return p
    if p.sample.provenance.get("style") == "code_answer":
        # Its reference is its evidence's code, verbatim: an answer read from that evidence has nothing to
        # disagree with (and a code reply would not fit the round trip's short answer).
        return p
    if p.sample.kind == UNANSWERABLE_KIND:
        return await _round_trip_unanswerable(p, judge)
    # A follow-up turn leaves its subject to the conversation: ask its standalone form (gen.followup).
    info = p.sample.provenance.get("follow_up")
    question = str(info.get("standalone") or p.sample.question) if isinstance(info, dict) else p.sample.question
    p = replace(p, calls=p.calls + 1)
    try:
        done = await answer_from_evidence(judge, question, p.texts, section=p.section)
    except JudgeError as exc:
        return _trip_failed(p, exc)
    answer = str(done.parsed.answer).strip()
    verdict = agreement(answer, p.sample.reference, min_f1)
    trip: dict[str, Any] = {"answer": answer[:200], **verdict.to_dict()}
    usage, reason, outcome = done.usage, None if verdict.agree else "roundtrip_disagrees", verdict.reason or "agreed"
    if verdict.agree and hops and p.sample.kind in ("multi_hop", "comparative") and len(p.texts) >= 2:
        alone = []
        for text in p.texts:
            p = replace(p, calls=p.calls + 1)
            try:
                one = await answer_from_evidence(judge, question, [text])
            except JudgeError as exc:
                return _trip_failed(p, exc)
            usage = usage + one.usage
            alone.append(str(one.parsed.answer).strip())
            if agreement(alone[-1], p.sample.reference, min_f1).agree:  # rejected: the next sentence is not asked
                reason, outcome = "one_sentence_answers", "one_sentence_answers"
                break
        trip["alone"] = [a[:200] for a in alone]
    sample = replace(p.sample, provenance={**p.sample.provenance, "roundtrip": trip})
    if reason is None and (longer := _fuller_name(answer, p.sample.reference, p.texts)):
        # "The Untold Story" -> "M.S. Dhoni: The Untold Story": the evidence's whole name, not a part of it.
        sample = replace(sample, reference=longer,
                         provenance={**sample.provenance, "reference_written": p.sample.reference})
    return replace(p, sample=sample, example={**p.example, "roundtrip": trip}, usage=usage,
                   reason=reason, outcome=outcome)


async def _round_trip_unanswerable(p: Passed, judge: LLM) -> Passed:
    """An unanswerable question asked of the sentences its writer was shown (``p.texts``): when the model answers
    it from them instead of saying they do not, they do answer it, and it is rejected as ``answer_in_corpus``
    ("What is the distance between Brierfield railway station and Burnley Central railway station?", written
    from "Brierfield railway station ... is 2+1/4 mi east of Burnley Central railway station": 5 of its 7 words
    in that document, below ``gates.absent_cover``, so the word check let it through)."""
    p = replace(p, calls=p.calls + 1)
    try:
        done = await answer_from_evidence(judge, p.sample.question, p.texts)
    except JudgeError as exc:
        return _trip_failed(p, exc)
    answer = str(done.parsed.answer).strip()
    trip = {"answer": answer[:200], "declined": declines(answer) is not None}
    reason, outcome = (None, "agreed") if trip["declined"] else ("answer_in_corpus", "answered_unanswerable")
    sample = replace(p.sample, provenance={**p.sample.provenance, "roundtrip": trip})
    return replace(p, sample=sample, example={**p.example, "roundtrip": trip}, usage=done.usage, reason=reason,
                   outcome=outcome)


def _fuller_name(answer: str, reference: str, texts: Sequence[str]) -> str | None:
    """The round trip's answer when it is the reference's name in full: it holds the reference, is at most
    eight words, stands verbatim in the evidence, and the reference is a name (a capitalised word); else None."""
    answer, reference = answer.strip().rstrip("."), reference.strip().rstrip(".")
    if (len(answer) <= len(reference) or len(answer.split()) > 8 or not re.search(r"\b[A-Z]", reference)
            or reference.lower().removeprefix("the ") not in answer.lower() or not any(answer in t for t in texts)):
        return None
    return answer
