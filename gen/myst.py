"""MyST (Sphinx) directives in Markdown, read before markdown-it parses the page (:mod:`gen.markdown_reader`).

A directive is a colon fence (``::: {warning}``, ``:::{note} Title``, closed by a line of as many or more colons)
or a backtick fence whose info is ``{name}``. An admonition's body is prose, not code, and its kind (a warning, a
note) says what its text is for (:func:`gen.style_checks.role_at`); its option lines (``:class: dropdown``) are
dropped. A ``{code-block}``, ``{doctest}`` or ``{code-cell}`` fence is code, left to markdown-it, but for its
option lines (:func:`option_lines`), and so is any backtick directive whose argument is a language
(``{jupyter-execute} python``, ``{exec} bash``: a name Pygments knows, as written, so a tab titled
``Python`` or ``pip`` stays what it was), whatever the directive's name. ``{raw}`` is no code directive: its
argument names an output format, and its body is markup the site inserts into that output as it is, never shown
as code. On a web page a ``{raw} html`` body is what the browser renders: it is read as HTML, as one block (its visible text;
scripts and styles are not), whatever blank lines or indentation it holds; a ``{raw}`` for another
format (``latex``) is not on the site at all and is hidden. Any other
directive (``{literalinclude}``, ``{toctree}``, ``{eval-rst}``) holds options and file names, nothing a reader
sees on the page: it leaves the text like an include directive -- unless its body begins with a directive of its
own, and two or more of that directive stand side by side in it. Such a directive lays them out (``{tab-set}``
of ``{tab-item}``, ``{grid}`` of cards, ``{tabs}``): each is an item whose body is the page's prose and whose
argument is its title (``{tab-item} pip``, a tab labelled "pip", not code in a language called pip), so the items
are read like admonitions. The grammar says so whatever the names: a directive that holds options or file names
never holds a row of directives; one that wraps a single directive (``{only} html`` around a ``{toctree}``) says
nothing of what that one holds, and both stay hidden. A code directive (``{code-block}``) nested in a layout
stays code. A row needs no directive around it: two or more directives of one name, each with an argument,
separated by nothing but blank lines (sphinx-inline-tabs' ``{tab} Python`` then ``{tab} C++``), are the items of
a tab set. A directive of options or file names takes no title, and runs of one (``{toctree}`` after
``{toctree}``) have none, so they stay hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache

_COLON = re.compile(r"^[ \t]*(?P<fence>:{3,})[ \t]*\{(?P<kind>[A-Za-z][\w-]*)\}[ \t]*(?P<title>.*?)[ \t]*$")
_CLOSE = re.compile(r"^[ \t]*(?P<fence>:{3,}|`{3,}|~{3,})[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*\{(?P<kind>[A-Za-z][\w-]*)\}[ \t]*(?P<title>.*?)[ \t]*$")
_OPTION = re.compile(r"^[ \t]*:[\w-]+:")
_LANGUAGE = re.compile(r"[\w+#.-]+$")
#: The MyST directives in a backtick fence whose body is prose.
MYST_ADMONITIONS = frozenset("admonition attention caution danger error hint important note seealso tip warning "
                             "deprecated versionadded versionchanged versionremoved example todo".split())
#: The MyST directives in a backtick fence whose body is code.
MYST_CODE = frozenset("code code-block sourcecode code-cell doctest testcode jupyter-execute ipython".split())
_PYTHON = frozenset("doctest testcode jupyter-execute ipython".split())

Extra = list[tuple[str, int, int, str]]


@lru_cache(maxsize=1)
def _languages() -> frozenset[str]:
    """The language names of Pygments' lexers (what a code fence's argument names); empty without Pygments
    (then only the directives named in :data:`MYST_CODE` are code)."""
    try:
        from pygments.lexers import get_all_lexers
    except ImportError:  # pragma: no cover - Pygments comes with rich
        return frozenset()
    return frozenset(alias for _, aliases, _, _ in get_all_lexers() for alias in aliases)


def _code_argument(title: str) -> bool:
    """Whether a backtick directive's argument names a language: the fence holds code, whatever its name."""
    return title in _languages()


