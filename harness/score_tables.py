"""The reading side of ``ragsweep score``: a file or a table of recorded RAG outputs -> samples.

Files: CSV, JSONL, JSON (a list of rows, a LlamaIndex ``{"examples": [...]}`` object, or an object
of equal-length column lists), Parquet, a saved ``datasets`` folder; in Python also a DataFrame, a
``datasets.Dataset`` or a list of dicts. The layout -- which tool wrote the table -- is told by its
columns (:mod:`gen.formats.layouts`), and every list cell that is text, from a file or a
DataFrame, is read with one grammar (:mod:`gen.formats.cells`): JSON, Python and numpy literals,
and the layout's delimiter (``;`` for ragas_once, ``|`` for DeepEval CSV). Ragas' ``<N-hop>``
markers are taken off the start of each context.

Several references (a list column such as ``ground_truths``) are all kept: ``RagSample.references``
holds them and ``reference`` is them joined by blank lines (:mod:`metrics.scoring` says which metric
uses which). A single-reference column (``reference``, ``ground_truth``, ``expected_output``) is
never split.

The unnamed first column pandas writes for its index (``Unnamed: 0`` or a blank header, holding
whole numbers) is dropped, with a note on stderr; any other column without a name is kept as
``Unnamed: <position>``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragsweep.gen import (
    CellError,
    Layout,
    detect,
    iter_json_lines,
    list_cell,
    normal,
    parse_literal,
    read_csv,
    read_json,
    strip_hop_marker,
    understood,
)
from ragsweep.metrics import FIELDS, InputError, RagSample, role, split

#: What to do with a test set (questions and references, no answers) handed to ``score``; every message
#: that recognises one ends with it, so the advice reads the same wherever it is given.
ANSWER_IT = ("answer it with your application (ragsweep run testset=FILE target=...) or sweep retrievers over it "
             "(ragsweep sweep testset=FILE)")

Table = tuple[list[str], list[dict[str, Any]], list[str]]
"""``(columns, rows, row labels for messages)``."""

_UNNAMED = re.compile(r"^Unnamed: \d+$")
_LIST_FIELDS = ("contexts", "reference_contexts")


def note(message: str) -> None:
    print(f"ragsweep: note: {message}", file=sys.stderr)


def _read_csv(path: Path) -> Table:
    header, labelled = read_csv(path)
    return header, [row for _, row in labelled], [label for label, _ in labelled]


def _read_jsonl(path: Path) -> Table:
    rows, labels = [], []
    for n, row in iter_json_lines(path):
        rows.append(row)
        labels.append(f"line {n}")
    return list(dict.fromkeys(k for r in rows for k in r)), rows, labels


def _read_json(path: Path) -> Table:
    """A JSON list of row objects, a LlamaIndex ``{"examples": [...]}``, or ``{column: [values]}``."""
    value = read_json(path)
    if isinstance(value, dict) and isinstance(value.get("examples"), list):
        value, label = value["examples"], "example"
    elif isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
        lengths = {len(v) for v in value.values()}
        if len(lengths) != 1:
            raise InputError(f"{path}: an object of column lists of different lengths "
                             f"({', '.join(f'{k}: {len(v)}' for k, v in value.items())})")
        value, label = [dict(zip(value, items)) for items in zip(*value.values())], "row"
    else:
        label = "item"
    if isinstance(value, dict) and {"queries", "corpus", "relevant_docs"} <= set(value):
        raise InputError(f"{path}: a LlamaIndex EmbeddingQAFinetuneDataset (queries, corpus, relevant_docs) is a "
                         f"retrieval test set with no answers to score: {ANSWER_IT}")
    if not isinstance(value, list):
        raise InputError(f"{path}: expected a JSON list of rows, an object {{\"examples\": [...]}} or an object "
                         f"of column lists, got {type(value).__name__}")
    for n, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise InputError(f"{path}, {label} {n}: expected a JSON object, got {type(item).__name__}")
    return (list(dict.fromkeys(k for r in value for k in r)), value,
            [f"{label} {n}" for n in range(1, len(value) + 1)])


def _read_parquet(path: Path) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a Parquet file ({exc})") from exc
    return table.column_names, table.to_pylist(), [f"row {i}" for i in range(1, table.num_rows + 1)]


def _read_dataset(path: Path, split_name: str | None) -> Table:
    import datasets

    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(f"{path}: not a saved datasets folder ({exc})") from exc
    if isinstance(ds, datasets.DatasetDict):
        if split_name is None and len(ds) != 1:
            raise InputError(f"{path}: splits {', '.join(ds)}; choose one with split=NAME")
        name = split_name if split_name is not None else next(iter(ds))
        if name not in ds:
            raise InputError(f"{path}: no split {name!r}; splits: {', '.join(ds)}")
        ds = ds[name]
    return ds.column_names, ds.to_list(), [f"row {i}" for i in range(1, len(ds) + 1)]


READERS: dict[str, Callable[[Path], Table]] = {
    ".csv": _read_csv, ".jsonl": _read_jsonl, ".json": _read_json, ".parquet": _read_parquet}


def read_table(path: str | Path, split: str | None = None) -> Table:
    """The rows of a CSV, JSONL, JSON, Parquet file or saved ``datasets`` folder, with a label per row."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    if path.is_dir():
        return without_index(_read_dataset(path, split), str(path))
    suffix = path.suffix.lower()
    if suffix not in READERS:
        raise InputError(f"{path}: unknown format {path.suffix!r}; expected {', '.join(READERS)} "
                         "or a saved datasets folder")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: empty file")
    return without_index(READERS[suffix](path), str(path))


