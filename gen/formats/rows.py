"""What the test-set formats share: rows read with a label for messages, span ids, a sample's
reference contexts, conversation turns and the provenance an imported sample keeps.

An imported sample keeps everything its row held. Its provenance gains:

- ``format`` and ``row``: the format and the row it was read from (``"line 3"``, ``"item 2"``),
- ``reference_contexts`` (and ``reference_context_ids`` when the format names them): the reference
  contexts exactly as the file gave them; locating them in a corpus adds ``located``, one entry per
  context (``doc_id, start, end, method, score`` or ``method: unlocated``),
- ``fields``: ``{format: {field: value}}``, the row's other fields, verbatim, so that writing the
  sample back in the same format restores them (a CSV cell stays the string it was).

Writing a sample gives its reference contexts as the file gave them when it was imported, else the
text of its evidence spans, with ``<doc_id>:<start>-<end>`` span ids where the format holds ids.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragsweep.gen.documents import Corpus, Span
from ragsweep.gen.formats.cells import CellError, list_cell, strip_hop_marker
from ragsweep.gen.testset import TestSample
from ragsweep.metrics import InputError

_SPAN_ID = re.compile(r"^(?P<doc>.+):(?P<start>\d+)-(?P<end>\d+)$")
#: Ragas message types -> conversation roles (and back); other types are kept as they are.
ROLE_OF_TYPE = {"human": "user", "ai": "assistant", "tool": "tool"}
TYPE_OF_ROLE = {v: k for k, v in ROLE_OF_TYPE.items()}
#: Provenance keys written as a format's own fields, never inside its metadata.
CONTEXT_KEYS = ("reference_contexts", "reference_context_ids")


def span_id(span: Span) -> str:
    """``<doc_id>:<start>-<end>``: an evidence span as a context id (Ragas ids, LlamaIndex node ids)."""
    return f"{span.doc_id}:{span.start}-{span.end}"


def parse_span_id(value: Any) -> Span | None:
    """The span a :func:`span_id` names, or None when ``value`` is some other id."""
    m = _SPAN_ID.match(value) if isinstance(value, str) else None
    if m is None or int(m["start"]) >= int(m["end"]):
        return None
    return Span(m["doc"], int(m["start"]), int(m["end"]))


def bad(path: Path, label: str, field: str, message: str) -> InputError:
    """An InputError naming the file, the row and the field."""
    return InputError(f"{path}, {label}, field {field}: {message}")


# ---------------------------------------------------------------- reading

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def json_value(text: str, where: str) -> Any:
    """The value of a JSON text; errors name ``where`` and the line and column.

    Text that cannot be written back as UTF-8 (a lone surrogate escape such as ``"\\ud800"``) and
    nesting too deep for Python to read are errors, not exceptions found later when writing.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}, line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})") from exc
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deep to read") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{where}: a string holds a lone surrogate escape (\\ud800-\\udfff), "
                             "which is no character") from None
        except RecursionError:
            raise InputError(f"{where}: JSON nested too deep to read") from None
    return value


