"""Where an application's contexts came from: each returned context string located in the corpus.

``ragsweep run`` gets only strings back from a black-box application. To score them with the same
span-based retrieval metrics as a sweep variant, each string is turned into a span
``(doc_id, start, end)`` of the corpus, trying in order:

1. **exact**: the string occurs verbatim in a document (the first occurrence; ``n_matches`` says
   whether there were more).
2. **normalised**: it occurs once whitespace runs are collapsed to one space and text is Unicode
   NFKC-normalised and case-folded on both sides (an application that re-joined lines, stripped or
   lower-cased its chunks). The span covers the original characters of the match.
3. **fuzzy**: the best-aligned window of the three documents sharing most words with it (difflib,
   the ``partial_ratio`` way: windows anchored at matching blocks), accepted when the similarity
   ratio is at least ``fuzzy_threshold`` (default 0.9). The span is trimmed to the matched text.

A context found none of these ways is ``unlocated``: it stays in the ranking at its rank as a
non-relevant item (its characters count against span precision), and the run's summary and board
count it. Every location records its method and score, and the threshold used.
"""

from __future__ import annotations

import bisect
import difflib
import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ragsweep.gen import Corpus

#: Cached locations (harness/testsets.py) are keyed by it: bump it when this module finds other spans.
LOCATE_VERSION = "locate-2"
_SEP = "\x00"          # between documents in the joined texts: no context can match across it
_WORD = re.compile(r"\S+")
FUZZY_DOCS = 3         # documents tried by the fuzzy pass (those sharing most words with the context)
FUZZY_ANCHORS = 12     # windows tried per document (anchored at the longest matching blocks)
EDGE_SLACK = 8         # characters of slack beyond a window, and beyond an unmatched edge of the context
EDGE_MAX = 64          # an unmatched edge longer than this is not text of the document: the span is not moved


@dataclass(frozen=True)
class Location:
    """Where one context string was found.

    Attributes:
        doc_id: The document, or ``unlocated:<sha1>`` of the text when not found (a stand-in
            document of its own, so unlocated characters never overlap evidence).
        start, end: Character offsets in the document (``0, len(text)`` when unlocated).
        method: ``exact``, ``normalised``, ``fuzzy`` or ``unlocated``.
        score: 1.0 for exact and normalised matches; the similarity ratio for fuzzy ones; for an
            unlocated context the best ratio seen (0.0 when no candidate was found).
        n_matches: Occurrences found by the exact or normalised pass (1, or 2 meaning "more than one").
    """

    doc_id: str
    start: int
    end: int
    method: str
    score: float
    n_matches: int = 1

    @property
    def located(self) -> bool:
        return self.method != "unlocated"

    def to_dict(self, threshold: float) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "score": round(self.score, 4)}
        if self.method in ("fuzzy", "unlocated"):
            out["threshold"] = threshold
        if self.n_matches > 1:
            out["ambiguous"] = True
        return out