def _nested(line: str, fence: str) -> bool:
    """Whether ``line`` opens a directive that can stand inside one opened with ``fence`` (a backtick fence
    inside a colon fence or the other way round, or a shorter fence of the same character)."""
    d = _FENCE.match(line) or _COLON.match(line)
    return d is not None and (d.group("fence")[0] != fence[0] or len(d.group("fence")) < len(fence))


def _lines(source: str, start: int) -> Iterator[str]:
    """The lines of ``source`` from ``start`` on, one at a time (a directive's lookahead stops at its end)."""
    while start < len(source):
        end = source.find("\n", start)
        end = len(source) if end < 0 else end
        yield source[start:end].rstrip("\r")
        start = end + 1


def _lays_out(source: str, start: int, fence: str) -> bool:
    """Whether the directive opened with ``fence``, whose first body line (a nested directive) starts at
    ``start`` in ``source``, holds two or more directives opened like that one, of the same name, side by side."""
    lines = _lines(source, start)
    line = next(lines)
    first = _FENCE.match(line) or _COLON.match(line)
    assert first is not None
    key, same = (first.group("fence"), first.group("kind").lower()), 1
    for line in lines:
        if _closes(line, fence):
            break
        d = _FENCE.match(line) or _COLON.match(line)
        same += d is not None and (d.group("fence").strip(), d.group("kind").lower()) == (key[0].strip(), key[1])
    return same >= 2


def _in_row(source: str, start: int, fence: str, kind: str, after_one: bool) -> bool:
    """Whether the directive opened with ``fence`` at ``start`` is an item of a row: its body shows a line that is
    no option, and it follows one (``after_one``) or is followed, past blank lines only, by another of the same
    name with an argument (in a fence of the same character). One of options alone (``{literalinclude} a.py``)
    stays an include."""
    lines = _lines(source, start)
    next(lines)
    shows = False
    for line in lines:
        if _closes(line, fence):
            break
        shows = shows or bool(line.strip()) and not _OPTION.match(line)
    if not shows:
        return False
    after = next((line for line in lines if line.strip()), "")
    d = _FENCE.match(after)
    return after_one or (d is not None and (d.group("fence")[0], d.group("kind").lower()) == (fence[0], kind)
                         and bool(d.group("title")))


def _closes(line: str, fence: str) -> bool:
    c = _CLOSE.match(line)
    return c is not None and c.group("fence")[0] == fence[0] and len(c.group("fence")) >= len(fence)


