"""Markdown -> clean text and :class:`~ragsweep.gen.layout.Layout` (markdown-it-py: CommonMark and tables).

markdown-it-py is CommonMark-exact, maintained (executablebooks), pure Python, and already installed with
``rich``; it gives each block its source lines, and the reader finds each inline text run inside them, so
every character of clean text maps to where it stands in the file.

What a docs site adds to CommonMark is read before parsing, each marker replaced by as many spaces (so source
offsets do not move): YAML front matter (``---`` at the top: its keys go into the document's metadata; front
matter that is not valid YAML is left out with a warning naming the page),
admonition markers (pymdownx blocks: ``/// tip``, ``/// note | Title``, a closing ``///``; Python-Markdown's
``!!! note "Title"`` and tabs ``=== "Title"``, whose indented body is parsed dedented, as Markdown of its own, not
as an indented code block; autodoc ``::: a.b.C`` lines and snippet ``--8<-- "path"`` lines, hidden like an include:
:mod:`gen.python_markdown`; MyST: ``::: {warning}``
or a backtick fence opened with ``{note}``, closed by a fence of its own; the text stays, as an ``admonition``
block whose info is its kind and title, ``warning: Title``; another MyST directive, ``{literalinclude}`` or
``{toctree}``, leaves the text like an include directive), and MkDocs include directives (``{* ../../docs_src/x.py hl[9] *}``: the included file
is not in the folder, so the directive leaves the text and stays as an ``include`` block naming its target).
A heading's attribute list (``{ #query-parameters }``) is left out of its title.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from functools import lru_cache
from typing import Any

from ragsweep.gen.html_reader import HtmlBlocks
from ragsweep.gen.inline_markup import Text as _Text
from ragsweep.gen.inline_markup import without_refs, without_roles
from ragsweep.gen.layout import Block, Layout, TextBuilder
from ragsweep.gen.myst import Directives, code_language, option_lines
from ragsweep.gen.python_markdown import Indented, Snippets

log = logging.getLogger(__name__)

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*$", re.DOTALL | re.MULTILINE)
_ADMONITION = re.compile(r"^[ \t]*/{3,}[ \t]*(?P<kind>[A-Za-z][\w-]*)?(?:[ \t]*\|[ \t]*(?P<title>.*?))?[ \t]*$", re.MULTILINE)
# on a line of its own: "{* path *}" inside a sentence or in `inline code` is text about the directive
_INCLUDE = re.compile(r"^[ \t]*\{\*[ \t]*(?P<target>.*?)[ \t]*\*\}[ \t]*$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_LANGUAGE = re.compile(r"[\w+#.-]+$")
# inline HTML tags that break words apart as a browser shows them (a table or a list written in HTML in a cell)
_BREAKING_TAG = re.compile(r"</?(?:br|p|div|li|ul|ol|tr|td|th|table|thead|tbody|dt|dd|dl|h[1-6])\b", re.IGNORECASE)
_ANCHOR = re.compile(r"[ \t]*\{[ \t]*#[^}]*\}[ \t]*$")
_HEADING_MARK = re.compile(r"[ \t]*#{1,6}[ \t]*")  # any indentation: a heading in a dedented body
_ITEM_MARK = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]?")


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    # text_join off: an entity or an escape stays its own token, so it maps to its source characters.
    return MarkdownIt("commonmark", {"html": True}).enable("table").disable("text_join")


def markdown_text(source: str, where: str = "") -> tuple[str, Layout, dict[str, Any]]:
    """The clean text of a Markdown page, its layout, and the metadata of its front matter."""
    prepared, parsed, meta, extra = _prepare(source, where)
    writer = _Writer(prepared, source)
    writer.walk(_parser().parse(parsed))
    if writer.b.length and source.endswith("\n"):
        # the file's final line break kept: a page of plain paragraphs and headings reads exactly as written
        # (the shipped corpus, whose test set's spans and caches were made from the file text)
        writer.b.verbatim("\n", len(source) - 1)
    blocks = writer.blocks + _placed(extra, writer.placed)
    blocks.sort(key=lambda b: (b.start, -b.end))
    return writer.b.text(), writer.b.layout("markdown", source, blocks), meta


def _front_matter(source: str, where: str) -> tuple[dict[str, Any], int]:
    """The metadata of a page's YAML front matter (empty when it has none, or when it is not a mapping) and
    where the page's body starts (0 without front matter)."""
    fm = _FRONT_MATTER.match(source)
    if not fm:
        return {}, 0
    import yaml

    try:
        data = yaml.safe_load(fm.group(1) or "")
    except yaml.YAMLError as exc:
        # One page's broken metadata ("description: ... with Wireup: a type-safe ...", a colon unquoted) must not
        # stop a folder of hundreds: its body is read, its front matter is still not prose, and the user is told.
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""  # the mark counts from the line after ---
        log.warning("%s: front matter (line 1) is not valid YAML (%s%s): the page is read without its metadata",
                    where or "a Markdown page", getattr(exc, "problem", None) or type(exc).__name__, at)
        return {}, fm.end()
    return ({str(k): v for k, v in data.items()} if isinstance(data, dict) else {}), fm.end()


