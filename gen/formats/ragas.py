"""Ragas ``EvaluationDataset`` rows: JSONL (``to_jsonl``), a JSON list, or CSV (``to_csv``).

The fields, as Ragas defines them (``src/ragas/dataset_schema.py``: ``SingleTurnSample``,
``MultiTurnSample``; ``src/ragas/messages.py``; https://github.com/explodinggradients/ragas and
https://docs.ragas.io/en/stable/concepts/components/eval_dataset/):

- single turn: ``user_input`` (the question), ``reference`` (the reference answer),
  ``reference_contexts`` (the passages the answer comes from), ``reference_context_ids``,
  ``retrieved_contexts``, ``retrieved_context_ids``, ``response``, ``multi_responses``, ``rubrics``;
  test sets from the Ragas generator add ``synthesizer_name`` (and ``persona_name``,
  ``query_style``, ``query_length``).
- multi turn: ``user_input`` is a list of messages ``{"content", "type": "human" | "ai" | "tool",
  "tool_calls"?, "metadata"?}``, with ``reference``, ``reference_tool_calls``, ``rubrics``,
  ``reference_topics``. The conversation is kept (``TestSample.conversation``, roles user /
  assistant / tool); its last human message is the question.

A Ragas 0.1 test set (``TestDataset.to_pandas``: ``question, contexts, ground_truth, evolution_type,
metadata, episode_done``) is read too: ``question`` as ``user_input``, ``ground_truth`` as
``reference``, ``contexts`` as ``reference_contexts``; written back, it has the 0.2 names.

Ragas leaves out fields that are None; ``to_csv`` writes lists as Python literals, which are read
back, as are JSON lists and numpy's arrays (:mod:`gen.formats.cells`); a plain cell is one item. Besides Ragas' fields a row written here holds
``id``, ``kind`` and ``provenance`` (extra columns, which Ragas ignores), and ``reference_context_ids``
names each reference context's evidence span (``<doc_id>:<start>-<end>``). Every other field of a row
read here is written back as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragsweep.gen.documents import Corpus
from ragsweep.gen.formats.cells import CellError, parse_literal
from ragsweep.gen.formats.rows import (
    TYPE_OF_ROLE,
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

NAME = "ragas"
SUFFIXES = (".jsonl", ".json", ".csv")


#: Ragas 0.1 test-set columns (``TestDataset.to_pandas``) -> the 0.2 names they are read as.
V01_NAMES = {"question": "user_input", "ground_truth": "reference", "contexts": "reference_contexts"}


def looks_like(row: dict[str, Any]) -> bool:
    return "user_input" in row or is_v01(row)


def is_v01(row: dict[str, Any]) -> bool:
    """A Ragas 0.1 test-set row: ``question`` with ``evolution_type`` or ``episode_done``."""
    return "user_input" not in row and "question" in row and ("evolution_type" in row or "episode_done" in row)


def _as_v02(row: dict[str, Any]) -> dict[str, Any]:
    if not is_v01(row):
        return row
    clash = [new for old, new in V01_NAMES.items() if old in row and new in row]
    if clash:
        raise ValueError(clash[0])
    return {V01_NAMES.get(k, k): v for k, v in row.items()}


def _kind(row: dict[str, Any], conversation: bool) -> tuple[str, bool]:
    """The sample's kind, and whether the row's ``kind`` field gave it."""
    kind = row.get("kind")
    if isinstance(kind, str) and kind.strip():
        return kind, True
    synth = str(row.get("synthesizer_name") or "")
    for prefix in ("single_hop", "multi_hop"):  # the Ragas generator's synthesizer names start so
        if synth.startswith(prefix):
            return prefix, False
    return ("conversation" if conversation else "imported"), False


def _sample(path: Path, n: int, label: str, row: dict[str, Any], cells: bool) -> TestSample:
    try:
        row = _as_v02(row)
    except ValueError as exc:
        raise bad(path, label, str(exc), "a Ragas 0.1 row that also has this Ragas 0.2 column") from None
    raw = row.get("user_input")
    if cells and isinstance(raw, str) and raw.strip().startswith("[{"):
        try:
            raw = parse_literal(raw.strip())
        except CellError as exc:
            raise bad(path, label, "user_input", f"a list of messages that does not parse: {exc}") from None
    conversation: tuple[dict[str, Any], ...] = ()
    if isinstance(raw, list):
        conversation = turns_of(raw, path, label, "user_input", "type")
        question = last_user_turn(conversation)
        if question is None:
            raise bad(path, label, "user_input", "the conversation has no human message")
    else:
        question = text_of(row, path, label, "user_input", required=True)
    own = {"user_input", "reference", "reference_contexts"}
    contexts = texts_of(row, path, label, "reference_contexts", cells=cells)
    ids = None
    if contexts is not None:
        ids = texts_of(row, path, label, "reference_context_ids", cells=cells, ids=True)
        if ids is not None:
            own.add("reference_context_ids")
            if len(ids) != len(contexts):
                raise bad(path, label, "reference_context_ids", f"{len(ids)} ids for {len(contexts)} reference contexts")
    raw_id = row.get("id")
    sid = str(n)
    if raw_id is not None and str(raw_id).strip():
        if not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool):
            raise bad(path, label, "id", f"expected a string or an integer, got {raw_id!r}")
        sid = str(raw_id).strip()
        own.add("id")
    kind, from_field = _kind(row, bool(conversation))
    if from_field:
        own.add("kind")
    base = row.get("provenance")
    if cells and isinstance(base, str) and base.strip():
        try:
            base = json.loads(base)
        except json.JSONDecodeError as exc:
            raise bad(path, label, "provenance", f"not a JSON object ({exc.msg})") from exc
    if isinstance(base, dict):
        own.add("provenance")
    elif base not in (None, ""):
        raise bad(path, label, "provenance", f"expected an object, got {str(base)[:60]!r}")
    fields = {k: v for k, v in row.items() if k not in own}
    return imported(sid, question, text_of(row, path, label, "reference"), contexts, ids, kind, NAME, label,
                    fields, base if isinstance(base, dict) else None, conversation)


def read(path: Path) -> list[TestSample]:
    """The samples of a Ragas file (no evidence spans yet: locate their reference contexts)."""
    cells = path.name.lower().endswith(".csv")
    return unique_ids((_sample(path, n, label, row, cells) for n, (label, row) in enumerate(read_rows(path), 1)),
                      path)


def row_of(sample: TestSample, corpus: Corpus | None) -> dict[str, Any]:
    """A sample as a Ragas row (None fields left out, as Ragas writes them)."""
    texts, ids = contexts_of(sample, corpus)
    row: dict[str, Any] = {"id": sample.id}
    if sample.conversation:
        row["user_input"] = [{"content": t["content"], "type": TYPE_OF_ROLE.get(t["role"], t["role"]),
                              **{k: v for k, v in t.items() if k not in ("role", "content")}}
                             for t in sample.conversation]
    else:
        row["user_input"] = sample.question
    if sample.reference:
        row["reference"] = sample.reference
    if texts or "reference_contexts" in sample.provenance:
        row["reference_contexts"] = texts
        if ids is not None:
            row["reference_context_ids"] = ids
    row["kind"] = sample.kind
    prov = provenance_for(sample, NAME)
    if prov:
        row["provenance"] = prov
    for key, value in fields_for(sample, NAME).items():
        row.setdefault(key, value)
    return row


def write(samples: list[TestSample], path: Path, corpus: Corpus | None) -> Path:
    """Write a Ragas file: JSONL, a JSON list (``.json``) or CSV, by the file's name."""
    return write_rows(path, [row_of(s, corpus) for s in samples])
