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
from dataclasses import dataclass
from typing import Any

from ragsweep.gen.prompts import ANSWER_FROM_EVIDENCE, RoundTripInput
from ragsweep.metrics import LLM, Completion, complete, content_words, declines, numbers

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
                               max_tokens: int | None = None) -> Completion:
    """The judge's answer to ``question`` from ``sentences`` alone (:data:`gen.prompts.ANSWER_FROM_EVIDENCE`);
    ``parsed.answer`` holds it. Raises :class:`~metrics.errors.JudgeError` when the call fails for good."""
    return await complete(judge, ANSWER_FROM_EVIDENCE, RoundTripInput(question=question, sentences=list(sentences)),
                          max_tokens=max_tokens)
