"""Python-Markdown syntax a MkDocs site adds to CommonMark, read by its grammar (:mod:`gen.markdown_reader`).

- **Indented blocks**: an admonition ``!!! note "Title"`` (a collapsible ``???``, ``???+``) or a tab
  ``=== "Title"`` (``===+``, ``===!``) opens a block whose body is every following line indented four columns
  more than the marker, blank lines included, up to the first line that is not. The body is Markdown in its own
  right: the reader parses it dedented (:meth:`Indented.dedent`), so its paragraphs are prose and its fences and
  indented code are code, not one indented code block. Blocks nest (a tab of admonitions). A tab is recorded as
  an admonition of kind ``tab``, as the same tab written ``/// tab | Title`` is.
- **Definitions**: a line ``:   A fruit that grows on trees.`` under a term (Python-Markdown's ``def_list``, MyST's
  ``deflist``) opens a definition whose body is every following line indented to where its text starts (four
  columns after ``:   ``, two after ``: ``), blank lines included. The marker line stays prose after its term
  ("Apple :   A fruit ..."); the body is read dedented, so a second paragraph of the definition is prose, not
  an indented code block. A definition is no box around its text, so it records nothing.
- **Autodoc lines**: ``::: package.module.Name`` and the option lines indented below it are replaced, when the
  site is built, by documentation generated from the code; nothing a reader sees is written on the page, so the
  line and its options leave the text like an include directive.
- **Snippet lines**: ``--8<-- "path"`` (a line of its own), or a block of paths between two bare ``--8<--``
  lines, is replaced by another file's text when the site is built, inside code fences too. The included file
  is not read into the page: a file inside the folder read is a page of its own already (read twice it would be
  two copies of the same evidence), a file outside it is not the user's to read, and the included text has no
  offsets in this page's source for evidence to point at. The line leaves the text like an include directive.
  An escaped line (``;--8<--``) is text about the syntax and stays.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_OPENER = re.compile(r'^(?P<indent>[ \t]*)(?P<mark>!!!|\?\?\?\+?|===[+!]?)[ \t]+'
                     r'(?:(?P<kind>[A-Za-z][\w-]*)(?:[^"\n]*"(?P<title>[^"]*)")?|"(?P<tab>[^"\n]*)")[ \t]*$')
_AUTODOC = re.compile(r"^(?P<indent>[ \t]*):::[ \t]+(?P<target>[A-Za-z_][\w.:/-]*)[ \t]*$")
_DEFINITION = re.compile(r"^(?P<mark>[ \t]{0,3}:[ \t]+)\S")
_SNIPPET = re.compile(r"""^[ \t]*-+8<-+[ \t]+(?P<target>"[^"\n]+"|'[^'\n]+')[ \t]*$""")
_SNIPPET_BLOCK = re.compile(r"^[ \t]*-+8<-+[ \t]*$")

Extra = list[tuple[str, int, int, str]]


def _columns(line: str) -> int:
    """The indentation of ``line`` in columns (a tab to the next multiple of four, as Python-Markdown reads it)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _chars_for(line: str, columns: int) -> int:
    """How many leading characters of ``line`` make up its first ``columns`` columns of indentation."""
    col = n = 0
    while n < len(line) and col < columns and line[n] in " \t":
        col += 1 if line[n] == " " else 4 - col % 4
        n += 1
    return n


class Snippets:
    """Snippet lines: :meth:`line` blanks them (inside code fences too: the site includes the file there)."""

    def __init__(self, extra: Extra, blank: Callable[[int, int], None]) -> None:
        self.extra, self.blank = extra, blank
        self.block: int | None = None  # source start of an open block of paths

    def line(self, line: str, start: int, end: int) -> bool:
        """Whether the line (source ``[start, end)``) was a snippet's (blanked)."""
        text = line.rstrip("\r\n")
        if self.block is not None:
            self.blank(start, end)
            if _SNIPPET_BLOCK.match(text):
                self.extra.append(("include", self.block, end, "--8<--"))
                self.block = None
            return True
        m = _SNIPPET.match(text)
        if m:
            self.extra.append(("include", start, end, m.group("target").strip("\"'")))
            self.blank(start, end)
            return True
        if _SNIPPET_BLOCK.match(text):
            self.block = start
            self.blank(start, end)
            return True
        return False

    def close(self, length: int) -> None:
        if self.block is not None:
            self.extra.append(("include", self.block, length, "--8<--"))


