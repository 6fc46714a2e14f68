"""Test samples and their JSONL form (one object a line; loadable with ``datasets.load_dataset("json")``).

A line::

    {"id": "q001", "question": "...", "reference": "...",
     "evidence": [{"doc_id": "harbour.md", "start": 120, "end": 188, "text": "..."}],
     "kind": "single_hop", "provenance": {"backend": "human", ...}}

An ``unanswerable`` sample has ``"evidence": []`` and the reference ``"not in the knowledge base"``
(its answer is in no document; retrieval metrics are undefined on it, ``refusal`` scores the answer).

A sample written with ``reference_citations=true`` also has ``"reference_citations": [[0], [0, 1]]``: per
sentence of its reference, the 0-based indices of the ``evidence`` spans that sentence rests on
(:mod:`gen.citing`; an empty list: none found).

A sample of a conversation also has ``"conversation": [{"role": "user", "content": "..."}, ...]``,
whose last user turn is its ``question`` (read from Ragas and DeepEval multi-turn files, :mod:`gen.formats`;
written by ``ragsweep gen`` for ``follow_up`` samples, :mod:`gen.followup`). Its ``reference`` and
``evidence`` are those of the last user turn; the turns before it are the history.

``text`` inside an evidence item is optional; when present it must equal ``doc.text[start:end]``,
which :func:`check_against` verifies so a test set can never silently drift from its corpus.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsweep.gen.documents import Corpus, Span, iter_jsonl
from ragsweep.metrics import InputError

KINDS = ("single_hop", "multi_hop", "comparative", "conditional", "unanswerable", "follow_up")
#: The kind whose answer is not in the corpus: reference :data:`metrics.refusal.UNANSWERABLE`, no evidence.
UNANSWERABLE_KIND = "unanswerable"
#: The kind that is the second user turn of a conversation (:mod:`gen.followup`).
FOLLOW_UP_KIND = "follow_up"


@dataclass(frozen=True)
class TestSample:
    """A question with its reference answer and the exact evidence it came from."""

    __test__ = False  # not a pytest class

    id: str
    question: str
    reference: str
    evidence: tuple[Span, ...]
    kind: str = "single_hop"
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: the evidence texts as quoted in the file (None where not quoted), checked by check_against
    quotes: tuple[str | None, ...] = field(default=(), compare=False, repr=False)
    #: a conversation's turns, oldest first (``{"role": "user" | "assistant" | ..., "content", ...}``);
    #: ``question`` is its last user turn. Empty for a single question.
    conversation: tuple[Mapping[str, Any], ...] = ()
    #: per reference sentence, the 0-based indices into ``evidence`` of the spans it rests on
    #: (:mod:`gen.citing`); None: not written (``reference_citations`` off, or a file without it)
    reference_citations: tuple[tuple[int, ...], ...] | None = None

    def to_dict(self, corpus: Corpus | None = None) -> dict[str, Any]:
        ev = []
        for s in self.evidence:
            item = s.to_dict()
            if corpus is not None and s.doc_id in corpus:
                item["text"] = corpus.get(s.doc_id).text[s.start : s.end]
            ev.append(item)
        out = {"id": self.id, "question": self.question, "reference": self.reference,
               "evidence": ev, "kind": self.kind, "provenance": dict(self.provenance)}
        if self.conversation:
            out["conversation"] = [dict(t) for t in self.conversation]
        if self.reference_citations is not None:
            out["reference_citations"] = [list(c) for c in self.reference_citations]
        return out


def _conversation(path: Path, lineno: int, value: Any) -> tuple[Mapping[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(t, dict) and isinstance(t.get("role"), str)
                                              and isinstance(t.get("content"), str) for t in value):
        raise InputError(f"{path}, line {lineno}, column conversation: a list of turns, each with a string "
                         "role and content")
    return tuple(value)


def _reference_citations(path: Path, lineno: int, value: Any, n_evidence: int) -> tuple[tuple[int, ...], ...] | None:
    if value is None:
        return None
    where = f"{path}, line {lineno}, column reference_citations"
    if not isinstance(value, list) or not all(isinstance(c, list) for c in value):
        raise InputError(f"{where}: a list with one list of evidence indices per reference sentence")
    for c in value:
        for k in c:
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n_evidence:
                raise InputError(f"{where}: {k!r} is not an index of this row's {n_evidence} evidence spans "
                                 f"(0-based)")
    return tuple(tuple(c) for c in value)


def _span(path: Path, lineno: int, item: Any) -> tuple[Span, str | None]:
    if not isinstance(item, dict) or not {"doc_id", "start", "end"} <= item.keys():
        raise InputError(f"{path}, line {lineno}, column evidence: each item needs doc_id, start, end")
    start, end = item["start"], item["end"]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
        raise InputError(f"{path}, line {lineno}, column evidence: bad span [{start}, {end})")
    return Span(str(item["doc_id"]), start, end), item.get("text")


def read_testset(path: str | Path) -> list[TestSample]:
    """Read a test-set JSONL file; errors name the file, line and column."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: test set not found")
    samples: list[TestSample] = []
    seen: set[str] = set()
    for lineno, row in iter_jsonl(file):
        for col in ("id", "question", "evidence"):
            if col not in row:
                raise InputError(f"{file}, line {lineno}: missing column {col!r}")
        sid = str(row["id"])
        if sid in seen:
            raise InputError(f"{file}, line {lineno}, column id: {sid!r} appears twice")
        seen.add(sid)
        if not isinstance(row["evidence"], list) or not (row["evidence"] or row.get("kind") == UNANSWERABLE_KIND):
            raise InputError(f"{file}, line {lineno}, column evidence: needs at least one span "
                             f"(only kind {UNANSWERABLE_KIND!r} has none)")
        pairs = [_span(file, lineno, item) for item in row["evidence"]]
        samples.append(TestSample(sid, str(row["question"]), str(row.get("reference", "")),
                                  tuple(p[0] for p in pairs), str(row.get("kind", "single_hop")),
                                  row.get("provenance") or {}, tuple(p[1] for p in pairs),
                                  _conversation(file, lineno, row.get("conversation")),
                                  _reference_citations(file, lineno, row.get("reference_citations"), len(pairs))))
    if not samples:
        raise InputError(f"{file}: the test set is empty")
    return samples


