"""Candidate evidence for each question kind, in a seeded order.

The code, not the model, chooses the evidence: every candidate is a few sentence units
(:mod:`gen.units`) that the writer shows the model, so every span is verbatim by construction.

- ``single_hop``: one sentence with an answer phrase that names its subject (not "It was ...", "The car
  was ...": :func:`gen.units.names_subject`; ``gates.named_subject``), shown with the sentence before it.
- ``conditional``: one sentence stating a condition (if, when, unless, ...), same context.
- ``multi_hop``: bridges first: a sentence that mentions a named entity (not as its subject), then
  a sentence about that entity, which opens with it ("... born in Warsaw" -> "Warsaw is the capital
  of Poland"), or opens with a pronoun in a document whose title it is; from two documents, or
  at least 3 sentences apart in one. Then, as before, any two such sentences that share a named entity.
- ``comparative``: two sentences of two documents with comparable quantities (two years,
  two numbers with the same unit word).
- ``unanswerable``: one sentence with an answer phrase, same context, as single_hop (and drawn in
  its own seeded order). It is not evidence but a topic: the writer asks what the corpus does not
  say about it, and the sample keeps no span.
- ``follow_up``: two sentences of one document, at most :data:`FOLLOW_UP_GAP` sentences apart, each
  with an answer phrase, that share a named entity or whose second opens with a pronoun (both about
  the document's subject, as a rule): the first turn is asked of the first, the follow-up of the
  second (:mod:`gen.followup`).

Documents are visited in a seeded random order, round-robin, so the first candidates cover
as many documents as possible: on a large corpus the test set is a seeded random sample.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ragsweep.gen.units import CONDITION, PRONOUN_OPENER, Unit, answer_phrases, names_subject

_MAX_PAIR_DOCS = 400  # documents scanned for shared entities (the index is quadratic in the worst case)
# Sentences of one document kept per shared entity or quantity word when pairing: pairs grow with the square of
# a group, and a 5 MB document names its subject in thousands of sentences. Ordinary documents stay whole (the
# FastAPI docs reach 14, the shipped corpus 8); beyond, an evenly spaced sample over the document.
MAX_PER_DOC = 32
T = TypeVar("T")
FOLLOW_UP_GAP = 4     # a follow-up's sentence is at most this many sentences after the first turn's


@dataclass(frozen=True)
class Candidate:
    """What the writer gets: the kind, the sentences to show and which of them are evidence.

    Attributes:
        kind: One of :data:`gen.testset.KINDS`.
        shown: Sentences shown to the model, numbered from 1 in this order.
        required: Indexes into ``shown`` that must be in the evidence (both, for two-sentence kinds).
        bridge: For a multi_hop bridge, the entity the first sentence mentions and the second is about.
        style: A documentation style chosen by what the section holds (:mod:`gen.styles`); None: a style is
            drawn from ``styles`` as for any question.
        section: The heading titles over a style candidate's text, outermost first (shown to the writer).
        product: The product a style candidate's page documents (:mod:`gen.products`; shown to the writer, who
            names it), None when the corpus does not say.
        items: Indexes into ``shown`` of the items of one list, shown whole after the sentence that leads into
            it (:func:`gen.structure.list_evidence`): a question about that list takes all of them as its answer,
            or names the one item it asks about (:func:`gen.style_checks.one_of_list`).
        warning: The text of a warning admonition (:func:`gen.styles`): it says what to avoid, and a condition in
            it ("when you deploy, ...") says when, not why (:func:`gen.grounding.states_reason`).
        pointers: ``(index into shown, link text)`` of each shown pointer sentence ("See the [guide](...)",
            :func:`gen.style_checks.pointer_target`): a reference from it names where it points
            (:func:`gen.grounding.claims_pointed`).
    """

    kind: str
    shown: tuple[Unit, ...]
    required: tuple[int, ...]
    bridge: str | None = None
    style: str | None = None
    section: tuple[str, ...] = ()
    product: str | None = None
    items: tuple[int, ...] = ()
    warning: bool = False
    pointers: tuple[tuple[int, str], ...] = ()

    @property
    def key(self) -> str:
        return (self.kind + (f"/{self.style}" if self.style else "") + ":"
                + "|".join(f"{u.doc_id}@{u.start}-{u.end}" for u in self.shown))

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(u.doc_id for u in self.shown))


def _same_article(topics: Mapping[tuple[str, int], str] | None, a: Unit, b: Unit) -> bool:
    """Whether two units of a document share an article (:func:`gen.units.unit_topics`); True without ``topics``."""
    return topics is None or topics.get((a.doc_id, a.start)) == topics.get((b.doc_id, b.start))


def _with_context(units: list[Unit], i: int, named_subject: bool = False,
                  topics: Mapping[tuple[str, int], str] | None = None) -> tuple[tuple[Unit, ...], tuple[int, ...]]:
    """The sentence, preceded by its neighbour when that is adjacent (it often names the subject). With
    ``named_subject``, only a neighbour that names its own: the writer asks about the context sentence now and
    then, and "The car was powered by ..." gave "What engine did the car use?". With ``topics``, only a
    neighbour of the same article: in a glued passage the sentence before may end another article, and the
    1.5B joined the two ("Rob Jenkins is an Australian actor ..." + "Predestination is a 2014 Australian ...
    film" -> "Who is the Australian actor who directed Predestination?" -> "Rob Jenkins"), or compared them in
    a single_hop question."""
    before = units[i - 1] if i > 0 else None
    unit = units[i]
    if (before is not None and before.index == unit.index - 1 and (not named_subject or names_subject(before.text))
            and _same_article(topics, before, unit)):
        return (before, units[i]), (1,)
    return (units[i],), (0,)


def round_robin(per_doc: Mapping[str, Sequence[T]], order: list[str]) -> Iterator[tuple[str, T]]:
    depth = 0
    while True:
        emitted = False
        for doc_id in order:
            picks = per_doc.get(doc_id, [])
            if depth < len(picks):
                emitted = True
                yield doc_id, picks[depth]
        if not emitted:
            return
        depth += 1


def _single(units: dict[str, list[Unit]], order: list[str], rng: random.Random, kind: str,
            named_subject: bool = True, topics: Mapping[tuple[str, int], str] | None = None) -> Iterator[Candidate]:
    per_doc: dict[str, list[int]] = {}
    for doc_id in order:
        ok = [i for i, u in enumerate(units[doc_id])
              if (CONDITION.search(u.text) if kind == "conditional" else answer_phrases(u.text))
              and (not named_subject or names_subject(u.text))]
        rng.shuffle(ok)
        per_doc[doc_id] = ok
    for doc_id, i in round_robin(per_doc, order):
        shown, required = _with_context(units[doc_id], i, named_subject, topics)
        yield Candidate(kind, shown, required)




# After a sentence's subject: its verb (perhaps after an adverb), or an apposition ("Warsaw, the capital, ...").
_PREDICATE = re.compile(r"\s*(?:[(,]|(?:(?:\w+ly|later|also|then|now|still) )?(?:is|was|are|were|has|had|became|"
                        r"remains|\w+ed|\w+s)\b)")


def _subject(unit: Unit) -> str | None:
    """The named entity a sentence opens with as its subject ("Warsaw is ...", "The Oberoi Group, ...");
    not one that qualifies another noun ("The Ferrybank terminal was ...")."""
    for p in answer_phrases(unit.text):
        if p.kind == "entity":
            opens = unit.text[:p.start].strip() in ("", "The", "the")
            return p.text if opens and _PREDICATE.match(unit.text, p.end) else None
    return None


def _about(units: dict[str, list[Unit]], docs: list[str], topics: Mapping[tuple[str, int], str],
           subjects: Mapping[tuple[str, int], str | None]) -> dict[str, list[Unit]]:
    """Entity -> the units about it (opening with it, or with a pronoun in the document titled with it) that hold
    an answer phrase besides it, at most :data:`MAX_PER_DOC` of each document."""
    about: dict[str, list[Unit]] = {}
    for doc_id in docs:
        for u in units[doc_id]:
            subject = subjects[doc_id, u.start]
            if subject is None and PRONOUN_OPENER.match(u.text) and topics.get((doc_id, u.start)):
                subject = topics[doc_id, u.start]
            if subject is not None and any(p.text != subject for p in answer_phrases(u.text)):
                about.setdefault(subject, []).append(u)
    return {subject: per_document_sample(group, MAX_PER_DOC) for subject, group in about.items()}


def _bridges(units: dict[str, list[Unit]], docs: list[str],
             topics: Mapping[tuple[str, int], str]) -> list[tuple[Unit, Unit, str]]:
    """(a, b, entity): ``a`` mentions an entity that is not its subject, ``b`` is about that entity (opens with it,
    or opens with a pronoun in the document titled with it) and holds an answer phrase besides it.
    A 1.5B writer turns such a pair into a bridge question; given two sentences that merely share a
    name it writes a one-sentence question (the kind check rejects most of those).
    Both sides keep at most :data:`MAX_PER_DOC` units of a document per entity."""
    subjects = {(d, u.start): _subject(u) for d in docs for u in units[d]}
    about = _about(units, docs, topics, subjects)
    holders: dict[str, set[str]] = {}
    mentions: dict[str, list[Unit]] = {}
    for doc_id in docs:
        for u in units[doc_id]:
            for e in u.entities:
                holders.setdefault(e, set()).add(doc_id)
                if e != subjects[doc_id, u.start]:
                    mentions.setdefault(e, []).append(u)
    kept = {(e, a.doc_id, a.start) for e, group in mentions.items() for a in per_document_sample(group, MAX_PER_DOC)}
    common = max(8, len(docs) // 4)
    out = []
    for doc_id in docs:
        for a in units[doc_id]:
            for e in sorted(a.entities):
                if (e, doc_id, a.start) not in kept or len(holders.get(e, ())) > common:
                    continue  # a's own subject, beyond the sample, or too common a name to bridge on
                for b in about.get(e, ()):
                    if b.doc_id != a.doc_id or abs(b.index - a.index) >= 3:
                        out.append((a, b, e))
    return out


P = TypeVar("P", bound=tuple)


def _coverage_order(pairs: list[P], rng: random.Random) -> list[P]:
    """Shuffled; two-document pairs first; within them, each document at most once per pass."""
    rng.shuffle(pairs)
    pairs.sort(key=lambda p: p[0].doc_id == p[1].doc_id)
    used: dict[str, int] = {}
    return sorted(pairs, key=lambda p: (p[0].doc_id == p[1].doc_id, _bump(used, p[0].doc_id) + _bump(used, p[1].doc_id)))


def _pairs(units: dict[str, list[Unit]], order: list[str], rng: random.Random, kind: str,
           topics: Mapping[tuple[str, int], str] | None = None) -> Iterator[Candidate]:
    docs = order[:_MAX_PAIR_DOCS]
    bridges = _bridges(units, docs, topics or {}) if kind == "multi_hop" else []
    for a, b, entity in _coverage_order(bridges, rng):
        yield Candidate(kind, (a, b), (0, 1), entity)
    bridged = {frozenset((f"{a.doc_id}@{a.start}", f"{b.doc_id}@{b.start}")) for a, b, _ in bridges}
    index: dict[str, list[Unit]] = {}
    for doc_id in docs:
        for u in units[doc_id]:
            for feature in (u.entities if kind == "multi_hop" else u.quantities):
                index.setdefault(feature, []).append(u)
    pairs: list[tuple[Unit, Unit]] = []
    seen: set[tuple[str, str]] = set()
    for feature in sorted(index):
        group = index[feature]  # in (document rank, start) order: each pair once, the earlier unit first
        if len({u.doc_id for u in group}) > max(8, len(docs) // 4):
            continue  # too common to make a meaningful bridge ("Port Calder" in every document)
        group = per_document_sample(group, MAX_PER_DOC)
        for p, a in enumerate(group):
            for b in itertools.islice(group, p + 1, None):
                cross = a.doc_id != b.doc_id
                distant = a.doc_id == b.doc_id and b.index - a.index >= 3
                if not (cross or distant):
                    continue
                if kind == "comparative" and not cross:
                    continue
                k = (f"{a.doc_id}@{a.start}", f"{b.doc_id}@{b.start}")
                if k not in seen and frozenset(k) not in bridged:
                    seen.add(k)
                    pairs.append((a, b))
    for a, b in _coverage_order(pairs, rng):
        yield Candidate(kind, (a, b), (0, 1))


def per_document_sample(group: list[Unit], most: int) -> list[Unit]:
    """``group`` (units, each document's together) with at most ``most`` units of each document: all of them
    when a document has that few, else ``most`` evenly spaced over it (first, ..., near the last)."""
    out: list[Unit] = []
    for _, run in itertools.groupby(group, key=lambda u: u.doc_id):
        units = list(run)
        out.extend(units if len(units) <= most else (units[k * len(units) // most] for k in range(most)))
    return out


def nearby_pairs(doc: Sequence[Unit], asked: Sequence[int], gap: int) -> Iterator[tuple[int, int]]:
    """The pairs ``(i, j)`` of positions in ``asked`` whose units are ``0 < doc[j].index - doc[i].index <= gap``
    sentences apart, ordered by ``i`` then ``j``. A document's units are in sentence order, so the partners of
    ``i`` are the few positions after it: a window per sentence, O(len(asked) * gap), not every pair."""
    for p, i in enumerate(asked):
        q = p + 1
        while q < len(asked) and doc[asked[q]].index - doc[i].index <= gap:
            yield i, asked[q]
            q += 1


def _follow_ups(units: dict[str, list[Unit]], order: list[str], rng: random.Random,
                topics: Mapping[tuple[str, int], str] | None = None) -> Iterator[Candidate]:
    """Two nearby sentences of one document (of one article, where ``topics`` tells a glued document's articles
    apart: a second turn's "He" in the next article is another man)."""
    per_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id in order:
        doc = units[doc_id]
        asked = [i for i, u in enumerate(doc) if answer_phrases(u.text)]
        pairs = [(i, j) for i, j in nearby_pairs(doc, asked, FOLLOW_UP_GAP)
                 if (doc[i].entities & doc[j].entities or PRONOUN_OPENER.match(doc[j].text))
                 and _same_article(topics, doc[i], doc[j])]
        rng.shuffle(pairs)
        per_doc[doc_id] = pairs
    for doc_id, (i, j) in round_robin(per_doc, order):
        yield Candidate("follow_up", (units[doc_id][i], units[doc_id][j]), (0, 1))


def _bump(counts: dict[str, int], key: str) -> int:
    counts[key] = counts.get(key, 0) + 1
    return counts[key]


def candidates(units: dict[str, list[Unit]], kind: str, seed: int, topics: Mapping[tuple[str, int], str] | None = None,
               named_subject: bool = True) -> Iterator[Candidate]:
    """All candidates of one kind over the documents that have units, in a seeded order.
    ``topics`` ((document, unit start) -> title or subject: :func:`gen.units.unit_topics`) lets a multi_hop
    bridge reach a sentence that calls its document's (or its article's) subject "it" or "she", and keeps a
    follow-up's two turns, and a sentence and the context shown before it, in one article.
    ``named_subject``: single_hop, conditional and unanswerable questions are asked only of sentences that
    name their subject (:func:`gen.units.names_subject`)."""
    rng = random.Random(f"{seed}:{kind}")
    order = sorted(units)
    rng.shuffle(order)
    if kind in ("single_hop", "conditional", "unanswerable"):
        return _single(units, order, rng, kind, named_subject, topics)
    if kind in ("multi_hop", "comparative"):
        return _pairs(units, order, rng, kind, topics)
    if kind == "follow_up":
        return _follow_ups(units, order, rng, topics)
    raise ValueError(f"unknown question kind {kind!r}")
