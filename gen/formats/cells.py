"""The grammar of a table cell that holds a list, shared by every reader of CSV files and DataFrames.

Tools write a list into a CSV cell in several ways, and each is read back as the same list:

- JSON: ``["a; b", "c"]``;
- a Python literal, as pandas writes a list column: ``['a', "it's"]`` (tuples ``(...)`` too);
- a numpy array, as pandas writes an array column (Ragas 0.1 results, any ``datasets`` frame):
  ``['first passage'\\n 'second passage']`` -- items separated by spaces or newlines, no commas.
  Numpy elides long arrays with ``...``; such a cell has lost items, so it is an error;
- a list whose single item is itself one of the above, as a list written twice over (a column of
  lists turned into strings and then written as a list);
- a plain cell: items joined by the layout's delimiter (``;`` for ragas_once, ``|`` for DeepEval's
  CSV), or, when the layout has none, one item.

Strings follow Python's escapes, which include JSON's. A cell nested deeper than :data:`MAX_DEPTH`
or otherwise malformed raises :class:`CellError` with what is wrong and where in the cell; readers
turn it into an InputError naming the file, row and column.
"""

from __future__ import annotations

import re
from typing import Any

#: How deep lists and objects may nest in a cell (a message list is 3 deep; a list of lists 2).
MAX_DEPTH = 32

_NAMES = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None,
          "nan": float("nan"), "inf": float("inf")}
_NAME = re.compile(r"[A-Za-z_]+")
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"\s*")
#: A string's body up to its closing quote, escapes skipped (the unrolled loop: linear time).
_BODY = {q: re.compile(rf"[^{q}\\]*(?:\\.[^{q}\\]*)*{q}", re.DOTALL) for q in ("'", '"')}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "a": "\a", "\\": "\\",
           "'": "'", '"': '"', "/": "/", "\n": ""}
_CLOSE = {"[": "]", "(": ")"}
_SURROGATE = re.compile("[\ud800-\udfff]")
#: The marker Ragas' multi-hop synthesizers put before each reference context (``<1-hop>\n\n``).
_HOP = re.compile(r"^<\d+-hop>(?:\r?\n){0,2}")


class CellError(ValueError):
    """A cell that does not follow the grammar; the message says what and where."""


