"""``ragsweep score``: score recorded RAG outputs from a file and gate on thresholds.

Reads CSV, JSONL, Parquet or a saved ``datasets`` folder whose columns use the usual
names (``question, contexts, answer, ground_truths`` or ``user_input, retrieved_contexts,
response, reference, reference_contexts``), scores every row with the chosen metrics and writes
``result.csv``, ``summary.csv`` and ``explanations.jsonl`` to ``out``. Exit code 0 when every
threshold holds, 1 when one fails, 2 on bad input (``out`` is checked before any work), 3 when
nothing could be scored (every judged score is an error). A blank or missing answer earns no credit
on the metrics that read the answer (``empty_answers=fail``) or is left out (``exclude``); the
summary counts them. A default ``out`` (named by the clock) is claimed for this run alone, and
results that cannot be written to ``out`` at the end go to a fallback folder
(:mod:`ragsweep.harness.outputs`).

List cells in CSV (contexts, reference contexts, ground truths) are split on ``;``; a cell that
holds a list literal (``["a; b", "c"]`` as JSON, or ``['a', 'b']`` as pandas writes lists) is
read as that list, which is the way to keep a ``;`` inside a passage. With several ground
truths the first is the reference the metrics see; the input cell is copied to ``result.csv``
unchanged, so none is lost.

Conversations: the question cell (``question``, ``user_input``, ``messages`` or ``conversation``) may
hold a list of messages -- Ragas' multi-turn shape ``[{"type": "human" | "ai", "content": ...}, ...]``
or a plain ``[{"role": "user" | "assistant", "content": ...}, ...]`` (a JSON list, in a CSV cell as
text). Its last user message is the question and the messages before it the history
(:mod:`metrics.conversation`: judged metrics see it, the others read the last turn); an assistant
message after it is the answer when no answer column is given (Ragas keeps the response so).
"""

from __future__ import annotations

import ast
import asyncio
import csv
import io
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from ragsweep.gen.documents import iter_jsonl
from ragsweep.harness.cache import atomic_write
from ragsweep.harness.outputs import check_writable, config_yaml, named_by_clock, save
from ragsweep.harness.parts import build
from ragsweep.metrics.catalogue import FIELDS, MetricSpec, RagSample, catalogue, resolve
from ragsweep.metrics.conversation import role, split
from ragsweep.metrics.errors import EXIT_NOT_SCORED, InputError, fail, scrub, scrub_all
from ragsweep.metrics.refusal import is_unanswerable
from ragsweep.metrics.scoring import (
    EMPTY_ANSWERS,
    check_thresholds,
    metric_kwargs,
    outcome,
    score_samples,
    summary_rows,
)

#: Accepted column names for each sample field, in the order they are looked for.
ALIASES: dict[str, tuple[str, ...]] = {
    "question": ("question", "user_input", "messages", "conversation"),
    "answer": ("answer", "response"),
    "contexts": ("contexts", "retrieved_contexts"),
    "reference": ("reference", "ground_truth", "ground_truths"),
    "reference_contexts": ("reference_contexts",),
}
LIST_COLUMNS = {"contexts", "retrieved_contexts", "reference_contexts", "ground_truths"}