class Directives:
    """The MyST directives of one page, line by line: :meth:`line` blanks what is markup and records each
    admonition (``("admonition", source start, source end, "warning: Title")``) and each hidden directive
    (``("include", ...)``) in ``extra``."""

    def __init__(self, extra: Extra, blank: Callable[[int, int], None],
                 parsed: dict[int, int | str] | None = None, source: str = "") -> None:
        self.extra, self.blank, self.source = extra, blank, source
        # what the parser sees of a line (by its source start) instead of the line: see Indented.dedent
        self.parsed = {} if parsed is None else parsed
        self.raw: str | None = None  # the fence of an open {raw} html directive
        self.raw_lines = 0
        # open admonitions: (fence, source start, info, whether it is a container of items)
        self.open: list[tuple[str, int, str, bool]] = []
        self.hidden: tuple[str, int, str] | None = None  # an open directive that is not shown
        self.options = False
        self.fresh = False  # the directive opened last has shown no line of its body yet
        self.row: tuple[str, str, int] = ("", "", -1)  # the last directive closed: fence character, name, end

    def line(self, line: str, start: int, end: int) -> bool:
        """Whether the line (source ``[start, end)``, outside any code fence) was the directives' (blanked)."""
        if self.hidden is not None and self.fresh and line.strip() and not _OPTION.match(line):
            self.fresh = False
            if _nested(line, self.hidden[0]) and _lays_out(self.source, start, self.hidden[0]):  # read its items
                fence, s, info = self.hidden
                self.open.append((fence, s, info.lower(), True))
                self.hidden = None
        if self.hidden is not None:
            self.blank(start, end)
            if _closes(line, self.hidden[0]):
                self.extra.append(("include", self.hidden[1], end, self.hidden[2]))
                self.hidden = None
            return True
        if self.raw is not None:
            if _closes(line, self.raw):
                self.blank(start, end)
                self.raw = None
            else:  # the parser sees one HTML block (the writer reads the real lines), whatever the lines hold
                self.parsed[start] = "." if self.raw_lines else "<div>"
                self.raw_lines += 1
            return True
        d = _FENCE.match(line)
        item = bool(self.open) and self.open[-1][3] and d is not None and _nested(line, self.open[-1][0])
        # only a directive that would be hidden can be a row's item: an admonition or a code directive is read
        # as such whatever stands beside it, so it needs no lookahead
        if d and not item and d.group("title") and not _code_argument(d.group("title")) and \
                d.group("kind").lower() not in MYST_ADMONITIONS | MYST_CODE | {"raw"}:
            fence, kind = d.group("fence"), d.group("kind").lower()
            after_one = self.row[:2] == (fence[0], kind) and not self.source[self.row[2]:start].strip()
            item = _in_row(self.source, start, fence, kind, after_one)
        if d and d.group("kind").lower() == "raw" and d.group("title").lower() == "html":
            self.raw, self.raw_lines = d.group("fence"), 0
            self.blank(start, end)
            return True
        if d and not item and (d.group("kind").lower() == "raw" or d.group("kind").lower() not in
                               MYST_ADMONITIONS | MYST_CODE and not _code_argument(d.group("title"))):
            self.hidden = (d.group("fence"), start, (d.group("kind") + " " + d.group("title")).strip())
            self.blank(start, end)
            self.fresh = True
            return True
        d = _COLON.match(line) or d
        if d and (d.group("fence")[0] == ":" or d.group("kind").lower() in MYST_ADMONITIONS
                  or item and d.group("kind").lower() not in MYST_CODE | {"raw"}):
            title = d.group("title").strip()
            self.open.append((d.group("fence"), start, d.group("kind").lower() + (f": {title}" if title else ""),
                              False))
            self.blank(start, end)
            self.options, self.fresh = True, False
            return True
        if self.options and _OPTION.match(line):  # ":class: dropdown" right after the opening line
            self.blank(start, end)
            return True
        self.options = False
        if self.open and _closes(line, self.open[-1][0]):
            fence, s, info, _ = self.open.pop()
            self.row = (fence[0], info.partition(":")[0], end)
            self.extra.append(("admonition", s, end, info))
            self.blank(start, end)
            return True
        return False

    def close(self, length: int) -> None:
        """Directives never closed run to the end of the page (``length``)."""
        if self.hidden is not None:
            self.extra.append(("include", self.hidden[1], length, self.hidden[2]))
        for _, s, info, _ in self.open:
            self.extra.append(("admonition", s, length, info))


def option_lines(code: str) -> int:
    """How many of a MyST code directive's first lines are its options (``:caption: example.py``,
    ``:emphasize-lines: 3``), with the blank line that may follow them: directive markup, not code."""
    lines = code.split("\n")
    n = 0
    while n < len(lines) and _OPTION.match(lines[n]):
        n += 1
    return n + 1 if n and n < len(lines) and not lines[n].strip() else n


def code_language(words: list[str]) -> str | None:
    """The language of a MyST code fence whose info words are ``words`` (``{code-block} python``; Python for a
    doctest); None when the fence is no MyST code directive."""
    if not words or not words[0].startswith("{") or not words[0].endswith("}"):
        return None
    if words[0].strip("{}").lower() not in MYST_CODE:
        return words[1] if len(words) == 2 and _code_argument(words[1]) else None
    if words[0].strip("{}").lower() in _PYTHON:
        return "python"
    return words[1] if len(words) > 1 and _LANGUAGE.match(words[1]) else ""