def _whole_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())


def without_index(table: Table, where: str) -> Table:
    """The table without the unnamed index column pandas writes (``Unnamed: N`` of whole numbers)."""
    columns, rows, labels = table
    index = [c for c in columns if _UNNAMED.match(str(c)) and rows and all(_whole_number(r.get(c)) for r in rows)]
    if not index:
        return table
    note(f"{where}: column {', '.join(map(repr, index))} is an index written by pandas (no name, whole numbers); "
         "it is not read")
    return ([c for c in columns if c not in index], [{k: v for k, v in r.items() if k not in index} for r in rows],
            labels)


def field_columns(path: Path | str, columns: Iterable[str], layout: Layout | None = None) -> dict[str, str]:
    """Which input column feeds each sample field; two columns for one field is an InputError.

    Raises:
        InputError: No layout fits the columns (the message names the layouts understood).
    """
    columns = list(columns)
    layout = layout or layout_of(path, columns)
    by_name: dict[str, list[str]] = {}
    for c in columns:
        by_name.setdefault(normal(str(c)), []).append(str(c))
    out = {}
    for field, names in layout.fields.items():
        found = [c for n in names for c in by_name.get(n, [])]
        if len(found) > 1:
            raise InputError(f"{path}: columns {' and '.join(found)} both give the {field}; keep one")
        if found:
            out[field] = found[0]
    return out


def layout_of(where: Path | str, columns: Iterable[str]) -> Layout:
    columns = list(columns)
    layout = detect(str(c) for c in columns)
    if layout is None:
        shown = ", ".join(map(str, columns[:12])) + (", ..." if len(columns) > 12 else "")
        raise InputError(f"{where}: cannot tell what wrote this table from its columns ({shown or 'none'}); "
                         f"understood: {understood()}")
    return layout


def _typed_list(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"{where}: expected a list of strings, got {type(value).__name__} {str(value)[:60]!r}")


def list_value(cell: Any, where: str, delimiter: str | None) -> tuple[str, ...] | None:
    """A list cell: a list as it is; a string read with the cell grammar (blank: None), from a CSV file
    as from a DataFrame or JSON rows, so that one table reads alike however it arrived."""
    if isinstance(cell, str):
        try:
            cell = list_cell(cell, delimiter)
        except CellError as exc:
            raise InputError(f"{where}: a list cell that does not parse: {exc}") from None
    return _typed_list(cell, where)


def _typed_text(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"{where}: expected a string, got {type(value).__name__} {str(value)[:60]!r}")


def _turns(cell: Any, where: str) -> list[dict[str, Any]] | None:
    """The messages of a question cell that holds a conversation; None when it holds plain text."""
    value = cell
    if isinstance(value, str):
        if not value.lstrip().startswith("[{"):
            return None
        try:
            value = parse_literal(value.strip())
        except CellError as exc:
            raise InputError(f"{where}: a list of messages that does not parse: {exc}") from None
    if not isinstance(value, (list, tuple)):
        return None
    turns = []
    for i, msg in enumerate(value):
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), str) or \
                not isinstance(msg.get("role", msg.get("type")), str):
            raise InputError(f"{where}, message {i}: expected {{\"role\" (or \"type\"), \"content\"}} strings")
        turns.append({**{k: v for k, v in msg.items() if k not in ("type", "role")}, "role": role(msg)})
    return turns


def conversation_cell(cell: Any, where: str) -> tuple[str | None, tuple[dict[str, Any], ...] | None, str | None]:
    """``(question, history, answer)`` of a question cell: plain text -> ``(text, None, None)``; a list of
    messages -> its last user turn, the turns before it, and the assistant's reply after it (if any)."""
    turns = _turns(cell, where)
    if turns is None:
        return _typed_text(cell, where), None, None
    history, question, after = split(turns)
    if question is None:
        raise InputError(f"{where}: the conversation has no user (human) message")
    reply = next((str(t["content"]) for t in reversed(after) if t["role"] == "assistant"), None)
    return question, tuple(history) or None, reply


def _sample_values(row: dict[str, Any], where: str, label: str, fields: dict[str, str], layout: Layout,
                   text_cells: bool, delimited: bool) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field, col in fields.items():
        place, cell = f"{where} {label}, column {col}", row.get(col)
        if field == "question":
            question, history, reply = conversation_cell(cell, place)
            values["question"] = question if not text_cells or (question or "").strip() else None
            if history:
                values["history"] = history
            if reply is not None and "answer" not in fields:
                values["answer"] = reply
        elif normal(col) in layout.lists:
            items = list_value(cell, place, layout.delimiter if delimited else None)
            if field == "reference":
                values["reference"] = "\n\n".join(items) if items else None
                values["references"] = items or None
            else:
                values[field] = None if items is None else tuple(strip_hop_marker(t) for t in items)
        else:
            text = _typed_text(cell, place)
            if text is not None and text_cells and not text.strip():
                text = None
            # a layout whose one context is a text column (arcadia's chunk_content) gives a one-item list
            values[field] = (text,) if field in _LIST_FIELDS and text is not None else text
    return values


