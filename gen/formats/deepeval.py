"""DeepEval goldens: a JSON list (``EvaluationDataset.save_as("json")``) or JSONL of goldens, or CSV.

A CSV (``save_as("csv")``, or a Synthesizer's DataFrame written by pandas) is read with the cell
grammar of :mod:`gen.formats.cells`: ``context`` is a list literal or, as DeepEval writes it, items
joined by ``|``; ``additional_metadata`` an object literal.

The fields, as DeepEval reads and writes them (``deepeval/dataset/golden.py``: ``Golden``,
``ConversationalGolden``; ``deepeval/dataset/dataset.py``: ``add_goldens_from_json_file``,
``save_as``; https://github.com/confident-ai/deepeval, https://deepeval.com/docs/evaluation-datasets):

- a golden: ``input`` (the question), ``expected_output`` (the reference answer), ``context`` (the
  ideal, checked passages: our reference contexts), ``retrieval_context`` (what a system
  retrieved), ``actual_output``, ``tools_called``, ``expected_tools``, ``name``, ``comments``,
  ``source_file``, ``additional_metadata`` (a free object), ``custom_column_key_values``;
- a conversational golden (a non-empty ``scenario``): ``scenario``, ``turns`` (``{"role": "user" |
  "assistant", "content", ...}``), ``expected_outcome``, ``user_description``, ``context``,
  ``name``, ``comments``, ``additional_metadata``, ``custom_column_key_values``. The turns are kept
  as the conversation, its last user turn is the question (the scenario when there are no turns),
  and ``expected_outcome`` is the reference.

Goldens have no id or kind: ``additional_metadata`` carries the sample's ``id``, ``kind``,
``context_ids`` (the span id ``<doc_id>:<start>-<end>`` of each ``context`` item) and
``provenance``; an ``id`` already there names the sample. Every other field is written back as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragsweep.gen.documents import Corpus
from ragsweep.gen.formats.cells import CellError, parse_literal
from ragsweep.gen.formats.rows import (
    bad,
    contexts_of,
    fields_for,
    imported,
    last_user_turn,
    provenance_for,
    read_rows,
    text_of,
    texts_of,
    turns_of,
    unique_ids,
    write_rows,
)
from ragsweep.gen.testset import TestSample

NAME = "deepeval"
SUFFIXES = (".json", ".jsonl")
#: What DeepEval's ``save_as("csv")`` joins a golden's ``context`` items with.
CSV_DELIMITER = "|"
#: DeepEval's own order of a golden's fields (``save_as``), then a conversational golden's.
ORDER = ("input", "actual_output", "expected_output", "retrieval_context", "context", "name", "comments",
         "source_file", "tools_called", "expected_tools", "additional_metadata", "custom_column_key_values")
TALK_ORDER = ("scenario", "turns", "expected_outcome", "user_description", "context", "name", "comments",
              "additional_metadata", "custom_column_key_values")


def looks_like(row: dict[str, Any]) -> bool:
    return "input" in row or "scenario" in row


def _metadata_cell(path: Path, label: str, value: Any) -> Any:
    """A CSV cell of ``additional_metadata``: blank is None, else a JSON or Python object literal."""
    if not value.strip():
        return None
    try:
        return parse_literal(value.strip())
    except CellError as exc:
        raise bad(path, label, "additional_metadata", f"not an object literal: {exc}") from None


def _sample(path: Path, n: int, label: str, row: dict[str, Any], cells: bool = False) -> TestSample:
    meta = row.get("additional_metadata")
    if cells and isinstance(meta, str):
        meta = _metadata_cell(path, label, meta)
    if meta is not None and not isinstance(meta, dict):
        raise bad(path, label, "additional_metadata", f"expected an object, got {str(meta)[:60]!r}")
    meta = meta or {}
    conversation: tuple[dict[str, Any], ...] = ()
    if row.get("scenario"):
        text_of(row, path, label, "scenario", required=True)
        if row.get("turns"):
            conversation = turns_of(row["turns"], path, label, "turns", "role")
        question = last_user_turn(conversation) or row["scenario"]
        reference = text_of(row, path, label, "expected_outcome")
        own = {"turns", "expected_outcome", "context"}
    else:
        question = text_of(row, path, label, "input", required=True)
        reference = text_of(row, path, label, "expected_output")
        own = {"input", "expected_output", "context"}
    contexts = texts_of(row, path, label, "context", cells=cells, delimiter=CSV_DELIMITER)
    ids = None
    if contexts is not None and meta.get("context_ids") is not None:
        ids = texts_of({"additional_metadata.context_ids": meta["context_ids"]}, path, label,
                       "additional_metadata.context_ids", ids=True)
        if len(ids) != len(contexts):  # type: ignore[arg-type]
            raise bad(path, label, "additional_metadata.context_ids", f"{len(ids)} ids for {len(contexts)} contexts")
    raw_id = meta.get("id")
    sid = str(raw_id).strip() if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) \
        and str(raw_id).strip() else str(n)
    kind = meta.get("kind") if isinstance(meta.get("kind"), str) and meta["kind"].strip() else \
        ("conversation" if row.get("scenario") else "imported")
    base = meta.get("provenance") if isinstance(meta.get("provenance"), dict) else None
    fields = {k: v for k, v in row.items() if k not in own}
    return imported(sid, question, reference, contexts, ids, kind, NAME, label, fields, base, conversation)


def read(path: Path) -> list[TestSample]:
    """The samples of a goldens file (no evidence spans yet: locate their contexts)."""
    cells = path.name.lower().endswith(".csv")
    return unique_ids((_sample(path, n, label, row, cells) for n, (label, row) in enumerate(read_rows(path), 1)),
                      path)


def _metadata(sample: TestSample, kept: dict[str, Any] | None, ids: list[str] | None) -> dict[str, Any]:
    """``additional_metadata``: the golden's own object, with the sample's id, kind, context ids and
    provenance added where it does not already say the same."""
    meta = dict(kept or {})
    if str(meta.get("id", "")).strip() != sample.id:
        meta["id"] = sample.id
    if meta.get("kind") != sample.kind:
        meta["kind"] = sample.kind
    if ids is not None and [str(i) for i in meta.get("context_ids") or []] != ids:
        meta["context_ids"] = ids
    prov = provenance_for(sample, NAME)
    if prov and meta.get("provenance") != prov:
        meta["provenance"] = prov
    return meta


def golden_of(sample: TestSample, corpus: Corpus | None) -> dict[str, Any]:
    """A sample as a golden (a conversational golden when it holds a conversation)."""
    texts, ids = contexts_of(sample, corpus)
    fields = fields_for(sample, NAME)
    has_contexts = bool(texts) or "reference_contexts" in sample.provenance
    values: dict[str, Any] = {**fields, "context": texts if has_contexts else None,
                              "additional_metadata": _metadata(sample, fields.get("additional_metadata"),
                                                               ids if has_contexts else None)}
    if sample.conversation:
        first = next((t["content"] for t in sample.conversation if t.get("role") == "user"), sample.question)
        values.update(scenario=fields.get("scenario") or first, turns=[dict(t) for t in sample.conversation],
                      expected_outcome=sample.reference or None)
        order = TALK_ORDER
    else:
        values.update(input=sample.question, expected_output=sample.reference or None)
        order = ORDER
    golden = {k: values.get(k) for k in order}
    golden.update({k: v for k, v in values.items() if k not in golden})
    return golden


def write(samples: list[TestSample], path: Path, corpus: Corpus | None) -> Path:
    """Write goldens as a JSON list (``.json``) or JSONL."""
    return write_rows(path, [golden_of(s, corpus) for s in samples])