def read_json(path: Path) -> Any:
    """A JSON file's value; errors name the file, line and column."""
    if not path.is_file():
        raise InputError(f"{path}: test set not found")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return json_value(text, str(path))


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file (``.gz`` too); errors name
    the file and line."""
    gz = path.name.lower().endswith(".gz")
    with (gzip.open(path, "rt", encoding="utf-8-sig", newline="\n") if gz
          else path.open(encoding="utf-8-sig", newline="\n")) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                row = json_value(line, f"{path}, line {lineno}")
                if not isinstance(row, dict):
                    raise InputError(f"{path}, line {lineno}: expected a JSON object, got {type(row).__name__}")
                yield lineno, row
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
        except (OSError, EOFError) as exc:  # a damaged .gz
            raise InputError(f"{path}: cannot be read ({exc})") from exc


def _delimiter(text: str) -> str:
    """"," unless the header has no comma but a semicolon or a tab: spreadsheets in locales whose decimal mark is a
    comma save "CSV" with semicolons, and a one-column reading of such a header would only say that no column is
    known. Decided on the header alone, so a comma inside a later cell cannot change it."""
    end = text.find("\n")  # the first line only, without copying the rest of a large file
    header = next(csv.reader(io.StringIO(text if end < 0 else text[:end], newline="")), [])
    if len(header) == 1:
        for other in (";", "\t"):
            if other in header[0]:
                return other
    return ","


def read_csv(path: Path) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """A CSV file's header and its ``(row N, row)`` records, blank lines skipped: a clear error for text that is
    not UTF-8, a column named twice, a row with another number of fields than the header, or malformed CSV."""
    # Any field size: Python's csv refuses fields over 131,072 characters by default, and a passage, a long
    # answer or a result.csv's JSON list of contexts easily holds more.
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    # strict: an unbalanced quote is an error, not a cell that swallows the rest of the file
    delimiter = _delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows = []
    try:
        # a blank header (pandas' index) is named as pandas names it, so a file and its DataFrame read alike
        header = [h.strip() or f"Unnamed: {i}" for i, h in enumerate(next(reader, []))]
        if len(set(header)) != len(header):
            raise InputError(f"{path}: the header names a column twice: {', '.join(header)}")
        for n, cells in enumerate(reader, start=1):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise InputError(f"{path} row {n} (line {reader.line_num}): {len(cells)} fields, the header has "
                                 f"{len(header)} (an unquoted {'tab' if delimiter == chr(9) else repr(delimiter)} or quote?)")
            rows.append((f"row {n}", dict(zip(header, cells))))
    except csv.Error as exc:
        raise InputError(f"{path}: malformed CSV near line {reader.line_num}: {exc}") from exc
    return header, rows


def read_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(label, row)`` for every record of a JSONL (``line N``), JSON list (``item N``) or CSV (``row N``) file."""
    if not path.is_file():
        raise InputError(f"{path}: test set not found")
    name = path.name.lower()
    if name.endswith(".csv"):
        rows = read_csv(path)[1]
    elif name.endswith((".jsonl", ".jsonl.gz")):
        rows = [(f"line {n}", row) for n, row in iter_json_lines(path)]
    else:
        value = read_json(path)
        if not isinstance(value, list):
            raise InputError(f"{path}: expected a JSON list of objects, got {type(value).__name__}")
        rows = []
        for n, item in enumerate(value, start=1):
            if not isinstance(item, dict):
                raise InputError(f"{path}, item {n}: expected a JSON object, got {type(item).__name__}")
            rows.append((f"item {n}", item))
    if not rows:
        raise InputError(f"{path}: the test set is empty")
    return rows


def text_of(row: Mapping[str, Any], path: Path, label: str, name: str, *, required: bool = False) -> str | None:
    """A string field: None when absent; a blank or missing required field is an error."""
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise bad(path, label, name, "missing or empty")
        return value
    if not isinstance(value, str):
        raise bad(path, label, name, f"expected a string, got {type(value).__name__} {str(value)[:60]!r}")
    return value


def texts_of(row: Mapping[str, Any], path: Path, label: str, name: str, *, cells: bool = False,
             ids: bool = False, delimiter: str | None = None) -> list[str] | None:
    """A list-of-strings field (``ids``: strings or integers, read as strings); None when absent.

    ``cells``: a string is a CSV cell read with the cell grammar (:mod:`gen.formats.cells`), a plain
    cell's items joined by ``delimiter`` (None: a plain cell is one item)."""
    value = row.get(name)
    if cells and isinstance(value, str):
        try:
            value = list_cell(value, delimiter)
        except CellError as exc:
            raise bad(path, label, name, f"a list cell that does not parse: {exc}") from None
    if value is None:
        return None
    kinds = (str, int) if ids else (str,)
    if not isinstance(value, list) or not all(isinstance(v, kinds) and not isinstance(v, bool) for v in value):
        raise bad(path, label, name, f"expected a list of {'ids' if ids else 'strings'}, got {str(value)[:80]!r}")
    return [str(v) for v in value]


def turns_of(value: Any, path: Path, label: str, name: str, role_key: str) -> tuple[dict[str, Any], ...]:
    """Conversation turns as ``{"role", "content", ...}`` (every other key of a turn kept)."""
    if not isinstance(value, list) or not value:
        raise bad(path, label, name, "expected a non-empty list of messages")
    turns = []
    for i, msg in enumerate(value):
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), str) or not isinstance(msg.get(role_key), str):
            raise bad(path, label, f"{name}[{i}]", f"each message needs a string {role_key!r} and 'content'")
        rest = {k: v for k, v in msg.items() if k not in (role_key, "content")}
        role = ROLE_OF_TYPE.get(msg[role_key], msg[role_key]) if role_key == "type" else msg[role_key]
        turns.append({"role": role, "content": msg["content"], **rest})
    return tuple(turns)


def last_user_turn(turns: Sequence[Mapping[str, Any]]) -> str | None:
    return next((str(t["content"]) for t in reversed(turns) if t.get("role") == "user"), None)


