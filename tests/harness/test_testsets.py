"""Imported test sets get evidence spans by locating their reference contexts in the corpus; every
format round-trips the shipped test set; ``ragsweep convert``, ``sweep testset=`` and ``run
testset=`` take the other tools' files; ``ragsweep.TestSet.read`` / ``write`` from Python."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import ragsweep
from ragsweep.gen.documents import Span, read_shipped, shipped_testset_path
from ragsweep.gen.formats import read_external, write_external
from ragsweep.gen.testset import read_testset
from ragsweep.harness.app.locate import Locator
from ragsweep.harness.testsets import locate_evidence, read_any

CITY = "city-overview.md"
HARBOUR = "Port Calder is governed by a directly elected mayor and a city council of 45 members, elected every four years."
GOLD = Span(CITY, 1179, 1290)  # HARBOUR's place in the shipped corpus


@pytest.fixture(scope="module")
def corpus():
    return read_shipped()


def imported(tmp_path: Path, contexts: list[str], ids: list[str] | None = None):
    row = {"user_input": "How many members sit on the council?", "reference": "45.", "reference_contexts": contexts}
    if ids is not None:
        row["reference_context_ids"] = ids
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return read_external(path).samples


@pytest.mark.parametrize("context, method", [
    (HARBOUR, "exact"),
    ("  PORT CALDER is governed by a directly elected mayor\nand a city council of 45 members,   elected "
     "every four years.", "normalised"),
])
def test_a_corpus_passage_is_located_at_its_span(tmp_path, corpus, context, method):
    (sample,), report = locate_evidence(imported(tmp_path, [context]), corpus, Locator(corpus))
    assert sample.evidence == (GOLD,)
    assert sample.provenance["located"][0]["method"] == method and report.by_method[method] == 1
    assert corpus.get(CITY).text[GOLD.start:GOLD.end] == HARBOUR


def test_a_reworded_passage_is_located_fuzzily_and_noise_is_not(tmp_path, corpus):
    reworded = HARBOUR.replace("directly elected", "elected")
    noise = "Emperor penguins huddle together through the Antarctic winter."
    (sample,), report = locate_evidence(imported(tmp_path, [reworded, noise]), corpus, Locator(corpus))
    (span,) = sample.evidence
    assert span.doc_id == CITY and abs(span.start - GOLD.start) <= 2 and abs(span.end - GOLD.end) <= 2
    fuzzy, unlocated = sample.provenance["located"]
    assert fuzzy["method"] == "fuzzy" and fuzzy["score"] >= 0.9
    assert unlocated["method"] == "unlocated" and "doc_id" not in unlocated
    counts = report.to_dict()
    assert counts == {**counts, "contexts": 2, "located": 1, "unlocated": 1, "fuzzy": 1, "samples": 1,
                      "samples_with_evidence": 1}
    assert "located 1 of 2 reference contexts in the corpus (fuzzy 1)" in report.message()


def test_a_span_id_is_used_when_its_text_matches(tmp_path, corpus):
    (by_id,), _ = locate_evidence(imported(tmp_path, [HARBOUR], [f"{CITY}:1179-1290"]), corpus, Locator(corpus))
    assert by_id.evidence == (GOLD,) and by_id.provenance["located"][0]["method"] == "id"
    (stale,), _ = locate_evidence(imported(tmp_path, [HARBOUR], [f"{CITY}:0-111"]), corpus, Locator(corpus))
    assert stale.evidence == (GOLD,) and stale.provenance["located"][0]["method"] == "exact"


def test_a_sample_with_nothing_located_has_no_evidence(tmp_path, corpus):
    (sample,), report = locate_evidence(imported(tmp_path, ["Nothing like this is in the corpus at all."]), corpus,
                                        Locator(corpus, fuzzy=False))
    assert sample.evidence == () and report.with_evidence == 0
    assert "1 of 1 samples have no evidence span" in report.message()


@pytest.mark.parametrize("fmt, name", [("ragas", "t.jsonl"), ("ragas", "t.csv"), ("deepeval", "t.json"),
                                       ("llamaindex", "t.json"), ("llamaindex_qa", "t.json")])
def test_the_shipped_test_set_round_trips_through_every_format(tmp_path, corpus, fmt, name):
    ours = read_testset(shipped_testset_path())
    path = write_external(ours, tmp_path / name, fmt, corpus)
    back = read_any(path, corpus)
    assert back.format == fmt and back.located.located == back.located.contexts == 54
    assert [s.evidence for s in back.samples] == [s.evidence for s in ours]  # every span found again
    assert [s.question for s in back.samples] == [s.question for s in ours]
    if fmt != "llamaindex_qa":  # an embedding QA dataset holds no reference answer
        assert [s.reference for s in back.samples] == [s.reference for s in ours]
    if fmt != "llamaindex":  # a LabelledRagDataset holds no ids: a sample's id is its position
        assert [s.id for s in back.samples] == [s.id for s in ours]
    if fmt in ("ragas", "deepeval"):  # these hold kinds and provenance too
        assert [s.kind for s in back.samples] == [s.kind for s in ours]
        assert all(b.provenance["author"] == "ragsweep developers" for b in back.samples)
    # ... and back to ours: the same test set
    again = write_external(back.samples, tmp_path / "ours.jsonl", corpus=corpus)
    assert [s.evidence for s in read_testset(again)] == [s.evidence for s in ours]


GOLDENS = [{"input": "How many members sit on Port Calder's city council, and how often are they elected?",
            "expected_output": "45 members, elected every four years.", "context": [HARBOUR],
            "additional_metadata": {"id": "council"}},
           {"input": "Which older body did the Calder Harbour Act of 1921 dissolve?",
            "expected_output": "The Calder Pier Trust.",
            "context": ["The Port Calder Harbour Authority (PCHA) was created by the Calder Harbour Act of 1921, which "
                        "dissolved the older Calder Pier Trust"]}]
ACT = Span("harbour-authority.md", 33, 33 + len(GOLDENS[1]["context"][0]))


def test_convert_locates_contexts_and_refuses_bad_input(tmp_path, ragsweep):
    (tmp_path / "goldens.json").write_text(json.dumps(GOLDENS), encoding="utf-8")
    out = ragsweep("convert", "input=goldens.json", "out=t.jsonl", "corpus=shipped", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "read 2 samples (deepeval)" in out.stdout and "located 2 of 2 reference contexts" in out.stdout
    council, act = read_testset(tmp_path / "t.jsonl")
    assert council.id == "council" and council.evidence == (GOLD,)
    assert act.evidence == (ACT,)
    out = ragsweep("convert", "input=t.jsonl", "out=t.csv", cwd=tmp_path)  # ours -> Ragas CSV, no corpus needed
    assert out.returncode == 0, out.stderr[-2000:]
    rows = list(csv.DictReader((tmp_path / "t.csv").open(encoding="utf-8")))
    assert rows[0]["id"] == "council" and json.loads(rows[0]["reference_contexts"]) == [HARBOUR]
    # without a corpus no span is located, and our format needs spans
    out = ragsweep("convert", "input=goldens.json", "out=u.jsonl", cwd=tmp_path)
    assert out.returncode == 2 and "2 of 2 samples have no evidence span" in out.stderr
    (tmp_path / "bad.json").write_text(json.dumps([{"input": "q", "context": "not a list"}]), encoding="utf-8")
    out = ragsweep("convert", "input=bad.json", "out=v.jsonl", "corpus=shipped", cwd=tmp_path)
    assert out.returncode == 2 and "bad.json, item 1, field context: expected a list of strings" in out.stderr
    out = ragsweep("convert", "input=goldens.json", "out=w.json", cwd=tmp_path)
    assert out.returncode == 2 and "say which format to write" in out.stderr


@pytest.mark.slow
def test_sweep_and_run_take_a_ragas_file_and_a_deepeval_file(tmp_path, ragsweep):
    rows = [{"user_input": g["input"], "reference": g["expected_output"], "reference_contexts": g["context"]}
            for g in GOLDENS] + [{"user_input": "Who designed the lighthouse at Gannet Point?", "reference": "-"}]
    (tmp_path / "ragas.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = ragsweep("sweep", "testset=ragas.jsonl", "retrieval=bm25", "answerer=none", "chunker.size=256",
                   "retriever.top_k=[1,3]", "retriever.latency_queries=0", "hydra.sweep.dir=sw", "progress=false",
                   cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "located 2 of 2 reference contexts" in out.stderr and "1 of 3 samples have no evidence span" in out.stderr
    runs = [json.loads(line) for line in (tmp_path / "sw" / "0" / "runs.jsonl").open()]
    assert [r["evidence"] for r in runs] == [[[CITY, 1179, 1290]], [[ACT.doc_id, ACT.start, ACT.end]], []]
    scores = [json.loads(line) for line in (tmp_path / "sw" / "0" / "scores.jsonl").open()]
    assert {s["status"] for s in scores if s["sample_id"] == "3"} == {"undefined"}
    assert {s["status"] for s in scores if s["sample_id"] != "3"} == {"ok"}

    (tmp_path / "goldens.json").write_text(json.dumps(GOLDENS), encoding="utf-8")
    (tmp_path / "app.py").write_text(f"def answer(question):\n    return {{'answer': '45', 'contexts': [{HARBOUR!r}]}}\n")
    out = ragsweep("run", "target=python", "target.function=app:answer", "testset=goldens.json", "out=runs",
                   "progress=false", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    board = list(csv.DictReader((tmp_path / "runs" / "leaderboard.csv").open()))
    assert board[0]["contexts_unlocated"] == "0" and float(board[0]["mrr@10"]) == pytest.approx(0.5)


def test_testset_read_and_write_from_python(tmp_path):
    path = tmp_path / "goldens.json"
    path.write_text(json.dumps(GOLDENS), encoding="utf-8")
    ts = ragsweep.TestSet.read(path, corpus="shipped")
    assert ts.format == "deepeval" and ts.report["located"]["located"] == 2 and len(ts) == 2
    assert ts.samples[0].evidence == (GOLD,)
    out = ts.write(tmp_path / "rag.json", format="llamaindex")
    assert json.loads(out.read_text())["examples"][1]["reference_contexts"] == GOLDENS[1]["context"]
    ours = ts.write(tmp_path / "ours.jsonl")
    assert ts.path == ours and [s.id for s in ragsweep.TestSet.read(ours).samples] == ["council", "2"]
    assert ragsweep.TestSet.read(ts.write(tmp_path / "back.json", "deepeval")).samples[0].id == "council"


INTEROP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "interop"


@pytest.mark.skipif(not (INTEROP / "ragas_rmcv_pdf_knowledge_graph.json").is_file(), reason="no shared interop data")
def test_a_ragas_test_set_locates_in_the_knowledge_graph_it_was_generated_from():
    from ragsweep.gen.ragas_kg import read_ragas_kg

    kg = read_ragas_kg(INTEROP / "ragas_rmcv_pdf_knowledge_graph.json")
    loaded = read_any(INTEROP / "ragas_rmcv_pdf_testset.csv", kg)
    assert loaded.located.to_dict() | {"exact": 0, "fuzzy": 0} == {
        "contexts": 23, "located": 23, "unlocated": 0, "id": 0, "exact": 0, "normalised": 0, "fuzzy": 0,
        "samples": 12, "samples_with_evidence": 12, "samples_without_contexts": 0}
    # each context is a whole document node (multi-hop ones behind Ragas's "<N-hop>" marker)
    assert all(s.evidence and all(e.start == 0 and e.end == len(kg.get(e.doc_id).text) for e in s.evidence)
               for s in loaded.samples)


@pytest.mark.parametrize("out, fmt, why", [
    ("ragas.jsonl", "ragas", "the file name says ragas"),
    ("my-ragas_testset.json", "ragas", "the file name says ragas"),
    ("deepeval_goldens.json", "deepeval", "the file name says deepeval"),
    ("llamaindex_qa.json", "llamaindex_qa", "the file name says llamaindex_qa"),
    ("out/testset.jsonl", "ragsweep", ".jsonl files are written as ragsweep unless format= says otherwise"),
    ("testset.csv", "ragas", ".csv files are written as ragas unless format= says otherwise"),
])
def test_convert_writes_the_format_the_file_name_says(out, fmt, why):
    from ragsweep.harness.testsets import output_format_of

    assert output_format_of(out, None) == (fmt, why)
    assert output_format_of(out, "ragsweep") == ("ragsweep", "format=ragsweep")  # said outright: as said


@pytest.mark.parametrize("out, message", [
    ("ragas_vs_deepeval.json", "names ragas and deepeval; pass format="),
    ("ragas.txt", "the file name says ragas, which writes .jsonl or .json or .csv files, not .txt"),
    ("dataset.json", "say which format to write"),
])
def test_convert_refuses_a_file_name_that_does_not_tell_one_format(out, message):
    from ragsweep.harness.testsets import output_format_of
    from ragsweep.metrics.errors import InputError

    with pytest.raises(InputError, match=message):
        output_format_of(out, None)


def test_convert_writes_ragas_to_a_file_named_ragas_and_says_so(tmp_path, ragsweep):
    out = ragsweep("convert", f"input={shipped_testset_path()}", "out=ragas.jsonl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    wrote = next(line for line in out.stdout.splitlines() if line.startswith("wrote "))
    assert wrote.endswith("ragas.jsonl in ragas format (the file name says ragas)"), wrote
    assert read_external(tmp_path / "ragas.jsonl").format == "ragas"
    out = ragsweep("convert", f"input={shipped_testset_path()}", "out=ragas_vs_deepeval.json", cwd=tmp_path)
    assert out.returncode == 2 and "pass format=" in out.stderr and not (tmp_path / "ragas_vs_deepeval.json").exists()
