"""Every test-set and results file in ``../shared/data/interop/`` (written by Ragas, DeepEval,
LlamaIndex and arcadia, see its SOURCES.md) is read with nothing lost.

The counts each test expects -- rows, fields, contexts per row -- are taken from the raw file here,
with ``csv``, ``json`` and Python's own tokenizer, never with ragsweep's readers. The corpus folders
and the Ragas knowledge graph there are corpora, tested with the corpus readers.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
import tokenize
from pathlib import Path

import pytest
from ragsweep.gen.formats import read_external
from ragsweep.harness.score import read_samples

INTEROP = Path(__file__).resolve().parents[2] / "shared" / "data" / "interop"
pytestmark = pytest.mark.skipif(not INTEROP.is_dir(), reason="../shared/data/interop is not here")
HOP = re.compile(r"^<\d+-hop>\s*")
NOT_TABLES = {"SOURCES.md", "ragas_rmcv_pdf_knowledge_graph.json"}  # the graph is a corpus


def raw_csv(name: str) -> list[dict[str, str]]:
    csv.field_size_limit(2**31 - 1)
    with (INTEROP / name).open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def raw_items(cell: str) -> list[str]:
    """The string items of a list cell, one per string token of Python's tokenizer (numpy prints
    items with no comma between them, which ``ast.literal_eval`` would glue into one string); a
    list holding one string that is itself a list is opened."""
    if not cell.strip():
        return []
    tokens = [t.string for t in tokenize.generate_tokens(io.StringIO(cell.strip()).readline)
              if t.type == tokenize.STRING]
    items = [ast.literal_eval(t) for t in tokens]
    if len(items) == 1 and items[0].lstrip().startswith(("['", '["')):
        return raw_items(items[0])
    return items


def bare(text: str) -> str:
    return HOP.sub("", text)


def test_every_file_here_is_covered():
    covered = set(TESTSETS) | set(RESULTS) | {"llamaindex_qa_val_dataset.json", "aragog_benchmark.json"}
    files = {p.name for p in INTEROP.iterdir() if p.is_file()} - NOT_TABLES
    assert files <= covered, files - covered


# test set -> (question, reference, reference contexts) columns
TESTSETS = {
    "ragas_kim_testset.csv": ("user_input", "reference", "reference_contexts"),
    "ragas_rmcv_testset.csv": ("user_input", "reference", "reference_contexts"),
    "ragas_rmcv_pdf_testset.csv": ("user_input", "reference", "reference_contexts"),
    "deepeval_rmcv_pdf_testset.csv": ("input", "expected_output", "context"),
    "deepeval_sghangs_goldens.json": ("input", "expected_output", "context"),
    "llamaindex_aragog_rag_dataset.json": ("query", "reference_answer", "reference_contexts"),
    "llamaindex_minitruthfulqa_rag_dataset.json": ("query", "reference_answer", "reference_contexts"),
}


def raw_rows(name: str) -> list[dict]:
    if name.endswith(".csv"):
        return raw_csv(name)
    data = json.loads((INTEROP / name).read_text(encoding="utf-8"))
    return data["examples"] if isinstance(data, dict) else data


def raw_list(value) -> list[str] | None:
    return None if value is None else raw_items(value) if isinstance(value, str) else list(value)


@pytest.mark.parametrize("name", sorted(TESTSETS))
def test_test_sets_keep_every_row_question_reference_and_context(name):
    q, ref, ctx = TESTSETS[name]
    rows = raw_rows(name)
    samples = read_external(INTEROP / name).samples
    assert len(samples) == len(rows)
    for row, sample in zip(rows, samples):
        assert sample.question == row[q] and sample.reference == (row[ref] or "")
        expected = raw_list(row[ctx])
        got = sample.provenance.get("reference_contexts")
        assert got == (None if expected is None else [bare(t) for t in expected])
    # scored, the same rows give the same questions and contexts
    scored, _fields, _ = read_samples(INTEROP / name)
    assert [s.question for s in scored] == [r[q] for r in rows]
    assert [len(s.reference_contexts or ()) for s in scored] == [len(raw_list(r[ctx]) or ()) for r in rows]


def test_llamaindex_qa_dataset_keeps_every_query_and_node():
    data = json.loads((INTEROP / "llamaindex_qa_val_dataset.json").read_text(encoding="utf-8"))
    imported = read_external(INTEROP / "llamaindex_qa_val_dataset.json")
    assert [s.id for s in imported.samples] == list(data["queries"])
    for s in imported.samples:
        assert s.provenance["reference_contexts"] == [data["corpus"][i] for i in data["relevant_docs"][s.id]]
    assert imported.extra["corpus"] == data["corpus"]


# results file -> {field: column}, and the list columns with how a plain cell joins items
RESULTS = {
    "ragas_rmcv_results.csv": {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response",
                               "reference": "reference"},
    "arcadia_ragas.csv": {"question": "question", "reference": "ground_truths", "answer": "answer",
                          "contexts": "contexts"},
    "arcadia_testdata_qa.csv": {"question": "q", "reference": "a", "reference_contexts": "chunk_content"},
    "deepeval_sghangs_results.csv": {"question": "Input", "answer": "Actual Output", "reference": "Expected Output"},
    "deepeval_sghangs_results.json": {"question": "Input", "answer": "Actual Output",
                                      "reference": "Expected Output"},
}


def raw_value(name: str, field: str, cell):
    if field in ("contexts", "reference_contexts"):
        if name == "arcadia_ragas.csv":  # arcadia joins lists with ';'
            return tuple(p.strip() for p in cell.split(";") if p.strip())
        items = raw_items(cell) if cell.lstrip().startswith("[") else [cell]
        return tuple(bare(t) for t in items)
    if name == "arcadia_ragas.csv" and field == "reference":
        return "\n\n".join(p.strip() for p in cell.split(";") if p.strip())
    return cell


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_results_files_keep_every_row_and_field(name):
    rows = raw_rows(name)
    samples, fields, table = read_samples(INTEROP / name)
    assert fields == RESULTS[name] and len(samples) == len(rows)
    assert table[0] == list(rows[0])  # every column is kept for result.csv
    for row, sample in zip(rows, samples):
        for field, column in RESULTS[name].items():
            assert sample.get(field) == raw_value(name, field, row[column]), (field, column)


def test_a_columnar_json_keeps_every_row():
    data = json.loads((INTEROP / "aragog_benchmark.json").read_text(encoding="utf-8"))
    samples, _fields, table = read_samples(INTEROP / "aragog_benchmark.json")
    assert len(samples) == len(data["questions"]) == len(data["ground_truths"])
    assert [s.reference for s in samples] == data["ground_truths"]
    assert [r["questions"] for r in table[1]] == data["questions"]  # kept for result.csv
