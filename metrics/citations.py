"""Citations in answers: which returned contexts each answer sentence cites, read from inline markers.

An application that cites writes markers that index the contexts it was given, 1-based, in the order
it returned them: ``[1]``, ``[1, 3]``, ``[1][2]``, ``[1-3]``, Markdown footnotes ``[^1]`` and the
full-width ``【1】`` some models write. :func:`parse_answer` splits the answer into the sentences the
sentence judge reads (:func:`metrics.offline.sentences`), gives each the contexts its markers name,
and returns the answer with every marker stripped, which is what the other metrics score (a
faithfulness judge must not read "[2]" as content).

- A marker placed after the sentence's full stop ("... in 1871.[2] Next ...", "... in 1871. [2]")
  belongs to the sentence before it, as writers mean it.
- A number that names no context (``[0]``, or ``[7]`` of five contexts) is recorded under the
  sentence's ``invalid`` list and cites nothing; it is never an error. Without a context count
  (``n_contexts=None``) every positive number is taken as given.
- Footnote definitions (a line ``[^1]: ...`` or ``[1]: ...``) are the answer's source list, not
  sentences of it: they are dropped.

The metrics built on these records are in :mod:`metrics.attribution`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragsweep.metrics import offline

_NUM = r"\^?\s*\d+(?:\s*[-\u2013]\s*\d+)?"
#: One marker: [1], [1, 3], [1; 2], [1-3], [^1], 【1】, 【1，2】.
_ONE = rf"\[\s*{_NUM}(?:\s*[,;\uff0c]\s*{_NUM})*\s*\]|\u3010\s*{_NUM}(?:\s*[,;\uff0c\u3001]\s*{_NUM})*\s*\u3011"
MARKER = re.compile(_ONE)
_RUN = rf"(?:\s*(?:{_ONE}))+"
#: Markers written after a sentence's closing punctuation: moved before it, so the sentence keeps them.
_AFTER_STOP = re.compile(rf"(?P<stop>[.!?\u3002])(?P<marks>{_RUN})")
#: A footnote or reference-list definition line: ``[^1]: Source ...``, ``[2]: ...``.
_DEFINITION = re.compile(rf"^\s*(?:{_ONE})\s*:.*$", re.MULTILINE)
_RANGE = re.compile(r"(\d+)\s*[-\u2013]\s*(\d+)")
#: Longest range a marker may span ([1-3] is three citations; [1-999] is not a citation).
MAX_RANGE = 20


@dataclass(frozen=True)
class CitedSentence:
    """One answer sentence and what it cites.

    Attributes:
        sentence: The sentence with its markers stripped.
        cites: The contexts it cites, 1-based, distinct, in the order first cited.
        invalid: Marker numbers that name no context (0, or beyond the contexts returned).
    """

    sentence: str
    cites: tuple[int, ...] = ()
    invalid: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "cites": list(self.cites), "invalid": list(self.invalid)}

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> CitedSentence:
        return cls(str(row["sentence"]), tuple(int(i) for i in row.get("cites") or ()),
                   tuple(int(i) for i in row.get("invalid") or ()))


@dataclass(frozen=True)
class CitedAnswer:
    """An answer with its markers stripped, and its sentences with what each cites."""

    answer: str
    sentences: tuple[CitedSentence, ...]

    @property
    def cites_anything(self) -> bool:
        """Whether any sentence carries a marker (valid or not)."""
        return any(s.cites or s.invalid for s in self.sentences)


def marker_numbers(marker: str) -> list[int]:
    """The numbers one marker names, ranges expanded: ``[1, 3-4]`` -> ``[1, 3, 4]``."""
    out: list[int] = []
    for part in re.split(r"[,;\uff0c\u3001]", marker.strip("[]\u3010\u3011")):
        part = part.replace("^", "").strip()
        span = _RANGE.fullmatch(part)
        if span:
            lo, hi = int(span[1]), int(span[2])
            out.extend(range(lo, hi + 1) if 0 <= hi - lo < MAX_RANGE else (lo, hi))
        elif part.isdigit():
            out.append(int(part))
    return out


def split_numbers(numbers: Iterable[int], n_contexts: int | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(valid, invalid): each distinct number in order; valid when it names one of ``n_contexts``."""
    valid: list[int] = []
    invalid: list[int] = []
    for k in numbers:
        ok = k >= 1 and (n_contexts is None or k <= n_contexts)
        bucket = valid if ok else invalid
        if k not in bucket:
            bucket.append(k)
    return tuple(valid), tuple(invalid)