class Indented:
    """The indented blocks of one page, line by line; :attr:`cuts` says how many leading characters of which
    line (by its source start) the parser must not see: a body's indentation."""

    def __init__(self, extra: Extra, blank: Callable[[int, int], None]) -> None:
        self.extra, self.blank = extra, blank
        self.open: list[list] = []  # [body columns, source start, kind, info, end of the last body line]
        self.cuts: dict[int, int | str] = {}

    def line(self, line: str, start: int, end: int) -> tuple[bool, bool]:
        """Reads one line outside a code fence opened before it: (whether it was markup, blanked; whether it
        closed a block, so a code fence opened inside that block ends too)."""
        closed = self._leave(line)
        if self.open and self.open[-1][2] == "autodoc":
            self.blank(start, end)
            self.open[-1][4] = end
            return True, closed
        self.inside(line, start, end)
        text = line.rstrip("\r\n")
        body = text[self.cuts.get(start, 0):]
        depth = (self.open[-1][0] if self.open else 0) + _columns(body)
        m = _OPENER.match(body)
        if m and (m.group("tab") is not None) == m.group("mark").startswith("="):
            title = (m.group("title") or m.group("tab") or "").strip()
            kind = "tab" if m.group("tab") is not None else m.group("kind")
            self.open.append([depth + 4, start, "admonition", kind + (f": {title}" if title else ""), end])
            self.blank(start, end)
            return True, closed
        m = _DEFINITION.match(body)
        if m:  # the line stays text; the body below it is cut to where the definition's text starts
            self.open.append([depth - _columns(body) + _columns(m.group("mark").replace(":", " ")), start,
                              "definition", "", end])
            return False, closed
        m = _AUTODOC.match(body)
        if m:
            self.open.append([depth + 1, start, "autodoc", "::: " + m.group("target"), end])
            self.blank(start, end)
            return True, closed
        return False, closed

    def inside(self, line: str, start: int, end: int) -> bool:
        """Records a line inside the open blocks (a code fence's line too): its body indentation is cut.
        Whether it closed a block."""
        if not line.strip():
            return False
        closed = self._leave(line)
        if self.open:
            self.cuts[start] = _chars_for(line, self.open[-1][0])
            self.open[-1][4] = end
            for b in self.open[:-1]:
                b[4] = end
        return closed

    def _leave(self, line: str) -> bool:
        """Closes the blocks a non-blank line is not indented enough to belong to."""
        closed = False
        while self.open and line.strip() and _columns(line) < self.open[-1][0]:
            self._record(self.open.pop())
            closed = True
        return closed

    def _record(self, block: list) -> None:
        _, s, kind, info, e = block
        if kind == "definition":
            return
        self.extra.append(("include" if kind == "autodoc" else "admonition", s, e, info))

    def close(self) -> None:
        while self.open:
            self._record(self.open.pop())

    def dedent(self, text: str, line_starts: list[int]) -> str:
        """``text`` (the page, markup blanked) as the parser is to see it, line for line: each body line's
        indentation cut (a number of characters in :attr:`cuts`), or a line replaced (a string there: the
        writer reads the real line, the parser only needs to know what block it is part of)."""
        if not self.cuts:
            return text
        out = []
        for i, s in enumerate(line_starts):
            e = line_starts[i + 1] if i + 1 < len(line_starts) else len(text)
            cut = self.cuts.get(s, 0)
            if isinstance(cut, str):
                out.append(cut + ("\n" if text[s:e].endswith("\n") else ""))
            else:
                out.append(text[s + cut:e])
        return "".join(out)
