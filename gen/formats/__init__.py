"""Test sets in the formats people already have: read them as test samples, write samples back.

========================  ======================================================  ===================
format                    what                                                    files
========================  ======================================================  ===================
``ragsweep``              ours: questions with evidence spans (:mod:`gen.testset`)  ``.jsonl``
``ragas``                 Ragas ``EvaluationDataset``, single and multi turn;      ``.jsonl .json .csv``
                          Ragas 0.1 test sets (read)
``deepeval``              DeepEval goldens (and conversational goldens)            ``.json .jsonl``
                                                                                   (``.csv`` read)
``llamaindex``            LlamaIndex ``LabelledRagDataset``                        ``.json``
``llamaindex_qa``         LlamaIndex ``EmbeddingQAFinetuneDataset``                ``.json``
========================  ======================================================  ===================

Samples read from another format have no evidence spans yet: their reference contexts are kept in
their provenance (:mod:`gen.formats.rows`), and the harness locates them in a corpus
(:mod:`harness.testsets`). Reading detects the format from the file's fields (a CSV's columns, a
JSON file's first record), whatever its name; pass ``format`` to say it. Each module's docstring lists its fields and where they are defined.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsweep.gen.documents import Corpus
from ragsweep.gen.formats import deepeval, llamaindex, ragas
from ragsweep.gen.formats.rows import iter_json_lines, read_json, read_rows
from ragsweep.gen.testset import TestSample, read_testset, write_testset
from ragsweep.metrics import InputError

FORMATS = ("ragsweep", "ragas", "deepeval", "llamaindex", "llamaindex_qa")
#: The file names each format writes.
SUFFIXES = {"ragsweep": (".jsonl",), "ragas": ragas.SUFFIXES, "deepeval": deepeval.SUFFIXES,
            "llamaindex": (".json",), "llamaindex_qa": (".json",)}
#: The kind of sample that needs no evidence (its answer is in no document).
_NO_EVIDENCE_KIND = "unanswerable"


@dataclass
class Imported:
    """A test set as read: its samples, its format, and the file's fields that belong to no sample
    (a LlamaIndex QA dataset's corpus and mode), written back when the same format is written."""

    samples: list[TestSample]
    format: str
    extra: dict[str, Any] = field(default_factory=dict)


def check_format(name: str | None) -> str | None:
    if name is not None and name not in FORMATS:
        raise InputError(f"unknown test-set format {name!r}; expected one of: {', '.join(FORMATS)}")
    return name


#: What marks each format, for messages.
UNDERSTOOD = ("ragsweep (question + evidence), ragas (user_input; Ragas 0.1: question + evolution_type or "
              "episode_done), deepeval (input or scenario), llamaindex ({\"examples\": [...]}), "
              "llamaindex_qa ({queries, corpus, relevant_docs})")


def _of_row(path: Path, row: dict[str, Any]) -> str:
    if "question" in row and "evidence" in row:
        return "ragsweep"
    if ragas.looks_like(row):
        return "ragas"
    if deepeval.looks_like(row):
        return "deepeval"
    shown = ", ".join(list(row)[:12]) + (", ..." if len(row) > 12 else "")
    raise InputError(f"{path}: cannot tell the test-set format from its fields ({shown or 'none'}); "
                     f"understood: {UNDERSTOOD}; or pass the format")


def detect_format(path: str | Path) -> str:
    """The format of a test-set file, from its name and the fields of its first record."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: test set not found")
    name = file.name.lower()
    if name.endswith(".csv"):
        return _of_row(file, read_rows(file)[0][1])
    if name.endswith((".jsonl", ".jsonl.gz")):
        first = next(iter_json_lines(file), None)
        if first is None:
            raise InputError(f"{file}: the test set is empty")
        return _of_row(file, first[1])
    if name.endswith(".json"):
        data = read_json(file)
        if isinstance(data, dict) and "examples" in data:
            return "llamaindex"
        if isinstance(data, dict) and {"queries", "relevant_docs"} <= data.keys():
            return "llamaindex_qa"
        if isinstance(data, list) and data and isinstance(data[0], dict):
            return _of_row(file, data[0])
        raise InputError(f"{file}: not a test set this reads (a JSON list of Ragas rows or DeepEval goldens, or a "
                         "LlamaIndex dataset object); pass the format if it is one")
    raise InputError(f"{file}: unknown test-set file type; expected .jsonl, .json or .csv")


def output_format(path: str | Path) -> str:
    """The format a file name asks for: ``.jsonl`` ours, ``.csv`` Ragas; ``.json`` must be said."""
    name = Path(path).name.lower()
    if name.endswith(".jsonl"):
        return "ragsweep"
    if name.endswith(".csv"):
        return "ragas"
    raise InputError(f"{path}: say which format to write ({', '.join(FORMATS)}); the file name does not tell")


def read_external(path: str | Path, format: str | None = None) -> Imported:
    """Read a test set in any format (detected when ``format`` is None); errors name file, row and field."""
    file = Path(path)
    fmt = check_format(format) or detect_format(file)
    if fmt == "ragsweep":
        return Imported(read_testset(file), fmt)
    if fmt == "ragas":
        return Imported(ragas.read(file), fmt)
    if fmt == "deepeval":
        return Imported(deepeval.read(file), fmt)
    samples, extra = (llamaindex.read_labelled if fmt == "llamaindex" else llamaindex.read_qa)(file)
    return Imported(samples, fmt, extra)


def write_external(samples: list[TestSample], path: str | Path, format: str | None = None,
                   corpus: Corpus | None = None, extra: dict[str, Any] | None = None) -> Path:
    """Write samples in a format (from the file's name when None), keeping all the format can hold.

    Args:
        samples: The test samples.
        path: The file; its name must fit the format (``SUFFIXES``; ours takes any name).
        format: One of :data:`FORMATS`.
        corpus: The corpus the evidence points into (evidence texts; without it, the quoted ones).
        extra: The file-level fields of a test set read in the same format (:class:`Imported`).

    Raises:
        InputError: An unknown format, a file name that does not fit it, evidence whose text is
            unknown, or (ours) a sample without evidence.
    """
    file = Path(path)
    fmt = check_format(format) or output_format(file)
    if fmt != "ragsweep" and not file.name.lower().endswith(SUFFIXES[fmt]):
        raise InputError(f"{file}: format {fmt} writes {' or '.join(SUFFIXES[fmt])} files")
    if fmt == "ragsweep":
        bare = [s.id for s in samples if not s.evidence and s.kind != _NO_EVIDENCE_KIND]
        if bare:
            raise InputError(f"{len(bare)} of {len(samples)} samples have no evidence span ({', '.join(bare[:5])}"
                             f"{', ...' if len(bare) > 5 else ''}): locate their reference contexts in a corpus "
                             "(corpus=...), or write another format")
        return write_testset(samples, file, corpus)
    if fmt == "ragas":
        return ragas.write(samples, file, corpus)
    if fmt == "deepeval":
        return deepeval.write(samples, file, corpus)
    writer = llamaindex.write_labelled if fmt == "llamaindex" else llamaindex.write_qa
    return writer(samples, file, corpus, extra)
