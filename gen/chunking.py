"""Chunkers that keep character offsets: every chunk satisfies ``doc.text[start:end] == chunk.text``.

Offsets are what make a test set independent of the chunking: relevance is span overlap, so the
same gold spans score a 256-character and a 1024-character chunking alike.

Options (each a Hydra ``chunker`` config):

- ``recursive``: langchain's ``RecursiveCharacterTextSplitter`` (size and overlap in characters).
- ``token``: windows of the embedder's own WordPiece tokens, cut at token offsets. langchain's
  ``TokenTextSplitter`` needs tiktoken files from the network and re-decodes token ids, which
  lower-cases text and loses the verbatim span, so the windows are cut here from the tokenizer's
  offset mapping instead.
- ``sentence``: sentences (nupunkt, model bundled, no download) packed greedily up to ``size``
  characters, with ``overlap`` sentences repeated between neighbours.
- ``structure``: by section of a Markdown or HTML document (:mod:`gen.layout`): whole sections packed up to
  ``size`` characters; a longer section is cut between its blocks, a code block is never cut (one longer
  than ``size`` is a chunk of its own), and prose longer than ``size`` falls back to the recursive splitter.
  A document without a layout (.txt, PDF, JSONL) is cut by the recursive splitter alone.
- ``none``: each document is one unit (for document-level datasets such as BEIR).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ragsweep.gen.documents import Document
from ragsweep.metrics import InputError


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit: ``text == document.text[start:end]``."""

    id: str
    doc_id: str
    start: int
    end: int
    text: str


def _spans_to_chunks(doc: Document, spans: Iterable[tuple[int, int]]) -> list[Chunk]:
    out: list[Chunk] = []
    for start, end in spans:
        if end > start and doc.text[start:end].strip():
            out.append(Chunk(f"{doc.id}#{start}-{end}", doc.id, start, end, doc.text[start:end]))
    return out


def _locate(doc: Document, pieces: Iterable[str], overlap: int) -> list[tuple[int, int]]:
    """Find each split piece in the document, in order.

    A piece overlaps its predecessor by at most ``overlap`` characters, so the search starts there:
    in repetitive text an earlier start would match the same characters at the wrong place.
    """
    spans: list[tuple[int, int]] = []
    cursor = 0
    for piece in pieces:
        start = doc.text.find(piece, cursor)
        if start < 0:  # a splitter that rewrote the text: never silently emit a wrong span
            raise RuntimeError(f"chunk text not found verbatim in {doc.id!r}: {piece[:60]!r}")
        spans.append((start, start + len(piece)))
        cursor = max(start + 1, start + len(piece) - overlap)
    return spans


class Chunker:
    """Base: subclasses implement :meth:`spans`; ``params`` go into the cache key."""

    name = "base"

    def params(self) -> dict[str, Any]:
        return {"name": self.name}

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        raise NotImplementedError

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.params(), sort_keys=True).encode()).hexdigest()[:16]

    def chunk(self, docs: Iterable[Document]) -> list[Chunk]:
        chunks: list[Chunk] = []
        for doc in docs:
            chunks.extend(_spans_to_chunks(doc, self.spans(doc)))
        if not chunks:
            raise InputError("the chunker produced no chunks: are the documents empty?")
        return chunks


def _whole_numbers(**values: Any) -> None:
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"chunker.{key} must be a whole number, got {value!r}")


def _check_size(size: int, overlap: int) -> None:
    _whole_numbers(size=size, overlap=overlap)
    if size <= 0:
        raise InputError(f"chunker.size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise InputError(f"chunker.overlap must be in [0, size), got {overlap} with size {size}")


class WholeDocument(Chunker):
    """Each document is one chunk."""

    name = "none"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        return [(0, len(doc.text))]


class RecursiveChunker(Chunker):
    """langchain's recursive character splitter: paragraphs, then lines, then words, then characters."""

    name = "recursive"

    def __init__(self, size: int = 512, overlap: int = 64, separators: list[str] | None = None) -> None:
        _check_size(size, overlap)
        self.size, self.overlap = size, overlap
        self.separators = list(separators) if separators else ["\n\n", "\n", ". ", " ", ""]

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "overlap": self.overlap, "separators": self.separators}

    @cached_property
    def _splitter(self) -> Any:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(chunk_size=self.size, chunk_overlap=self.overlap,
                                              separators=self.separators, keep_separator="end",
                                              strip_whitespace=True)

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        return _locate(doc, self._splitter.split_text(doc.text), self.overlap)


