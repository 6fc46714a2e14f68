"""Evidence units: the document's own sentences, never the swept chunking.

A :class:`Unit` is a sentence span of a document (:func:`gen.chunking.sentence_spans`, cut where two paragraphs
were joined without a space: :func:`gen.chunking.unglued`),
so ``doc.text[unit.start:unit.end] == unit.text`` by construction. This module also finds the
answer phrases a factual question can ask for (numbers, dates, named entities) and the
features that pair units for multi-hop and comparative questions.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import PurePosixPath

from ragsweep.gen.chunking import GLUED, sentence_spans, unglued
from ragsweep.gen.documents import Corpus, Document
from ragsweep.gen.layout import NOT_PROSE
from ragsweep.metrics import InputError
from ragsweep.metrics.lexicon import MONTHS, NON_UNIT_WORDS, SENTENCE_OPENERS, WEEKDAYS

#: How documents are cut into units and what topic each is shown under, recorded in every generation report
#: (``units``): a change here writes other questions from the same corpus and seed, so a cached set written
#: otherwise is stale (benchmarks/validity.py). "+article-topics": each article of a glued passage has its own
#: topic (:func:`unit_topics`).
UNITS = "nupunkt+unglued+article-topics"
MIN_CHARS = 40    # shorter sentences rarely hold a question's worth of fact
MAX_CHARS = 400   # longer "sentences" are tables or lists that the splitter could not cut

_MONTHS = "|".join(MONTHS)
DATE = re.compile(rf"\b(?:\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{1,2}}, \d{{4}}|(?:{_MONTHS}) \d{{4}})\b")
YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)s?\b")
# A number with an optional unit noun after it: "45 members", "250-kilowatt", "3.5%", "184,000 people".
NUMBER = re.compile(r"(?<![\w.:-])[£$€]?\d(?:[\d,]*\d)?(?:\.\d+)?(?![:\d])(?:%| ?per ?cent|-[a-z]+| [a-z]+)?")
# Capitalised runs (allowing "of", "the", "de" inside): "Calder Harbour Act", "University of Calder".
ENTITY = re.compile(r"\b[A-Z][\w'-]*[a-z0-9][\w'-]*(?:\s+(?:(?:of|the|de)\s+)?[A-Z][\w'-]+)*")
CONDITION = re.compile(r"\b(?:if|unless|when|whenever|provided|only after|only if|until|in case|in the absence of|in patients with)\b", re.I)
# A sentence that opens with a personal pronoun: its subject is named elsewhere (a bridge to the document's subject
# for multi_hop, a follow-up's second turn, or an unnamed subject below).
_PRONOUN = r"(?:It|Its|She|Her|He|His|They|Their)\b"
PRONOUN_OPENER = re.compile("^" + _PRONOUN)
# A sentence that does not name its subject: a pronoun ("It is included on his debut album ..."), a generic noun
# ("The car was powered by ..."), or a participle ("Created by Richard Levinson ..."): a small writer asked for one
# fact of such a sentence resolves the subject wrongly far more often than for a sentence that names it
# (benchmarks/results/2026-11-25-hand-reads.md). Also an irregular participle opening a phrase before the subject
# ("Written by Ottokar Kernstock, it was sung ..."), and an opening phrase followed by a pronoun subject ("A sequel
# to ... (2014), it is the third installment"; "In 2012, he portrayed ...").
_IRREGULAR_PARTICIPLE = (r"(?:Born|Written|Built|Made|Known|Set|Taken|Given|Chosen|Drawn|Shown|Seen|Sung|Led|Held|Run|"
                         r"Won|Sold|Told|Found|Grown|Brought|Bought|Sent|Kept|Hidden|Spoken|Begun|Thrown|Driven|"
                         r"Struck|Shot|Cast|Laid|Paid|Heard|Taught|Caught|Fought|Sought|Bred)")
UNNAMED_SUBJECT = re.compile(
    rf"^(?:{_PRONOUN}"
    r"|The [a-z]+(?: [a-z]+)?(?:,| (?:is|was|are|were|has|had|became|remains)\b)"
    r"|[A-Z][a-z]+(?:ed|ing) (?:by|in|with|at|on|as|for|from|to|after|during|near)\b"
    rf"|(?:Originally |Also |Later )?{_IRREGULAR_PARTICIPLE}\b[^,.;]{{0,100}}, "
    r"|[^,.;]{3,100}, (?:it|he|she|they) )")
_CALENDAR = set(MONTHS) | set(WEEKDAYS)


@dataclass(frozen=True)
class Unit:
    """One sentence of a document: ``text == doc.text[start:end]``; ``index`` is its position."""

    doc_id: str
    start: int
    end: int
    text: str
    index: int

    @cached_property
    def entities(self) -> frozenset[str]:
        return frozenset(p.text for p in answer_phrases(self.text) if p.kind == "entity")

    @cached_property
    def quantities(self) -> frozenset[str]:
        """Unit words of the numbers ("year", "members", "%"): what makes two sentences comparable."""
        out = set()
        for p in answer_phrases(self.text):
            if p.kind in ("year", "date"):
                out.add("year")
            elif p.kind == "number" and p.unit:
                out.add(p.unit)
        return frozenset(out)


@dataclass(frozen=True)
class Phrase:
    """An answer phrase inside a sentence: ``sentence[start:end]``."""

    kind: str  # date | year | number | entity
    start: int
    end: int
    text: str
    unit: str = ""  # for numbers: the noun after it ("members"), "%" or ""


def answer_phrases(sentence: str) -> list[Phrase]:
    """Dates, years, numbers and named entities of a sentence, left to right, not overlapping."""
    return list(_phrases(sentence))


# Every kind of candidate, the units' entities and the rule writer read a sentence's phrases: on a long document
# that is the same parse several times over. Phrases are frozen, so the cached tuple is shared safely.
@lru_cache(maxsize=1 << 17)
def _phrases(sentence: str) -> tuple[Phrase, ...]:
    found: list[Phrase] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int, unit: str = "") -> None:
        if any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        found.append(Phrase(kind, start, end, sentence[start:end], unit))

    for m in DATE.finditer(sentence):
        add("date", m.start(), m.end())
    for m in YEAR.finditer(sentence):
        add("year", m.start(), m.end())
    for m in NUMBER.finditer(sentence):
        text = m.group(0)
        tail = re.match(r"[£$€]?[\d,.]+(.*)", text)
        unit = (tail.group(1) if tail else "").strip(" -")
        if unit.split(" ")[0] in NON_UNIT_WORDS:  # "45 and" -> the number alone
            add("number", m.start(), m.start() + len(text) - len(tail.group(1) if tail else ""))
            continue
        if unit in ("per cent", "percent"):
            unit = "%"
        if text[0] in "£$€":
            unit = "currency"
        add("number", m.start(), m.end(), unit)
    for m in ENTITY.finditer(sentence):
        text = m.group(0)
        words = text.split()
        while words and words[0] in SENTENCE_OPENERS:
            words = words[1:]
        if not words or (len(words) == 1 and words[0] in _CALENDAR):
            continue
        start = m.start() + text.index(words[0])
        if start == 0 and len(words) == 1:
            continue  # a capitalised sentence opener is not an entity
        add("entity", start, m.end())
    return tuple(sorted(found, key=lambda p: p.start))


#: Document ids that are codes, not names: digits, a letter or two and digits, hex or UUIDs.
_OPAQUE_ID = re.compile(r"^(?:[A-Za-z]{0,3}\s?\d+|[0-9a-f]{8,}|[0-9a-f]{8}(?: [0-9a-f]{4}){3} [0-9a-f]{12})$", re.I)


def _named_by_opening(doc: Document) -> bool:
    """Whether :func:`topic_of` reads the document's name from its opening words: no title, no first heading,
    and a file name that names nothing ("k1273", "4983")."""
    if str(doc.metadata.get("title") or "").strip() or doc.text.lstrip().startswith("#"):
        return False
    return bool(_OPAQUE_ID.match(_stem(doc)))


def _stem(doc: Document) -> str:
    """The document's file name without extension, dashes and underscores read as spaces."""
    return PurePosixPath(doc.id).stem.replace("-", " ").replace("_", " ")