def imported(sid: str, question: str, reference: str | None, contexts: list[str] | None, ids: list[str] | None,
             kind: str, fmt: str, label: str, fields: Mapping[str, Any], base: Mapping[str, Any] | None = None,
             conversation: tuple[dict[str, Any], ...] = ()) -> TestSample:
    """A sample read from a row: no evidence yet (locating its contexts gives it spans)."""
    prov: dict[str, Any] = dict(base or {})
    prov.setdefault("backend", "imported")
    prov.update(format=fmt, row=label)
    for key in CONTEXT_KEYS + ("located",):
        prov.pop(key, None)
    if contexts is not None:
        prov["reference_contexts"] = [strip_hop_marker(c) for c in contexts]
    if ids is not None:
        prov["reference_context_ids"] = list(ids)
    kept = {k: v for k, v in dict(prov.get("fields") or {}).items() if k != fmt}
    if fields:
        kept[fmt] = dict(fields)
    prov.pop("fields", None)
    if kept:
        prov["fields"] = kept
    return TestSample(sid, question, reference or "", (), kind, prov, conversation=conversation)


def unique_ids(samples: Iterable[TestSample], path: Path) -> list[TestSample]:
    out, seen = [], set()
    for s in samples:
        if s.id in seen:
            raise bad(path, str(s.provenance.get("row", "?")), "id", f"{s.id!r} appears twice")
        seen.add(s.id)
        out.append(s)
    return out


# ---------------------------------------------------------------- writing

def fields_for(sample: TestSample, fmt: str) -> dict[str, Any]:
    """The row fields a sample read from ``fmt`` kept, to be written back as they were."""
    return dict((sample.provenance.get("fields") or {}).get(fmt) or {})


def provenance_for(sample: TestSample, fmt: str) -> dict[str, Any]:
    """The provenance to store in a format's metadata: without what the format's own fields hold."""
    prov = {k: v for k, v in sample.provenance.items() if k not in CONTEXT_KEYS}
    fields = {k: v for k, v in dict(prov.pop("fields", None) or {}).items() if k != fmt}
    if fields:
        prov["fields"] = fields
    return prov


def contexts_of(sample: TestSample, corpus: Corpus | None) -> tuple[list[str], list[str] | None]:
    """A sample's reference contexts and their ids (None when some context has none).

    Imported contexts come back as the file gave them, with the file's ids or, once every one was
    located, span ids. Otherwise the contexts are the evidence spans' texts (from the corpus, or
    as quoted in the test set) with span ids.

    Raises:
        InputError: An evidence span whose text is unknown (neither a corpus nor a quote holds it).
    """
    prov = sample.provenance
    if prov.get("reference_contexts") is not None:
        texts = [str(t) for t in prov["reference_contexts"]]
        ids = prov.get("reference_context_ids")
        located = prov.get("located") or []
        if ids is None and len(located) == len(texts) and all("doc_id" in loc for loc in located):
            ids = [span_id(Span(loc["doc_id"], loc["start"], loc["end"])) for loc in located]
        return texts, None if ids is None else [str(i) for i in ids]
    texts = []
    quotes = sample.quotes or (None,) * len(sample.evidence)
    for span, quote in zip(sample.evidence, quotes):
        if corpus is not None and span.doc_id in corpus:
            texts.append(corpus.get(span.doc_id).text[span.start:span.end])
        elif quote is not None:
            texts.append(quote)
        else:
            raise InputError(f"sample {sample.id}: the text of evidence {span_id(span)} is unknown; "
                             "pass the corpus it points into")
    return texts, [span_id(s) for s in sample.evidence]


def write_atomic(path: Path, write: Callable[[io.TextIOBase], None]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            write(fh)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _cell(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Rows as JSONL, a JSON list (``.json``) or CSV (lists and objects as JSON cells)."""
    name = path.name.lower()
    if name.endswith(".csv"):
        header = list(dict.fromkeys(k for r in rows for k in r))

        def write(fh: Any) -> None:
            w = csv.writer(fh)
            w.writerow(header)
            w.writerows([[_cell(r.get(h)) for h in header] for r in rows])
    elif name.endswith(".json"):
        def write(fh: Any) -> None:
            json.dump(rows, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
    else:
        def write(fh: Any) -> None:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return write_atomic(path, write)


def write_json(path: Path, value: Any) -> Path:
    def write(fh: Any) -> None:
        json.dump(value, fh, indent=2, ensure_ascii=False)
        fh.write("\n")

    return write_atomic(path, write)