def _prepare(source: str, where: str) -> tuple[str, str, dict[str, Any], list[tuple[str, int, int, str]]]:
    """``source`` with front matter, admonition markers and include directives blanked; the same with the
    bodies of indented blocks dedented (what markdown-it parses); the metadata; and what was blanked as (kind,
    source start, source end, info)."""
    chars = list(source)
    extra: list[tuple[str, int, int, str]] = []

    def blank(s: int, e: int) -> None:
        for i in range(s, e):
            if chars[i] not in "\r\n":
                chars[i] = " "

    meta, body = _front_matter(source, where)
    blank(0, body)
    fence, fence_depth = "", 0
    opened: list[tuple[int, str]] = []
    indented, snippets = Indented(extra, blank), Snippets(extra, blank)
    myst = Directives(extra, blank, indented.cuts, source)
    pos = body
    for line in source[body:].splitlines(keepends=True):
        start, end = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        if snippets.line(line, start, end):
            continue
        if fence:
            if indented.inside(line, start, end) and len(indented.open) < fence_depth:
                fence = ""  # the block the fence was opened in ended: so does the fence
            else:
                m = _FENCE.match(line)
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line[m.end():].strip():
                    fence = ""
                continue
        markup, _ = indented.line(line, start, end)
        if markup or myst.line(line, start, end):
            continue
        m = _FENCE.match(line)
        if m:
            fence, fence_depth = m.group(1), len(indented.open)
            continue
        _marker(source, start, end, opened, extra, blank)
    indented.close()
    snippets.close(len(source))
    myst.close(len(source))
    for s, info in opened:  # never closed: to the end of the page
        extra.append(("admonition", s, len(source), info))
    # markdown-it reads "\r\n" and a lone "\r" as "\n", which would move every later offset: the same number
    # of characters instead (a space before the line break, or the line break itself)
    for i, ch in enumerate(chars):
        if ch == "\r":
            chars[i] = " " if source[i + 1:i + 2] == "\n" else "\n"
    prepared = "".join(chars)
    return prepared, indented.dedent(prepared, [0] + [m.end() for m in re.finditer("\n", prepared)]), meta, extra


def _marker(source: str, start: int, end: int, opened: list[tuple[int, str]],
            extra: list[tuple[str, int, int, str]], blank: Any) -> None:
    """Blanks a line that is a ``///`` block's marker or an include directive (recorded in ``extra``)."""
    a = _ADMONITION.match(source, start, end)
    if a and a.end() == end:
        if a.group("kind"):
            title = (a.group("title") or "").strip()
            opened.append((start, a.group("kind") + (f": {title}" if title else "")))
        elif opened:
            s, info = opened.pop()
            extra.append(("admonition", s, end, info))
        blank(start, end)
        return
    inc = _INCLUDE.match(source, start, end)
    if inc and inc.end() == end:
        extra.append(("include", inc.start(), inc.end(), inc.group("target")))
        blank(inc.start(), inc.end())


def _placed(extra: list[tuple[str, int, int, str]], placed: list[tuple[int, int, int]]) -> list[Block]:
    """Blocks for what was blanked: an admonition covers the blocks written from its lines, an include is an
    empty block where it stood (``placed``: source start, clean start, clean end of each block written)."""
    out = []
    starts = [p[0] for p in placed]
    for kind, s, e, info in extra:
        if kind == "include":
            i = bisect_right(starts, s) - 1
            at = placed[i][2] if i >= 0 else 0
            out.append(Block("include", at, at, 0, info))
            continue
        inside = [p for p in placed if s <= p[0] < e]
        if inside:
            out.append(Block("admonition", inside[0][1], max(p[2] for p in inside), 0, info))
    return out


