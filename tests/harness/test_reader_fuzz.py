"""Fuzzing the readers of recorded results and test sets: any bytes, any cell, any nesting gives
samples or an InputError naming the file (and the row when there is one) -- never another exception.

The examples run in-process against the reader functions (bounded in number, no deadline); two
subprocess runs check that the command turns such input into exit code 2.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragsweep.gen.formats import read_external
from ragsweep.gen.formats.cells import CellError, list_cell
from ragsweep.harness.score import read_samples
from ragsweep.metrics.errors import InputError

FUZZ = settings(max_examples=120, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SUFFIXES = (".csv", ".json", ".jsonl")

# the characters that steer the grammars: brackets, quotes, escapes, separators, line ends
SYNTAX = st.sampled_from(list("[](){}'\",;:| \n\r\\.0-9eEuxnN") + ["...", "\\u", "\\ud800", "None", "null", "<1-hop>"])
DEEP = st.sampled_from([40, 1100, 5000]).map(lambda n: "[" * n)  # past our depth limit, past Python's
CELL_TEXT = st.lists(st.one_of(SYNTAX, DEEP, st.text(max_size=4)), max_size=30).map("".join)
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
NESTED = st.recursive(JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                      max_leaves=12)


def _encodable(samples) -> None:
    """Everything read can be written back as UTF-8 (result.csv), e.g. no lone surrogate."""
    json.dumps([vars(s) for s in samples], ensure_ascii=False, default=str).encode("utf-8")


def _read(path: Path) -> None:
    try:
        samples, _, _ = read_samples(path)
    except InputError as exc:
        assert str(path) in str(exc)
    else:
        _encodable(samples)
    try:
        imported = read_external(path)
    except InputError as exc:
        assert str(path) in str(exc)
    else:
        _encodable(imported.samples)


@FUZZ
@given(data=st.one_of(st.binary(max_size=300), CELL_TEXT.map(str.encode)), suffix=st.sampled_from(SUFFIXES))
def test_any_bytes(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("bytes") / f"input{suffix}"
    path.write_bytes(data)
    _read(path)


def _csv_text(header: list[str], cells: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf).writerows([header, cells])
    return buf.getvalue()


@FUZZ
@given(cell=CELL_TEXT, column=st.sampled_from(["retrieved_contexts", "reference_contexts", "ground_truths",
                                                "user_input", "reference"]))
def test_any_cell_in_a_csv(tmp_path_factory, cell, column):
    path = tmp_path_factory.mktemp("cell") / "input.csv"
    others = {"user_input": "q", "response": "a", "retrieved_contexts": "c", "reference": "r"}
    header = list(dict.fromkeys(["user_input", "response", "retrieved_contexts", "reference", column]))
    row = {**others, column: cell}
    path.write_text(_csv_text(header, [row.get(h, "") for h in header]), encoding="utf-8")
    try:
        read_samples(path)
    except InputError as exc:
        assert f"{path} row 1, column {column}" in str(exc) or str(path) in str(exc)
    _read(path)


@FUZZ
@given(value=NESTED, suffix=st.sampled_from((".json", ".jsonl")), field=st.sampled_from(
    ["retrieved_contexts", "reference_contexts", "user_input", "response", "context", "additional_metadata"]))
def test_any_nesting_in_json_rows(tmp_path_factory, value, suffix, field):
    path = tmp_path_factory.mktemp("nest") / f"input{suffix}"
    rows = [{"user_input": "q", "input": "q", field: value}]
    path.write_text(json.dumps(rows) if suffix == ".json" else json.dumps(rows[0]) + "\n", encoding="utf-8")
    _read(path)


@FUZZ
@given(cell=CELL_TEXT)
def test_the_cell_grammar_parses_or_says_where(cell):
    try:
        list_cell(cell, ";")
    except CellError as exc:
        assert "at character" in str(exc)


@FUZZ
@given(items=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=5))
def test_every_way_a_list_is_written_reads_back(items):
    numpy = "[" + "\n ".join(repr(i) for i in items) + "]"
    for written in (json.dumps(items), json.dumps(items, ensure_ascii=False), repr(items), numpy):
        assert list_cell(written) == items, written


@pytest.mark.parametrize("name, data", [("bad.csv", b"question,contexts\n\xff\xfe,x\n"),
                                        ("bad.jsonl", b'{"question": "q", "contexts": [[[' + b"[" * 3000 + b"\n")])
def test_the_command_exits_2_on_such_input(tmp_path, ragsweep, name, data):
    (tmp_path / name).write_bytes(data)
    proc = ragsweep("score", "progress=false", "llm=none", f"input={name}", "out=out", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert name in proc.stderr and "Traceback" not in proc.stderr
