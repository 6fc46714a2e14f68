"""What an application's response means: the :class:`Reply` every target returns, the error a failed call raises, and how a JSON
response is read into one -- paths into the response, a context item's text, id and score, the
structured citations it may carry, and a JSON-able copy of it kept as evidence."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragsweep.metrics import InputError


class TargetError(Exception):
    """A call that failed; ``retryable`` says whether trying again may help (a 503, a dropped connection)."""

    def __init__(self, message: str, *, retryable: bool, raw: Any = None) -> None:
        super().__init__(message)
        self.retryable, self.raw = retryable, raw


@dataclass(frozen=True)
class Reply:
    """What the application returned for one question.

    Attributes:
        answer: The answer text (None when the application gave none).
        contexts: The context strings it used, best first; None when it does not report them.
        scores: The application's own score per context, when it reports them.
        usage: Token counts it reported (``prompt_tokens``, ``completion_tokens``, ...).
        raw: The raw response (JSON-able), kept as evidence.
        citations: Per answer sentence, the contexts it cites, when the application returns a
            structured source list (``[{"sentence", "cites", "invalid"}, ...]``, 1-based, see
            :func:`cited_sentences`); None: read them from the answer's inline markers, if any.
    """

    answer: str | None
    contexts: list[str] | None = None
    scores: list[float] | None = None
    usage: dict[str, int] | None = None
    raw: Any = None
    citations: list[dict[str, Any]] | None = None



_STEP = re.compile(r"([^.\[\]]+)|\[(\*|-?\d+)\]")


def parse_path(path: str) -> list[str | int]:
    """``data.sources[*].text`` (or ``data.sources.*.text``) -> ``["data", "sources", "*", "text"]``;
    ``choices[0]`` and ``choices.0`` both index a list. A bad path is an InputError."""
    steps: list[str | int] = []
    pos = 0
    text = path.strip()
    while pos < len(text):
        if text[pos] == "." and steps:
            pos += 1
        m = _STEP.match(text, pos)
        if m is None:
            raise InputError(f"bad response path {path!r} (expected e.g. answer, data.sources[*].text, choices[0].text)")
        key, index = m.groups()
        step = key if key is not None else index
        steps.append(step if step == "*" or not re.fullmatch(r"-?\d+", step) else int(step))
        pos = m.end()
    if not steps:
        raise InputError("empty response path")
    return steps


def get_path(value: Any, path: str) -> Any:
    """The value at ``path``; ``[*]`` maps the rest of the path over a list. Missing -> KeyError."""

    def walk(node: Any, steps: Sequence[str | int]) -> Any:
        for i, step in enumerate(steps):
            if step == "*":
                if not isinstance(node, list):
                    raise KeyError(f"{path}: [*] on a {type(node).__name__}, not a list")
                return [walk(item, steps[i + 1:]) for item in node]
            if isinstance(step, int) and isinstance(node, Mapping) and str(step) in node:
                node = node[str(step)]  # a field named like a number
            elif isinstance(step, int):
                if not isinstance(node, list) or not -len(node) <= step < len(node):
                    raise KeyError(f"{path}: no item [{step}]")
                node = node[step]
            else:
                if not isinstance(node, Mapping) or step not in node:
                    raise KeyError(f"{path}: no field {step!r}")
                node = node[step]
        return node

    return walk(value, parse_path(path))


_TEXT_FIELDS = ("text", "page_content", "content", "chunk", "document", "passage")


def context_text(item: Any) -> str:
    """A context as a string: a string, a dict with a text field, a LangChain Document, a LlamaIndex node."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        for key in _TEXT_FIELDS:
            if isinstance(item.get(key), str):
                return item[key]
        raise TargetError(f"a context without a text field ({', '.join(_TEXT_FIELDS)}): keys {sorted(item)}",
                          retryable=False)
    node = getattr(item, "node", None)  # LlamaIndex NodeWithScore
    if node is not None and callable(getattr(node, "get_content", None)):
        return str(node.get_content())
    for attr in ("page_content", "text"):  # LangChain Document, LlamaIndex TextNode
        if isinstance(getattr(item, attr, None), str):
            return getattr(item, attr)
    raise TargetError(f"cannot read a context from a {type(item).__name__}", retryable=False)