class _Writer:
    """Walks markdown-it's tokens and writes the clean text."""

    def __init__(self, src: str, original: str) -> None:
        self.src, self.original = src, original
        self.b = TextBuilder()
        self.lines = [0] + [m.end() for m in re.finditer("\n", src)]
        self.blocks: list[Block] = []
        self.placed: list[tuple[int, int, int]] = []
        self.lists: list[list[Any]] = []     # [ordered, next number] per open list
        self.item: tuple[int, int] | None = None  # (source start of the item's marker, clean start) until written
        self.items: list[int] = []           # clean start of each open list item
        self.last = ""

    def _line(self, n: int) -> int:
        return self.lines[n] if n < len(self.lines) else len(self.src)

    def _separate(self, kind: str, anchor: int) -> None:
        if self.b.length:
            together = kind in ("list_item", "row") and self.last == kind
            self.b.replaced("\n" if together else "\n\n", anchor, anchor)
        self.last = kind

    def walk(self, tokens: list[Any]) -> None:
        i = 0
        while i < len(tokens):
            t = tokens[i]
            kind = t.type
            if kind == "heading_open":
                self._heading(t, tokens[i + 1])
                i += 3
                continue
            if kind == "paragraph_open":
                self._paragraph(t, tokens[i + 1])
                i += 3
                continue
            if kind in ("fence", "code_block"):
                self._code(t)
            elif kind == "html_block":
                self._html(t)
            elif kind == "table_open":
                i = self._table(tokens, i)
            elif kind in ("bullet_list_open", "ordered_list_open"):
                self.lists.append([kind == "ordered_list_open", int(t.attrGet("start") or 1)])
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "list_item_open":
                self.item = (self._line(t.map[0]), -1)
                self.items.append(-1)
            elif kind == "list_item_close":
                start = self.items.pop()
                if start >= 0:
                    self.blocks.append(Block("list_item", start, self.b.length))
                self.item = None
            i += 1

    # -- blocks ------------------------------------------------------------
    def _heading(self, t: Any, inline: Any) -> None:
        lo, hi = self._line(t.map[0]), self._line(t.map[1])
        self._separate("heading", lo)
        start = self.b.length
        level = int(t.tag[1])
        mark = _HEADING_MARK.match(self.src, lo) if t.markup.startswith("#") else None
        self.b.replaced("#" * level + " ", lo, mark.end() if mark else lo)
        title_start = self.b.length
        self._inline(inline, mark.end() if mark else lo, hi, heading=True)
        self.blocks.append(Block("heading", start, self.b.length, level, self.b.text()[title_start:]))
        self.placed.append((lo, start, self.b.length))

    def _paragraph(self, t: Any, inline: Any) -> None:
        lo, hi = self._line(t.map[0]), self._line(t.map[1])
        if not any(c.type in ("text", "code_inline", "text_special") and c.content.strip()
                   for c in inline.children or []):
            return  # only HTML tags (an image) or white space: nothing to write, not even a separator
        in_item = bool(self.items)
        self._separate("list_item" if in_item else "paragraph", lo)
        start = self.b.length
        if in_item and self.items[-1] < 0:
            ordered, number = self.lists[-1]
            mark = _ITEM_MARK.match(self.src, self.item[0] if self.item else lo)
            self.b.replaced(f"{number}. " if ordered else "- ", mark.start() if mark else lo,
                            mark.end() if mark else lo)
            self.lists[-1][1] += 1
            self.items[-1] = start
        self._inline(inline, lo, hi)
        if not in_item:
            self.blocks.append(Block("paragraph", start, self.b.length))
        self.placed.append((lo, start, self.b.length))

    def _code(self, t: Any) -> None:
        if not t.content.strip():
            return  # nothing to show (a fence whose only line was a snippet, included when the site is built)
        lo, hi = self._line(t.map[0]), self._line(t.map[1])
        self._separate("code", lo)
        start = self.b.length
        words = (t.info or "").split()
        lang = words[0] if words and _LANGUAGE.match(words[0]) else ""  # not hl_lines="4" (an attribute)
        myst = code_language(words)
        lang = myst or lang  # "{code-block} python", "{doctest}"
        body = lo
        code = t.content.rstrip("\n")
        if t.type == "fence":
            skip = option_lines(code) if myst is not None else 0  # ":caption: example.py" is markup, not code
            body = self._line(t.map[0] + 1 + skip)
            code = "\n".join(code.split("\n")[skip:])
            self.b.replaced(f"```{lang}\n", lo, body)
        else:
            self.b.replaced("```\n", lo, lo)
        end = self._align(code, body, hi)
        # the closing marker stands for the source's closing fence; a fence left open to the end of its block has
        # none, and its marker stands for no source (not for the blank lines after the code)
        self.b.replaced("\n```", end, hi if self.src[end:hi].strip() else end)
        self.blocks.append(Block("code", start, self.b.length, 0, lang))
        self.placed.append((lo, start, self.b.length))

    def _html(self, t: Any) -> None:
        lo, hi = self._line(t.map[0]), self._line(t.map[1])
        before = self.b.length
        reader = HtmlBlocks(self.b, self.src[lo:hi], lo)
        reader.feed(self.src[lo:hi])
        reader.close()
        if self.b.length > before:
            self.blocks.extend(reader.blocks)
            self.placed.append((lo, before, self.b.length))
            self.last = "html"

    def _table(self, tokens: list[Any], i: int) -> int:
        start: int | None = None
        while tokens[i].type != "table_close":
            t = tokens[i]
            if t.type == "tr_open":
                lo, hi = self._line(t.map[0]), self._line(t.map[1])
                self._separate("row", lo)
                if start is None:
                    start = self.b.length
                    self.placed.append((lo, start, start))
                cursor, first = lo, True
                i += 1
                while tokens[i].type != "tr_close":
                    if tokens[i].type == "inline":
                        if not first:
                            self.b.replaced(" | ", cursor, cursor)
                        cursor = self._inline(tokens[i], cursor, hi)
                        first = False
                    i += 1
            i += 1
        if start is not None:
            self.blocks.append(Block("table", start, self.b.length))
            self.placed[-1] = (self.placed[-1][0], start, self.b.length)
        return i

    # -- inline text -------------------------------------------------------
    def _inline(self, inline: Any, lo: int, hi: int, heading: bool = False) -> int:
        """Writes an inline token's text; returns the source offset after it."""
        src, b = self.src, self.b
        cur = lo
        children = list(inline.children or [])
        if heading and children and children[-1].type == "text":
            trimmed = _ANCHOR.sub("", children[-1].content)
            if trimmed != children[-1].content:
                children[-1] = _Text(trimmed.rstrip())
        children = without_refs(without_roles(children))
        gap: tuple[int, int] | None = None  # a tag that breaks words, waiting to be written as one space
        for c in children:
            kind = c.type
            if gap and kind in ("text", "code_inline", "text_special") and b.parts and b.parts[-1][-1:] != " " \
                    and not c.content[:1].isspace():
                b.replaced(" ", *gap)
            if kind in ("text", "code_inline", "text_special"):
                gap = None
            if kind in ("text", "code_inline"):
                cur = self._align(c.content, cur, hi)
            elif kind == "text_special":
                p = src.find(c.markup, cur, hi)
                if p < 0:
                    b.replaced(c.content, cur, cur)
                else:
                    b.replaced(c.content, p, p + len(c.markup))
                    cur = p + len(c.markup)
            elif kind in ("softbreak", "hardbreak"):
                p = src.find("\n", cur, hi)
                if p < 0:
                    b.replaced(" ", cur, cur)
                else:
                    b.replaced(" ", p, p + 1)
                    cur = p + 1
            elif kind == "html_inline":
                p = src.find(c.content, cur, hi)
                if p >= 0:
                    if _BREAKING_TAG.match(c.content):
                        gap = (gap[0] if gap else p, p + len(c.content))
                    cur = p + len(c.content)
            elif kind in ("link_close", "image"):
                cur = self._past_target(cur, hi)
            elif kind == "skip":  # markup left out of the text (an undefined reference link's brackets)
                p = src.find(c.content, cur, hi)
                cur = p + len(c.content) if p >= 0 else cur
        return cur

    def _past_target(self, cur: int, hi: int) -> int:
        """After a link's text (or an image's alt text): past its ``](target "title")`` or ``][ref]``."""
        src = self.src
        close = src.find("]", cur, hi)
        if close < 0:
            return cur
        if src.startswith("](", close):
            depth, j = 0, close + 1
            while j < hi:
                if src[j] == "(":
                    depth += 1
                elif src[j] == ")":
                    depth -= 1
                    if not depth:
                        return j + 1
                j += 1
            return cur
        if src.startswith("][", close):
            end = src.find("]", close + 2, hi)
            return end + 1 if end >= 0 else close + 1
        return close + 1

    def _align(self, text: str, cur: int, hi: int) -> int:
        """Writes ``text``, found in the source from ``cur`` on (a line at a time; a character at a time
        where the parser changed it: an indented block's indentation, a tab); returns the offset after it."""
        src, b = self.src, self.b
        for k, line in enumerate(text.split("\n")):
            if k:
                p = src.find("\n", cur, hi)
                if p < 0:
                    b.replaced("\n", cur, cur)
                elif self.original[p] == "\r":  # a line break written as a lone "\r"
                    b.replaced("\n", p, p + 1)
                    cur = p + 1
                else:
                    b.verbatim("\n", p)
                    cur = p + 1
            p = src.find(line, cur, hi)
            if p >= 0:
                cut = line.endswith(" ") and self.original[p + len(line) - 1] == "\r"  # the "\r" of "\r\n"
                b.verbatim(line[:-1] if cut else line, p)
                cur = p + len(line)
                continue
            for ch in line:
                q = src.find(ch, cur, hi)
                if q < 0:
                    b.replaced(ch, cur, cur)
                else:
                    b.verbatim(ch, q)
                    cur = q + 1
        return cur