class SentenceChunker(Chunker):
    """Whole sentences packed up to ``size`` characters; ``overlap`` sentences shared by neighbours."""

    name = "sentence"

    def __init__(self, size: int = 512, overlap: int = 1) -> None:
        _whole_numbers(size=size, overlap=overlap)
        if size <= 0 or overlap < 0:
            raise InputError(f"sentence chunker needs size > 0 and overlap >= 0, got {size}, {overlap}")
        self.size, self.overlap = size, overlap

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "overlap": self.overlap, "splitter": "nupunkt"}

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        sents = sentence_spans(doc.text)
        out: list[tuple[int, int]] = []
        i = 0
        while i < len(sents):
            j = i + 1  # always take at least one sentence, even one longer than size
            while j < len(sents) and sents[j][1] - sents[i][0] <= self.size:
                j += 1
            out.append((sents[i][0], sents[j - 1][1]))
            if j >= len(sents):
                break
            i = max(i + 1, j - self.overlap)
        return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans (nupunkt), trimmed of surrounding white space; never empty for non-blank text.

    The sentence chunker, the test-set units and the extractive answerer use it. It is not the regex
    splitter of the no-LLM metrics (:func:`metrics.offline.sentences`), which re-joins what it
    splits at titles and initials and so gives no character offsets, and splits at every line
    break: it gives other sentences wherever a heading or a line break ends one, so test sets,
    sentence chunks and their cache keys would change. The metrics
    keep theirs for the reverse reason: their calibrated figures move with nupunkt.
    """
    import nupunkt

    out = []
    for start, end in nupunkt.sent_spans(text):
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if end - trail > start + lead:
            out.append((start + lead, end - trail))
    return out


# A sentence end with no space after it: two paragraphs joined without one ("... in Wyoming.Powder River is a
# tributary of ..."). nupunkt keeps such a pair as one sentence; corpora cut from Wikipedia glue paragraphs so,
# abstracts glue a section label now and then ("(SAP).Methods and Results"). The next word must be a capitalised word that ends there, so "Atf1.Pcr1" (a gene) and
# "U.S.Army" stay whole.
GLUED = re.compile(r"(?<=[a-z0-9)\]\"'”’])\.(?=[A-Z][a-z]*[a-z](?![\w.]))")


def unglued(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` cut after every glued sentence end inside them (:data:`GLUED`); the pieces cover each span.

    The test-set units use it, so a question's evidence is one sentence of one paragraph, not the end of one
    article and the start of another (which a writer asks about as if it were one). The
    sentence chunker does not: it packs sentences into chunks, where a glued pair moves a boundary by one
    sentence at most, and its cache keys and the published sweep figures stay as they are.
    """
    out = []
    for start, end in spans:
        cut = start
        for m in GLUED.finditer(text, start, end):
            out.append((cut, m.end()))
            cut = m.end()
        out.append((cut, end))
    return out


class TokenChunker(Chunker):
    """Windows of ``size`` tokens of the embedder's tokenizer, ``overlap`` tokens shared, cut at offsets."""

    name = "token"

    def __init__(self, size: int = 128, overlap: int = 16, tokenizer: str = "minilm") -> None:
        _check_size(size, overlap)
        self.size, self.overlap, self.tokenizer_name = size, overlap, tokenizer

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "overlap": self.overlap, "tokenizer": self.tokenizer_name}

    @cached_property
    def _tokenizer(self) -> Any:
        from ragsweep.metrics import load_tokenizer

        tok = load_tokenizer(self.tokenizer_name)
        tok.no_truncation()
        tok.no_padding()
        return tok

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        enc = self._tokenizer.encode(doc.text, add_special_tokens=False)
        offsets = [o for o in enc.offsets if o[1] > o[0]]
        out = []
        step = self.size - self.overlap
        for i in range(0, len(offsets), step):
            window = offsets[i : i + self.size]
            out.append((window[0][0], window[-1][1]))
            if i + self.size >= len(offsets):
                break
        return out


class StructureChunker(Chunker):
    """Sections of a Markdown or HTML document packed up to ``size`` characters, code blocks never cut."""

    name = "structure"

    def __init__(self, size: int = 1024, overlap: int = 64, merge: bool = True) -> None:
        _check_size(size, overlap)
        self.size, self.overlap, self.merge = size, overlap, bool(merge)

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "overlap": self.overlap, "merge": self.merge,
                "fallback": "recursive"}

    @cached_property
    def _fallback(self) -> RecursiveChunker:
        return RecursiveChunker(self.size, self.overlap)

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        if doc.layout is None:
            return self._fallback.spans(doc)
        text = doc.text
        cuts = sorted({0, *(b.start for b in doc.layout.of_kind("heading")), len(text)})
        sections = [t for s, e in zip(cuts, cuts[1:]) if (t := _trimmed(text, s, e))]
        code = [(b.start, b.end) for b in doc.layout.of_kind("code")]
        out: list[tuple[int, int]] = []
        for start, end in sections:
            if self.merge and out and end - out[-1][0] <= self.size:
                out[-1] = (out[-1][0], end)  # whole sections together while they fit
            elif end - start <= self.size:
                out.append((start, end))
            else:
                out.extend(self._section(doc, start, end, code))
        return out

    def _section(self, doc: Document, start: int, end: int, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """A section longer than ``size``: its code blocks whole, the prose between them packed (recursive
        splitter inside a stretch of prose longer than ``size``)."""
        pieces: list[tuple[int, int, bool]] = []
        at = start
        for cs, ce in code:
            if ce <= start or cs >= end:
                continue
            if (t := _trimmed(doc.text, at, cs)):
                pieces.append((*t, False))
            pieces.append((cs, ce, True))
            at = ce
        if (t := _trimmed(doc.text, at, end)):
            pieces.append((*t, False))
        out: list[tuple[int, int]] = []
        current: tuple[int, int] | None = None
        for ps, pe, is_code in pieces:
            if current and pe - current[0] <= self.size:
                current = (current[0], pe)
                continue
            if current:
                out.append(current)
            current = None
            if pe - ps <= self.size or is_code:
                current = (ps, pe)
            else:
                part = Document(doc.id, doc.text[ps:pe])
                out.extend((ps + s, ps + e) for s, e in self._fallback.spans(part))
        if current:
            out.append(current)
        return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``[start, end)`` without the white space at either end; None when it is all white space."""
    piece = text[start:end]
    body = piece.strip()
    if not body:
        return None
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(body)


CHUNKERS: dict[str, Callable[..., Chunker]] = {
    "none": WholeDocument,
    "recursive": RecursiveChunker,
    "sentence": SentenceChunker,
    "structure": StructureChunker,
    "token": TokenChunker,
}
