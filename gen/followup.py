"""Follow-up questions: the second user turn of a conversation, which only makes sense after the first.

A ``follow_up`` sample is a conversation of three turns::

    user:      "Calder Ferries moved to its present terminal in Ferrybank in what year?"
    assistant: "1963"                                  (the first turn's reference answer)
    user:      "It is still owned by what family?"      <- the sample's question (reference "Pellow")

Its ``reference`` and ``evidence`` are the second turn's; the first turn's question, reference and
evidence, the subject the follow-up leaves out and the follow-up written out in full
(``standalone``) are kept in its provenance (``follow_up``). The candidate is two sentences of one
document about the same subject (:func:`gen.candidates.candidates`, ``follow_up``).

- The rule writer (``llm=none``, :func:`gen.rules.rule_follow_up`) asks a question of each sentence as
  ``single_hop`` does, keeps a pair whose questions both name the document's subject (its title, or
  a person's surname), and puts a pronoun in place of the subject in the second: ``it`` / ``its``,
  or ``she`` / ``her``, ``he`` / ``his`` / ``him`` when the document speaks of its subject so.
- The LLM writer uses its own prompt (:data:`WRITE_FOLLOW_UP`, in :class:`gen.writer.LLMWriter`),
  which may also write an ellipsis ("And in 2023?").

Gates (:func:`check_follow_up`): the first turn passes the usual gates; so does the standalone
follow-up (answerable from its evidence, not trivial, self-contained); the follow-up itself must
NOT be self-contained: it refers back (a pronoun or an ellipsis) and names none of the subject's
words (``follow_up_self_contained``); and the first turn must not give its answer away (``trivial``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field

from ragsweep.gen.documents import Corpus, Span
from ragsweep.gen.gates import GateConfig, check_sample
from ragsweep.gen.report import Report
from ragsweep.gen.testset import FOLLOW_UP_KIND, TestSample
from ragsweep.gen.units import Unit
from ragsweep.gen.wording import content_tokens, normalise, tokens
from ragsweep.metrics import CompactReply, Prompt
from ragsweep.metrics.lexicon import BACK_REFERENCES, PRONOUN_FORMS

#: How an elliptical follow-up opens ("And in 2023?", "What about the Wrenmouth route?").
_ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about|and what about|what of|also|same for)\b", re.I)
_OPENER = re.compile(r"^(She|He|It|Her|His|Its)\b")
MIN_FOLLOW_UP_WORDS = 3  # "And in 2023?" is a whole follow-up


def refers_back(question: str) -> bool:
    """Whether ``question`` has a pronoun or an ellipsis that points at an earlier turn."""
    return bool(_ELLIPSIS.match(question)) or any(t in BACK_REFERENCES for t in tokens(question))


def names(question: str, subject: str) -> bool:
    """Whether ``question`` holds any content word of ``subject`` (its name, or part of it)."""
    words = set(content_tokens(subject))
    return bool(words & set(content_tokens(question)))


def pronoun_of(units: Sequence[Unit]) -> str:
    """``she``, ``he`` or ``it``: how a document's sentences most often open when they speak of its subject."""
    counts = Counter(m.group(1).lower() for u in units if (m := _OPENER.match(u.text)))
    by_form = Counter({"she": counts["she"] + counts["her"], "he": counts["he"] + counts["his"],
                       "it": counts["it"] + counts["its"]})
    best, n = max(by_form.items(), key=lambda kv: (kv[1], kv[0] == "it"))
    return best if n else "it"


def pronounise(question: str, subject: str | Sequence[str], pronoun: str = "it") -> str | None:
    """``question`` with each mention of ``subject`` (with a leading "the", and "'s") as a pronoun.

    ``subject`` may be several names of one thing ("Ines Marrow", "Marrow"): the longest is replaced
    first. Before "'s" the possessive is used ("Its ..."), else at the start of the question the
    subject form ("It ..."), elsewhere the object form. None when no name is in the question or a word of one is left.
    """
    subject_form, possessive, object_form = PRONOUN_FORMS[pronoun]
    names_ = sorted([subject] if isinstance(subject, str) else subject, key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in names_)
    pattern = re.compile(r"(?:\b[Tt]he\s+)?(?<!\w)(?:" + alternatives + r")(?P<pos>['’]s|(?<=s)['’](?=\s))?(?!\w)")
    if not pattern.search(question):
        return None

    def swap(m: re.Match[str]) -> str:
        start = m.start() == 0
        word = possessive if m.group("pos") else subject_form if start else object_form
        return word[0].upper() + word[1:] if start else word

    out = pattern.sub(swap, question)
    return None if any(names(out, n) for n in names_) else out


def follow_up_info(question: str, reference: str, evidence: Sequence[Unit], subject: str,
                   standalone: str) -> dict[str, Any]:
    """The ``follow_up`` provenance entry: the first turn (question, reference, evidence spans), the
    subject the follow-up leaves out, and the follow-up written out in full."""
    return {"first": {"question": question, "reference": reference,
                      "evidence": [{"doc_id": u.doc_id, "start": u.start, "end": u.end, "text": u.text}
                                   for u in evidence]},
            "subject": subject, "standalone": standalone}


# ---------------------------------------------------------------- gates

