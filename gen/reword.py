"""Questions that do not copy their evidence, by construction: a second pass that rewords a written question
while the model is kept off the evidence's words.

A small writer asked to use its own words still copies its sentence, and every copied word is a free hit
for a lexical retriever, which then ranks higher on the generated set than on people's questions
(docs/trust/generated-test-sets.md). Asking harder does not help; taking the
words away does. The pass gives the written question back to the same model with a negative logit bias on
every form, in the evidence documents, of each content word the question shares with them
(:data:`metrics.llm.base.WordBias`), names and numbers exempt: the model can still say what it asks, in
other words. The reference and the evidence are not touched, and the round trip
(:mod:`gen.roundtrip`) still has to answer the reworded question from the evidence with the same answer.

The pass runs on a question only after every cheap gate let it through, before its round trip. A rewording
is kept only when it is a question, keeps every name and number of the original, shares fewer words with the
evidence, is judged by the same model to ask what the original asks (:data:`SAME_QUESTION`: the round trip
does not see a rewording that asks for something else the evidence also answers) and passes the per-sample
and duplicate gates itself; otherwise the original stays (the provenance's ``reword`` says why).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel

from ragsweep.gen.drafts import Gating, Passed
from ragsweep.gen.gates import check_sample
from ragsweep.gen.wording import evidence_documents, lexical_overlap
from ragsweep.gen.writer import Draft
from ragsweep.metrics import (
    LLM,
    JudgeError,
    Prompt,
    WordBias,
    complete,
    content_words,
    supports_bias,
    verdict_probabilities,
)

#: The kinds whose questions are reworded: an unanswerable question is not about its sentences' words, a
#: follow-up's wording leans on its first turn, and a documentation style asks in the product's own terms.
REWORDED_KINDS = ("single_hop", "multi_hop", "comparative", "conditional")
_WORD = re.compile(r"[A-Za-z][\w'’-]*")
_NAME = re.compile(r"(?<!^)(?<![.?!]\s)\b[A-Z][\w'’-]*|\b\w*\d[\w.,]*")


@dataclass(frozen=True)
class RewordConfig:
    """``bias``: the logit each evidence word's tokens lose while the model rewords (negative; None: no pass).
    ``above``: reword only a question sharing more than this share of its content words with its evidence
    documents (``gen.wording.lexical_overlap``)."""

    bias: float | None = None
    above: float = 0.6


class RewordInput(BaseModel):
    question: str


class RewordOutput(BaseModel):
    question: str


REWORD_QUESTION: Prompt[RewordInput, RewordOutput] = Prompt(
    name="gen.reword_question",
    instruction=(
        "Say the same question in other words, as someone who has never read the text it came from would ask it. "
        "Keep its meaning, every name and number, and what it asks for; change the other words and the order. "
        "Reply with the question only."
    ),
    input=RewordInput,
    output=RewordOutput,
    examples=(
        (RewordInput(question="In which year did the Forth Bridge across the Firth of Forth open?"),
         RewordOutput(question="When was the Forth Bridge first used?")),
        (RewordInput(question="Does metformin reduce the incidence of type 2 diabetes in adults with obesity?"),
         RewordOutput(question="Can taking metformin lower an obese adult's chance of getting type 2 diabetes?")),
    ),
    max_tokens=80,
    layout="json",
)


class SameInput(BaseModel):
    first: str
    second: str


class SameOutput(BaseModel):
    answer: Literal["yes", "no"]


#: The rewording's own check: a rewording may keep every name and still ask for something else ("What is the
#: capacity of the array?" -> "How much water can the array hold?"), and the round trip does not see it when the
#: evidence answers both. Telling two questions apart is easier for a small model than writing one.
SAME_QUESTION: Prompt[SameInput, SameOutput] = Prompt(
    name="gen.same_question",
    instruction=(
        "Do the two questions ask for the same information about the same thing, so that one answer is right "
        "for both and neither adds or changes a detail? Answer yes or no."
    ),
    input=SameInput,
    output=SameOutput,
    examples=(
        (SameInput(first="In which year did the Forth Bridge open?", second="When was the Forth Bridge first used?"),
         SameOutput(answer="yes")),
        (SameInput(first="How long is the Forth Bridge?", second="How tall is the Forth Bridge?"),
         SameOutput(answer="no")),
        (SameInput(first="Who designed the Forth Bridge?", second="Who designed the Forth Bridge's first repairs?"),
         SameOutput(answer="no")),
    ),
    max_tokens=8,
    layout="json",
)


def names_and_numbers(text: str) -> set[str]:
    """The question's names (capitalised words not opening a sentence) and numbers, lower-cased."""
    return {m.group(0).lower().rstrip(".,") for m in _NAME.finditer(text)}


