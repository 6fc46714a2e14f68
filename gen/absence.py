"""The absence gate of ``unanswerable`` questions: is the answer really in no document of the corpus?

A document can answer a question only if it is about the same specific things: it names every
**anchor** of the question (its names, numbers, years and dates: "Wrenmouth", "2014", "1.4 metres")
and states the asked relation. So a candidate is rejected (``answer_in_corpus``) when some document
names all its anchors and

- **words**: holds at least ``cover`` of the question's content words (:func:`question_words`;
  stop words and the wh-phrase's nouns "year", "date", "number", "name" left out), or at least
  ``about_cover`` (0.5) when the document is about them (names every anchor in its opening), or
- **embedding** (when an embedder is given): holds a sentence whose cosine with the question is at
  least ``max_cosine`` (the packaged MiniLM), which catches an answer worded otherwise.

A question without anchors must pass both checks against every document. The check runs over the
whole corpus, not only the documents questions are drawn from (``max_docs``). The embedding check
reads the ``top_docs`` documents with the most question words among those naming every anchor; a
paraphrase in a document sharing almost no word with the question is the case it can miss.

The gate is strict on purpose: a false rejection costs one candidate, a false acceptance teaches a
test set to punish a correct answer.

The word index (:class:`CorpusWords`) also serves the specificity gate of every other kind
(:func:`unspecific`): a question all of whose words another document holds does not say which
document it asks about.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.documents import Corpus
from ragsweep.gen.units import answer_phrases
from ragsweep.metrics import STOP, content_words
from ragsweep.metrics.lexicon import SENTENCE_OPENERS, WH_NOUNS


def question_words(question: str) -> set[str]:
    """The question's content-word keys (:func:`metrics.offline.content_words`) without :data:`WH_NOUNS`."""
    return set(content_words(question)) - WH_NOUNS


def anchors(question: str, names: frozenset[str] = frozenset()) -> set[str]:
    """Content-word keys of the question's names, numbers, years and dates.

    ``names``: keys the corpus writes capitalised inside a sentence; a capitalised first word of
    the question counts as a name only when it is one of them ("Greaves led ..."), since every
    question starts with a capital.
    """
    found = {k for p in answer_phrases(question) for k in content_words(p.text) if k not in WH_NOUNS}
    first = re.match(r"[A-Z][\w'-]*", question.strip())
    if first and first.group(0) not in SENTENCE_OPENERS and first.group(0).lower() not in STOP:
        key = content_words(first.group(0))
        if key and key[0] in names:
            found.add(key[0])
    return found


class CorpusWords:
    """Each document's content-word keys (:func:`metrics.offline.content_words`), the inverted index of
    them, and the keys the corpus writes capitalised inside a sentence (its names). Built once per corpus
    and shared by the absence and the specificity gates."""

    def __init__(self, corpus: Corpus) -> None:
        self.words: dict[str, frozenset[str]] = {}
        self.index: dict[str, set[str]] = {}
        names: set[str] = set()
        for doc in corpus.documents:
            words = frozenset(content_words(doc.text))
            self.words[doc.id] = words
            for w in words:
                self.index.setdefault(w, set()).add(doc.id)
            names.update(content_words(" ".join(re.findall(r"(?<=[a-z,;] )[A-Z][\w'-]*", doc.text))))
        self.names = frozenset(names)

    def holding_all(self, words: set[str]) -> set[str]:
        """The documents that hold every one of ``words`` (none for an empty set)."""
        if not words:
            return set()
        postings = sorted((self.index.get(w, set()) for w in words), key=len)
        return set.intersection(*postings) if postings[0] else set()


def unspecific(question: str, evidence_docs: set[str], words: CorpusWords) -> str | None:
    """Another document than ``evidence_docs`` that holds every content word of ``question`` (the first
    by id), or None. Such a question does not say which document it asks about: "When was the album
    released?", "What is a hairless breed of dog?", "Where were studies identified using systematic
    database searches?" (packaged 1.5B). People rarely write one: mostly short claims that a second abstract
    also covers."""
    others = words.holding_all(set(content_words(question))) - evidence_docs
    return min(others) if others else None


