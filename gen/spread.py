"""A question whose answer stands in more than one place of its section (issue #34): ``spread_answer``.

A writer shown one step of a procedure, one cause of several, or one tab of two writes a question about the whole
("How do I change storage backends?") and answers it from the part it was shown. Its reference is right about
that part and wrong as an answer: a reader of the page would give the other steps, causes or the other tab too,
or instead. No word list finds this: the question's wording is the section's, not the part's.

The check reads where the answer could stand, not how it is worded. The question is set against every piece of
its evidence's section (each sentence of a paragraph, list item or admonition; a code block or table whole), by
embedding cosine, the way a retriever would set it. When a piece outside the evidence matches the question as
well as the best piece of the evidence does, less a margin, the question does not pick out its evidence within
its own section: it asks for the section, or for the part the writer was not shown. This is the round-trip
consistency filter of generated questions (a question must find its own passage first, as in PAQ and
Promptagator), taken inside one page, where docs questions go wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.documents import Corpus, Document
from ragsweep.gen.units import Unit

#: Blocks read whole (their sentences mean little alone) and the characters of one kept for its vector.
_WHOLE = ("code", "table", "html")
_WHOLE_CHARS = 1000
#: A piece shorter than this many characters (a label, a lone command word) is not set against the question.
_MIN_CHARS = 20
#: At most this many pieces of a section are embedded (the nearest to the evidence first): a reference page's
#: one section can hold hundreds.
_MAX_PIECES = 120


@dataclass(frozen=True)
class Spread:
    """The evidence's best cosine with the question, the best of the rest of its section, and that piece."""

    evidence: float
    rival: float
    rival_text: str


def _pieces(doc: Document, start: int, end: int) -> list[tuple[int, int]]:
    """The pieces of ``doc.text[start:end]``: each sentence of its prose blocks, each code block or table whole."""
    assert doc.layout is not None
    out: list[tuple[int, int]] = []
    whole = [b for b in doc.layout.blocks if b.kind in _WHOLE and start <= b.start and b.end <= end]
    for b in whole:
        out.append((b.start, min(b.end, b.start + _WHOLE_CHARS)))
    prose = [b for b in doc.layout.blocks if b.kind in ("paragraph", "list_item", "admonition")
             and start <= b.start and b.end <= end]
    for b in prose:
        for s, e in sentence_spans(doc.text[b.start:b.end]):
            s, e = b.start + s, b.start + e
            if not any(w.start <= s < w.end for w in whole):
                out.append((s, e))
    seen, kept = set(), []
    for s, e in sorted(out):
        if (s, e) not in seen and len(doc.text[s:e].strip()) >= _MIN_CHARS:
            seen.add((s, e))
            kept.append((s, e))
    return kept


def _section(doc: Document, start: int) -> tuple[int, int]:
    """The deepest section of ``doc`` holding offset ``start``, or the whole page when no heading is above it."""
    assert doc.layout is not None
    held = [s for s in doc.layout.sections() if s.start <= start < s.end]
    if not held:
        return 0, len(doc.text)
    deepest = max(held, key=lambda s: s.level)
    return deepest.start, deepest.end


def spread_answer(corpus: Corpus, evidence: tuple[Unit, ...], question: str,
                  embed: Callable[[list[str]], np.ndarray]) -> Spread | None:
    """The question's cosine with its evidence and with the rest of the evidence's section (:class:`Spread`), or
    None when there is nothing to set it against: evidence over several pages, a page without a layout, no piece
    of the section outside the evidence."""
    docs = {u.doc_id for u in evidence}
    if len(docs) != 1 or not question.strip():
        return None
    doc = corpus.get(next(iter(docs))) if next(iter(docs)) in corpus else None
    if doc is None or doc.layout is None:
        return None
    first = min(u.start for u in evidence)
    lo, hi = _section(doc, first)
    mine = [(u.start, u.end) for u in evidence]

    def inside(s: int, e: int) -> bool:
        return any(s < ue and us < e for us, ue in mine)

    pieces = _pieces(doc, min(lo, first), max(hi, max(u.end for u in evidence)))
    own = [p for p in pieces if inside(*p)] or mine
    rest = sorted((p for p in pieces if not inside(*p)), key=lambda p: abs(p[0] - first))[:_MAX_PIECES]
    if not rest:
        return None
    texts = [doc.text[s:e] for s, e in (*own, *rest)]
    vecs = np.asarray(embed([question, *texts]))
    cos = vecs[1:] @ vecs[0]
    e_best = float(np.max(cos[:len(own)]))
    k = int(np.argmax(cos[len(own):]))
    return Spread(e_best, float(cos[len(own) + k]), texts[len(own) + k])
