"""The ``llm=none`` writer: deterministic factual questions without a model.

For a sentence it picks an answer phrase (a date, a year, a number with its unit, or a named
entity), keeps the clause around it, and turns the phrase into a wh-phrase::

    "It received its town charter in 1687, when it was ..."   (document: "Port Calder")
    -> "Port Calder received its town charter in what year?"   reference: "1687"

Instant and repeatable, for CI and quick sweeps; it writes ``single_hop`` questions only.

Two styles (``styles=[...]`` in ``conf/gen.yaml``; one is drawn per question and recorded):

- ``question`` (the default): the whole clause, as above. It copies nearly every content word of
  its evidence, which flatters lexical retrieval.
- ``keywords`` (``keywords@N``: N words, default 5): a search-style query of the clause's N rarest
  content words (fewest documents of the corpus hold them) around the wh-phrase, in their order::

    -> "Port Calder town charter in what year?"

  It copies fewer words (5 against 12 on SciFact, as many as people's claims share with their
  abstracts) but only words of its evidence, and the rarest: on SciFact and HotpotQA it did not bring
  the ranking of retrievers closer to that of people's questions (README, "How far to trust a
  generated test set"). Only a writer that can reword (an LLM, with ``gates.max_overlap``) can.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.units import Phrase, Unit, answer_phrases
from ragsweep.gen.writer import Draft, WriteFailed
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.offline import content_words

RULES_VERSION = "rules-1"  # bump when the question templates change
_KIND_ORDER = {"date": 0, "year": 1, "number": 2, "entity": 3}
_PRONOUN = re.compile(r"^(?:It|They|He|She|The company|The city|The company's|Its)\b")
_CLAUSE_BREAK = re.compile(r"(?:, | ; |; | - | — |: )")
_WH_MARK = "\x01"  # brackets the wh-phrase while a question is assembled
KEYWORDS = 5  # content words a "keywords" question keeps by default


def parse_style(style: str | None) -> int | None:
    """None for the whole-clause ``question`` style, the word count for ``keywords`` / ``keywords@N``."""
    if style in (None, "", "question"):
        return None
    m = re.fullmatch(r"keywords(?:@(\d+))?", style)
    if not m or (m.group(1) is not None and int(m.group(1)) < 1):
        raise InputError(f"styles: the rule writer (llm=none) writes 'question' or 'keywords' / 'keywords@N' "
                         f"(N >= 1 words), got {style!r}")
    return int(m.group(1)) if m.group(1) else KEYWORDS


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
    marked = _marked_question(sentence, phrase, topic)
    return None if marked is None else _finish(marked)


def _finish(marked: str) -> str:
    text = marked.replace(_WH_MARK, "")
    return text[0].upper() + text[1:] + "?"


def keyword_question(marked: str, keep: int, weight: Callable[[str], float]) -> str:
    """A marked question cut to the wh-phrase and its ``keep`` heaviest content words, in their order.

    Args:
        marked: A question with its wh-phrase between two ``_WH_MARK`` characters, no "?".
        keep: Content words to keep (distinct, by their :func:`metrics.offline.content_words` key).
        weight: Key -> weight (the corpus's inverse document frequency); ties go to the earlier word.
    """
    before, wh, after = marked.split(_WH_MARK)
    words = [(part, w) for part, text in ((0, before), (2, after)) for w in text.split()]
    keyed = []
    for i, (_, w) in enumerate(words):
        keys = content_words(w.strip(".,;:()[]\"'!?"))
        if keys:
            keyed.append((-weight(keys[0]), i, keys[0]))
    chosen: dict[str, int] = {}
    for _, i, key in sorted(keyed):
        if len(chosen) < keep and key not in chosen:
            chosen[key] = i
    kept = set(chosen.values())
    out = [w.strip(".,;:()[]\"'!?") for i, (part, w) in enumerate(words) if i in kept and part == 0]
    out += [wh] + [w.strip(".,;:()[]\"'!?") for i, (part, w) in enumerate(words) if i in kept and part == 2]
    return _finish(" ".join(x for x in out if x))


def _marked_question(sentence: str, phrase: Phrase, topic: str) -> str | None:
    """:func:`question_for` with the wh-phrase bracketed by ``_WH_MARK``, not capitalised, no "?"."""
    start, end = _clause(sentence, phrase)
    before = sentence[start:phrase.start]
    after = sentence[phrase.end:end]
    if phrase.kind in ("year", "date", "number") and re.match(r"\s+[a-z]", after) and before.lower().endswith("the "):
        return None  # "the 2019 flood": a modifier, not an answer
    wh, eaten = _wh(phrase, before)
    wh_word = wh.split()[0]
    wh = _WH_MARK + wh + _WH_MARK
    if len(before) == eaten and wh_word in ("in", "on", "since", "by", "from", "until"):
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
    return text


class RuleWriter:
    """A :class:`gen.writer.Writer` that needs no model (``llm=none``).

    :meth:`prepare` (called by the generator before writing) counts in how many documents each
    content word occurs, which ranks the words a ``keywords`` question keeps; without it every word
    weighs the same and the first ones are kept.
    """

    kinds = ("single_hop",)
    model_id = "rules"
    backend = "rules"
    prompt_version = RULES_VERSION

    def __init__(self) -> None:
        self.doc_freq: Counter[str] = Counter()
        self.n_docs = 0

    def prepare(self, units: Mapping[str, Sequence[Unit]], styles: Sequence[str]) -> None:
        """Check the configured styles; count each content word's documents over ``units``."""
        for style in styles:
            parse_style(style)
        self.doc_freq = Counter(w for doc in units.values() for w in {k for u in doc for k in content_words(u.text)})
        self.n_docs = len(units)

    def weight(self, key: str) -> float:
        """Inverse document frequency of a content-word key (rarer words weigh more)."""
        return math.log((self.n_docs + 1) / (self.doc_freq.get(key, 0) + 1))

    async def write(self, cand: Candidate, topics: list[str], persona: str | None = None,
                    style: str | None = None) -> Draft:
        del persona  # no voice without a model
        keep = parse_style(style)
        unit = cand.shown[cand.required[0]]
        phrases = sorted(answer_phrases(unit.text), key=lambda p: (_KIND_ORDER[p.kind], p.start))
        if not phrases:
            raise WriteFailed("no number, date or named entity in the sentence")
        # Seeded by the sentence itself: the same sentence always gives the same question.
        h = int(hashlib.sha256(cand.key.encode()).hexdigest()[:8], 16)
        order = phrases[h % len(phrases):] + phrases[: h % len(phrases)]
        order.sort(key=lambda p: _KIND_ORDER[p.kind] > 1)  # dates and years first, then the rest
        for phrase in order:
            marked = _marked_question(unit.text, phrase, topics[cand.required[0]])
            if marked is None:
                continue
            q = _finish(marked) if keep is None else keyword_question(marked, keep, self.weight)
            if phrase.text.lower() not in q.lower():
                return Draft(q, phrase.text, (unit,))
        raise WriteFailed("no answer phrase gave a clean question")
