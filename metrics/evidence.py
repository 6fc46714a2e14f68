"""Evidence per claim: the few context sentences that bear on one claim, and nothing else.

A judge shown whole passages reads everything in them, instructions to a grader included, and a
small judge is pulled by what it reads. Shown only the sentences that are *about the claim* -- the
ones that share its words, numbers and names, or sit close to it in MiniLM's space -- it never
sees text about something else, whatever that text says or in whatever language it says it. The
defence therefore does not depend on any phrasing: a sentence is shown for what it shares with
the claim, not withheld for what it looks like.

Selection, per claim (with the question when the claim is short: a bare "1871" is about what the
question asks):

- every context sentence gets a relevance = its MiniLM cosine to the claim + the share of the
  claim's content keys (words, numbers, names; :func:`metrics.offline.content_words`) it holds;
- the :data:`TOP` best are kept when they hold at least one of the claim's (or the question's)
  content keys, or their cosine is at least :data:`MIN_COSINE`;
- each kept sentence brings the sentence before it in the same passage when that one also shares a
  key with the claim or the question: "It rises 473 metres" needs the sentence that names "it".

The sentences keep their passage order and are numbered from 1 in what the judge sees; the
explanation lists them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragsweep.metrics import offline

#: Sentences kept per claim (before their antecedents are added).
TOP = 3
#: A sentence that shares no content key with the claim or the question is kept only this close
#: to the claim (a paraphrase in other words); below it, it is about something else.
MIN_COSINE = 0.55
#: A claim with at most this many content keys of its own is read with the question's keys too.
SHORT_CLAIM = 3


@dataclass(frozen=True)
class Sentence:
    """One context sentence: the passage it is in (0-based), its place there, its text."""

    passage: int
    position: int
    text: str


class EvidencePool:
    """The contexts of one sample split into sentences, their keys and (lazily) their embeddings,
    shared by every claim judged against them."""

    def __init__(self, contexts: Sequence[str], embedder: object | None = None) -> None:
        self.sentences = [Sentence(p, i, s) for p, ctx in enumerate(contexts)
                          for i, s in enumerate(offline.sentences(ctx))]
        self.keys = [keys_of(s.text) for s in self.sentences]
        self._embedder = embedder
        self._vectors: np.ndarray | None = None

    def vectors(self) -> np.ndarray | None:
        if self._embedder is None or not self.sentences:
            return None
        if self._vectors is None:
            self._vectors = np.asarray(self._embedder.embed([s.text for s in self.sentences]))  # type: ignore[attr-defined]
        return self._vectors

    def select(self, claim: str, question: str | None = None, top: int = TOP) -> list[Sentence]:
        """The sentences that bear on ``claim``, in passage order (see the module docstring)."""
        if not self.sentences:
            return []
        own, asked = keys_of(claim), keys_of(question or "")
        keys = own | asked if len(own - asked) <= SHORT_CLAIM else own
        vectors = self.vectors()
        cosine = np.zeros(len(self.sentences))
        if vectors is not None:
            query = claim if keys is own else f"{question} {claim}"
            cosine = vectors @ np.asarray(self._embedder.embed([query]))[0]  # type: ignore[union-attr]
        shared = [len(keys & k) for k in self.keys]
        relevance = [c + (n / len(keys) if keys else 0.0) for c, n in zip(cosine, shared)]
        order = sorted(range(len(self.sentences)), key=lambda i: -relevance[i])
        chosen = [i for i in order[:top] if shared[i] > 0 or cosine[i] >= MIN_COSINE]
        related = own | asked
        for i in list(chosen):
            prev = i - 1
            if (prev >= 0 and prev not in chosen and self.sentences[prev].passage == self.sentences[i].passage
                    and related & self.keys[prev]):
                chosen.append(prev)
        return [self.sentences[i] for i in sorted(chosen)]


def keys_of(text: str) -> set[str]:
    """The content keys of a text (:func:`metrics.offline.content_words`), and its character bigrams
    outside the Latin script: a claim in Chinese, Japanese, Thai or Arabic has no Latin content word,
    and its characters are what it shares with the sentences about it."""
    return set(offline.content_words(text)) | offline.script_grams(text)


#: A statement's content word missing from the contexts is still covered by a context word this close
#: to it in MiniLM's space ("finished" by "completed", "construction" by "built").
SAME_WORD = 0.55


def close_words(words: Sequence[str], passages: Sequence[str], embedder: object) -> dict[str, str]:
    """Each of ``words`` (lower-case words the contexts lack) with the lower-case context word
    :data:`SAME_WORD`-close to it in MiniLM's space, the closest one; words with none are left out."""
    ctx = {offline._content_key(t): t for t in offline._TOKEN.findall(" ".join(passages)) if t.islower()}
    ctx.pop(None, None)
    if not words or not ctx:
        return {}
    found = list(ctx.values())
    vecs = np.asarray(embedder.embed([*words, *found]))  # type: ignore[attr-defined]
    sims = vecs[: len(words)] @ vecs[len(words):].T
    return {w: found[int(row.argmax())] for w, row in zip(words, sims) if float(row.max()) >= SAME_WORD}


def _missing_words(statement: str, question: str | None, passages: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """The statement's content words (key -> token) that the question does not give, and those of them
    the contexts do not hold."""
    given = set(offline.content_words(question or ""))
    words: dict[str, str] = {}
    for tok in offline._TOKEN.findall(statement):
        key = offline._content_key(tok)
        if key is not None and key not in given:
            words.setdefault(key, tok)
    held = set(offline.content_words(" ".join(passages)))
    return words, [w for k, w in words.items() if k not in held]


def semantic_coverage(statement: str, question: str | None, passages: Sequence[str], embedder: object) -> float:
    """The share of ``statement``'s content words (those the question does not give) that the contexts
    hold, in its words or in a :data:`SAME_WORD`-close word: the coverage of :mod:`metrics.offline` with
    paraphrase allowed for lower-case words. Numbers and names count only as themselves: "Cuba" is not
    covered by "Haiti"."""
    words, missing = _missing_words(statement, question, passages)
    if not words:
        return 1.0
    close = close_words([w for w in missing if w.islower()], passages, embedder)
    return 1 - len([w for w in missing if w not in close]) / len(words)


def read_in_context_words(statement: str, question: str | None, passages: Sequence[str],
                          embedder: object) -> tuple[str, dict[str, str]]:
    """``statement`` with each content word the contexts lack replaced by the context word
    :data:`SAME_WORD`-close to it (:func:`close_words`), and what was replaced.

    The word evidence of :mod:`metrics.offline` counts words only as themselves, so a right answer
    in other words ("Construction of the tower was finished in 1804" for "... completed in 1804")
    scores as if it held words the contexts never state. Read in the contexts' own words, coverage,
    the best sentence's share and the relation check see the paraphrase as what it says. Only
    lower-case words are replaced, and a capitalised first word the contexts never use as a name
    (it is capitalised for its place); numbers and names count only as themselves, so a swapped
    value stays what it is."""
    _, missing = _missing_words(statement, question, passages)
    names = offline.names(" ".join(passages))
    first = next(iter(offline._TOKEN.findall(statement)), "")
    asked = [w for w in missing if w.islower() or (w == first and offline._key(w) not in names)]
    close = close_words([w.lower() for w in asked], passages, embedder)
    out, read = statement, {}
    for word in asked:
        other = close.get(word.lower())
        if other is None:
            continue
        if word[0].isupper():
            other = other[0].upper() + other[1:]
        out = re.sub(rf"(?<![\w'\-]){re.escape(word)}(?![\w'\-])", other, out)
        read[word] = other
    return out, read