def samples_from_table(table: Table, where: str, *, text_cells: bool = False,
                       delimited: bool | None = None) -> tuple[list[RagSample], dict[str, str]]:
    """Map a table's columns onto sample fields by its layout (:mod:`gen.formats.layouts`).

    Args:
        table: ``(columns, rows, row labels)``.
        where: What to name in messages (a path, or "DataFrame").
        text_cells: Cells are CSV text: a blank cell is missing. A list cell that is a string is read
            with the cell grammar whatever this says (a DataFrame read from a CSV holds such strings).
        delimited: A plain list cell joins its items with the layout's delimiter, as in a CSV file or a
            DataFrame read from one (None: as ``text_cells``); False: it is one item (JSON rows).

    Returns:
        The samples and the column that feeds each field present.

    Raises:
        InputError: No rows, an unknown layout, a duplicate id, a cell of the wrong type (naming row and column).
    """
    columns, rows, labels = table
    if not rows:
        raise InputError(f"{where}: no rows")
    layout = layout_of(where, columns)
    fields = field_columns(where, columns, layout)
    samples, seen, replies = [], set(), 0
    for n, (row, label) in enumerate(zip(rows, labels), start=1):
        values = _sample_values(row, where, label, fields, layout, text_cells,
                                text_cells if delimited is None else delimited)
        replies += "answer" in values and "answer" not in fields
        raw_id = row.get("id")
        sid = str(n) if raw_id is None or str(raw_id).strip() == "" else str(raw_id).strip()
        if sid in seen:
            raise InputError(f"{where} {label}, column id: duplicate id {sid!r}")
        seen.add(sid)
        samples.append(RagSample(id=sid, **values))
    if replies:  # the answers are the conversations' last assistant messages
        fields["answer"] = fields["question"]
    return samples, fields


def read_samples(path: str | Path, split: str | None = None) -> tuple[list[RagSample], dict[str, str], Table]:
    """Read an input file into samples.

    Returns:
        The samples, the column of each field present, and the raw table (for ``result.csv``).

    Raises:
        InputError: Missing, empty or malformed file; unknown layout; duplicate id; a cell of the wrong type.
    """
    path = Path(path)
    table = read_table(path, split)
    samples, fields = samples_from_table(table, str(path), text_cells=path.suffix.lower() == ".csv")
    return samples, fields, table


def table_of(samples: Sequence[RagSample]) -> Table:
    """A table of the samples' own fields (an id column, then question, answer, contexts... as they have them)."""
    cols = [f for f in FIELDS[:5] if any(s.get(f) is not None for s in samples)]
    rows = [{"id": s.id, **{c: s.get(c) for c in cols}} for s in samples]
    return ["id", *cols], rows, [f"sample {i}" for i in range(1, len(samples) + 1)]


def samples_of(data: Any, split: str | None) -> tuple[list[RagSample], dict[str, str], Any]:
    """Samples from a path, a DataFrame, a ``datasets.Dataset``, a list of dicts or of RagSamples."""
    if isinstance(data, (str, Path)):
        return read_samples(data, split)
    if isinstance(data, Sequence) and data and all(isinstance(s, RagSample) for s in data):
        samples = list(data)
        fields = {f: f for f in ("question", "answer", "contexts", "reference", "reference_contexts")
                  if any(s.get(f) is not None for s in samples)}
        return samples, fields, table_of(samples)
    if type(data).__name__ == "DataFrame" and hasattr(data, "to_dict"):
        columns = [str(c) for c in data.columns]
        rows = [{k: plain_cell(v) for k, v in r.items()} for r in data.to_dict(orient="records")]
        where = "DataFrame"
    elif hasattr(data, "column_names") and hasattr(data, "to_list"):  # datasets.Dataset
        columns, rows, where = list(data.column_names), data.to_list(), "Dataset"
    elif isinstance(data, Sequence) and all(isinstance(r, Mapping) for r in data):
        rows = [dict(r) for r in data]
        columns, where = list(dict.fromkeys(k for r in rows for k in r)), "list"
    else:
        raise InputError(f"cannot score a {type(data).__name__}: pass a path, a DataFrame, a datasets.Dataset, "
                         "a list of dicts or a list of RagSample")
    table = without_index((columns, rows, [f"row {i}" for i in range(1, len(rows) + 1)]), where)
    # a DataFrame or Dataset is often read from a CSV file: its plain list cells are delimited as the file's
    samples, fields = samples_from_table(table, where, delimited=where != "list")
    return samples, fields, table


def plain_cell(value: Any) -> Any:
    """A pandas cell as plain Python: arrays and tuples to lists, NaN / None to None."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, float) and value != value:  # NaN: pandas' missing value
        return None
    return value
