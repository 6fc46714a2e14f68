"""Inline markup a docs site resolves at build time, read from markdown-it's inline tokens as a reader sees the
page (:mod:`gen.markdown_reader`): a MyST / Sphinx role (``{class}`a.B```) and a reference-style link whose
label the page does not define (mkdocs-autorefs: ``[Config][xsdata.models.config.Config]``). Both are read by
their grammar, whatever the role's or the label's name. What is left out is never written: either a token's
text shortened (the role's name) or a ``skip`` token the writer passes over in the source, so every character
written still maps to where it stands in the file.
"""

from __future__ import annotations

import re
from typing import Any


class Text:
    """A text token with other content (a heading title without its attribute list), or markup to pass over
    in the source (``type`` "skip")."""

    type = "text"

    def __init__(self, content: str, type: str = "text") -> None:
        self.content = content
        self.type = type


#: A MyST / Sphinx role just before an inline code span: {class}`cattrs.BaseValidationError`, {doc}`usage`.
_ROLE = re.compile(r"\{[A-Za-z][\w:.+-]*\}$")
#: A role's explicit title: {class}`BaseValidationError <cattrs.BaseValidationError>` shows "BaseValidationError".
_ROLE_TITLE = re.compile(r"^(?P<title>.*?\S)\s*<[^<>]+>$", re.S)
#: A reference-style link markdown-it left as text, its label defined nowhere on the page (``[Config][a.b]``,
#: ``[Config][]``); not right after a word or a bracket (``a[0][1]`` is an index).
_REF = re.compile(r"(?<![\w\]])\[(?P<text>[^\[\]\n]+)(?P<label>\]\[[^\[\]\s]*\])")
_REF_TAIL = re.compile(r"^\]\[[^\[\]\s]*\]")
_OPENS = re.compile(r"(?<![\w\]])\[$")


def without_roles(children: list[Any]) -> list[Any]:
    """Inline tokens with each MyST role written as a reader sees it: the role's name dropped, its code span's
    explicit title kept (or, for ``~a.b.C``, the last part, as Sphinx shows it). The source offsets still map:
    what is dropped is simply not written."""
    out = list(children)
    for i in range(len(out) - 1):
        c, nxt = out[i], out[i + 1]
        if c.type != "text" or nxt.type != "code_inline" or not (m := _ROLE.search(c.content)):
            continue
        out[i] = Text(c.content[:m.start()])
        shown = nxt.content
        if title := _ROLE_TITLE.match(shown):
            shown = title.group("title")
        elif shown.startswith("~"):
            shown = shown[1:].rsplit(".", 1)[-1]
        out[i + 1] = Text(shown, "code_inline")
    return out


def _ref_pieces(content: str) -> list[Any]:
    """A text token's content as tokens, each undefined reference link's brackets and label skipped."""
    out: list[Any] = []
    pos = 0
    for m in _REF.finditer(content):
        out += [Text(content[pos:m.start()]), Text("[", "skip"), Text(m.group("text")), Text(m.group("label"), "skip")]
        pos = m.end()
    return out + [Text(content[pos:])]


def without_refs(children: list[Any]) -> list[Any]:
    """Inline tokens with each undefined reference-style link written as its visible text. A link whose label
    the page defines is a link token already, so brackets still in a text token are resolved by the site, not
    the page. ``[`Name`][a.b.Name]`` is text, code span, text: the brackets around the span go, the span stays."""
    out: list[Any] = []
    for c in children:
        if c.type != "text":
            out.append(c)
            continue
        content = c.content
        tail = _REF_TAIL.match(content)
        if tail and len(out) >= 2 and out[-1].type == "code_inline" and out[-2].type == "text" \
                and _OPENS.search(out[-2].content):
            out[-2:-1] = [Text(out[-2].content[:-1]), Text("[", "skip")]
            out.append(Text(tail.group(), "skip"))
            content = content[tail.end():]
        out += _ref_pieces(content) if _REF.search(content) else [Text(content) if content != c.content else c]
    return out
