"""Test-set files told by their fields, whatever their name (issue #30): Ragas 0.1 and DeepEval CSVs,
numpy-printed list cells, ``<N-hop>`` markers, and bad cells as errors naming file, row and field."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from ragsweep.gen.formats import detect_format, read_external, write_external
from ragsweep.gen.formats.cells import CellError, list_cell, parse_literal
from ragsweep.metrics.errors import InputError


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


def test_a_ragas_01_test_set_csv_is_read(tmp_path):
    # Ragas 0.1 TestDataset.to_pandas().to_csv(): numpy arrays for contexts, metadata as a list of dicts
    path = write_csv(tmp_path / "testset.csv", [
        ["question", "contexts", "ground_truth", "evolution_type", "metadata", "episode_done"],
        ["Who built the pier?", "['The pier was built in 1890.'\n 'The Calder Trust paid for it; the town did not.']",
         "The Calder Trust; in 1890.", "multi_context", "[{'source': 'pier.md'}]", "True"]])
    assert detect_format(path) == "ragas"
    sample = read_external(path).samples[0]
    assert sample.question == "Who built the pier?" and sample.reference == "The Calder Trust; in 1890."
    assert sample.provenance["reference_contexts"] == [
        "The pier was built in 1890.", "The Calder Trust paid for it; the town did not."]
    assert sample.provenance["fields"]["ragas"]["evolution_type"] == "multi_context"


def test_a_deepeval_synthesizer_csv_is_read(tmp_path):
    # Synthesizer goldens written by pandas (list literals), and DeepEval's own save_as("csv") ('|'-joined)
    header = ["input", "actual_output", "expected_output", "context", "retrieval_context", "source_file"]
    pandas = write_csv(tmp_path / "synth.csv", [header, ["q1", "", "a1", str(["first | passage", "second"]), "", "f"]])
    own = write_csv(tmp_path / "own.csv", [header, ["q2", "", "a2", "first|second", "", "f"]])
    for path, contexts in ((pandas, ["first | passage", "second"]), (own, ["first", "second"])):
        assert detect_format(path) == "deepeval"
        imported = read_external(path)
        assert imported.format == "deepeval"
        assert imported.samples[0].provenance["reference_contexts"] == contexts
    assert read_external(own, "deepeval").samples[0].reference == "a2"


def test_an_unknown_csv_names_the_formats_and_the_columns(tmp_path):
    path = write_csv(tmp_path / "x.csv", [["foo", "bar"], ["1", "2"]])
    with pytest.raises(InputError, match=r"x.csv: cannot tell the test-set format .*\(foo, bar\); understood: "
                                         r".*Ragas 0.1.*deepeval"):
        read_external(path)


def test_hop_markers_are_taken_off_and_the_contexts_kept_apart(tmp_path):
    path = write_csv(tmp_path / "multi.csv", [
        ["user_input", "reference_contexts", "reference", "synthesizer_name"],
        ["q", str(["<1-hop>\n\nThe pier opened in 1890.", "<2-hop>\n\nThe trust paid for it."]), "r",
         "multi_hop_specific_query_synthesizer"]])
    sample = read_external(path).samples[0]
    assert sample.provenance["reference_contexts"] == ["The pier opened in 1890.", "The trust paid for it."]
    out = write_external(read_external(path).samples, tmp_path / "goldens.json", "deepeval")
    assert "-hop>" not in out.read_text()


def test_a_deeply_nested_cell_names_file_row_and_field(tmp_path):
    path = write_csv(tmp_path / "deep.csv", [["user_input", "reference_contexts"], ["q", "[" * 3000 + "]" * 3000]])
    with pytest.raises(InputError, match=r"deep.csv, row 1, field reference_contexts: .*nested more than"):
        read_external(path)


@pytest.mark.parametrize("cell, items", [
    ("['a'\n 'b']", ["a", "b"]),                      # numpy, newline between items
    ("['a' 'b' 'c']", ["a", "b", "c"]),               # numpy, spaces
    ('["a; b", "c"]', ["a; b", "c"]),                 # JSON keeps a ';' inside an item
    ("['it\\'s', \"x\"]", ["it's", "x"]),             # Python quoting
    ('["\\ud83d\\ude00 caf\\u00e9"]', ["\U0001F600 café"]),  # JSON's surrogate pairs
    (str([str(["x", "y"])]), ["x", "y"]),             # a list written twice over
    ("[1] Smith; [2] Jones", ["[1] Smith; [2] Jones"]),  # text that starts with a bracket
    ("  ", None),
])
def test_the_cell_grammar(cell, items):
    assert list_cell(cell) == items


@pytest.mark.parametrize("cell, problem", [
    ("['a' ... 'z']", "elided"), ("['a', 'b'", "ends where"), ("['a'] tail", "after the value"),
    ('["\\ud800"]', "lone surrogate"), ("[" * 40 + "]" * 40, "nested more than"),
])
def test_cells_the_grammar_refuses(cell, problem):
    with pytest.raises(CellError, match=problem):
        list_cell(cell)


def test_object_literals_for_messages_and_metadata():
    assert parse_literal("[{'type': 'human', 'content': 'hi'}, {\"a\": null, 'b': True, 'n': -1.5e2}]") == [
        {"type": "human", "content": "hi"}, {"a": None, "b": True, "n": -150.0}]
