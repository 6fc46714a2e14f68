"""Corpus loading, chunking with character spans, test-set generation and the formats of other tools.

This is the package's face: other packages (``harness``, the API) import only the names in ``__all__``,
as ``from ragsweep.gen import name`` (``tests/test_imports.py`` checks it). The modules behind them are
internal. A name loads its module on first use, so importing one stays cheap. A name that is also a
module's name is given another one here (``generate_testset``): a loaded submodule would shadow it.
"""

from __future__ import annotations

from typing import Any

from ragsweep.metrics.face import attribute

#: name -> ``module`` (the name is the module's attribute) or ``module:attribute``, relative to this package.
_FACE = {
    # documents: the corpus and its readers; evidence is a character span of a document
    "Corpus": "documents", "Document": "documents", "Span": "documents", "iter_jsonl": "documents",
    "read_beir": "documents", "read_folder": "documents", "read_jsonl": "documents", "read_shipped": "documents",
    "shipped_corpus_path": "documents", "shipped_testset_path": "documents",
    "group_grades": "duplicates",
    # chunking: chunks keep their offsets in the document
    "Chunk": "chunking", "Chunker": "chunking", "RecursiveChunker": "chunking", "WholeDocument": "chunking",
    "sentence_spans": "chunking",
    # testset: the samples a sweep, a run and a score read
    "TestSample": "testset", "check_against": "testset", "read_testset": "testset",
    "samples_from_qrels": "testset",
    # generating a test set (what `ragsweep gen` runs)
    "produce": "app", "write_outputs": "app", "writing_parts": "app",
    # the parts a config names with _target_
    "build": "parts",
    # formats: the files of Ragas, DeepEval and LlamaIndex, their columns and cells
    "FORMATS": "formats", "SUFFIXES": "formats", "Imported": "formats", "check_format": "formats",
    "output_format": "formats", "read_external": "formats", "write_external": "formats",
    "CellError": "formats.cells", "list_cell": "formats.cells", "parse_literal": "formats.cells",
    "strip_hop_marker": "formats.cells",
    "USUAL": "formats.layouts", "Layout": "formats.layouts", "detect": "formats.layouts", "normal": "formats.layouts",
    "understood": "formats.layouts",
    "iter_json_lines": "formats.rows", "parse_span_id": "formats.rows", "read_csv": "formats.rows",
    "read_json": "formats.rows",
}

__all__ = sorted(_FACE)


def __getattr__(name: str) -> Any:
    return attribute(__name__, _FACE, name)
