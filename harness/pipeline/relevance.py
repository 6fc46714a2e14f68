"""The judged-relevant set of a sample under one chunking (span relevance).

A retrieved chunk is relevant when it overlaps a gold span (the rule itself lives in
``metrics.retrieval.judged_gains``). The judged-relevant set of a sample is every chunk *of this
chunking* that overlaps a gold span, so recall, nDCG and MAP have the usual trec_eval meaning for
each chunking. The sweep records its size in each run record (``n_relevant``). Copies of a
document count as one relevance unit (the second half of this module).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ragsweep.gen import Chunk, Corpus, Span, TestSample, group_grades
from ragsweep.harness.records import Retrieved
from ragsweep.metrics import InputError


class ChunkLocator:
    """Finds, per document, the chunks that overlap a span (chunks of a document sorted by start)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._by_doc: dict[str, list[tuple[int, int]]] = {}
        for c in chunks:
            self._by_doc.setdefault(c.doc_id, []).append((c.start, c.end))
        for spans in self._by_doc.values():
            spans.sort()
        self._max_len = {d: max(e - s for s, e in v) for d, v in self._by_doc.items()}

    def overlapping(self, doc_id: str, start: int, end: int) -> set[tuple[int, int]]:
        spans = self._by_doc.get(doc_id, [])
        # Any overlapping chunk starts after start - max_len and before end.
        lo = bisect.bisect_left(spans, (start - self._max_len.get(doc_id, 0), -1))
        hi = bisect.bisect_left(spans, (end, -1))
        return {(s, e) for s, e in spans[lo:hi] if s < end and start < e}

    def n_relevant(self, sample: TestSample) -> int:
        found: set[tuple[str, int, int]] = set()
        for g in sample.evidence:
            found.update((g.doc_id, s, e) for s, e in self.overlapping(g.doc_id, g.start, g.end))
        return len(found)


# ---- Copies of documents (corpus option ``duplicates``): a group of copies is one relevance unit ----
#
# With ``duplicates=equal`` (the default) a copy is as relevant as its original, and a group of copies
# is found once: evidence on a copy is restated on its original (:func:`restate`), so the
# judged-relevant set holds the original's chunks only; a retrieved chunk of a copy stands for the
# original's chunk with the most of its text (:func:`stand_ins`); and a chunk standing for one
# already passed on gains nothing (``metrics.retrieval.credit_once``). Six identical documents
# therefore count as one: finding any of them at rank 1 is hit@1 = nDCG = 1, and finding all six
# adds nothing. With document judgements (qrels) each group is judged once, on its original, at its
# best grade, and its copies collapse onto it as a document's chunks do. With ``duplicates=drop``
# the copies are not indexed at all, and evidence and qrels on them move to the original the same way.


def restate(samples: Sequence[TestSample], corpus: Corpus, where: str = "test set") -> list[TestSample]:
    """``samples`` with evidence on a copy moved onto its original (``duplicates=equal`` or ``drop``).

    A quoted evidence text is checked against the copy it was quoted from before the span moves.
    Evidence on a part of a near copy that its original lacks stays where it is.
    """
    dups = corpus.duplicates
    if dups is None or not dups.active:
        return list(samples)
    out = []
    for s in samples:
        quotes = s.quotes or (None,) * len(s.evidence)
        spans, kept_quotes, moved = [], [], False
        for span, quote in zip(s.evidence, quotes):
            mapped = dups.map_span(span.doc_id, span.start, span.end)
            if mapped is None:
                spans.append(span)
                kept_quotes.append(quote)
                continue
            text = dups.texts[span.doc_id]
            if span.end > len(text) or (quote is not None and text[span.start:span.end] != quote):
                raise InputError(f"{where}, sample {s.id}: evidence text differs from "
                                 f"{span.doc_id}[{span.start}:{span.end}]")
            spans.append(Span(*mapped))
            kept_quotes.append(None)
            moved = True
        out.append(replace(s, evidence=tuple(spans), quotes=tuple(kept_quotes)) if moved else s)
    return out


def stand_ins(retrieved: Sequence[Retrieved], corpus: Corpus, locator: ChunkLocator | None = None, *,
              by_document: bool = False) -> list[Retrieved]:
    """The ranking with each chunk of a copy marked with what it stands for (``Retrieved.same_as``).

    That is the span of the original its text maps to (:meth:`Duplicates.map_span`); with a locator,
    the original's chunk with the most of it, so a copy's chunk and its original's are the same item
    to the metrics. When none of its words is in the original, a chunk stands for nothing (span
    relevance) or for the whole original (``by_document``: document judgements).
    """
    dups = corpus.duplicates
    if dups is None or dups.mode != "equal" or not dups.original:
        return list(retrieved)
    out = []
    for r in retrieved:
        orig = dups.original.get(r.doc_id)
        if orig is None:
            out.append(r)
            continue
        mapped = dups.map_span(r.doc_id, r.start, r.end)
        if mapped is None:
            same = (orig, 0, len(dups.texts[orig])) if by_document else None
        else:
            same = mapped
            if locator is not None:
                _, s, e = mapped
                best = max(locator.overlapping(orig, s, e), default=None,
                           key=lambda c: (min(c[1], e) - max(c[0], s), -c[0]))
                if best is not None:
                    same = (orig, *best)
        out.append(replace(r, same_as=same))
    return out


def copy_grades(qrels: Mapping[str, int], corpus: Corpus) -> dict[str, int]:
    """Document judgements with each group of copies judged once, on its original (``duplicates=equal``)."""
    dups = corpus.duplicates
    if dups is None or dups.mode != "equal" or not dups.original:
        return dict(qrels)
    return group_grades(qrels, dups)
