"""Documents, evidence spans, queries and the corpus that holds them (no reader here).

The readers (:mod:`gen.documents` for folders, JSONL and BEIR; :mod:`gen.ragas_kg` for a Ragas
knowledge graph) build a :class:`Corpus` from these types. Document text is kept exactly as read,
because evidence spans and chunk offsets are character offsets into it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ragsweep.gen.duplicates import Duplicates, find_duplicates, group_grades
from ragsweep.gen.layout import Layout
from ragsweep.metrics import InputError

log = logging.getLogger("ragsweep.gen.documents")

SHOWN_EMPTY = 10  # empty files named in logs and reports (all are counted)


@dataclass(frozen=True)
class Document:
    """One source document. ``text`` is what spans and chunk offsets index into.

    A document read from Markdown or HTML has a ``layout`` (:mod:`ragsweep.gen.layout`): its source file, its
    blocks and sections, and the map from ``text`` (the clean text) back to source offsets; others have none.
    """

    id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    layout: Layout | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Span:
    """A half-open character range ``[start, end)`` of ``Document.text``."""

    doc_id: str
    start: int
    end: int

    def overlaps(self, doc_id: str, start: int, end: int) -> bool:
        """True when ``[start, end)`` of ``doc_id`` shares at least one character with this span."""
        return self.doc_id == doc_id and start < self.end and self.start < end

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Query:
    """A query that comes with a dataset (BEIR ``queries.jsonl``)."""

    id: str
    text: str


@dataclass
class Corpus:
    """Documents plus, for BEIR-style datasets, queries and document-level judgements, and the copies
    found among the documents when they were read (:mod:`ragsweep.gen.duplicates`)."""

    documents: list[Document]
    source: str
    queries: list[Query] | None = None
    qrels: dict[str, dict[str, int]] | None = None  # query id -> doc id -> graded relevance
    duplicates: Duplicates | None = None
    empty: tuple[str, ...] = ()  # files skipped because they hold no text (whitespace only)

    def __post_init__(self) -> None:
        self._by_id = {d.id: d for d in self.documents}

    def get(self, doc_id: str) -> Document:
        return self._by_id[doc_id]

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._by_id

    def originals(self) -> Corpus:
        """This corpus without the copies of its documents (itself when it has none, or with ``duplicates=keep``):
        what a test set is written from, so that no question is pinned to one of several copies."""
        if self.duplicates is None or not self.duplicates.active:
            return self
        docs = [d for d in self.documents if d.id not in self.duplicates.original]
        return Corpus(docs, self.source, duplicates=self.duplicates, empty=self.empty)

    def report(self) -> dict[str, Any]:
        """What a generation report and a sweep summary record of how the corpus was read: the copies
        among its documents and the empty files left out (no entry for what did not happen)."""
        out: dict[str, Any] = {}
        if self.duplicates is not None:
            out["duplicates"] = self.duplicates.summary()
        if self.empty:
            out["empty_files"] = {"count": len(self.empty), "files": list(self.empty[:SHOWN_EMPTY])}
        return out

    def fingerprint(self) -> str:
        """sha256 over ids and texts in order: the cache key of everything built from this corpus.

        A document read with its structure (Markdown, HTML) adds its blocks: ``chunker=structure`` cuts by them,
        and the same text read as written (``corpus.markup=text``) has none."""
        h = hashlib.sha256()
        for d in self.documents:
            h.update(d.id.encode())
            h.update(b"\0")
            h.update(d.text.encode())
            h.update(b"\1")
            if d.layout is not None:
                h.update(repr([(b.kind, b.start, b.end, b.level) for b in d.layout.blocks]).encode())
                h.update(b"\2")
        return h.hexdigest()


def check_documents(docs: list[Document], where: str) -> list[Document]:
    if not docs:
        raise InputError(f"{where}: the corpus has no documents")
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise InputError(f"{where}: document id {d.id!r} appears twice")
        seen.add(d.id)
    return docs


def with_duplicates(corpus: Corpus, mode: str = "equal", near: float | None = 0.9) -> Corpus:
    """``corpus`` with its copies found, logged and handled as ``mode`` says (``drop``: copies removed,
    and the qrels judge each group once, on its original). See :mod:`ragsweep.gen.duplicates`."""
    dups = find_duplicates(corpus.documents, mode, near)
    (log.warning if dups.original else log.info)("%s", dups.message(corpus.source))
    if mode != "drop" or not dups.original:
        return replace(corpus, duplicates=dups)
    docs = [d for d in corpus.documents if d.id not in dups.original]
    qrels = None if corpus.qrels is None else {q: group_grades(j, dups) for q, j in corpus.qrels.items()}
    return replace(corpus, documents=docs, qrels=qrels, duplicates=dups)