@dataclass(frozen=True)
class Absence:
    """The verdict on one question, with what it was based on (kept in the sample's provenance)."""

    reason: str | None       # "answer_in_corpus" or None (absent)
    anchors: tuple[str, ...]
    cover: float             # the best share of question words in a document naming every anchor
    cover_doc: str | None
    cosine: float | None     # the best cosine of a sentence of such a document (None: no embedder)
    cosine_doc: str | None
    check: str | None        # "words" or "embedding": which check rejected it

    def to_dict(self) -> dict[str, object]:
        return {"anchors": list(self.anchors), "cover": round(self.cover, 3), "cover_doc": self.cover_doc,
                "cosine": None if self.cosine is None else round(self.cosine, 3), "cosine_doc": self.cosine_doc}


class AbsenceCheck:
    """Checks that no document of ``corpus`` answers a question (see the module docstring).

    Args:
        corpus: The whole knowledge base.
        embed: texts -> L2-normalised rows (``OnnxMiniLM().embed``); None: the word check only.
        cover: Share of the question's content words a document naming every anchor may hold.
        max_cosine: Cosine at which a sentence of such a document counts as answering.
        top_docs: Documents (most question words first) whose sentences the embedding check reads.
        about_cover: The share for a document about the question's anchors (it names them all in its
            first 80 characters): such a document answers with fewer of the question's words.
    """

    def __init__(self, corpus: Corpus, embed: Callable[[list[str]], np.ndarray] | None = None, *,
                 cover: float = 0.75, max_cosine: float = 0.8, top_docs: int = 20, about_cover: float = 0.5,
                 words: CorpusWords | None = None) -> None:
        self.corpus, self.embed = corpus, embed
        self.cover, self.max_cosine, self.top_docs = cover, max_cosine, top_docs
        self.about_cover = min(about_cover, cover)
        self.table = words or CorpusWords(corpus)
        self.words, self.index, self.names = self.table.words, self.table.index, self.table.names
        self._vectors: dict[str, np.ndarray] = {}  # document id -> its sentences' rows

    def check(self, question: str) -> Absence:
        """The verdict: ``reason`` None when no document answers ``question``."""
        words = question_words(question)
        anchor = anchors(question, self.names) & words
        if anchor:
            docs = self.table.holding_all(anchor)
        else:
            docs = set().union(*(self.index.get(w, set()) for w in words)) if words else set()
        shared = Counter({d: len(words & self.words[d]) for d in docs})
        ranked = sorted(docs, key=lambda d: (-shared[d], d))
        best_doc = ranked[0] if ranked else None
        best = shared[best_doc] / len(words) if best_doc is not None and words else 0.0
        if best >= self.cover:
            return Absence("answer_in_corpus", tuple(sorted(anchor)), best, best_doc, None, None, "words")
        # A document about the question's anchor (it names them all in its opening) answers more with
        # fewer shared words: "What year was the film Breach released?" against "Breach is a 2007
        # American ... film" shares 2 of 3.
        if anchor and words:
            for d in ranked:
                if shared[d] / len(words) < self.about_cover:
                    break
                if anchor <= set(content_words(self.corpus.get(d).text[:80])):
                    return Absence("answer_in_corpus", tuple(sorted(anchor)), shared[d] / len(words), d,
                                   None, None, "words")
        cosine, cosine_doc = self._closest(question, ranked[: self.top_docs])
        reason = "answer_in_corpus" if cosine is not None and cosine >= self.max_cosine else None
        return Absence(reason, tuple(sorted(anchor)), best, best_doc, cosine, cosine_doc,
                       "embedding" if reason else None)

    def _closest(self, question: str, doc_ids: list[str]) -> tuple[float | None, str | None]:
        """The best cosine between the question and a sentence of ``doc_ids``, and its document."""
        if self.embed is None:
            return None, None
        todo = [d for d in doc_ids if d not in self._vectors]
        texts = [[self.corpus.get(d).text[s:e] for s, e in sentence_spans(self.corpus.get(d).text)] for d in todo]
        flat = [t for doc in texts for t in doc]
        rows = np.asarray(self.embed(flat)) if flat else np.zeros((0, 0))
        at = 0
        for d, doc in zip(todo, texts):
            self._vectors[d] = rows[at: at + len(doc)]
            at += len(doc)
        q = np.asarray(self.embed([question]))[0]
        best, best_doc = 0.0, None
        for d in doc_ids:
            if len(self._vectors[d]) and (c := float(np.max(self._vectors[d] @ q))) > best:
                best, best_doc = c, d
        return best, best_doc
