"""Test sets in other tools' formats (gen.formats): small files written by hand from each format's
documented shape are read as samples, and written back with every field they held."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from ragsweep.gen.documents import Span
from ragsweep.gen.formats import FORMATS, detect_format, output_format, read_external, write_external
from ragsweep.gen.formats.rows import list_cell, parse_span_id, span_id
from ragsweep.gen.testset import TestSample, read_testset
from ragsweep.metrics.errors import InputError

HARBOUR = "Port Calder is governed by a directly elected mayor and a city council of 45 members, elected every four years."

# Ragas EvaluationDataset.to_jsonl: one sample a line, None fields left out; generator columns beside them.
RAGAS_ROWS = [
    {"user_input": "How many members sit on the city council?", "reference": "45 members.",
     "reference_contexts": [HARBOUR], "synthesizer_name": "single_hop_specific_query_synthesizer",
     "persona_name": "journalist"},
    {"user_input": "Who governs Port Calder?", "reference": "A mayor and a council.",
     "reference_contexts": [HARBOUR, "A second passage."], "retrieved_contexts": ["something retrieved"],
     "response": "The mayor.", "rubrics": {"score1_description": "wrong"}},
    {"user_input": "Is there a reference at all?"},
]
# MultiTurnSample: user_input is a list of messages (HumanMessage / AIMessage with tool_calls / ToolMessage).
RAGAS_TURNS = [
    {"user_input": [{"content": "When did the harbour open?", "type": "human"},
                    {"content": "", "type": "ai", "tool_calls": [{"name": "search", "args": {"q": "harbour"}}]},
                    {"content": "1890", "type": "tool"},
                    {"content": "It opened in 1890.", "type": "ai"},
                    {"content": "And who built it?", "type": "human", "metadata": {"turn": 2}}],
     "reference": "The Calder Pier Trust.", "reference_topics": ["harbour"]},
]
# DeepEval: EvaluationDataset.save_as("json") writes every golden field, None included.
DEEPEVAL_GOLDENS = [
    {"input": "How many members sit on the city council?", "actual_output": None, "expected_output": "45 members.",
     "retrieval_context": ["retrieved one"], "context": [HARBOUR], "name": "council", "comments": "checked",
     "source_file": "city-overview.md", "tools_called": None, "expected_tools": [{"name": "search"}],
     "additional_metadata": {"case_id": "C-7", "category": "civic"}, "custom_column_key_values": {"team": "a"}},
    {"input": "What has no context?", "expected_output": None},
    {"scenario": "A visitor asks about the harbour.", "turns": [
        {"role": "user", "content": "When did the harbour open?"},
        {"role": "assistant", "content": "In 1890.", "retrieval_context": ["In 1890 the harbour opened."]},
        {"role": "user", "content": "Who built it?"}],
     "expected_outcome": "The visitor learns who built it.", "user_description": "a tourist", "context": [HARBOUR],
     "name": None, "comments": None, "additional_metadata": None, "custom_column_key_values": None},
]
# LlamaIndex LabelledRagDataset.save_json: {"examples": [LabelledRagDataExample.dict(), ...]}.
LABELLED = {"examples": [
    {"query": "How many members sit on the city council?", "query_by": {"model_name": "gpt-4", "type": "ai"},
     "reference_contexts": [HARBOUR], "reference_answer": "45 members.",
     "reference_answer_by": {"model_name": "", "type": "human"}},
    {"query": "Who governs Port Calder?", "query_by": None, "reference_contexts": None, "reference_answer": "",
     "reference_answer_by": None},
]}
# LlamaIndex EmbeddingQAFinetuneDataset.save_json: queries, corpus (node id -> text), relevant_docs, mode.
QA = {"queries": {"q-a": "How many members sit on the city council?", "q-b": "Who governs Port Calder?"},
      "corpus": {"node-1": HARBOUR, "node-2": "A passage nobody asked about.", "node-3": "A second passage."},
      "relevant_docs": {"q-a": ["node-1"], "q-b": ["node-1", "node-3"]}, "mode": "text"}


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def dump(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def kept(original: dict[str, Any], written: dict[str, Any], where: str) -> None:
    """Every field of the original record is in the written one with the same value (absent = None)."""
    for key, value in original.items():
        assert written.get(key) == value, f"{where}: field {key} changed: {value!r} -> {written.get(key)!r}"


def test_ragas_jsonl_is_read_and_written_back_with_every_field(tmp_path):
    src = jsonl(tmp_path / "ragas.jsonl", RAGAS_ROWS + RAGAS_TURNS)
    got = read_external(src)
    assert got.format == "ragas" and [s.id for s in got.samples] == ["1", "2", "3", "4"]
    first, second, bare, talk = got.samples
    assert first.question == RAGAS_ROWS[0]["user_input"] and first.reference == "45 members."
    assert first.kind == "single_hop" and first.evidence == ()  # the generator's synthesizer names the kind
    assert first.provenance["reference_contexts"] == [HARBOUR] and first.provenance["row"] == "line 1"
    assert second.provenance["fields"]["ragas"]["response"] == "The mayor." and second.kind == "imported"
    assert bare.reference == "" and "reference_contexts" not in bare.provenance
    # the conversation is kept; its last human message is the question
    assert talk.question == "And who built it?" and talk.kind == "conversation"
    assert [t["role"] for t in talk.conversation] == ["user", "assistant", "tool", "assistant", "user"]
    assert talk.conversation[1]["tool_calls"] == [{"name": "search", "args": {"q": "harbour"}}]
    out = write_external(got.samples, tmp_path / "back.jsonl", "ragas")
    written = [json.loads(line) for line in out.read_text().splitlines()]
    for n, (original, row) in enumerate(zip(RAGAS_ROWS + RAGAS_TURNS, written), 1):
        kept(original, row, f"row {n}")
    assert written[0]["id"] == "1" and written[0]["kind"] == "single_hop"
    again = read_external(out)  # a second pass changes nothing
    assert [s.to_dict() for s in again.samples] == [s.to_dict() for s in got.samples]


def test_ragas_csv_with_python_list_cells(tmp_path):
    src = tmp_path / "ragas.csv"
    with src.open("w", newline="", encoding="utf-8") as fh:  # as EvaluationDataset.to_csv writes lists: str(list)
        w = csv.writer(fh)
        w.writerow(["user_input", "reference_contexts", "reference", "synthesizer_name"])
        w.writerow([RAGAS_ROWS[0]["user_input"], str([HARBOUR, "it's; two"]), "45 members.", "multi_hop_abstract"])
        w.writerow(["Who governs Port Calder?", "", "", ""])
    assert detect_format(src) == "ragas"
    a, b = read_external(src).samples
    assert a.provenance["reference_contexts"] == [HARBOUR, "it's; two"] and a.kind == "multi_hop"
    assert b.reference == "" and "reference_contexts" not in b.provenance
    out = write_external([a, b], tmp_path / "back.csv")
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert list_cell(rows[0]["reference_contexts"]) == [HARBOUR, "it's; two"]
    assert rows[0]["synthesizer_name"] == "multi_hop_abstract" and rows[1]["reference"] == ""
    assert [s.provenance["reference_contexts"] for s in read_external(out).samples[:1]] == [[HARBOUR, "it's; two"]]


def test_deepeval_goldens_are_read_and_written_back_with_every_field(tmp_path):
    src = dump(tmp_path / "goldens.json", DEEPEVAL_GOLDENS)
    got = read_external(src)
    assert got.format == "deepeval"
    one, two, talk = got.samples
    assert one.question.startswith("How many") and one.reference == "45 members."
    assert one.provenance["reference_contexts"] == [HARBOUR]
    assert one.provenance["fields"]["deepeval"]["retrieval_context"] == ["retrieved one"]
    assert two.reference == "" and talk.question == "Who built it?" and talk.reference.startswith("The visitor")
    assert talk.conversation[1]["retrieval_context"] == ["In 1890 the harbour opened."]
    out = write_external(got.samples, tmp_path / "back.json", "deepeval")
    written = json.loads(out.read_text())
    for n, (original, golden) in enumerate(zip(DEEPEVAL_GOLDENS, written), 1):
        meta = original.get("additional_metadata") or {}
        kept({k: v for k, v in original.items() if k != "additional_metadata"}, golden, f"golden {n}")
        kept(meta, golden["additional_metadata"], f"golden {n} additional_metadata")
        assert golden["additional_metadata"]["id"] == str(n)
    # an id in additional_metadata names the sample
    named = [{**DEEPEVAL_GOLDENS[0], "additional_metadata": {"id": "council-1"}}]
    assert read_external(dump(tmp_path / "named.json", named)).samples[0].id == "council-1"


def test_llamaindex_labelled_dataset_round_trip(tmp_path):
    src = dump(tmp_path / "rag_dataset.json", LABELLED)
    got = read_external(src)
    assert got.format == "llamaindex" and [s.id for s in got.samples] == ["1", "2"]
    assert got.samples[0].provenance["model"] == "gpt-4" and got.samples[1].provenance["backend"] == "imported"
    out = write_external(got.samples, tmp_path / "back.json", "llamaindex", extra=got.extra)
    assert json.loads(out.read_text()) == LABELLED


def test_llamaindex_embedding_qa_dataset_round_trip(tmp_path):
    src = dump(tmp_path / "qa.json", QA)
    got = read_external(src)
    assert got.format == "llamaindex_qa" and [s.id for s in got.samples] == ["q-a", "q-b"]
    assert got.samples[1].provenance["reference_contexts"] == [HARBOUR, "A second passage."]
    assert got.samples[1].provenance["reference_context_ids"] == ["node-1", "node-3"]
    out = write_external(got.samples, tmp_path / "back.json", "llamaindex_qa", extra=got.extra)
    assert json.loads(out.read_text()) == QA  # the node nobody asked about is kept too


def test_our_samples_keep_id_kind_provenance_and_span_ids_in_each_format(tmp_path):
    sample = TestSample("q9", "How many members sit on the city council?", "45 members.",
                        (Span("city-overview.md", 1179, 1290),), "comparative", {"backend": "rules", "seed": 3},
                        quotes=(HARBOUR,))
    for fmt, name in (("ragas", "a.jsonl"), ("ragas", "a.csv"), ("deepeval", "a.json")):
        back = read_external(write_external([sample], tmp_path / name, fmt)).samples[0]
        assert (back.id, back.question, back.reference, back.kind) == ("q9", sample.question, "45 members.",
                                                                       "comparative"), (fmt, name)
        assert back.provenance["seed"] == 3 and back.provenance["reference_context_ids"] == ["city-overview.md:1179-1290"]
        assert back.provenance["reference_contexts"] == [HARBOUR]
    labelled = json.loads(write_external([sample], tmp_path / "l.json", "llamaindex").read_text())
    assert labelled["examples"][0]["query_by"] == {"model_name": "rules", "type": "ai"}
    qa = json.loads(write_external([sample], tmp_path / "q.json", "llamaindex_qa").read_text())
    assert qa["relevant_docs"] == {"q9": ["city-overview.md:1179-1290"]} and qa["corpus"] == {
        "city-overview.md:1179-1290": HARBOUR}
    ours = write_external([sample], tmp_path / "ours.jsonl")
    assert read_testset(ours)[0].evidence == sample.evidence


def test_span_ids():
    span = Span("notes/a:b.md", 3, 40)
    assert parse_span_id(span_id(span)) == span
    assert parse_span_id("node-1") is None and parse_span_id("a.md:9-3") is None and parse_span_id(7) is None


@pytest.mark.parametrize("name, body, message", [
    ("bad.jsonl", [{"user_input": "ok"}, {"reference": "no question"}], "bad.jsonl, line 2, field user_input"),
    ("bad.jsonl", [{"user_input": "q", "reference_contexts": "not a list"}], "line 1, field reference_contexts"),
    ("bad.jsonl", [{"user_input": "q", "reference_contexts": ["a"], "reference_context_ids": ["x", "y"]}],
     "field reference_context_ids: 2 ids for 1 reference contexts"),
    ("bad.jsonl", [{"user_input": [{"type": "human"}]}], "line 1, field user_input[0]"),
    ("bad.jsonl", [{"user_input": "q", "id": "a"}, {"user_input": "r", "id": "a"}], "line 2, field id: 'a' appears twice"),
    ("bad.json", [{"input": "q", "context": [1, 2]}], "bad.json, item 1, field context"),
    ("bad.json", [{"input": "q"}, {"input": ""}], "item 2, field input: missing or empty"),
    ("bad.json", [{"input": "q", "additional_metadata": "x"}], "item 1, field additional_metadata"),
    ("bad.json", {"examples": [{"query": "q", "query_by": "me"}]}, "example 1, field query_by"),
    ("bad.json", {"queries": {"a": "q"}, "corpus": {}, "relevant_docs": {"a": ["n1"]}},
     "field relevant_docs['a']: node 'n1' is not in corpus"),
    ("bad.json", [{"question": "q"}], "cannot tell the test-set format"),
])
def test_bad_input_names_file_row_and_field(tmp_path, name, body, message):
    path = tmp_path / name
    if name.endswith(".jsonl"):
        jsonl(path, body)
    else:
        dump(path, body)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        read_external(path)


def test_formats_and_file_names(tmp_path):
    assert output_format("x.jsonl") == "ragsweep" and output_format("x.csv") == "ragas"
    with pytest.raises(InputError, match="say which format"):
        output_format("x.json")
    with pytest.raises(InputError, match="format llamaindex writes .json files"):
        write_external([], tmp_path / "x.csv", "llamaindex")
    with pytest.raises(InputError, match="unknown test-set format 'ragas2'"):
        read_external(dump(tmp_path / "x.json", []), "ragas2")
    bare = TestSample("1", "q", "", (), "imported", {"format": "ragas"})
    with pytest.raises(InputError, match="1 of 1 samples have no evidence span"):
        write_external([bare], tmp_path / "x.jsonl")
    assert set(FORMATS) == {"ragsweep", "ragas", "deepeval", "llamaindex", "llamaindex_qa"}
