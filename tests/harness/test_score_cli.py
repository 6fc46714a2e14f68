"""`ragsweep score` as a user runs it (subprocesses), and its input readers (in-process)."""

from __future__ import annotations

import csv
import functools
import json
from pathlib import Path

import pytest

from ragsweep.harness.score import read_samples
from ragsweep.metrics.errors import InputError

ROWS = [
    {"question": "What is the capital of France?", "answer": "Paris is the capital.",
     "contexts": ["Paris is the capital of France.", "France is in Europe."],
     "ground_truths": ["Paris is the capital of France."],
     "reference_contexts": ["Paris is the capital of France."]},
    {"question": "Who wrote Hamlet?", "answer": "Shakespeare wrote Hamlet.",
     "contexts": ["Hamlet is a play by Shakespeare.", "It is a tragedy; set in Denmark."],
     "ground_truths": ["William Shakespeare", "Shakespeare"],
     "reference_contexts": ["Hamlet is a play by William Shakespeare."]},
    {"question": "What is 2+2?", "answer": "4", "contexts": ["Arithmetic basics."],
     "ground_truths": ["four"], "reference_contexts": ["Two plus two is four."]},
    {"question": "Where is the Eiffel Tower?", "answer": "In Paris.",
     "contexts": ["The Eiffel Tower is in Paris."], "ground_truths": ["The Eiffel Tower is in Paris."],
     "reference_contexts": ["The Eiffel Tower stands in Paris."]},
]
LEXICAL = "metrics=[exact_match,token_f1,bleu,rouge_l,string_similarity,non_llm_context_recall," \
          "non_llm_context_precision]"