def check_against(samples: Iterable[TestSample], corpus: Corpus, path: str = "test set") -> None:
    """Raise :class:`InputError` unless every span lies inside its document (and matches its quoted text)."""
    for s in samples:
        quotes = s.quotes or (None,) * len(s.evidence)
        for span, text in zip(s.evidence, quotes):
            if span.doc_id not in corpus:
                raise InputError(f"{path}, sample {s.id}: evidence names document {span.doc_id!r}, not in the corpus")
            doc = corpus.get(span.doc_id)
            if span.end > len(doc.text):
                raise InputError(f"{path}, sample {s.id}: span [{span.start}, {span.end}) runs past the end of {span.doc_id}")
            if text is not None and doc.text[span.start : span.end] != text:
                raise InputError(f"{path}, sample {s.id}: evidence text differs from {span.doc_id}[{span.start}:{span.end}]")


def write_testset(samples: Iterable[TestSample], path: str | Path, corpus: Corpus | None = None) -> Path:
    """Write samples as JSONL (atomically), with each span's text when the corpus is given."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(file.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(json.dumps(s.to_dict(corpus), ensure_ascii=False) + "\n")
    tmp.replace(file)
    return file


def samples_from_qrels(corpus: Corpus) -> list[TestSample]:
    """BEIR queries as test samples: no spans (relevance comes from the qrels), no reference."""
    assert corpus.queries is not None
    return [TestSample(q.id, q.text, "", (), "beir", {"backend": "qrels"}) for q in corpus.queries]
