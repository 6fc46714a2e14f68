"""The ``llm=none`` writer: deterministic factual questions without a model.

For a sentence it picks an answer phrase (a date, a year, a number with its unit, or a named
entity), keeps the clause around it, and turns the phrase into a wh-phrase::

    "It received its town charter in 1687, when it was ..."   (document: "Port Calder")
    -> "Port Calder received its town charter in what year?"   reference: "1687"

Instant and repeatable, for CI and quick sweeps; it writes ``single_hop`` questions only.
"""

from __future__ import annotations

import hashlib
import re

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.units import Phrase, answer_phrases
from ragsweep.gen.writer import Draft, WriteFailed

RULES_VERSION = "rules-1"  # bump when the question templates change
_KIND_ORDER = {"date": 0, "year": 1, "number": 2, "entity": 3}
_PRONOUN = re.compile(r"^(?:It|They|He|She|The company|The city|The company's|Its)\b")
_CLAUSE_BREAK = re.compile(r"(?:, | ; |; | - | — |: )")


def _wh(phrase: Phrase, before: str) -> tuple[str, int]:
    """The wh-phrase replacing ``phrase`` and how many characters before it it swallows."""
    low = before.lower()
    if phrase.kind in ("year", "date"):
        word = "year" if phrase.kind == "year" else "date"
        for prep in ("in ", "on ", "since ", "until ", "by ", "from "):
            if low.endswith(prep):
                return f"{prep}what {word}", len(prep)
        return f"what {word}", 0
    if phrase.kind == "number":
        if phrase.unit == "%":
            return "what percentage", 0
        if phrase.unit == "currency":
            return "how much", 0
        if phrase.unit:
            unit = phrase.unit.split(" ")[0]
            return f"how many {unit}", 0
        return "what number", 0
    if low.endswith("the "):
        return "what", 4
    return "what", 0


def _clause(sentence: str, phrase: Phrase) -> tuple[int, int]:
    """From the sentence start (it holds the subject) to the end of the phrase's clause."""
    ends = [m.start() for m in _CLAUSE_BREAK.finditer(sentence) if m.start() >= phrase.end]
    end = min(ends, default=len(sentence))
    if len(sentence[:end].split()) < 6:
        end = len(sentence)
    return 0, end


def question_for(sentence: str, phrase: Phrase, topic: str) -> str | None:
    """The question asking for ``phrase`` in ``sentence``, or None when no clean one can be made."""
    start, end = _clause(sentence, phrase)
    before = sentence[start:phrase.start]
    after = sentence[phrase.end:end]
    if phrase.kind in ("year", "date", "number") and re.match(r"\s+[a-z]", after) and before.lower().endswith("the "):
        return None  # "the 2019 flood": a modifier, not an answer
    wh, eaten = _wh(phrase, before)
    if len(before) == eaten and wh.split()[0] in ("in", "on", "since", "by", "from", "until"):
        # "In 2022 the array generated ..." -> "The array generated ... in what year?"
        rest = after.lstrip(" ,")
        text = rest[:1].upper() + rest[1:].rstrip(" ,.;:") + " " + wh
    else:
        text = before[: len(before) - eaten] + wh + after
    text = re.sub(r"[\s,.;:—-]+$", "", text.strip())
    if _PRONOUN.match(text):
        if not topic:
            return None
        text = _PRONOUN.sub(topic, text, count=1)
    if not text or len(text.split()) < 5:
        return None
    return text[0].upper() + text[1:] + "?"


class RuleWriter:
    """A :class:`gen.writer.Writer` that needs no model (``llm=none``)."""

    kinds = ("single_hop",)
    model_id = "rules"
    backend = "rules"
    prompt_version = RULES_VERSION

    async def write(self, cand: Candidate, topics: list[str], persona: str | None = None,
                    style: str | None = None) -> Draft:
        del persona, style  # one fixed style
        unit = cand.shown[cand.required[0]]
        phrases = sorted(answer_phrases(unit.text), key=lambda p: (_KIND_ORDER[p.kind], p.start))
        if not phrases:
            raise WriteFailed("no number, date or named entity in the sentence")
        # Seeded by the sentence itself: the same sentence always gives the same question.
        h = int(hashlib.sha256(cand.key.encode()).hexdigest()[:8], 16)
        order = phrases[h % len(phrases):] + phrases[: h % len(phrases)]
        order.sort(key=lambda p: _KIND_ORDER[p.kind] > 1)  # dates and years first, then the rest
        for phrase in order:
            q = question_for(unit.text, phrase, topics[cand.required[0]])
            if q and phrase.text.lower() not in q.lower():
                return Draft(q, phrase.text, (unit,))
        raise WriteFailed("no answer phrase gave a clean question")