def write_ragas_csv(path: Path) -> Path:
    """Ragas' classic layout: lists joined by ';', except one cell as a JSON list (it holds a ';')."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "contexts", "answer", "ground_truths", "reference_contexts"])
        for r in ROWS:
            ctx = json.dumps(r["contexts"]) if any(";" in c for c in r["contexts"]) else ";".join(r["contexts"])
            w.writerow([r["question"], ctx, r["answer"], ";".join(r["ground_truths"]),
                        ";".join(r["reference_contexts"])])
    return path


@pytest.fixture(scope="module")
def score(ragsweep):
    """``ragsweep score progress=false llm=none ARGS`` in ``cwd``, cache in ``cwd / "cache"``."""
    return functools.partial(ragsweep, "score", "progress=false", "llm=none", timeout=300)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def scored(tmp_path_factory, score):
    """The 4-row CSV scored once with the default metrics and a threshold that holds."""
    cwd = tmp_path_factory.mktemp("score")
    write_ragas_csv(cwd / "results.csv")
    proc = score("input=results.csv", "out=out", "++thresholds.rouge_l=0.0", cwd=cwd)
    return cwd, proc


def test_csv_writes_results_summary_and_explanations(scored):
    cwd, proc = scored
    assert proc.returncode == 0, proc.stderr
    out = cwd / "out"
    result = read_csv(out / "result.csv")
    assert [r["id"] for r in result] == ["1", "2", "3", "4"]
    assert result[1]["ground_truths"] == "William Shakespeare;Shakespeare"  # input kept as given
    assert result[0]["exact_match"] == "0.0" and result[0]["exact_match_status"] == "ok"
    summary = read_csv(out / "summary.csv")
    metrics = [r["metric"] for r in summary]
    assert metrics == ["exact_match", "token_f1", "bleu", "rouge_l", "string_similarity",
                       "non_llm_context_recall", "non_llm_context_precision", "answer_semantic_similarity"]
    rouge = summary[metrics.index("rouge_l")]
    assert rouge["threshold"] == "0.0" and rouge["passed"] == "true" and rouge["n_ok"] == "4"
    lines = (out / "explanations.jsonl").read_text().splitlines()
    assert len(lines) == 4 * len(metrics)
    first = json.loads(lines[0])
    assert first["sample_id"] == "1" and first["metric"] == "exact_match" and first["status"] == "ok"
    assert "rouge_l" in proc.stdout and "scores: out" in proc.stdout
    cost = json.loads((out / "cost.json").read_text())
    assert cost["samples"] == 4 and cost["judge_calls"] == 0 and cost["seconds"] > 0
    assert "spent: no judge calls" in proc.stderr
    assert not (cwd / "outputs").exists()  # Hydra wrote nothing outside `out`


def test_failing_threshold_exits_1_and_names_the_metric(scored, score):
    cwd, _ = scored
    proc = score("input=results.csv", "out=fail", LEXICAL, "++thresholds.rouge_l=0.99", cwd=cwd)
    assert proc.returncode == 1, proc.stderr
    assert "threshold failed: rouge_l" in proc.stdout
    assert read_csv(cwd / "fail" / "summary.csv")[3]["passed"] == "false"


def test_dry_run_scores_nothing(scored, score):
    cwd, _ = scored
    proc = score("input=results.csv", "out=dry", "dry_run=true", cwd=cwd)
    assert proc.returncode == 0 and "4 samples" in proc.stdout and "judge calls: 0" in proc.stdout
    assert not (cwd / "dry").exists()


@pytest.mark.parametrize("name, content, args, expected", [
    ("missing", None, ["input=nope.csv"], "nope.csv: no such file"),
    ("nocol", "question,answer\nq,a\n", ["input=nocol.csv", "metrics=[rouge_l]"],
     "nocol.csv: no column reference or ground_truth or ground_truths, which metric rouge_l needs"),
    ("quote", 'question,answer,reference\n"q,a,r\nq2,a2,r2\n', ["input=quote.csv"], "quote.csv: malformed CSV"),
    ("fields", "question,answer,reference\nq,a,r,extra\n", ["input=fields.csv"], "fields.csv row 1"),
    ("empty", "", ["input=empty.csv"], "empty.csv: empty file"),
    ("metric", "question,answer,reference\nq,a,r\n", ["input=metric.csv", "metrics=[rouge_x]"],
     "unknown metric rouge_x"),
    ("typed", '{"answer": "a", "reference": 3}\n', ["input=typed.jsonl"],
     "typed.jsonl line 1, column reference: expected a string, got int"),
])
def test_bad_input_exits_2_with_one_clear_line(tmp_path, name, content, args, expected, score):
    if content is not None:
        (tmp_path / args[0].split("=", 1)[1]).write_text(content)
    proc = score(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr


def test_jsonl_parquet_and_datasets_folder_score_like_the_csv(tmp_path, score):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    write_ragas_csv(tmp_path / "in.csv")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "in.parquet")
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "in_ds"))
    scores = {}
    for src in ("in.csv", "in.jsonl", "in.parquet", "in_ds"):
        proc = score(f"input={src}", f"out=out_{src}", LEXICAL, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        rows = read_csv(tmp_path / f"out_{src}" / "result.csv")
        scores[src] = [{k: v for k, v in r.items() if k not in ROWS[0]} for r in rows]
        assert len(rows) == 4 and all(r["rouge_l_status"] == "ok" for r in rows)
    assert scores["in.jsonl"] == scores["in.csv"]
    assert scores["in.parquet"] == scores["in.csv"]
    assert scores["in_ds"] == scores["in.csv"]


def test_csv_cells_json_and_pandas_list_literals(tmp_path):
    p = tmp_path / "cells.csv"
    p.write_text('id,user_input,retrieved_contexts,response,ground_truth\n'
                 'x,q,"[""a; b"", ""c""]",ans,"ref; with semicolon"\n'
                 "y,q,\"['d', 'e']\",,ref\n"
                 "z,q,[1] Smith;[2] Jones,ans,ref\n")
    samples, fields, _ = read_samples(p)
    assert fields == {"question": "user_input", "answer": "response", "contexts": "retrieved_contexts",
                      "reference": "ground_truth"}
    assert samples[0].contexts == ("a; b", "c")
    assert samples[0].reference == "ref; with semicolon"  # a single ground_truth is never split
    assert samples[1].contexts == ("d", "e") and samples[1].answer is None
    assert samples[2].contexts == ("[1] Smith", "[2] Jones")


def test_reader_errors_name_file_row_and_column(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("id,answer,reference\n1,a,r\n1,b,r\n")
    with pytest.raises(InputError, match=r"dup.csv row 2, column id: duplicate id '1'"):
        read_samples(p)
    p = tmp_path / "list.csv"
    p.write_text('answer,contexts\na,"[1, 2]"\n')
    with pytest.raises(InputError, match=r"list.csv row 1, column contexts: expected a list of strings"):
        read_samples(p)
    p = tmp_path / "both.csv"
    p.write_text("answer,response\na,b\n")
    with pytest.raises(InputError, match="columns answer and response both give the answer"):
        read_samples(p)


def test_dataset_dict_needs_a_split_when_it_has_several(tmp_path):
    import datasets

    dd = datasets.DatasetDict({"dev": datasets.Dataset.from_list(ROWS[:1]),
                               "test": datasets.Dataset.from_list(ROWS)})
    dd.save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(InputError, match="splits dev, test; choose one with split=NAME"):
        read_samples(tmp_path / "dd")
    samples, _, _ = read_samples(tmp_path / "dd", split="test")
    assert len(samples) == 4 and samples[1].references == ("William Shakespeare", "Shakespeare")


def test_dry_run_counts_the_judge_calls_of_the_core_metrics(tmp_path, score):
    """faithfulness + answer relevancy + context precision + context recall, 5 contexts: 8 calls, 7 of them
    one-token claim checks (the answer's sentence, the reference's, the reference's on each context alone) and
    answer relevancy's one-token verdict."""
    path = tmp_path / "one.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "contexts", "answer", "ground_truths"])
        w.writerow(["Who built the bridge?", ";".join(f"Context {i}: Ada built the bridge in 1901." for i in range(5)),
                    "Ada built it in 1901.", "Ada built the bridge."])
    proc = score("input=one.csv", "dry_run=true", "llm=local",
                    "metrics=[faithfulness,answer_relevancy,context_precision,context_recall]", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "judge calls: 8" in proc.stdout, proc.stdout
    assert "chunk_verdicts" not in proc.stdout
    assert not (tmp_path / "outputs").exists()  # a dry run writes nothing and loads no model


# ---------------------------------------------------------------- fields of any size, empty answers, gates

FOUR = [("Capital of France?", "Paris", "Paris"), ("Who wrote Hamlet?", "", "Shakespeare"),
        ("2+2?", "four", "four"), ("Largest ocean?", "   ", "Pacific")]


def write_rows(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "ground_truth"])
        w.writerows(rows)
    return path


def test_a_5_mb_field_is_read_and_a_result_csv_of_long_contexts_reads_back(tmp_path, score):
    big = "word " * 1_000_000  # 5 MB in one cell, far over csv's default 131,072 characters
    with (tmp_path / "big.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truth"])
        w.writerow(["q", "Paris", big, "Paris"])
        w.writerow(["q2", "Rome", json.dumps(["x" * 200_000, "y; z"]), "Rome"])
    samples, _, _ = read_samples(tmp_path / "big.csv")
    assert len(samples[0].contexts[0]) == len(big.strip()) and samples[1].contexts == ("x" * 200_000, "y; z")
    proc = score("input=big.csv", "metrics=[rouge_l]", "out=out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    again, _, _ = read_samples(tmp_path / "out" / "result.csv")  # contexts written as a JSON list
    assert [s.contexts for s in again] == [s.contexts for s in samples]


def test_empty_answers_fail_the_gate_and_are_counted(tmp_path, score):
    write_rows(tmp_path / "in.csv", FOUR)
    proc = score("input=in.csv", "metrics=[rouge_l,token_f1]", "out=fail", "++thresholds.rouge_l=0.8",
                 cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "threshold failed: rouge_l: mean 0.5000 < threshold 0.8" in proc.stdout
    summary = {r["metric"]: r for r in read_csv(tmp_path / "fail" / "summary.csv")}
    assert summary["rouge_l"]["n_empty"] == "2" and summary["rouge_l"]["n_ok"] == "4"
    head, rouge = proc.stdout.splitlines()[:2]
    at = head.index("empty")
    assert rouge[at:at + 5].strip() == "2", proc.stdout  # the printed table shows them
    rows = read_csv(tmp_path / "fail" / "result.csv")
    assert [r["rouge_l"] for r in rows] == ["1.0", "0.0", "1.0", "0.0"]

    proc = score("input=in.csv", "metrics=[rouge_l]", "out=exclude", "++thresholds.rouge_l=0.8",
                 "empty_answers=exclude", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = read_csv(tmp_path / "exclude" / "summary.csv")[0]
    assert (summary["mean"], summary["n_ok"], summary["n_undefined"], summary["n_empty"]) == ("1.0", "2", "2", "2")


def test_a_test_set_given_to_score_is_not_scored_as_zeros_and_says_what_to_do(tmp_path, score):
    """Goldens with an empty answer column (DeepEval's actual_output) are a test set, not a system that said
    nothing: exit 3 naming the column, not a board of zeros with exit 0. A test set with no answer column and
    LlamaIndex's retrieval data set say what to do with them."""
    goldens = [("Capital of France?", "", "Paris"), ("Who wrote Hamlet?", " ", "Shakespeare")]
    with (tmp_path / "goldens.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["input", "actual_output", "expected_output"])
        w.writerows(goldens)
    proc = score("input=goldens.csv", "metrics=[rouge_l,token_f1]", "out=out", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "could not score: every answer is empty" in proc.stderr
    assert "the answer column 'actual_output' is empty in every row" in proc.stderr
    assert "ragsweep run testset=FILE" in proc.stderr
    # one answer given: the empty ones are the system's failures, scored with no credit as before
    write_rows(tmp_path / "some.csv", [("Capital of France?", "Paris", "Paris"), ("Who wrote Hamlet?", "", "S")])
    assert score("input=some.csv", "metrics=[rouge_l]", "out=some", cwd=tmp_path).returncode == 0
    with (tmp_path / "ragas.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["user_input", "reference"], ["Capital of France?", "Paris"]])
    proc = score("input=ragas.csv", "out=r", "llm=none", cwd=tmp_path)
    assert proc.returncode == 2 and "it looks like a test set" in proc.stderr, proc.stderr
    proc = score("input=ragas.csv", "metrics=[rouge_l]", "out=r", cwd=tmp_path)
    assert proc.returncode == 2 and "no column answer" in proc.stderr and "ragsweep sweep testset=FILE" in proc.stderr
    (tmp_path / "qa.json").write_text(json.dumps({"queries": {"q1": "Capital?"}, "corpus": {"n1": "Paris is."},
                                                  "relevant_docs": {"q1": ["n1"]}, "mode": "text"}))
    proc = score("input=qa.json", "out=q", "llm=none", cwd=tmp_path)
    assert proc.returncode == 2 and "EmbeddingQAFinetuneDataset" in proc.stderr, proc.stderr


@pytest.mark.parametrize("args, message", [
    (["empty_answers=zero"], "empty_answers must be one of fail, exclude, got 'zero'"),
    (["++thresholds.rouge_l=1.5"], "threshold for rouge_l is 1.5, outside the metric's range [0, 1]"),
    (["++thresholds.rouge_l=-0.2"], "outside the metric's range"),
])
def test_bad_gates_exit_2(tmp_path, args, message, score):
    write_rows(tmp_path / "in.csv", FOUR)
    proc = score("input=in.csv", "metrics=[rouge_l]", "out=out", *args, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()