def strip_markers(text: str) -> str:
    """``text`` without citation markers, and without the space a marker leaves before punctuation."""
    out = MARKER.sub("", text)
    out = re.sub(r"[ \t]+([.,;:!?\u3002])", r"\1", out)
    return re.sub(r"[ \t]{2,}", " ", out).strip()


def parse_answer(text: str | None, n_contexts: int | None = None) -> CitedAnswer:
    """The answer's sentences with the contexts their markers cite, and the answer without markers.

    Args:
        text: The answer as the application wrote it.
        n_contexts: How many contexts the markers index (those returned with the answer); None: unknown.
    """
    body = _DEFINITION.sub("", text or "")
    body = _AFTER_STOP.sub(lambda m: f"{m['marks']}{m['stop']}", body)
    sentences = []
    pieces = re.split(r"(?<=[\u3002\uff01\uff1f])", body)  # the full-width stops the splitter does not know
    for raw in (s for piece in pieces for s in offline.sentences(piece)):
        numbers = [k for m in MARKER.finditer(raw) for k in marker_numbers(m.group(0))]
        plain = strip_markers(raw)
        if not plain:  # a marker alone on a line: it cites for the sentence before it
            if sentences:
                last = sentences[-1]
                valid, invalid = split_numbers([*last.cites, *last.invalid, *numbers], n_contexts)
                sentences[-1] = CitedSentence(last.sentence, valid, invalid)
            continue
        valid, invalid = split_numbers(numbers, n_contexts)
        sentences.append(CitedSentence(plain, valid, invalid))
    stripped = "\n".join(strip_markers(line) for line in body.split("\n"))
    return CitedAnswer(re.sub(r"\n{3,}", "\n\n", stripped).strip(), tuple(sentences))


def structured(items: Sequence[Mapping[str, Any]], n_contexts: int | None,
               resolve: Any = None) -> tuple[CitedSentence, ...]:
    """Sentences from a structured per-sentence source list: ``[{"text": ..., "sources": [...]}, ...]``.

    A source is a 1-based context number, or (with ``resolve``, a function from a source to its
    1-based number or None) a context's id or text. A source nothing resolves is recorded as
    invalid (as 0 when it is not a number). Sentence keys: ``text``, ``sentence`` or ``statement``;
    source keys: ``sources``, ``citations``, ``cites`` or ``source`` (one value or a list).
    """
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ValueError(f"citations[{i}] is a {type(item).__name__}, not an object with text and sources")
        text = next((item[k] for k in ("text", "sentence", "statement") if isinstance(item.get(k), str)), None)
        if text is None:
            raise ValueError(f"citations[{i}] has no text (text, sentence or statement): keys {sorted(item)}")
        given = next((item[k] for k in ("sources", "citations", "cites", "source") if k in item), [])
        given = given if isinstance(given, list) else [given]
        numbers = []
        for source in given:
            k = resolve(source) if resolve is not None else None
            if k is None and isinstance(source, int) and not isinstance(source, bool):
                k = source
            elif k is None and isinstance(source, str) and source.strip().isdigit():
                k = int(source)
            numbers.append(0 if k is None else k)
        valid, invalid = split_numbers(numbers, n_contexts)
        out.append(CitedSentence(strip_markers(text), valid, invalid))
    return tuple(out)