_ID_FIELDS = ("id", "doc_id", "node_id", "source_id", "chunk_id")


def context_id(item: Any) -> str | None:
    """A context's id when it carries one (a mapping's id field, a LlamaIndex node's ``node_id``, a
    LangChain Document's ``id`` or ``metadata["source"]``)."""
    if isinstance(item, Mapping):
        found = next((item[k] for k in _ID_FIELDS if item.get(k) is not None), None)
        return None if found is None else str(found)
    node = getattr(item, "node", item)
    for attr in ("node_id", "id", "id_"):
        if isinstance(getattr(node, attr, None), (str, int)):
            return str(getattr(node, attr))
    source = (getattr(item, "metadata", None) or {}).get("source") if isinstance(
        getattr(item, "metadata", None), Mapping) else None
    return None if source is None else str(source)


def cited_sentences(given: Any, items: Sequence[Any] | None, base: int = 1, where: str = "citations") -> list[dict[str, Any]]:
    """An application's structured per-sentence source list as run-record citations.

    ``given`` is a list of ``{"text": sentence, "sources": [...]}`` (see
    :func:`ragsweep.metrics.citations.structured` for the keys it accepts). A source is a context's
    number (``base``: 1 for the first context, or 0), its id (:func:`context_id`) or its text; one that
    names no returned context is recorded as an invalid citation, never an error.
    """
    from ragsweep.metrics import structured_citations as structured

    if not isinstance(given, list):
        raise TargetError(f"{where} must be a list of {{text, sources}} objects, got {type(given).__name__}",
                          retryable=False)
    items = list(items or [])
    ids = [context_id(c) for c in items]
    texts = [context_text(c) for c in items]

    def resolve(source: Any) -> int | None:
        if isinstance(source, bool):
            return None
        if isinstance(source, int) or (isinstance(source, str) and source.strip().isdigit()
                                       and source.strip() not in ids):
            return int(source) - base + 1
        if isinstance(source, str):
            for i, (cid, text) in enumerate(zip(ids, texts), start=1):
                if source == cid or source.strip() == text.strip():
                    return i
        return None

    try:
        return [c.to_dict() for c in structured(given, len(items) if items else None, resolve)]
    except ValueError as exc:
        raise TargetError(f"{where}: {exc}", retryable=False) from None


def context_score(item: Any) -> float | None:
    score = item.get("score") if isinstance(item, Mapping) else getattr(item, "score", None)
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def reply_from(value: Any, *, answer_key: str = "answer", contexts_key: str = "contexts", raw: Any = None,
               citations_key: str | None = "citations", citation_base: int = 1) -> Reply:
    """A Reply from what a Python application returned: a string, or a mapping with answer and contexts
    (and, under ``citations_key``, a structured per-sentence source list, :func:`cited_sentences`)."""
    if isinstance(value, str):
        return Reply(value, raw=value if raw is None else raw)
    if not isinstance(value, Mapping):
        raise TargetError(f"the application returned a {type(value).__name__}: expected a string or "
                          f"{{{answer_key!r}: ..., {contexts_key!r}: [...]}}", retryable=False)
    answer = value.get(answer_key)
    items = value.get(contexts_key)
    if items is not None and (isinstance(items, (str, bytes)) or not isinstance(items, Sequence)):
        raise TargetError(f"{contexts_key!r} must be a list of strings, got {type(items).__name__}", retryable=False)
    contexts = None if items is None else [context_text(c) for c in items]
    scores = None if items is None else [context_score(c) for c in items]
    usage = value.get("usage")
    cited = (cited_sentences(value[citations_key], items, citation_base, citations_key)
             if citations_key and value.get(citations_key) is not None else None)
    return Reply(None if answer is None else str(answer), contexts,
                 scores if scores and all(s is not None for s in scores) else None,  # type: ignore[arg-type]
                 usage_of(usage), jsonable(value) if raw is None else raw, cited)


def usage_of(value: Any) -> dict[str, int] | None:
    if not isinstance(value, Mapping):
        return None
    out = {str(k): int(v) for k, v in value.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return out or None


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-able copy of a response (objects as their text or repr), for the run records."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 6:
        return repr(value)[:200]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    try:
        return context_text(value)
    except TargetError:
        return repr(value)[:500]


