"""Per-sample retrieval scores for one variant at one K.

Relevance is decided here, once, and the metric functions only see gains:

- **Span mode** (a test set with evidence spans): a retrieved chunk is relevant when it overlaps a
  gold span. The judged-relevant set of a sample is every chunk *of this chunking* that overlaps a
  gold span, so recall, nDCG and MAP have the usual trec_eval meaning for each chunking, and the
  character-level span recall / precision / IoU compare chunkings on the same footing.
- **Qrels mode** (BEIR-style datasets): document-level judgements. Chunks are collapsed to their
  document (its best-ranked chunk), then scored against the qrels grades.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ragsweep.gen.chunking import Chunk
from ragsweep.gen.testset import TestSample
from ragsweep.harness.records import Retrieved
from ragsweep.metrics.retrieval import RANK_METRICS, span_char_metrics, span_gains
from ragsweep.metrics.values import MetricValue

SPAN_METRICS = ("span_recall", "span_precision", "span_iou")


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


def dedupe_documents(retrieved: Sequence[Retrieved]) -> list[Retrieved]:
    """Keep each document's best-ranked chunk, in rank order (max-passage aggregation)."""
    seen: set[str] = set()
    out = []
    for r in retrieved:
        if r.doc_id not in seen:
            seen.add(r.doc_id)
            out.append(r)
    return out


def _rank_scores(gains: list[float], ideal: list[float], k: int, why: str,
                 retrieved_ids: list[str]) -> dict[str, MetricValue]:
    if not any(g > 0 for g in ideal):
        return {name: MetricValue.undefined(why) for name in RANK_METRICS}
    out = {name: MetricValue.ok(fn(gains, k, ideal)) for name, fn in RANK_METRICS.items()}
    # The evidence behind every rank metric of the sample, kept once (on hit@k).
    hits = [i for i, g in zip(retrieved_ids, gains) if g > 0]
    out["hit"] = MetricValue.ok(out["hit"].value or 0.0, relevant_retrieved=hits, n_relevant=len(ideal))
    return out


def score_spans(sample: TestSample, retrieved: Sequence[Retrieved], k: int,
                locator: ChunkLocator) -> dict[str, MetricValue]:
    """Rank metrics plus character-level span metrics for the top ``k`` chunks."""
    top = list(retrieved[:k])
    gold = [(g.doc_id, g.start, g.end) for g in sample.evidence]
    got = [(r.doc_id, r.start, r.end) for r in top]
    gains = span_gains(got, gold)
    n_rel = locator.n_relevant(sample)
    out = _rank_scores(gains, [1.0] * n_rel, k, "no chunk of this chunking overlaps the evidence",
                       [r.chunk_id for r in top])
    recall, precision, iou = span_char_metrics(got, gold)
    out.update(span_recall=MetricValue.ok(recall), span_precision=MetricValue.ok(precision),
               span_iou=MetricValue.ok(iou))
    return out


def score_qrels(judged: dict[str, int], retrieved: Sequence[Retrieved], k: int) -> dict[str, MetricValue]:
    """Rank metrics for the top ``k`` distinct documents against document-level judgements."""
    docs = dedupe_documents(retrieved)[:k]
    gains = [float(max(judged.get(r.doc_id, 0), 0)) for r in docs]
    ideal = [float(v) for v in judged.values() if v > 0]
    return _rank_scores(gains, ideal, k, "the query has no positive judgement", [r.doc_id for r in docs])
