"""Copies among a corpus's documents: exact and near duplicates, and where a span of a copy lies in its original.

- **Exact**: the same text up to case and whitespace (sha1 of the lower-cased text with every run of
  whitespace made one space).
- **Near**: Jaccard similarity of the two texts' sets of character 5-grams (of the same normalised
  text) at or above a threshold, 0.9 by default: one word changed in a 400-character passage scores
  about 0.95, two unrelated passages below 0.2. Candidates come from MinHash signatures (64 hash
  functions) split into 8 bands of 8 rows (a pair at 0.9 shares a band with probability 0.99, a pair
  at 0.5 with 0.03); every candidate is then confirmed on its exact 5-gram sets, so no pair below the
  threshold is ever reported. Runs in numpy.

Copies form groups (pairs are joined transitively); a group's **original** is its first document in
corpus order and every other member is a **copy** of it. How copies count is the corpus option
``duplicates``: ``equal`` (a copy is as relevant as its original, and the group is found once),
``drop`` (only originals are kept) or ``keep`` (documents as read; the copies are only reported).
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragsweep.metrics import InputError

log = logging.getLogger(__name__)

MODES = ("equal", "drop", "keep")
SHINGLE = 5  # characters (bytes of UTF-8) per shingle
BANDS, ROWS = 8, 8  # 64 MinHash functions
_SEED = 20240519
_WORD = re.compile(r"\S+")


def normalise(text: str) -> str:
    """Lower case, every run of whitespace one space, no leading or trailing space."""
    return " ".join(text.lower().split())


def _shingles(norm: str) -> np.ndarray:
    """The 5-byte shingles of a normalised text in text order (repeats kept), each packed into a uint64."""
    b = np.frombuffer(norm.encode("utf-8"), dtype=np.uint8).astype(np.uint64)
    if len(b) < SHINGLE:  # a text shorter than one shingle is its own single shingle
        return np.array([int.from_bytes(norm.encode("utf-8").ljust(SHINGLE, b"\0"), "big")], dtype=np.uint64)
    n = len(b) - SHINGLE + 1
    v = np.zeros(n, dtype=np.uint64)
    for i in range(SHINGLE):
        v = (v << np.uint64(8)) | b[i:i + n]
    return v


def _signatures(shingles: Sequence[np.ndarray]) -> np.ndarray:
    """MinHash signatures, one row per document: min over its shingles of ``(a*x + b) >> 32`` (mod 2**64)."""
    rng = np.random.default_rng(_SEED)
    a = rng.integers(1, 2**63, size=BANDS * ROWS, dtype=np.uint64) | np.uint64(1)  # odd multipliers
    c = rng.integers(0, 2**63, size=BANDS * ROWS, dtype=np.uint64)
    flat = np.concatenate(shingles)
    starts = np.cumsum([0] + [len(s) for s in shingles[:-1]])
    sig = np.empty((len(shingles), BANDS * ROWS), dtype=np.uint64)
    h = np.empty_like(flat)
    with np.errstate(over="ignore"):  # multiply-shift hashing wraps on purpose
        for p in range(BANDS * ROWS):
            np.multiply(flat, a[p], out=h)
            np.add(h, c[p], out=h)
            np.right_shift(h, np.uint64(32), out=h)
            sig[:, p] = np.minimum.reduceat(h, starts)
    return sig


def _jaccard(x: np.ndarray, y: np.ndarray) -> float:
    x, y = np.unique(x), np.unique(y)
    shared = np.intersect1d(x, y, assume_unique=True).size
    return shared / (x.size + y.size - shared)


class _Groups:
    """Union-find over document positions; the root of a set is its smallest position (corpus order)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        ri, rj = self.find(i), self.find(j)
        if ri != rj:
            self.parent[max(ri, rj)] = min(ri, rj)