def normalise_word(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


def normalise(text: str) -> str:
    """Whitespace runs to one space, NFKC, case-folded: the form the normalised pass compares."""
    return " ".join(normalise_word(w) for w in text.split())


class _Normalised:
    """A document's normalised text and the way back from its offsets to the original ones."""

    def __init__(self, text: str) -> None:
        parts, self.norm_starts, self.orig_starts, self.orig_ends, self.norm_lens = [], [], [], [], []
        pos = 0
        for m in _WORD.finditer(text):
            word = normalise_word(m.group())
            if parts:
                pos += 1  # the joining space
            parts.append(word)
            self.norm_starts.append(pos)
            self.orig_starts.append(m.start())
            self.orig_ends.append(m.end())
            self.norm_lens.append(len(word))
            pos += len(word)
        self.text = " ".join(parts)

    def original(self, offset: int, end: bool = False) -> int:
        """The original offset of normalised ``offset`` (a start), or of the character before it (an end)."""
        at = offset - 1 if end else offset
        i = max(0, bisect.bisect_right(self.norm_starts, at) - 1)
        within = at - self.norm_starts[i]
        if within >= self.norm_lens[i]:  # on the joining space after word i
            return self.orig_ends[i] if end else self.orig_starts[min(i + 1, len(self.orig_starts) - 1)]
        # Inside a word: exact when normalising kept its length (nearly always); else the word's edge.
        if self.norm_lens[i] == self.orig_ends[i] - self.orig_starts[i]:
            return self.orig_starts[i] + within + (1 if end else 0)
        return self.orig_ends[i] if end else self.orig_starts[i]


class Locator:
    """Locates context strings in a corpus (exact, normalised, fuzzy); results are memoised by text."""

    def __init__(self, corpus: Corpus, fuzzy_threshold: float = 0.9, fuzzy: bool = True) -> None:
        if not 0.0 < fuzzy_threshold <= 1.0:
            from ragsweep.metrics import InputError

            raise InputError(f"locate.fuzzy_threshold must be in (0, 1], got {fuzzy_threshold!r}")
        self.corpus, self.threshold, self.fuzzy = corpus, float(fuzzy_threshold), fuzzy
        self._ids = [d.id for d in corpus.documents]
        self._memo: dict[str, Location] = {}

    # -- the joined texts, built on first use

    @cached_property
    def _joined(self) -> tuple[str, list[int]]:
        starts, pos = [], 0
        for d in self.corpus.documents:
            starts.append(pos)
            pos += len(d.text) + 1
        return _SEP.join(d.text for d in self.corpus.documents), starts

    @cached_property
    def _normalised(self) -> tuple[str, list[int], list[_Normalised]]:
        docs = [_Normalised(d.text) for d in self.corpus.documents]
        starts, pos = [], 0
        for n in docs:
            starts.append(pos)
            pos += len(n.text) + 1
        return _SEP.join(n.text for n in docs), starts, docs

    @cached_property
    def _words(self) -> tuple[dict[str, set[int]], Counter[str]]:
        """Word -> documents holding it, and in how many documents each word occurs."""
        index: dict[str, set[int]] = {}
        for i, n in enumerate(self._normalised[2]):
            for w in set(n.text.split()):
                index.setdefault(w, set()).add(i)
        return index, Counter({w: len(d) for w, d in index.items()})

    # -- the three passes

    def locate(self, text: str) -> Location:
        """The span of ``text`` in the corpus, or an ``unlocated`` stand-in."""
        if text not in self._memo:
            self._memo[text] = self._locate(text)
        return self._memo[text]

    def _locate(self, text: str) -> Location:
        if text.strip():
            joined, starts = self._joined
            at = joined.find(text)
            if at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                more = joined.find(text, at + 1) >= 0
                return Location(self._ids[i], at - starts[i], at - starts[i] + len(text), "exact", 1.0,
                                2 if more else 1)
            norm = normalise(text)
            njoined, nstarts, docs = self._normalised
            at = njoined.find(norm)
            if at >= 0:
                i = bisect.bisect_right(nstarts, at) - 1
                more = njoined.find(norm, at + 1) >= 0
                local = at - nstarts[i]
                return Location(self._ids[i], docs[i].original(local), docs[i].original(local + len(norm), end=True),
                                "normalised", 1.0, 2 if more else 1)
            if self.fuzzy:
                found = self._fuzzy(norm)
                if found is not None and found.score >= self.threshold:
                    return found
                best = found.score if found is not None else 0.0
                return self._unlocated(text, best)
        return self._unlocated(text, 0.0)

    def _unlocated(self, text: str, score: float) -> Location:
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        return Location(f"unlocated:{digest}", 0, len(text), "unlocated", score, 0)

    def _candidates(self, norm: str) -> list[int]:
        """The documents sharing most (rarity-weighted) words with the context."""
        index, df = self._words
        votes: Counter[int] = Counter()
        for w in set(norm.split()):
            for i in index.get(w, ()):
                votes[i] += 1.0 / df[w]
        return [i for i, _ in votes.most_common(FUZZY_DOCS)]

    def _fuzzy(self, norm: str) -> Location | None:
        best: Location | None = None
        docs = self._normalised[2]
        for i in self._candidates(norm):
            found = _best_window(docs[i].text, norm)
            if found is None:
                continue
            score, lo, hi = found
            if best is None or score > best.score:
                best = Location(self._ids[i], docs[i].original(lo), docs[i].original(hi, end=True), "fuzzy", score)
        return best


def _best_window(doc: str, query: str) -> tuple[float, int, int] | None:
    """The span of ``doc`` most similar to ``query``: (ratio, start, end) in ``doc``'s offsets.

    Windows of ``len(query)`` characters are anchored at the matching blocks of the two texts
    (each block aligned as in the query), as fuzzywuzzy's ``partial_ratio`` does, with the same slack
    on both sides: a document re-encoded before or after the context was cut (a dash, a quote, an
    ellipsis of another length) shifts the anchor either way. The best window is trimmed to the span
    its solid matching blocks cover, then each end is moved over the query's unmatched edge
    (:func:`_edge`), so a span starts where the context starts even when its first characters were
    re-encoded. The score is difflib's ``ratio`` of the query against the span.
    """
    if not doc or not query:
        return None
    blocks = [b for b in difflib.SequenceMatcher(None, doc, query, autojunk=False).get_matching_blocks() if b.size]
    blocks = sorted(blocks, key=lambda b: -b.size)[:FUZZY_ANCHORS]
    best: tuple[float, int, int, int, int] | None = None
    n = len(query)
    slack = n // 10 + EDGE_SLACK
    tried: set[int] = set()
    for b in blocks:
        lo = max(0, min(b.a - b.b, len(doc) - n) - slack)
        if lo // 16 in tried:  # blocks of one alignment anchor (nearly) the same window
            continue
        tried.add(lo // 16)
        window = doc[lo:lo + n + 2 * slack]
        found = _solid_span(window, query)
        if found is not None and (best is None or found[0] > best[0]):
            score, first, last, q_first, q_last = found
            best = (score, lo + first, lo + last, q_first, q_last)
    if best is None:
        return None
    _, start, end, q_first, q_last = best
    start -= _edge(doc[max(0, start - q_first - EDGE_SLACK):start][::-1], query[:q_first][::-1])
    end += _edge(doc[end:end + (n - q_last) + EDGE_SLACK], query[q_last:])
    return difflib.SequenceMatcher(None, doc[start:end], query, autojunk=False).ratio(), start, end


def _solid_span(window: str, query: str) -> tuple[float, int, int, int, int] | None:
    """(approximate ratio, start, end in ``window``, start, end in ``query``) of the span of ``window``
    that the solid matching blocks (4 characters or more) cover; stray short matches do not stretch it."""
    blocks_in = [x for x in difflib.SequenceMatcher(None, window, query, autojunk=False).get_matching_blocks()
                 if x.size]
    solid = [x for x in blocks_in if x.size >= 4] or blocks_in
    if not solid:
        return None
    first, last = solid[0].a, solid[-1].a + solid[-1].size
    matched = sum(x.size for x in blocks_in if first <= x.a and x.a + x.size <= last)
    score = 2.0 * matched / (last - first + len(query))  # difflib's ratio of the query against the span
    return score, first, last, solid[0].b, solid[-1].b + solid[-1].size


def _edge(doc_side: str, query_side: str) -> int:
    """How many characters of ``doc_side`` the query's unmatched edge ``query_side`` covers (both read
    outwards from the matched part): the longest length whose :func:`_recoded_distance` to ``query_side``
    is least, when that distance is at most half the edge; 0 when the edge is long or unlike the text."""
    m = len(query_side)
    if not m or m > EDGE_MAX or not doc_side:
        return 0
    row = _recoded_distance(query_side, doc_side)
    least = min(row)
    if least > m / 2:
        return 0
    return max(j for j, d in enumerate(row) if d == least)


def _recoded_distance(query: str, doc: str) -> list[float]:
    """Edit distance of ``query`` to every prefix of ``doc`` (index = prefix length), with re-encoding
    priced low: one punctuation or space character for another (a straight for a curly quote, a dash for a
    dash) costs nothing, and adding or dropping one costs half; letters and digits cost 1."""
    def loose(c: str) -> bool:
        return not c.isalnum()

    row = [0.0]
    for dc in doc:
        row.append(row[-1] + (0.5 if loose(dc) else 1.0))
    for qc in query:
        drop_q = 0.5 if loose(qc) else 1.0
        prev, row[0] = row[0], row[0] + drop_q
        for j, dc in enumerate(doc, 1):
            swap = 0.0 if qc == dc or (loose(qc) and loose(dc)) else 1.0
            prev, row[j] = row[j], min(row[j] + drop_q, row[j - 1] + (0.5 if loose(dc) else 1.0), prev + swap)
    return row
