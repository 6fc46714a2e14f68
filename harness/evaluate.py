"""The judged-relevant set of a sample under one chunking (span relevance).

A retrieved chunk is relevant when it overlaps a gold span (the rule itself lives in
``metrics.retrieval.judged_gains``). The judged-relevant set of a sample is every chunk *of this
chunking* that overlaps a gold span, so recall, nDCG and MAP have the usual trec_eval meaning for
each chunking. The sweep records its size in each run record (``n_relevant``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ragsweep.gen.chunking import Chunk
from ragsweep.gen.testset import TestSample


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
