"""What a structured document (Markdown, HTML) keeps besides its clean text: the source, where each
piece of clean text came from, and its blocks (headings, paragraphs, code, tables, ...).

A reader that understands a format gives :class:`~ragsweep.gen.corpus.Document` a clean ``text`` (what
chunks, evidence spans and question writers see) and a :class:`Layout`. Spans stay offsets into the clean
text, as everywhere else; :meth:`Layout.to_source` maps one back to the original file, so evidence can be
shown where a reader of the docs would find it.

The clean text is plain text with two marks kept on purpose, because they are structure the words alone
cannot carry and every consumer of ``text`` (chunkers, ``context=parent by=section``, the topic of a
document, an LLM writer) already reads them: a heading is a line ``#``-times-level, a space and its title,
and a code block keeps its ``````` fences (with the language). Everything else of the markup (emphasis,
link targets, HTML tags, attributes, include directives, admonition markers, front matter) is left out.
"""

from __future__ import annotations

import bisect
from array import array
from dataclasses import dataclass, field

#: Block kinds a reader records. ``include`` is an empty block where a directive that pulls in another file
#: stood (MkDocs ``{* path hl[9] *}``); its ``info`` is the directive's text.
BLOCK_KINDS = ("heading", "paragraph", "list_item", "code", "table", "html", "admonition", "include")
#: Blocks whose text is not prose: the structure-aware chunker keeps them whole and question writers that
#: ask about sentences leave them out.
NOT_PROSE = ("code", "table", "include")


@dataclass(frozen=True)
class Block:
    """A block of the clean text: ``[start, end)``; ``level`` for headings; ``info``: a heading's title, a
    code block's language, an admonition's type and title, an include directive's target."""

    kind: str
    start: int
    end: int
    level: int = 0
    info: str = ""


@dataclass(frozen=True)
class Section:
    """A heading and what follows it up to the next heading of the same or a higher level:
    ``[start, end)`` of the clean text; ``path``: the titles from the top-level heading down to this one."""

    start: int
    end: int
    level: int
    path: tuple[str, ...]

    @property
    def title(self) -> str:
        return self.path[-1] if self.path else ""


@dataclass(frozen=True)
class Layout:
    """The source of a structured document, its blocks, and the map from clean text to source offsets.

    The map is a list of segments: clean ``[c, c + n)`` came from source ``[s, s + m)``; ``n == m`` means
    character for character (``verbatim``), otherwise the whole piece stands for the whole source range
    (an entity ``&amp;`` read as ``&``, a soft line break read as a space, a ``- `` list marker or a
    table's `` | `` written by the reader: then ``m`` may be 0).
    """

    format: str                       # markdown | html
    source: str                       # the file's text as read
    blocks: tuple[Block, ...]
    clean_starts: array = field(repr=False, compare=False)  # c of each segment, increasing
    clean_lens: array = field(repr=False, compare=False)
    source_starts: array = field(repr=False, compare=False)
    source_lens: array = field(repr=False, compare=False)

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """The source range ``[s, e)`` that the clean range ``[start, end)`` came from (the smallest
        range that holds every segment the clean range touches)."""
        if end <= start:
            p = self._source_at(start, first=True)
            return p, p
        s, e = self._source_at(start, first=True), self._source_at(end - 1, first=False)
        # A reader writes in source order, so s <= e; in broken markup (a list marker placed before text the
        # parser moved) the order can turn: the range then still holds both ends.
        return (s, e) if s <= e else (e, s)

    def _source_at(self, pos: int, first: bool) -> int:
        i = bisect.bisect_right(self.clean_starts, pos) - 1
        if i < 0:
            return self.source_starts[0] if len(self.source_starts) else 0
        c, n, s, m = self.clean_starts[i], self.clean_lens[i], self.source_starts[i], self.source_lens[i]
        if pos >= c + n:  # between segments (a separator the reader wrote): the end of the one before
            return s + m
        if n == m:
            return s + (pos - c) + (0 if first else 1)
        return s if first else s + m

    def sections(self) -> list[Section]:
        """The document's sections, in order (a heading's section ends where the next heading of the same
        or a higher level starts)."""
        heads = [b for b in self.blocks if b.kind == "heading"]
        end_of_text = max((b.end for b in self.blocks), default=0)
        out: list[Section] = []
        path: list[tuple[int, str]] = []
        for i, h in enumerate(heads):
            while path and path[-1][0] >= h.level:
                path.pop()
            path.append((h.level, h.info))
            end = next((g.start for g in heads[i + 1:] if g.level <= h.level), end_of_text)
            out.append(Section(h.start, end, h.level, tuple(t for _, t in path)))
        return out

    def section_path(self, pos: int) -> tuple[str, ...]:
        """The heading titles over clean offset ``pos`` (outermost first); ``()`` before the first heading."""
        held = [s for s in self.sections() if s.start <= pos < s.end]
        return max(held, key=lambda s: s.level).path if held else ()

    def of_kind(self, *kinds: str) -> list[Block]:
        return [b for b in self.blocks if b.kind in kinds]


class TextBuilder:
    """Clean text written piece by piece, each piece with the source range it came from."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.clean_starts, self.clean_lens = array("q"), array("q")
        self.source_starts, self.source_lens = array("q"), array("q")
        self._exact = False  # the last segment is a verbatim copy (only those grow by merging)

    def verbatim(self, text: str, source_start: int) -> None:
        """``text`` as it stands in the source at ``source_start``."""
        if not text:
            return
        n = len(text)
        if (self._exact and self.clean_starts[-1] + self.clean_lens[-1] == self.length
                and self.source_starts[-1] + self.source_lens[-1] == source_start):
            self.clean_lens[-1] += n
            self.source_lens[-1] += n
        else:
            self._segment(n, source_start, n)
        self._exact = True
        self._append(text)

    def replaced(self, text: str, source_start: int, source_end: int) -> None:
        """``text`` standing for source ``[source_start, source_end)`` as a whole (an entity, a marker)."""
        if not text:
            return
        # The same length as the source reads character for character in to_source (a soft break "\n"
        # read as " "): harmless, and exact for a span that starts or ends inside it.
        self._segment(len(text), source_start, source_end - source_start)
        self._exact = False
        self._append(text)

    def _segment(self, n: int, s: int, m: int) -> None:
        self.clean_starts.append(self.length)
        self.clean_lens.append(n)
        self.source_starts.append(s)
        self.source_lens.append(m)

    def _append(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def text(self) -> str:
        return "".join(self.parts)

    def layout(self, format: str, source: str, blocks: list[Block]) -> Layout:
        return Layout(format, source, tuple(blocks), self.clean_starts, self.clean_lens,
                      self.source_starts, self.source_lens)