def _near_pairs(shingles: list[np.ndarray], threshold: float) -> list[tuple[int, int]]:
    """Pairs of positions whose 5-gram Jaccard is >= threshold (LSH candidates, confirmed exactly)."""
    if len(shingles) < 2:
        return []
    sig = _signatures(shingles)
    groups = _Groups(len(shingles))
    pairs = []
    for band in range(BANDS):
        buckets: dict[bytes, list[int]] = {}
        for i, row in enumerate(sig[:, band * ROWS:(band + 1) * ROWS]):
            buckets.setdefault(row.tobytes(), []).append(i)
        for members in buckets.values():
            # Each member is compared with the bucket's leaders (members not yet matched), not with
            # every other member, so a bucket of thousands of near-identical pages stays linear.
            leaders: list[int] = []
            for i in members:
                for lead in leaders:
                    if groups.find(i) == groups.find(lead):
                        break
                    if _jaccard(shingles[i], shingles[lead]) >= threshold:
                        groups.join(i, lead)
                        pairs.append((lead, i))
                        break
                else:
                    leaders.append(i)
    return pairs


@dataclass
class Duplicates:
    """The copies found in a corpus and what the corpus option ``duplicates`` makes of them.

    Attributes:
        mode: ``equal``, ``drop`` or ``keep`` (see the module docstring).
        threshold: The near-duplicate Jaccard threshold; None: exact copies only.
        original: Each copy's id -> its group's original (first in corpus order).
        kind: Each copy's id -> ``exact`` or ``near`` (near: not the same text up to case and whitespace).
        n_documents: Documents read, copies included.
        seconds: Time the detection took.
    """

    mode: str
    threshold: float | None
    original: dict[str, str]
    kind: dict[str, str]
    n_documents: int
    seconds: float
    texts: dict[str, str] = field(default_factory=dict, repr=False)  # every group member's text, for alignment
    _maps: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def active(self) -> bool:
        """Whether copies change anything (``equal`` or ``drop`` with at least one copy)."""
        return self.mode != "keep" and bool(self.original)

    def original_of(self, doc_id: str) -> str:
        """The document ``doc_id`` stands for: its original when it is a copy (and the mode is not ``keep``)."""
        return doc_id if self.mode == "keep" else self.original.get(doc_id, doc_id)

    def groups(self) -> list[list[str]]:
        """Each group of copies, original first, in corpus order of the originals."""
        out: dict[str, list[str]] = {}
        for copy, orig in self.original.items():
            out.setdefault(orig, [orig]).append(copy)
        return list(out.values())

    def summary(self) -> dict[str, Any]:
        """What the sweep's ``summary.json`` and the test-set report record."""
        groups = self.groups()
        return {"mode": self.mode, "near_threshold": self.threshold, "documents": self.n_documents,
                "copies": len(self.original), "exact": sum(k == "exact" for k in self.kind.values()),
                "near": sum(k == "near" for k in self.kind.values()), "groups": len(groups),
                "largest_group": max((len(g) for g in groups), default=0),
                "examples": [g[:4] for g in groups[:5]], "seconds": round(self.seconds, 3)}

    def message(self, source: str) -> str:
        s = self.summary()
        if not s["copies"]:
            return f"{source}: no duplicate documents among {s['documents']} ({s['seconds']:.1f} s)"
        examples = "; ".join(" = ".join(g[:3]) + (" ..." if len(g) > 3 else "") for g in s["examples"][:3])
        effect = {"equal": "a copy counts as its original", "drop": "copies dropped",
                  "keep": "copies kept as separate documents"}[self.mode]
        return (f"{source}: {s['copies']} of {s['documents']} documents are copies ({s['exact']} exact, "
                f"{s['near']} near) in {s['groups']} groups, e.g. {examples}; duplicates={self.mode}: {effect}")

    def map_span(self, doc_id: str, start: int, end: int) -> tuple[str, int, int] | None:
        """Where ``[start, end)`` of a copy lies in its original, word by word; None when none of its
        words is in the original (or ``doc_id`` is not a copy)."""
        orig = self.original.get(doc_id)
        if orig is None:
            return None
        if self.texts[doc_id] == self.texts[orig]:
            return orig, start, end
        words_a, words_b, pairs = self._alignment(doc_id)
        matched = [(i, j) for i, j in pairs if words_a[i][1] > start and words_a[i][0] < end]
        if not matched:
            return None
        (i0, j0), (i1, j1) = matched[0], matched[-1]
        b0, b1 = words_b[j0], words_b[j1]
        # A span starting or ending inside a word starts or ends at the same place in its counterpart.
        new_start = b0[0] + min(max(start - words_a[i0][0], 0), b0[1] - b0[0])
        new_end = b1[0] + min(max(end - words_a[i1][0], 0), b1[1] - b1[0])
        return orig, new_start, max(new_end, new_start)

    def _alignment(self, doc_id: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
        """The copy's and the original's words (as offsets) and the matched pairs ``(i, j)``, once per copy."""
        if doc_id not in self._maps:
            a, b = self.texts[doc_id], self.texts[self.original[doc_id]]
            words_a = [(m.start(), m.end()) for m in _WORD.finditer(a)]
            words_b = [(m.start(), m.end()) for m in _WORD.finditer(b)]
            wa = [a[s:e].lower() for s, e in words_a]
            wb = [b[s:e].lower() for s, e in words_b]
            if wa == wb:
                pairs = [(i, i) for i in range(len(wa))]
            else:
                blocks = difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_matching_blocks()
                pairs = [(blk.a + k, blk.b + k) for blk in blocks for k in range(blk.size)]
            self._maps[doc_id] = (words_a, words_b, pairs)
        return self._maps[doc_id]


def find_duplicates(documents: Sequence[Any], mode: str = "equal", near: float | None = 0.9) -> Duplicates:
    """Find the copies among ``documents`` (objects with ``id`` and ``text``), in corpus order.

    Args:
        documents: The corpus's documents.
        mode: ``equal``, ``drop`` or ``keep``: recorded for the readers and the harness.
        near: Jaccard threshold on character 5-gram sets for near copies, in (0, 1]; None: exact only.

    Raises:
        InputError: On an unknown mode or a threshold outside (0, 1].
    """
    if mode not in MODES:
        raise InputError(f"corpus.duplicates must be one of {', '.join(MODES)}, got {mode!r}")
    if near is not None and (isinstance(near, bool) or not isinstance(near, (int, float)) or not 0 < near <= 1):
        raise InputError(f"corpus.near_duplicates must be a Jaccard threshold in (0, 1] or null, got {near!r}")
    started = time.perf_counter()
    first: dict[str, int] = {}  # normalised-text hash -> position of its first document
    original: dict[str, str] = {}
    kind: dict[str, str] = {}
    distinct: list[int] = []
    norms: list[str] = []
    for pos, doc in enumerate(documents):
        norm = normalise(doc.text)
        key = hashlib.sha1(norm.encode("utf-8")).hexdigest()
        if key in first:
            original[doc.id] = documents[first[key]].id
            kind[doc.id] = "exact"
        else:
            first[key] = pos
            distinct.append(pos)
            norms.append(norm)
    if near is not None and len(distinct) > 1:
        shingles = [_shingles(n) for n in norms]
        groups = _Groups(len(distinct))
        for i, j in _near_pairs(shingles, float(near)):
            groups.join(i, j)
        near_of = {distinct[k]: distinct[groups.find(k)] for k in range(len(distinct)) if groups.find(k) != k}
        for pos, root in near_of.items():
            original[documents[pos].id] = documents[root].id
            kind[documents[pos].id] = "near"
        # An exact copy of a near copy belongs to the near copy's group.
        for copy, orig in list(original.items()):
            original[copy] = original.get(orig, orig)
    order = {d.id: i for i, d in enumerate(documents)}
    original = dict(sorted(original.items(), key=lambda kv: order[kv[0]]))
    members = set(original) | set(original.values())
    texts = {d.id: d.text for d in documents if d.id in members}
    return Duplicates(mode, None if near is None else float(near), original, kind, len(documents),
                      time.perf_counter() - started, texts)


def group_grades(qrels: Mapping[str, int], dups: Duplicates) -> dict[str, int]:
    """Document judgements with each group of copies judged once, on its original, at its best grade."""
    out: dict[str, int] = {}
    for doc, grade in qrels.items():
        orig = dups.original_of(doc)
        out[orig] = max(out.get(orig, grade), grade)
    return out