def _opening_name(text: str) -> str:
    """The capitalised name a text opens with ("Muse are an English rock band ..." -> "Muse"; "The Willunga
    railway line ..." -> "Willunga"), its first four words when it opens with none, or "" when it opens with a
    pronoun ("He was ...": a topic "He" names nothing)."""
    if PRONOUN_OPENER.match(text.lstrip()):
        return ""
    words = text.split(None, 8)[:8]  # the name is in the first eight words; the rest is not split
    lead = []
    for w in words:
        if w[:1].isupper() or (lead and w.lower() in ("of", "de", "the", "and", "von", "van", "la")):
            lead.append(w.strip(",;:()\"'"))
        elif lead:
            break
    while lead and lead[-1].lower() in ("of", "de", "the", "and", "von", "van", "la", "a", "an"):
        lead.pop()
    if lead and lead[0] in ("The", "A", "An") and len(lead) > 1:
        lead = lead[1:]
    return " ".join(lead) if lead else " ".join(words[:4])


def topic_of(doc: Document) -> str:
    """A short name of what the document is about: its title metadata, first heading, or file stem."""
    title = str(doc.metadata.get("title") or "").strip()
    if title:
        return title[:120]
    first = doc.text.lstrip().split("\n", 1)[0].strip()
    if first.startswith("#"):
        return first.lstrip("# ").strip()[:120]
    stem = _stem(doc)
    if not _OPAQUE_ID.match(stem):
        return stem
    # An id such as "k1273" or "4983" names nothing a question could use ("the k1273 mine"): the
    # document's opening name instead ("Muse are an English rock band ..." -> "Muse").
    return _opening_name(doc.text)


