"""How a question's words relate to other texts: to its evidence (support, copying, overlap with the
documents retrieval sees) and to the questions accepted before it (the duplicate gate)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ragsweep.gen.documents import Corpus
from ragsweep.gen.testset import TestSample
from ragsweep.metrics import content_words
from ragsweep.metrics.lexicon import QUESTION_STOP

#: Mean question-evidence overlap (:func:`lexical_overlap`) of people's questions, measured with
#: ``python benchmarks/validity.py --overlap-only`` on the dev splits (300 questions each).
HUMAN_OVERLAP = (("SciFact claims", 0.61), ("HotpotQA questions", 0.74))

_TOKEN = re.compile(r"\w+(?:[.,]\d+)*")


def tokens(text: str) -> list[str]:
    """Lower-cased word and number tokens ("184,000" stays one token)."""
    return [t.lower() for t in _TOKEN.findall(unicodedata.normalize("NFKC", text))]


def content_tokens(text: str) -> list[str]:
    return [t for t in tokens(text) if t not in QUESTION_STOP]


def normalise(text: str) -> str:
    """Lower case, accents and punctuation dropped, white space collapsed: the duplicate key."""
    stripped = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(tokens(stripped))


def _stem(tok: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(tok) > len(suffix) + 3 and tok.endswith(suffix):
            return tok[: -len(suffix)]
    return tok


def support_ratio(reference: str, evidence: str) -> float:
    """Share of the reference's content tokens found (as crude stems) in the evidence; 1.0 if it has none."""
    ref = content_tokens(reference)
    if not ref:
        return 1.0
    ev = {_stem(t) for t in content_tokens(evidence)} | {t for t in tokens(evidence)}
    return sum(1 for t in ref if t in ev or _stem(t) in ev) / len(ref)


def copy_ratio(question: str, evidence: str) -> float:
    """Longest run of evidence tokens copied into the question, as a share of the evidence's tokens."""
    q, e = tokens(question), tokens(evidence)
    if not q or not e:
        return 0.0
    best = 0
    prev = [0] * (len(e) + 1)
    for qt in q:
        cur = [0] * (len(e) + 1)
        for j, et in enumerate(e, 1):
            if qt == et:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best / len(e)


class Overlap(NamedTuple):
    """How much of a question's vocabulary its relevant documents hold."""

    share: float  # distinct content words of the question found in the documents / distinct content words
    shared: int   # how many distinct content words were found


def lexical_overlap(question: str, documents: Sequence[str]) -> Overlap | None:
    """The share of the question's distinct content words that occur in ``documents``; None if it has none.

    Words are :func:`metrics.offline.content_words` keys (stop words dropped, words cut to five letters,
    so "mutations" finds "mutation"). A question that copies its evidence scores near 1; people's
    questions on BEIR corpora score lower (:data:`HUMAN_OVERLAP`; see docs/trust/generated-test-sets.md,
    "How far to trust a generated test set"), and lexical retrievers gain from every copied word.
    """
    words = set(content_words(question))
    if not words:
        return None
    found = {w for w in words if any(w in _words(d) for d in documents)}
    return Overlap(len(found) / len(words), len(found))


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


def evidence_documents(sample: TestSample, corpus: Corpus) -> list[str]:
    """The texts of the whole documents a sample's evidence lies in, each once, in evidence order."""
    return [corpus.get(d).text for d in dict.fromkeys(s.doc_id for s in sample.evidence) if d in corpus]


def evidence_overlap(sample: TestSample, corpus: Corpus) -> Overlap | None:
    """:func:`lexical_overlap` of a sample's question with the whole documents its evidence lies in
    (as retrieval sees them, and as the qrels documents of human questions are measured)."""
    return lexical_overlap(sample.question, evidence_documents(sample, corpus))


class DuplicateFilter:
    """Rejects a question equal (normalised) or too close (embedding cosine) to an accepted one.

    Args:
        embed: texts -> L2-normalised rows (e.g. ``OnnxMiniLM().embed``), or None to check text only.
        threshold: Cosine at or above which two questions are near-duplicates.
    """

    def __init__(self, embed: Callable[[list[str]], np.ndarray] | None, threshold: float) -> None:
        self.embed, self.threshold = embed, threshold
        self.keys: set[str] = set()
        self.vectors: dict[str, np.ndarray] = {}  # normalised question -> its vector

    def check(self, question: str) -> tuple[str | None, np.ndarray | None]:
        """(reason or None, the question's vector to pass to :meth:`add`)."""
        if normalise(question) in self.keys:
            return "duplicate_text", None
        if self.embed is None:
            return None, None
        vec = np.asarray(self.embed([question]))[0]
        if self.vectors and float(np.max(np.stack(list(self.vectors.values())) @ vec)) >= self.threshold:
            return "duplicate_embedding", vec
        return None, vec

    def add(self, question: str, vec: np.ndarray | None) -> None:
        key = normalise(question)
        self.keys.add(key)
        if vec is not None:
            self.vectors.setdefault(key, vec)

    def discard(self, question: str) -> None:
        """Forget a question added before a later check turned it down."""
        key = normalise(question)
        self.keys.discard(key)
        self.vectors.pop(key, None)