def check_follow_up(sample: TestSample, corpus: Corpus, cfg: GateConfig) -> tuple[TestSample, str | None]:
    """The sample with its conversation filled in, and the first gate it fails (None: accepted)."""
    info = sample.provenance.get("follow_up")
    if not isinstance(info, Mapping) or not isinstance(info.get("first"), Mapping):
        return sample, "write_failed"
    first = info["first"]
    spans = tuple(Span(str(e["doc_id"]), int(e["start"]), int(e["end"])) for e in first.get("evidence") or ())
    turn1 = TestSample(sample.id, str(first["question"]), str(first["reference"]), spans, "single_hop",
                       quotes=tuple(e.get("text") for e in first.get("evidence") or ()))
    sample = replace(sample, conversation=({"role": "user", "content": turn1.question},
                                           {"role": "assistant", "content": turn1.reference},
                                           {"role": "user", "content": sample.question}))
    if reason := check_sample(turn1, corpus, cfg):
        return sample, reason
    whole = replace(sample, question=str(info.get("standalone") or ""), conversation=())
    if reason := check_sample(whole, corpus, cfg):
        return sample, reason
    subject = str(info.get("subject") or "")
    q = sample.question.strip()
    if (not subject or names(q, subject) or not refers_back(q) or len(q.split()) < MIN_FOLLOW_UP_WORDS
            or normalise(q) == normalise(whole.question)):
        return sample, "follow_up_self_contained"
    told = set(content_tokens(turn1.question + " " + turn1.reference))
    answer = content_tokens(sample.reference)
    if not answer or set(answer) <= told or normalise(sample.reference) == normalise(turn1.reference):
        return sample, "trivial"  # the first turn already gives the follow-up's answer
    return sample, None


def follow_up_line(report: Report) -> str | None:
    """One plain line on the follow-up kind (None when none was written)."""
    tried = report.tried_by_kind.get(FOLLOW_UP_KIND, 0)
    if not tried:
        return None
    by = report.rejected_by_kind.get(FOLLOW_UP_KIND, {})
    failed = by.get("write_failed", 0)
    alone = by.get("follow_up_self_contained", 0)
    return (f"follow_up: {report.accepted_by_kind.get(FOLLOW_UP_KIND, 0)} accepted; of {tried - failed} written, "
            f"{alone} rejected because the follow-up stands on its own (follow_up_self_contained), "
            f"{sum(by.values()) - failed - alone} for other reasons; {failed} candidates gave no pair")


# ---------------------------------------------------------------- the LLM writer's follow-ups
# A prompt of its own (WRITE_QUESTION's text, and so every call cached with it, stays as it was).


class FollowUpInput(BaseModel):
    """What the writer sees for a follow-up: two sentences of one document about the same subject."""

    sentences: list[str] = Field(description="numbered sentences: [1] answers the first question, [2] the follow-up")
    topics: list[str] = Field(description="title or subject of each sentence's source document")
    persona: str | None = None
    style: str | None = None


class FollowUpOutput(CompactReply):
    """A first question and its answer, then a follow-up that needs the first turn to be understood."""

    first_question: str
    first_answer: str
    follow_up: str = Field(description="the second question: refers to the subject by a pronoun or leaves it out")
    answer: str = Field(description="the follow-up's answer, from sentence [2]")
    subject: str = Field(description="the name the follow-up's pronoun or ellipsis stands for")
    standalone: str = Field(description="the follow-up rewritten to name the subject")


WRITE_FOLLOW_UP: Prompt[FollowUpInput, FollowUpOutput] = Prompt(
    name="gen.write_follow_up",
    instruction=(
        "You write the first two user turns of a conversation with a search assistant, for a test set, from "
        "two numbered sentences of one document. The first question is answered by sentence [1]; it names "
        "its subject and stands on its own. The follow-up asks another fact about the same subject that "
        "sentence [2] answers, and only makes sense after the first question: it refers to the subject with "
        "a pronoun (it, its, she, her, he, his, they) or leaves it out ('And in 2023?', 'What about its "
        "length?'), and never names it. 'subject' is the name the pronoun or the gap stands for; "
        "'standalone' is the follow-up rewritten to name the subject. Never say 'the passage', 'the text' "
        "or 'the sentence'; do not copy a sentence word for word; answers are short and use the sentences' "
        "own words. Follow the persona and style when given."
    ),
    input=FollowUpInput,
    output=FollowUpOutput,
    examples=(
        (FollowUpInput(sentences=["The Forth Bridge, opened in 1890, carries the railway across the Firth of Forth.",
                                  "It was designed by John Fowler and Benjamin Baker."],
                       topics=["Forth Bridge", "Forth Bridge"]),
         FollowUpOutput(first_question="When did the Forth Bridge across the Firth of Forth open?", first_answer="1890",
                        follow_up="Who designed it?", answer="John Fowler and Benjamin Baker",
                        subject="the Forth Bridge", standalone="Who designed the Forth Bridge?")),
        (FollowUpInput(sentences=["Marie Curie was born in Warsaw in 1867.",
                                  "She won the Nobel Prize in Chemistry in 1911."],
                       topics=["Marie Curie", "Marie Curie"]),
         FollowUpOutput(first_question="In which city was Marie Curie born?", first_answer="Warsaw",
                        follow_up="And when did she win the Nobel Prize in Chemistry?", answer="1911",
                        subject="Marie Curie", standalone="When did Marie Curie win the Nobel Prize in Chemistry?")),
    ),
    max_tokens=240,  # the reply is ~80-140 tokens
    layout="json",
)