def unit_topics(doc: Document, units: list[Unit]) -> list[str]:
    """The topic of each of ``doc``'s units: :func:`topic_of`, except in a document named by its opening words
    that glues articles together without a space (:data:`gen.chunking.GLUED`; HotpotQA: "... in
    Wyoming.Powder River is ..."). There a unit after a glued cut takes the opening name of its own article
    ("Powder River"), not the first article's: a writer shown the first article's name as the topic of a
    sentence of the second put it in its question or answer ("Lil Bit's second album"). A document with a title or a heading keeps one topic: a
    glued cut there is a section label ("(SAP).Methods and Results" in SciFact), not another article."""
    topic = topic_of(doc)
    if not _named_by_opening(doc):
        return [topic] * len(units)
    cuts = [m.end() for m in GLUED.finditer(doc.text)]
    names = [topic] + [_opening_name(doc.text[c:]) for c in cuts]  # each article's name, read once
    return [names[bisect.bisect_right(cuts, u.start)] for u in units]


def names_subject(text: str) -> bool:
    """Whether a sentence names what it is about, rather than opening with a pronoun, a generic noun or a
    participle (:data:`UNNAMED_SUBJECT`)."""
    return not UNNAMED_SUBJECT.match(text)


def document_units(doc: Document, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS) -> list[Unit]:
    """The question-worthy sentences of a document (headings, fragments and tables left out; in a Markdown or
    HTML document also anything that touches a code block, a table or an include: a rule writer that clozes
    a word of code writes a question no reader would ask, and an LLM writer is better shown prose)."""
    units = []
    skip = [(b.start, b.end) for b in doc.layout.of_kind(*NOT_PROSE)] if doc.layout is not None else []
    for i, (start, end) in enumerate(unglued(doc.text, sentence_spans(doc.text))):
        if skip and any(s < end and start < e for s, e in skip):
            continue
        # A Markdown heading the splitter joined to the sentence after it ("# Calder Ferries\n\nCalder
        # Ferries is the ferry company of Port Calder."): the sentence without it, often the one that names
        # the document's subject in full.
        while doc.text.startswith("#", start) and (cut := doc.text.find("\n", start, end)) != -1:
            start = cut + 1
            while start < end and doc.text[start].isspace():
                start += 1
        text = doc.text[start:end]
        if not (min_chars <= len(text) <= max_chars) or text.startswith("#") or "\n" in text.strip():
            continue
        if len(text.split()) < 6 or not text[0].isalnum():
            continue
        units.append(Unit(doc.id, start, end, text, i))
    return units


def corpus_units(corpus: Corpus, doc_ids: list[str], min_chars: int = MIN_CHARS) -> dict[str, list[Unit]]:
    """Units of the given documents; raises :class:`InputError` when none can be questioned."""
    out = {d: u for d in doc_ids if (u := document_units(corpus.get(d), min_chars))}
    if not out:
        raise InputError(f"{corpus.source}: the documents are too short to question "
                         f"(no sentence of at least {min_chars} characters and 6 words)")
    return out
