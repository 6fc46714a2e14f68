"""Context expansion: what a sweep passes on for each retrieved chunk (the ``context`` config group).

- ``chunks``: the chunk itself (the default; the pipeline then runs exactly as without this stage).
- ``window``: the chunk and its ``neighbours`` on each side in the same document, counted in
  chunks of the sweep's chunking or in sentences (nupunkt) -- the sentence window of LlamaIndex's
  ``SentenceWindowNodeParser``: search small units, read them with their surroundings.
- ``parent``: the enclosing paragraph, markdown section, or parent chunk of ``size`` characters
  (small-to-big, as in LangChain's ``ParentDocumentRetriever``): search small chunks, pass on the
  larger span that holds them.

Each chunk maps to one span of its document (always containing the chunk), computed once per
chunking and cached. In a ranking, a hit whose span lies inside one passed on at a better rank is
dropped (two children of one parent pass the parent once), so top-K counts distinct contexts.
Relevance is still span overlap, now of the span passed on; ``retriever.budget`` counts its
characters or tokens, and a span cut to fill the budget keeps its hit (see :meth:`Cut.passed`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragsweep.gen import Chunk, Document, RecursiveChunker, sentence_spans
from ragsweep.metrics import InputError

_HEADING = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)
_BLANK = re.compile(r"\n[ \t]*\n")


class Chunks:
    """Pass on each hit as it is (``context=chunks``)."""

    name = "chunks"

    def params(self) -> dict[str, Any]:
        return {"name": self.name}

    @property
    def expands(self) -> bool:
        return False

    def spans(self, doc: Document, chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
        """Per chunk of ``doc`` (sorted by start), the span passed on for it."""
        return [(c.start, c.end) for c in chunks]


class Window(Chunks):
    """The hit and ``neighbours`` chunks (or sentences) on each side, in the same document."""

    name = "window"

    def __init__(self, neighbours: int = 1, unit: str = "chunks") -> None:
        if isinstance(neighbours, bool) or not isinstance(neighbours, int) or neighbours < 0:
            raise InputError(f"context.neighbours must be an integer >= 0, got {neighbours!r}")
        if unit not in ("chunks", "sentences"):
            raise InputError(f"context.unit must be chunks or sentences, got {unit!r}")
        self.neighbours, self.unit = neighbours, unit

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "neighbours": self.neighbours, "unit": self.unit,
                **({"splitter": "nupunkt"} if self.unit == "sentences" else {})}

    @property
    def expands(self) -> bool:
        return self.neighbours > 0

    def spans(self, doc: Document, chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
        n = self.neighbours
        if self.unit == "chunks":
            return [(min(c.start for c in chunks[max(0, i - n): i + n + 1]),
                     max(c.end for c in chunks[max(0, i - n): i + n + 1])) for i in range(len(chunks))]
        sents = sentence_spans(doc.text) or [(0, len(doc.text))]
        out = []
        for c in chunks:
            touched = [i for i, (s, e) in enumerate(sents) if s < c.end and c.start < e]
            first, last = (touched[0], touched[-1]) if touched else _nearest(sents, c.start)
            out.append((min(c.start, sents[max(0, first - n)][0]), max(c.end, sents[min(len(sents) - 1, last + n)][1])))
        return out


class Parent(Chunks):
    """The paragraph, markdown section or parent chunk holding the hit (small-to-big)."""

    name = "parent"

    def __init__(self, by: str = "paragraph", size: int = 1024) -> None:
        if by not in ("paragraph", "section", "chunk"):
            raise InputError(f"context.by must be paragraph, section or chunk, got {by!r}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InputError(f"context.size must be a positive integer, got {size!r}")
        self.by, self.size = by, size

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "by": self.by, **({"size": self.size} if self.by == "chunk" else {})}

    @property
    def expands(self) -> bool:
        return True

    def parents(self, doc: Document) -> list[tuple[int, int]]:
        """The document's parent spans, in order, trimmed of surrounding white space."""
        text = doc.text
        if self.by == "chunk":
            return RecursiveChunker(self.size, 0).spans(doc) or [(0, len(text))]
        cuts = [m.start() for m in _HEADING.finditer(text)] if self.by == "section" else \
            [m.end() for m in _BLANK.finditer(text)]
        bounds = sorted({0, *cuts, len(text)})
        out = []
        for s, e in zip(bounds, bounds[1:]):
            piece = text[s:e]
            if piece.strip():
                out.append((s + len(piece) - len(piece.lstrip()), e - (len(piece) - len(piece.rstrip()))))
        return out or [(0, len(text))]

    def spans(self, doc: Document, chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
        parents = self.parents(doc)
        out = []
        for c in chunks:
            # A chunk across a paragraph break passes on both paragraphs; one in the white space
            # between two passes on the nearest.
            held = [p for p in parents if p[0] < c.end and c.start < p[1]] or [parents[_nearest(parents, c.start)[0]]]
            out.append((min(c.start, held[0][0]), max(c.end, held[-1][1])))
        return out


def _nearest(spans: Sequence[tuple[int, int]], pos: int) -> tuple[int, int]:
    """(i, i) for the span whose start is closest to ``pos``."""
    i = min(range(len(spans)), key=lambda j: abs(spans[j][0] - pos))
    return i, i


def expand(context: Chunks, docs: Sequence[Document], chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
    """The span passed on for every chunk (positions as in ``chunks``), document by document."""
    by_doc: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        by_doc.setdefault(c.doc_id, []).append(i)
    texts = {d.id: d for d in docs}
    out: list[tuple[int, int]] = [(c.start, c.end) for c in chunks]
    for doc_id, positions in by_doc.items():
        positions.sort(key=lambda i: (chunks[i].start, chunks[i].end))
        spans = context.spans(texts[doc_id], [chunks[i] for i in positions])
        for i, span in zip(positions, spans):
            out[i] = span
    return out


def distinct(spans: Sequence[tuple[str, int, int]]) -> list[int]:
    """Positions of a ranking to keep: each span unless it lies inside one kept at a better rank."""
    kept: list[int] = []
    for i, (d, s, e) in enumerate(spans):
        if not any(spans[j][0] == d and spans[j][1] <= s and e <= spans[j][2] for j in kept):
            kept.append(i)
    return kept
