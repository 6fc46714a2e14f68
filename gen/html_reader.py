"""HTML -> clean text and :class:`~ragsweep.gen.layout.Layout`: the visible text, headings, lists, tables and code.

The standard library's ``html.parser`` reads it, not selectolax or BeautifulSoup: it reports where in the
source each tag, text run and entity starts (``getpos``), which is what maps clean text back to source offsets,
it is lenient with broken markup, and it adds no dependency (selectolax is faster, but hides source
positions; BeautifulSoup's html.parser backend is this parser with a tree on top). Its speed on 10,000 pages:
``benchmarks/results/2026-11-25-doc-readers.md``.

What is visible: text outside ``script``, ``style``, ``template``, ``head``, ``svg``, ``nav`` (a docs site's
menu repeats on every page) and elements marked ``hidden`` or ``aria-hidden``. White space collapses as a
browser does, except inside ``pre``. Headings become ``#`` lines, list items ``- `` lines, table rows
cells joined by `` | ``, ``pre`` a fenced code block (its language from a ``language-*`` class).
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any

from ragsweep.gen.layout import Block, Layout, TextBuilder

_SKIP = {"script", "style", "template", "head", "svg", "nav", "noscript", "iframe", "object"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "dd", "dt",
           "dl", "figure", "figcaption", "form", "fieldset", "details", "summary", "address", "ul", "ol",
           "li", "table", "thead", "tbody", "tfoot", "tr", "caption", "pre", "body", "html", *_HEADINGS}
_IRREGULAR = re.compile(r"\s{2,}|[^\S ]")  # white space a browser collapses: more than one, or not a space
_LANG = re.compile(r"\b(?:language|lang)-([\w+#.-]+)")


def html_text(source: str) -> tuple[str, Layout, dict[str, Any]]:
    """The clean text of an HTML page, its layout, and metadata (``page_title``: the ``<title>``)."""
    builder = TextBuilder()
    reader = HtmlBlocks(builder, source, 0)
    reader.feed(source)
    reader.close()
    meta = {"page_title": reader.page_title} if reader.page_title else {}
    return builder.text(), builder.layout("html", source, reader.blocks), meta


class HtmlBlocks(HTMLParser):
    """Writes the visible text of ``source`` (which starts at ``base`` of the document) into ``builder``,
    block by block; the blocks it wrote are in :attr:`blocks`. The Markdown reader uses it for HTML blocks."""

    def __init__(self, builder: TextBuilder, source: str, base: int) -> None:
        super().__init__(convert_charrefs=False)
        self.b, self.src, self.base = builder, source, base
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        self.blocks: list[Block] = []
        self._title_parts: list[str] = []
        self._skip: list[str] = []        # the skipped element and its nesting depth
        self._skip_depth = 0
        self._title = False
        self._pre = 0
        self._lang = ""
        self._open: list[str] = []        # block elements open
        self._pieces: list[tuple[str, int, int]] = []  # text, source start, end (end - start == len: verbatim)
        self._kind: tuple[str, int, str] = ("paragraph", 0, "")
        self._row_cells = 0
        self._table_start: int | None = None
        self._last = ""                   # kind of the last block written (separators)
        self._lists: list[int] = []       # per open ul / ol: 0, or the next number of an ol
        self._items: list[str] = []       # per open li: its marker ("- ", "2. "), "" once written

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        # Python 3.11's parser raises AssertionError on a "<![word" it does not know; a browser skips it
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i)
            return len(self.rawdata) if end < 0 else end + 1

    # -- positions ---------------------------------------------------------
    def _pos(self) -> int:
        line, col = self.getpos()
        return self.base + self.line_starts[line - 1] + col

    # -- tags --------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":  # inside the skipped head: kept as metadata, not as text
            self._title = True
            return
        if self._skip:
            if tag == self._skip[0] and tag not in _VOID:
                self._skip_depth += 1
            return
        a = dict(attrs)
        if tag in _SKIP or "hidden" in a or a.get("aria-hidden") == "true" \
                or "display:none" in (a.get("style") or "").replace(" ", ""):
            if tag not in _VOID:
                self._skip, self._skip_depth = [tag], 1
            return
        if tag == "br":
            self._pieces.append(("\n" if self._pre else " ", self._pos(), self._pos()))
            return
        if tag not in _BLOCKS and tag not in ("td", "th"):
            if tag == "code" and self._pre and not self._lang:
                self._lang = self._language(a)
                self._kind = self._kind_of()
            return
        if tag in ("td", "th"):
            if self._row_cells:
                self._pieces.append((" | ", self._pos(), self._pos()))
            self._row_cells += 1
            return
        self._flush()
        self._open.append(tag)
        if tag == "pre":
            self._pre += 1
            self._lang = self._language(a)
        elif tag == "table":
            self._table_start = None
        elif tag == "tr":
            self._row_cells = 0
        elif tag in ("ul", "ol"):
            start = a.get("start") or "1"
            self._lists.append(int(start) if tag == "ol" and start.isdigit() else 0)
        elif tag == "li":
            number = self._lists[-1] if self._lists else 0
            if number:
                self._lists[-1] += 1
            self._items.append(f"{number}. " if number else "- ")
        self._kind = self._kind_of()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br" and not self._skip:
            self._pieces.append(("\n" if self._pre else " ", self._pos(), self._pos()))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._title = False
            return
        if self._skip:
            if tag == self._skip[0]:
                self._skip_depth -= 1
                if not self._skip_depth:
                    self._skip = []
            return
        if tag not in _BLOCKS or tag not in self._open:
            return
        self._flush()
        while self._open:
            top = self._open.pop()
            if top in ("ul", "ol") and self._lists:
                self._lists.pop()
            if top == "li" and self._items:
                self._items.pop()
            if top == "pre":
                self._pre -= 1
            if top == "table" and self._table_start is not None:
                self.blocks.append(Block("table", self._table_start, self.b.length))
                self._table_start = None
            if top == tag:
                break
        self._kind = self._kind_of()

    def _kind_of(self) -> tuple[str, int, str]:
        for tag in reversed(self._open):
            if tag == "pre":
                return ("code", 0, self._lang)
            if tag in _HEADINGS:
                return ("heading", _HEADINGS[tag], "")
            if tag == "li":
                return ("list_item", 0, "")
            if tag in ("tr", "table"):
                return ("row", 0, "")
        return ("paragraph", 0, "")

    @staticmethod
    def _language(attrs: dict[str, str | None]) -> str:
        m = _LANG.search(attrs.get("class") or "")
        return m.group(1) if m else ""

    # -- text --------------------------------------------------------------
    def handle_data(self, data: str) -> None:
        if self._title:
            self._title_parts.append(data)
            return
        if not self._skip:
            self._pieces.append((data, self._pos(), self._pos() + len(data)))

    def handle_entityref(self, name: str) -> None:
        self._reference(f"&{name}")

    def handle_charref(self, name: str) -> None:
        self._reference(f"&#{name}")

    def _reference(self, raw: str) -> None:
        if self._skip and not self._title:
            return
        start = self._pos()
        end = start + len(raw) + (1 if self.src[start - self.base + len(raw):][:1] == ";" else 0)
        text = html.unescape(self.src[start - self.base:end - self.base])
        if self._title:
            self._title_parts.append(text)
            return
        self._pieces.append((" " if text == "\xa0" and not self._pre else text, start, end))

    @property
    def page_title(self) -> str:
        return " ".join("".join(self._title_parts).split())

    def close(self) -> None:
        super().close()
        self._flush()
        if self._table_start is not None:
            self.blocks.append(Block("table", self._table_start, self.b.length))

    # -- writing a block ---------------------------------------------------
    def _flush(self) -> None:
        pieces, self._pieces = self._pieces, []
        kind, level, info = self._kind
        runs = _pre_runs(pieces) if kind == "code" else _collapsed(pieces)
        if not runs:
            return
        b = self.b
        anchor = runs[0][1]
        if b.length:
            together = kind in ("row", "list_item") and self._last == kind
            b.replaced("\n" if together else "\n\n", anchor, anchor)
        start = b.length
        if kind == "row" and self._table_start is None:
            self._table_start = start
        if kind == "heading":
            b.replaced("#" * level + " ", anchor, anchor)
        elif kind == "list_item" and self._items and self._items[-1]:
            b.replaced(self._items[-1], anchor, anchor)  # an item's first block; a second paragraph has none
            self._items[-1] = ""
        elif kind == "code":
            b.replaced(f"```{info}\n", anchor, anchor)
        text_start = b.length
        for text, s, e in runs:
            if e - s == len(text) and self.src[s - self.base:e - self.base] == text:
                b.verbatim(text, s)
            else:
                b.replaced(text, s, e)
        title = b.text()[text_start:] if kind == "heading" else info
        if kind == "code":
            b.replaced("\n```", runs[-1][2], runs[-1][2])
        if kind != "row":
            self.blocks.append(Block(kind, start, b.length, level, title))
        self._last = kind


def _collapsed(pieces: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Text runs with white space collapsed to one space (a browser's rendering), none at either end; a
    separator the reader wrote (`` | `` between cells: an empty source range) takes the spaces around it.
    A single space between words stays inside its run, so prose is copied in long verbatim runs."""
    runs: list[tuple[str, int, int]] = []
    space: tuple[int, int] | None = None  # white space waiting to be written as one " "

    def put(text: str, s: int, e: int) -> None:
        nonlocal space
        if space and runs and s != e and runs[-1][1] != runs[-1][2]:
            runs.append((" ", space[0], space[1]))
        space = None
        if s != e or runs:  # a cell separator before any text of the row: left out
            runs.append((text, s, e))

    def gap(s: int, e: int) -> None:
        nonlocal space
        space = (space[0], e) if space else (s, e)

    for text, s, e in pieces:
        if e - s != len(text):  # an entity or a separator the reader wrote
            if text.isspace():
                gap(s, e)
            else:
                put(text, s, e)
            continue
        pos = 0
        for m in [*_IRREGULAR.finditer(text), None]:
            stop = m.start() if m else len(text)
            core = text[pos:stop].strip(" ")
            if core:
                lead = text.index(core[0], pos) - pos
                if lead:
                    gap(s + pos, s + pos + lead)
                put(core, s + pos + lead, s + pos + lead + len(core))
                if pos + lead + len(core) < stop:
                    gap(s + pos + lead + len(core), s + stop)
            elif stop > pos:
                gap(s + pos, s + stop)
            if m:
                gap(s + m.start(), s + m.end())
                pos = m.end()
    while runs and runs[-1][1] == runs[-1][2]:
        runs.pop()
    return runs


def _pre_runs(pieces: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Preformatted text as written, less the line break that opens it and the white space that ends it."""
    runs = [p for p in pieces if p[0]]
    if runs and runs[0][0].startswith("\n") and runs[0][2] - runs[0][1] == len(runs[0][0]):
        text, s, e = runs[0]
        runs[0] = (text[1:], s + 1, e)
    while runs and not runs[-1][0].strip():
        runs.pop()
    if runs:
        text, s, e = runs[-1]
        if e - s == len(text):
            trimmed = text.rstrip()
            runs[-1] = (trimmed, s, s + len(trimmed))
    return [r for r in runs if r[0]]