def _unescape(body: str, at: int) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code in _SIMPLE:
            return _SIMPLE[code]
        if code[0] in "xuU" and len(code) > 1:
            return chr(int(code[1:], 16)) if int(code[1:], 16) <= 0x10FFFF else m.group(0)
        if code[0].isdigit() and code[0] < "8":
            return chr(int(code, 8))
        return m.group(0)  # Python keeps an unknown escape as it is

    text = _ESCAPE.sub(one, body) if "\\" in body else body
    if _SURROGATE.search(text):
        # JSON writes a character outside the BMP as a surrogate pair; join pairs, refuse lone halves
        try:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise CellError(f"a lone surrogate escape in the string at character {at + 1}") from None
    return text


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def space(self) -> None:
        self.i = _SPACE.match(self.text, self.i).end()  # type: ignore[union-attr]

    def fail(self, what: str) -> CellError:
        return CellError(f"{what} at character {self.i + 1}")

    def value(self, depth: int) -> Any:
        self.space()
        if self.i >= len(self.text):
            raise self.fail("the cell ends where a value should be")
        c = self.text[self.i]
        if c in "[(":
            return self.sequence(depth + 1)
        if c == "{":
            return self.mapping(depth + 1)
        if c in "'\"" or (c in "uU" and self.text[self.i + 1:self.i + 2] in ("'", '"')):
            return self.string()
        if self.text.startswith("...", self.i):
            raise self.fail("numpy elided items ('...'), so the cell has lost them; write the list whole")
        m = _NUMBER.match(self.text, self.i)
        if m:
            self.i = m.end()
            number = m.group(0).replace("_", "")
            return float(number) if any(ch in number for ch in ".eE") else int(number)
        m = _NAME.match(self.text, self.i)
        if m and m.group(0) in _NAMES:
            self.i = m.end()
            return _NAMES[m.group(0)]
        raise self.fail(f"unexpected {c!r}")

    def string(self) -> str:
        if self.text[self.i] in "uU":
            self.i += 1
        start, quote = self.i, self.text[self.i]
        m = _BODY[quote].match(self.text, self.i + 1)
        if m is None:
            raise self.fail("a string that is never closed")
        self.i = m.end()
        return _unescape(self.text[start + 1:m.end() - 1], start)

    def _deeper(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise self.fail(f"lists or objects nested more than {MAX_DEPTH} deep")

    def sequence(self, depth: int) -> list[Any]:
        """``[a, b]``, ``(a, b)``, or numpy's ``[a b]`` (whitespace between items instead of commas)."""
        self._deeper(depth)
        close = _CLOSE[self.text[self.i]]
        self.i += 1
        items: list[Any] = []
        while True:
            self.space()
            if self.text.startswith(close, self.i):
                self.i += 1
                return items
            if items and self.text.startswith(",", self.i):
                self.i += 1
                self.space()
                if self.text.startswith(close, self.i):  # a trailing comma
                    self.i += 1
                    return items
            elif items and self.i < len(self.text) and not self.text[self.i - 1].isspace():
                raise self.fail(f"expected ',' or {close!r}")
            items.append(self.value(depth))

    def mapping(self, depth: int) -> dict[Any, Any]:
        self._deeper(depth)
        self.i += 1
        out: dict[Any, Any] = {}
        while True:
            self.space()
            if self.text.startswith("}", self.i):
                self.i += 1
                return out
            if out:
                if not self.text.startswith(",", self.i):
                    raise self.fail("expected ',' or '}'")
                self.i += 1
                self.space()
                if self.text.startswith("}", self.i):
                    self.i += 1
                    return out
            key = self.value(depth)
            if isinstance(key, (list, dict)):
                raise self.fail("an object key must be a string or a number")
            self.space()
            if not self.text.startswith(":", self.i):
                raise self.fail("expected ':'")
            self.i += 1
            out[key] = self.value(depth)


def parse_literal(text: str) -> Any:
    """The value of a JSON, Python or numpy literal (lists, tuples as lists, objects, strings, numbers).

    Raises:
        CellError: The text is not one whole literal, or nests deeper than :data:`MAX_DEPTH`.
    """
    parser = _Parser(text)
    value = parser.value(0)
    parser.space()
    if parser.i != len(text):
        raise parser.fail("unexpected text after the value")
    return value


def looks_like_list(text: str) -> bool:
    """Whether a cell is written as a list of strings or lists: ``[`` then a quote, ``[``, ``{`` or ``]``.

    ``['a', 'b`` is such a list cut short (an error, not text); ``[1] Smith et al.`` is text.
    """
    rest = text.strip()[1:].lstrip() if text.strip().startswith("[") else ""
    return rest[:1] in ("'", '"', "[", "]", "{") or rest[:2] in ("u'", 'u"')


def _unwrap(items: list[Any]) -> list[Any]:
    """A list whose single item is a string holding a list literal of strings: that inner list."""
    if len(items) == 1 and isinstance(items[0], str) and looks_like_list(items[0]):
        try:
            inner = parse_literal(items[0].strip())
        except CellError:
            return items
        if isinstance(inner, list) and all(isinstance(v, str) for v in inner):
            return inner
    return items


def list_cell(text: str, delimiter: str | None = None) -> list[Any] | None:
    """The items of a cell that holds a list; a blank cell is None.

    Args:
        text: The cell.
        delimiter: What joins the items of a plain cell in this layout (``;``, ``|``); None: a plain
            cell is one item.

    Raises:
        CellError: A cell written as a list literal that does not parse (or has lost items).
    """
    stripped = text.strip()
    if not stripped:
        return None
    if looks_like_list(stripped) or (stripped.startswith("[") and stripped.endswith("]")):
        try:
            value = parse_literal(stripped)
        except CellError:
            if looks_like_list(stripped):
                raise
        else:  # a bracketed literal of other things (``[1, 2]``) is returned for the caller to refuse
            return _unwrap(value) if isinstance(value, list) else [value]
    if delimiter is None:
        return [text]
    return [p.strip() for p in stripped.split(delimiter) if p.strip()]


def strip_hop_marker(context: str) -> str:
    """A context without the ``<N-hop>`` marker Ragas' multi-hop test sets put before it: the marker
    is not in the document, so it would only hinder locating the context and leak into exports."""
    return _HOP.sub("", context, count=1)