Table = tuple[list[str], list[dict[str, Any]], list[str]]
"""``(columns, rows, row labels for messages)``."""


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _read_csv(path: Path) -> Table:
    rows, labels = [], []
    # Any field size: Python's csv refuses fields over 131,072 characters by default, and a
    # context, a long answer or a result.csv's JSON list of contexts easily holds more.
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    # strict: an unbalanced quote is an error, not a cell that swallows the rest of the file
    reader = csv.reader(io.StringIO(_text(path), newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        if len(set(header)) != len(header):
            raise InputError(f"{path}: header names a column twice: {', '.join(header)}")
        for i, cells in enumerate(reader, start=1):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise InputError(f"{path} row {i} (line {reader.line_num}): {len(cells)} fields, "
                                 f"header has {len(header)} (unquoted comma or quote?)")
            rows.append(dict(zip(header, cells)))
            labels.append(f"row {i}")
    except csv.Error as exc:
        raise InputError(f"{path}: malformed CSV near line {reader.line_num}: {exc}") from exc
    return header, rows, labels


def _read_jsonl(path: Path) -> Table:
    rows, labels = [], []
    for n, row in iter_jsonl(path):
        rows.append(row)
        labels.append(f"line {n}")
    return list(dict.fromkeys(k for r in rows for k in r)), rows, labels


def _read_parquet(path: Path) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a Parquet file ({exc})") from exc
    return table.column_names, table.to_pylist(), [f"row {i}" for i in range(1, table.num_rows + 1)]


def _read_dataset(path: Path, split: str | None) -> Table:
    import datasets

    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(f"{path}: not a saved datasets folder ({exc})") from exc
    if isinstance(ds, datasets.DatasetDict):
        if split is None and len(ds) != 1:
            raise InputError(f"{path}: splits {', '.join(ds)}; choose one with split=NAME")
        name = split if split is not None else next(iter(ds))
        if name not in ds:
            raise InputError(f"{path}: no split {name!r}; splits: {', '.join(ds)}")
        ds = ds[name]
    return ds.column_names, ds.to_list(), [f"row {i}" for i in range(1, len(ds) + 1)]


def _list_cell(text: str, where: str) -> tuple[str, ...] | None:
    """A CSV list cell: a JSON or Python list literal, else ``;``-separated items; blank -> None."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("[") and text.endswith("]"):
        value: Any = None
        for parse in (json.loads, ast.literal_eval):
            try:
                value = parse(text)
                break
            except (ValueError, SyntaxError):
                continue
        if value is None and text[:2] in ('["', "['"):
            raise InputError(f"{where}: a list literal that does not parse")
        if value is not None:
            return _typed_list(value, where)
    return tuple(p.strip() for p in text.split(";") if p.strip())


def _typed_list(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise InputError(f"{where}: expected a list of strings, got {type(value).__name__} {str(value)[:60]!r}")


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
            value = json.loads(value)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError):
                raise InputError(f"{where}: a list of messages that does not parse") from None
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


def field_columns(path: Path, columns: Iterable[str]) -> dict[str, str]:
    """Which input column feeds each sample field; two columns for one field is an InputError."""
    present = set(columns)
    out = {}
    for field, names in ALIASES.items():
        found = [n for n in names if n in present]
        if len(found) > 1:
            raise InputError(f"{path}: columns {' and '.join(found)} both give the {field}; keep one")
        if found:
            out[field] = found[0]
    return out


def read_table(path: str | Path, split: str | None = None) -> Table:
    """The rows of a CSV, JSONL, Parquet file or saved ``datasets`` folder, with a label per row for messages."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    if path.is_dir():
        table = _read_dataset(path, split)
    else:
        readers: dict[str, Callable[[Path], Table]] = {
            ".csv": _read_csv, ".jsonl": _read_jsonl, ".parquet": _read_parquet}
        if path.suffix.lower() not in readers:
            raise InputError(f"{path}: unknown format {path.suffix!r}; expected .csv, .jsonl, .parquet "
                             "or a saved datasets folder")
        if path.stat().st_size == 0:
            raise InputError(f"{path}: empty file")
        table = readers[path.suffix.lower()](path)
    return table


def samples_from_table(table: Table, where: str, *, text_cells: bool = False) -> tuple[list[RagSample], dict[str, str]]:
    """Map a table's columns onto sample fields (the usual column names, see ``ALIASES``).

    Args:
        table: ``(columns, rows, row labels)``.
        where: What to name in messages (a path, or "DataFrame").
        text_cells: Cells are CSV text: list columns hold ``;``-separated items or a list literal,
            and a blank cell is missing.

    Returns:
        The samples and the column that feeds each field present.

    Raises:
        InputError: No rows, a duplicate id, a cell of the wrong type (naming row and column).
    """
    columns, rows, labels = table
    if not rows:
        raise InputError(f"{where}: no rows")
    fields = field_columns(Path(where), columns)
    samples, seen, replies = [], set(), 0
    for n, (row, label) in enumerate(zip(rows, labels), start=1):
        values: dict[str, Any] = {}
        for field, col in fields.items():
            place, cell = f"{where} {label}, column {col}", row.get(col)
            if field == "question":
                question, history, reply = conversation_cell(cell, place)
                values["question"] = question if not text_cells or (question or "").strip() else None
                if history:
                    values["history"] = history
                if reply is not None and "answer" not in fields:
                    values["answer"], replies = reply, replies + 1
            elif col in LIST_COLUMNS:
                items = _list_cell(cell, place) if text_cells else _typed_list(cell, place)
                values[field] = (items[0] if items else None) if field == "reference" else items
            elif text_cells:
                values[field] = cell if cell.strip() else None
            else:
                values[field] = _typed_text(cell, place)
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
        InputError: Missing, empty or malformed file; duplicate id; a cell of the wrong type.
    """
    path = Path(path)
    table = read_table(path, split)
    samples, fields = samples_from_table(table, str(path), text_cells=path.suffix.lower() == ".csv")
    return samples, fields, table


DEFAULT_JUDGED = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def choose_metrics(path: Path, names: list[str] | None, fields: dict[str, str], has_judge: bool,
                   unanswerable: bool = False) -> list[MetricSpec]:
    """The requested metrics (each checked against the columns), or every metric the file supports
    (``refusal`` only when ``unanswerable``: some sample's reference is "not in the knowledge base")."""
    if names is None:
        # Judged metrics by default: the four that answer "is it grounded, on topic, well retrieved"
        # (about 4 judge calls a sample); the others are one `metrics=[...]` away.
        specs = [s for s in catalogue().values() if set(s.inputs) <= set(fields)
                 and (not s.needs_judge or (has_judge and s.name in DEFAULT_JUDGED))
                 and (unanswerable or not s.scores_unanswerable)]
        if not specs:
            raise InputError(f"{path}: no metric can be scored from columns {', '.join(fields) or 'none'} "
                             f"(known fields: {', '.join(FIELDS)})")
        return specs
    specs = resolve(names)
    missing = [(s.name, f) for s in specs for f in s.inputs if f not in fields]
    if missing:
        name, field = missing[0]
        raise InputError(f"{path}: no column {' or '.join(ALIASES[field])}, which metric {name} needs")
    return specs


def _cell(value: Any) -> str:
    # lists as JSON literals, which the CSV reader reads back exactly (even with a ';' inside)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            w.writerows(scrub_all([[_cell(c) for c in r] for r in rows]))  # no credential an input or judge echoed

    atomic_write(path, write)


def write_outputs(out: Path, samples: list[RagSample], table: Table, specs: list[MetricSpec],
                  scored: list, summary: list[dict[str, Any]], cfg_yaml: str) -> None:
    """``result.csv``, ``summary.csv``, ``explanations.jsonl`` and the resolved ``config.yaml``."""
    columns, rows, _ = table
    inputs = [c for c in columns if c != "id"]
    m = len(specs)
    header = ["id", *inputs, *[c for s in specs for c in (s.name, f"{s.name}_status")]]
    lines = []
    for i, (sample, row) in enumerate(zip(samples, rows)):
        results = [r.result for r in scored[i * m:(i + 1) * m]]
        lines.append([sample.id, *[row.get(c) for c in inputs],
                      *[c for r in results for c in (r.value, r.status)]])
    _write_csv(out / "result.csv", header, lines)
    keys = ["metric", "mean", "ci_low", "ci_high", "n_ok", "n_undefined", "n_error", "n_empty", "threshold",
            "passed", "reason"]
    flat = [[str(r.get(k)).lower() if isinstance(r.get(k), bool) else r.get(k) for k in keys] for r in summary]
    _write_csv(out / "summary.csv", keys, flat)
    # Explanations carry error texts from servers: scrubbed of anything that looks like a credential.
    text = "".join(json.dumps({"sample_id": r.sample_id, "metric": r.metric, "value": r.result.value,
                               "status": r.result.status, "explanation": scrub_all(r.result.explanation)},
                              ensure_ascii=False, default=str) + "\n" for r in scored)
    atomic_write(out / "explanations.jsonl", lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    if cfg_yaml:
        atomic_write(out / "config.yaml", lambda tmp: Path(tmp).write_text(scrub(cfg_yaml), encoding="utf-8"))


def format_summary(summary: list[dict[str, Any]]) -> str:
    """The summary as a fixed-width text table."""
    def num(v: Any) -> str:
        return "-" if v is None or v == "" else f"{v:.4f}" if isinstance(v, float) else str(v).lower()

    head = ("metric", "mean", "95% CI", "ok", "undef", "error", "empty", "threshold", "passed")
    body = [(r["metric"], num(r["mean"]),
             "-" if r["ci_low"] is None else f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}]",
             str(r["n_ok"]), str(r["n_undefined"]), str(r["n_error"]), num(r.get("n_empty")),
             num(r["threshold"]), num(r["passed"])) for r in summary]
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in (head, *body))


def _names(value: Any) -> list[str] | None:
    """``metrics`` as a list of names: a list, a comma-separated string, or None (choose from the file)."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else [str(n) for n in value]
    if not any(names):
        raise InputError("metrics selects no metric; name some, or leave metrics unset for all the file supports")
    return [n for n in names if n]


def dry_run(samples: list[RagSample], specs: list[MetricSpec], options: Any, path: Path, concurrency: int) -> int:
    """Run the metrics against a recording fake judge: print the calls and tokens a real run would spend."""
    from ragsweep.metrics.llm.dryrun import DryRunEmbedder, DryRunLLM, dry_run_report

    print(f"dry run: {len(samples)} samples from {path}")
    print(f"metrics: {', '.join(s.name for s in specs)}")
    judged = [s for s in specs if s.needs_judge]
    if not judged:
        print("judge calls: 0")
        return 0
    judge = DryRunLLM()
    asyncio.run(score_samples(samples, judged, judge=judge, embedder=DryRunEmbedder(), options=options,
                              concurrency=concurrency, progress=False))
    print(dry_run_report(judge.calls, n_samples=len(samples)))
    return 0


def _out(cfg: DictConfig) -> tuple[Path, bool]:
    """``out`` checked for writing before any work (InputError if it cannot be), and whether it is
    named by the clock (then claimed for this run alone when the results are written)."""
    raw = OmegaConf.to_container(cfg, resolve=False).get("out")  # type: ignore[union-attr]
    if cfg.out is None or not str(cfg.out).strip():
        raise InputError("out is empty: name the folder for the results, e.g. out=reports/today")
    out, claim = Path(str(cfg.out)), named_by_clock(raw)
    check_writable(out.parent if claim else out)  # a clock-named out may be another run's already
    return out, claim


def run(cfg: DictConfig) -> int:
    """Score ``cfg.input``; returns the exit code (0 thresholds hold, 1 one fails, 3 nothing scored)."""
    if not cfg.input:
        raise InputError("which file? ragsweep score input=FILE")
    path = Path(str(cfg.input))
    out, claim = _out(cfg)
    empty_answers = str(cfg.empty_answers)
    if empty_answers not in EMPTY_ANSWERS:
        raise InputError(f"empty_answers must be one of {', '.join(EMPTY_ANSWERS)}, got {empty_answers!r}")
    samples, fields, table = read_samples(path, cfg.split)
    # The llm config group builds the judge (its `none` option builds None); unset, no judge.
    judge = build(cfg.llm, "llm") if cfg.llm is not None else None
    specs = choose_metrics(path, _names(cfg.metrics), fields, judge is not None,
                           any(is_unanswerable(s.reference) for s in samples))
    thresholds = check_thresholds(OmegaConf.to_container(cfg.thresholds), specs)
    options = OmegaConf.to_container(cfg.metric_options)
    for spec in specs:  # check options before a dry run reports success
        metric_kwargs(spec, options)
    judged = [s.name for s in specs if s.needs_judge]
    if cfg.dry_run:
        return dry_run(samples, specs, options, path, int(cfg.concurrency or 4))
    if judged and judge is not None:
        judge.identity()  # fail fast (exit 2) when the model is missing, before any sample is scored
    embedder = build(cfg.embedder, "embedder") if any(s.needs_embedder for s in specs) else None
    concurrency = cfg.concurrency
    if concurrency is None:  # as many calls as the judge serves at once (1 for an in-process model)
        from ragsweep.metrics.llm.factory import concurrency_of

        concurrency = concurrency_of(judge) if judge is not None else 4
    try:
        scored = asyncio.run(score_samples(samples, specs, judge=judge, embedder=embedder, options=options,
                                           concurrency=int(concurrency), progress=bool(cfg.progress),
                                           empty_answers=empty_answers))
    finally:
        for part in (judge, getattr(judge, "inner", None)):
            if callable(getattr(part, "close", None)):
                part.close()
    summary = summary_rows(scored, specs, thresholds, seed=int(cfg.seed))
    code, lines = outcome(scored, specs, summary)
    folder, problem = save(out, lambda into, final: write_outputs(into, samples, table, specs, scored, summary,
                                                                  config_yaml(cfg, out=str(final))),
                           claim=claim, command="score")
    print(format_summary(summary))
    print(f"\nscores: {folder}")
    for line in lines:
        print(line, file=sys.stderr if code == EXIT_NOT_SCORED else sys.stdout)
    if problem:  # the work is kept elsewhere; the exit code says the results are not where asked
        print(f"ragsweep: error: {problem}; {out} is left as it was; the results are in {folder}", file=sys.stderr)
        return problem.code
    return code


@hydra.main(version_base="1.3", config_path="pkg://ragsweep.conf", config_name="score")
def score_app(cfg: DictConfig) -> None:
    try:
        code = run(cfg)
    except InputError as exc:
        fail(str(exc))
    raise SystemExit(code)
