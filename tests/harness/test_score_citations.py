"""`ragsweep score` on results files whose answers cite their contexts: inline markers and a
``citations`` column read as `ragsweep run` reads them, scored with ``llm=none``.

Expected values are worked by hand from the ALCE definitions (metrics/attribution.py): every cited
passage below is the sentence itself or plainly says nothing about it, so the offline support
verdicts are not in doubt.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import ragsweep
from ragsweep.metrics.errors import InputError

CITATION = ("citation_recall", "citation_precision", "citation_f1")

# (answer, contexts, reference, expected recall, precision, f1)
MARKED = [
    # s1 cites [1] (supports), s2 cites [2] (supports), s3 cites nothing: R 2/3, P 2/2, F1 0.8
    ("The bridge was built in 1871 [1]. It is 300 m long [2]. The paint is red.",
     ["The bridge was built in 1871.", "The bridge is 300 m long."], "The bridge was built in 1871.",
     2 / 3, 1.0, 0.8),
    # s1 cites [1, 2]: [1] alone supports it, so [2] (which does not) is irrelevant; s2 cites [2] (supports)
    # and [5], which names no context: R 2/2, P 2/4, F1 2/3
    ("The castle has 12 towers [1, 2]. The moat is dry [2][5].",
     ["The castle has 12 towers.", "The moat is dry."], "Twelve towers.",
     1.0, 0.5, 2 / 3),
    # the full-width marker some models write: R 1, P 1, F1 1
    ("Water boils at 100 degrees\u30101\u3011.", ["Water boils at 100 degrees.", "Ice melts at 0 degrees."],
     "Water boils at 100 degrees.", 1.0, 1.0, 1.0),
    # an answer that cites nothing: recall and F1 0, precision undefined (nothing to be precise about)
    ("The tower is old.", ["The tower dates from 1200."], "It is old.", 0.0, None, 0.0),
]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_csv_with_markers_gets_the_citation_metrics_by_default(tmp_path, ragsweep):
    with (tmp_path / "results.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truth"])
        for answer, contexts, reference, *_ in MARKED:
            w.writerow(["What about it?", answer, json.dumps(contexts), reference])
    proc = ragsweep("score", "progress=false", "llm=none", "input=results.csv", "out=out", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read_csv(tmp_path / "out/result.csv")
    for row, (*_, recall, precision, f1) in zip(rows, MARKED):
        for name, want in zip(CITATION, (recall, precision, f1)):
            if want is None:
                assert row[f"{name}_status"] == "undefined" and row[name] == "", (name, row)
            else:
                assert row[f"{name}_status"] == "ok" and float(row[name]) == pytest.approx(want), (name, row)
    # the other metrics read the answer without its markers: "...100 degrees." is the reference exactly
    assert float(rows[2]["exact_match"]) == 1.0 and float(rows[2]["token_f1"]) == 1.0
    explanations = [json.loads(line) for line in (tmp_path / "out/explanations.jsonl").read_text().splitlines()]
    invalid = next(e for e in explanations if e["sample_id"] == "2" and e["metric"] == "citation_precision")
    assert {"context": 5, "relevant": False, "why": "names no context"} in \
        invalid["explanation"]["sentences"][1]["citations"]
    # with llm=none the citation metrics read offline evidence: a dry run counts no judge call for them
    dry = ragsweep("score", "progress=false", "llm=none", "input=results.csv", "dry_run=true", cwd=tmp_path,
                   timeout=300)
    assert dry.returncode == 0 and "judge calls: 0" in dry.stdout and "citation_recall" in dry.stdout, dry.stdout


def test_a_jsonl_citations_column_in_run_and_application_shapes(tmp_path):
    contexts = ["The bridge was built in 1871.", "The bridge is 300 m long.", "The river is wide."]
    rows = [
        # run's own record shape: [4] named no context of three
        {"user_input": "When?", "response": "Built in 1871.", "retrieved_contexts": contexts,
         "citations": [{"sentence": "The bridge was built in 1871.", "cites": [1], "invalid": [4]}]},
        # an application's shape, a source given as a context's text; the answer's stray marker is not read
        {"user_input": "How long?", "response": "It is 300 m long [3].", "retrieved_contexts": contexts,
         "citations": [{"text": "The bridge is 300 m long.", "sources": ["The bridge is 300 m long."]}]},
        # no citations cell: the answer's footnote markers are read instead ([3] does not support it)
        {"user_input": "How long?", "response": "The bridge is 300 m long[^3].", "retrieved_contexts": contexts,
         "citations": None},
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scores = ragsweep.score(path, list(CITATION), embedder=None)
    table = scores.to_pandas().set_index("id")
    # 1: R 1, P 1/2 (the invalid citation), F1 2/3; 2: all 1; 3: R 0, P 0, F1 0
    assert table["citation_recall"].tolist() == pytest.approx([1.0, 1.0, 0.0])
    assert table["citation_precision"].tolist() == pytest.approx([0.5, 1.0, 0.0])
    assert table["citation_f1"].tolist() == pytest.approx([2 / 3, 1.0, 0.0])
    assert [s.answer for s in scores.samples] == ["Built in 1871.", "It is 300 m long.", "The bridge is 300 m long."]


def test_a_file_that_cites_nothing_has_no_citation_columns(tmp_path):
    rows = [{"question": "Q?", "answer": "The bridge is old.", "contexts": ["The bridge dates from 1871."],
             "ground_truth": "It is old."}]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    scores = ragsweep.score(path, embedder=None)
    names = {s.name for s in scores.metrics}
    assert "token_f1" in names and not names & {*CITATION, "cited_evidence"}
    # asked for by name, the answer is scored as one that cites nothing
    asked = ragsweep.score(path, ["citation_recall", "citation_precision"], embedder=None).explanations
    assert (asked[0]["value"], asked[0]["status"], asked[0]["explanation"].get("no_citations")) == (0.0, "ok", True)
    assert asked[1]["status"] == "undefined"


@pytest.mark.parametrize("cell, message", [
    ('[{"sentence": "x", "cites": [1]', "does not parse"),
    ('{"sentence": "x", "cites": [1]}', "expected a list"),
    ('[{"cites": [1]}]', "has no text"),
    ('["The bridge"]', "not an object"),
])
def test_a_bad_citations_cell_names_file_row_and_column(tmp_path, cell, message):
    path = tmp_path / "bad.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "citations"])
        w.writerow(["Q?", "Old [1].", '["It is old."]', ""])
        w.writerow(["Q?", "Old.", '["It is old."]', cell])
    with pytest.raises(InputError, match=message) as err:
        ragsweep.score(path, embedder=None)
    assert f"{path} row 2, column citations" in str(err.value)


def test_citation_metrics_a_file_cannot_feed_are_named(tmp_path):
    path = tmp_path / "no_answer.jsonl"
    path.write_text(json.dumps({"question": "Q?", "contexts": ["It is old."]}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="no column answer or response or citations, which metric citation_recall"):
        ragsweep.score(path, ["citation_recall"], embedder=None)
    # cited_evidence reads retrieved spans and gold evidence, which only a ragsweep run records
    path.write_text(json.dumps({"question": "Q?", "answer": "Old [1].", "contexts": ["It is old."]}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match="cited_evidence needs 'retrieved'.*ragsweep run or rescore"):
        ragsweep.score(path, ["cited_evidence"], embedder=None)
