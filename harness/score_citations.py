"""Citations in a scored file: what ``ragsweep score`` reads so the citation metrics score a results file.

Each row's answer is read for inline markers (``[1]``, ``[1, 3]``, ``[^1]``, ``【1】``) that index the
row's ``contexts`` list, 1-based, with :func:`ragsweep.metrics.citations.parse_answer` -- as
``ragsweep run`` reads an application's answers (:func:`ragsweep.harness.records.cite_answers`).
A ``citations`` column, when the file has one, gives a row's sources instead of its markers: a list
(in a CSV cell, its JSON or Python literal) of per-sentence objects, either as ``run`` records them
(``{"sentence", "cites": [n, ...], "invalid": [n, ...]}``) or as applications return them
(``{"text", "sources": [...]}``, a source being a context's number or its exact text;
:func:`ragsweep.metrics.citations.structured`). A blank cell falls back to the row's markers.

When some row cites, every answer is scored with its markers stripped (a faithfulness judge must not
read "[2]" as content) and the samples carry their citations; when none does, the samples are left as
they were and the file has no citation metrics by default (a column of "no citations" would say
nothing), unless the caller asks for them by name (``always``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragsweep.gen import CellError, normal, parse_literal
from ragsweep.harness.records import cite_answers
from ragsweep.harness.score_tables import Table
from ragsweep.metrics import InputError, RagSample

#: The column of structured per-sentence sources (the name ``run`` uses in its records).
COLUMN = "citations"
#: The metrics that read citations.
CITATION_METRICS = ("citation_recall", "citation_precision", "citation_f1", "cited_evidence")


def citations_column(columns: Sequence[str]) -> str | None:
    """The input's column of structured sources, if it has one (matched as layouts match names)."""
    return next((str(c) for c in columns if normal(str(c)) == COLUMN), None)


def _listed(cell: Any, contexts: Sequence[str] | None, where: str) -> list[dict[str, Any]] | None:
    """One ``citations`` cell as run-record sentences (None when blank)."""
    from ragsweep.metrics import structured_citations

    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    value = cell
    if isinstance(value, str):
        try:
            value = parse_literal(value.strip())
        except CellError as exc:
            raise InputError(f"{where}: a citations cell that does not parse: {exc}") from None
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{where}: expected a list of {{\"sentence\", \"cites\"}} or {{\"text\", \"sources\"}} "
                         f"objects, got {type(value).__name__} {str(cell)[:60]!r}")
    items = []
    for item in value:
        # run's own records keep the numbers that name no context apart; read back, they are invalid again
        if isinstance(item, Mapping) and "invalid" in item and "cites" in item:
            item = {**item, "cites": [*(item.get("cites") or []), *(item.get("invalid") or [])]}
        items.append(item)
    texts = {text: i for i, text in reversed(list(enumerate(contexts or (), start=1)))}

    def resolve(source: Any) -> int | None:
        return texts.get(source) if isinstance(source, str) else None

    try:
        sentences = structured_citations(items, len(contexts) if contexts else None, resolve)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{where}: {exc}") from None
    return [s.to_dict() for s in sentences]


def with_citations(samples: Sequence[RagSample], fields: dict[str, str], table: Table, where: str,
                   always: bool = False) -> tuple[list[RagSample], dict[str, str]]:
    """The samples with their answers read for citations, and ``fields`` with ``citations`` when they cite.

    Args:
        samples: The file's samples, one per row of ``table``, in order.
        fields: The column that feeds each sample field (:func:`harness.score_tables.samples_from_table`).
        table: ``(columns, rows, row labels)``, for the ``citations`` column and messages.
        where: What messages name (the path).
        always: Read citations even when no row cites (a citation metric was asked for by name): each
            answer that cites nothing then scores as such (recall 0, precision undefined).

    Raises:
        InputError: A ``citations`` cell that is not a list of per-sentence objects, naming row and column.
    """
    if any(s.citations is not None for s in samples):  # RagSamples handed over with their citations
        return list(samples), {**fields, "citations": "citations"}
    columns, rows, labels = table
    column = citations_column(columns)
    if "answer" not in fields and column is None:
        return list(samples), fields
    given = [None if column is None else
             _listed(row.get(column), sample.contexts, f"{where} {label}, column {column}")
             for sample, row, label in zip(samples, rows, labels)]
    answers, cited = cite_answers([s.answer for s in samples], [len(s.contexts or ()) or None for s in samples],
                                  given, always=always)
    if cited is None:
        return list(samples), fields
    out = [replace(s, answer=a, citations=None if c is None else tuple(c))
           for s, a, c in zip(samples, answers, cited)]
    return out, {**fields, "citations": column or fields["answer"]}


def asks_for_citations(names: Sequence[str] | None) -> bool:
    """Whether a metric list names a citation metric (then citations are read even when nothing cites)."""
    return names is not None and any(n.split("@")[0].strip() in CITATION_METRICS for n in names)
