"""A plain-text reply layout: one ``name: value`` line per field, for the in-process model.

A JSON reply spends a third of its written characters on scaffolding the schema forces (``{"question": "``,
``", "answer": "``, ``", "used": [``; benchmarks/results/2026-11-27-gen-written-tokens.md), and every forced token
costs the model a forward pass like any other. The same three fields as lines::

    question: In which year did the Forth Bridge open?
    answer: 1890
    used: 1

say as much in fewer tokens, and a quote inside a value needs no escape. llama.cpp holds the model to it with a
GBNF grammar (:func:`grammar`); a server that only takes JSON Schema keeps the JSON reply (a writer asks for lines
only from a model that :func:`supports_lines`).

A reply model asks for this layout by its JSON schema holding :data:`LINES` (:class:`LineReply`, or
:func:`as_lines` of a JSON reply model), so the layout is part of the schema, of the prompt's version and of every
cache key that depends on it. Its fields may be strings, integers or lists of integers, in the order they are
written.
"""

from __future__ import annotations

import re
from typing import Any

import pydantic

#: The key of a reply model's JSON schema that asks for the lines layout.
LINES = "x-lines"


class LineReply(pydantic.BaseModel):
    """A reply model written as lines, one ``name: value`` line per field (see the module)."""

    model_config = pydantic.ConfigDict(json_schema_extra={LINES: True})


def as_lines(model: type[pydantic.BaseModel]) -> type[pydantic.BaseModel]:
    """A subclass of the reply model ``model`` (same name, fields and checks; an instance is still a ``model``)
    that asks for the lines layout instead of JSON.

    Raises:
        TypeError: A field is neither a string, an integer nor a list of integers: it has no one-line form.
    """
    for name, info in model.model_fields.items():
        if _field_kind(info.annotation) is None:
            raise TypeError(f"{model.__name__}.{name}: no one-line form for {info.annotation!r}")
    return type(model.__name__, (model,), {"model_config": pydantic.ConfigDict(json_schema_extra={LINES: True}),
                                           "__doc__": model.__doc__, "__module__": model.__module__})


def _field_kind(annotation: Any) -> str | None:
    if annotation is str:
        return "text"
    if annotation is int:
        return "int"
    if annotation == list[int]:
        return "ints"
    return None


def is_lines(json_schema: dict[str, Any] | None) -> bool:
    """Whether a reply's JSON schema asks for the lines layout."""
    return bool(json_schema) and bool(json_schema.get(LINES))  # type: ignore[union-attr]


def _fields(json_schema: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, kind) of each field in written order: kind "text", "int" or "ints"."""
    out = []
    for name, prop in json_schema.get("properties", {}).items():
        kind = "ints" if prop.get("type") == "array" else "int" if prop.get("type") == "integer" else "text"
        out.append((name, kind))
    return out


_VALUE = {"text": "text", "int": "num", "ints": "num (\", \" num)*"}


def grammar(json_schema: dict[str, Any]) -> str:
    """The GBNF grammar (llama.cpp) of the reply: each field's line in order, a text value one line of at least
    one character that does not start with a space, numbers as digits (a list as ``1, 2``)."""
    body = ' "\\n" '.join(f'"{name}: " {_VALUE[kind]}' for name, kind in _fields(json_schema))
    return f'root ::= {body}\ntext ::= [^\\n ] [^\\n]*\nnum ::= [0-9]+\n'


def render(values: dict[str, Any]) -> str:
    """A reply as lines (the form :func:`parse` reads), e.g. a prompt's example output."""
    return "\n".join(f"{name}: {', '.join(map(str, v)) if isinstance(v, list) else v}" for name, v in values.items())


def parse(text: str, json_schema: dict[str, Any]) -> dict[str, Any]:
    """The fields of a lines reply, to be validated by its model. A field's value runs from its label to the next
    field's label at the start of a line, so a value broken over lines is read whole (its lines joined by a
    space); text before the first label is ignored; quotes are plain characters.

    Raises:
        ValueError: A field's line is missing, or a number field holds no number; the message is what a repair
            prompt shows the model.
    """
    fields = _fields(json_schema)
    names = "|".join(re.escape(name) for name, _ in fields)
    labels = list(re.finditer(rf"^[ \t]*({names})[ \t]*:[ \t]?", text, re.MULTILINE | re.IGNORECASE))
    found: dict[str, str] = {}
    for i, m in enumerate(labels):
        key = next(name for name, _ in fields if name.lower() == m.group(1).lower())
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        found.setdefault(key, " ".join(part.strip() for part in text[m.end():end].splitlines() if part.strip()))
    values: dict[str, Any] = {}
    for name, kind in fields:
        if name not in found:
            raise ValueError(f"no line starting '{name}: ' in the reply")
        if kind == "text":
            values[name] = found[name]
            continue
        numbers = [int(n) for n in re.findall(r"\d+", found[name])]
        if kind == "int" and not numbers:
            raise ValueError(f"the '{name}: ' line holds no number")
        values[name] = numbers if kind == "ints" else numbers[0]
    return values


def layout_note(json_schema: dict[str, Any]) -> str:
    """How a reply in this layout is laid out, in words, for a prompt or a repair request."""
    shown = ", ".join(f"'{name}: ...'" for name, _ in _fields(json_schema))
    return f"one line for each of {shown}, in this order, and nothing else"