def evidence_bias(question: str, documents: Sequence[str], value: float) -> WordBias:
    """The words to keep the model off: every form, in ``documents``, of each content word of ``question``
    found there (same :func:`metrics.offline.content_words` key: "mutation" takes "mutations" and "mutated"
    with it), as the model would write it mid-sentence and capitalised; names and numbers are not in it."""
    # The question's first common content word says what it asks for ("What is the *capacity* of ...", "How
    # many *sailings* ..."): it stays free, or the model swaps the thing asked for ("how much water can it hold").
    asked = next((k for w in _WORD.findall(question) if w[0].islower() for k in content_words(w)[:1]), None)
    shared = set(content_words(question)) & {k for d in documents for k in content_words(d)} - {asked}
    words = [w for text in (question, *documents) for w in _WORD.findall(text) if not any(c.isdigit() for c in w)]
    common = {k for w in words if w[0].islower() for k in content_words(w)[:1]}  # keys written in lower case
    forms: set[str] = set()
    for word in words:
        key = content_words(word)[:1]
        # A word only ever capitalised is a name (kept); a capitalised common word ("Tumours" opening a
        # sentence) is the same word as its lower-case forms.
        if key and key[0] in shared and key[0] in common:
            forms.add(word.lower())
    bias: WordBias = {}
    for form in sorted(forms):
        bias[" " + form] = bias[" " + form[0].upper() + form[1:]] = value
    return bias


async def reword(llm: LLM, draft: Draft, kind: str, documents: Sequence[str], cfg: RewordConfig) -> Draft:
    """``draft`` with its question reworded off its evidence's words (see the module docstring), or as it was
    (with the reason in ``provenance["reword"]``) when the pass does not apply or its rewording is not kept."""
    if cfg.bias is None or kind not in REWORDED_KINDS or not documents or not supports_bias(llm):
        return draft
    before = lexical_overlap(draft.question, documents)
    if before is None or before.share <= cfg.above:
        return draft
    bias = evidence_bias(draft.question, documents, cfg.bias)
    if not bias:
        return draft
    try:
        done = await complete(llm, REWORD_QUESTION, RewordInput(question=draft.question), bias=bias)
    except JudgeError as exc:
        return replace(draft, provenance={**draft.provenance, "reword": f"failed: {str(exc)[:120]}"})
    usage = draft.usage + done.usage
    new = " ".join(done.parsed.question.split())
    after = lexical_overlap(new, documents)
    missing = names_and_numbers(draft.question) - names_and_numbers(new) - {w.lower() for w in _WORD.findall(new)}
    why = ("not a question" if not new.endswith("?") else
           f"lost {', '.join(sorted(missing))}" if missing else
           "no fewer evidence words" if after is None or after.share >= before.share else None)
    if why is None:
        try:
            same = await complete(llm, SAME_QUESTION, SameInput(first=draft.question, second=new), logprobs=True)
        except JudgeError as exc:
            return replace(draft, usage=usage, provenance={**draft.provenance, "reword": f"failed: {str(exc)[:120]}"})
        usage = usage + same.usage
        if verdict_probabilities(same.logprobs, [same.parsed.answer])[0] < 0.5:
            why = "asks something else"
    if why is not None:
        return replace(draft, usage=usage, provenance={**draft.provenance, "reword": f"kept the original: {why}"})
    return replace(draft, question=new, usage=usage,
                   provenance={**draft.provenance, "reword": {"from": draft.question, "overlap_before":
                                                              round(before.share, 3)}})


async def reword_passed(llm: LLM, passed: Passed, gating: Gating, cfg: RewordConfig) -> Passed:
    """A sample through every cheap gate, reworded (:func:`reword`) before its round trip. The rewording takes
    the question's place only when it passes the per-sample gates and the duplicate gate too; the report counts
    what the pass did (``reword``)."""
    sample, corpus = passed.sample, gating.corpus
    docs = evidence_documents(sample, corpus)
    draft = await reword(llm, Draft(sample.question, sample.reference, ()), sample.kind, docs, cfg)
    outcome = draft.provenance.get("reword")
    if outcome is None:
        return passed
    usage = passed.usage + draft.usage
    if isinstance(outcome, dict):
        overlap = lexical_overlap(draft.question, docs)
        new = replace(sample, question=draft.question, provenance={
            **sample.provenance, "reword": outcome, **({"overlap": round(overlap.share, 3)} if overlap else {})})
        reason = check_sample(new, corpus, gating.gates)
        if reason is None:
            gating.dups.discard(sample.question)
            reason, vec = gating.dups.check(new.question)
            gating.dups.add(*((new.question, vec) if reason is None else (sample.question, None)))
        if reason is None:
            gating.report.reworded["reworded"] = gating.report.reworded.get("reworded", 0) + 1
            return replace(passed, sample=new, usage=usage,
                           example={**passed.example, "question": new.question, "reworded_from": sample.question})
        outcome = f"kept the original: the rewording fails the {reason} gate"
    key = outcome.split(":")[0].replace(" ", "_")
    gating.report.reworded[key] = gating.report.reworded.get(key, 0) + 1
    return replace(passed, sample=replace(sample, provenance={**sample.provenance, "reword": outcome}), usage=usage)
