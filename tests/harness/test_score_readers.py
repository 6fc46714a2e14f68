"""What ``ragsweep score`` reads from the files other tools write (issue #30): list cells as numpy
prints them, several references, earlier metric columns, index columns, DeepEval test cases,
layouts told by their columns, ``<N-hop>`` markers, and DataFrames read from the same CSV."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import ragsweep
from ragsweep.harness.score import read_samples
from ragsweep.metrics.errors import InputError

# Ragas 0.1 `result.to_pandas().to_csv(f)`: the index as an unnamed first column, list columns as
# numpy prints arrays (items separated by a newline and a space, no commas), its own metric scores.
RAGAS_01_RESULTS = (
    ',question,contexts,answer,ground_truths,faithfulness\n'
    '0,Who wrote Hamlet?,"[\'Hamlet is a tragedy by William Shakespeare.\'\n'
    ' \'It is set in Denmark; the prince is Hamlet.\']",William Shakespeare,[\'William Shakespeare\'],0.25\n'
    '1,Who edited the folio?,"[\'The First Folio was edited by John Heminges.\'\n'
    ' \'Henry Condell edited it too.\']",Henry Condell,"[\'John Heminges\' \'Henry Condell\']",0.5\n'
)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_numpy_list_cells_are_separate_contexts_and_the_index_column_is_dropped(tmp_path, capsys):
    samples, _fields, table = read_samples(write(tmp_path / "r.csv", RAGAS_01_RESULTS))
    assert samples[0].contexts == ("Hamlet is a tragedy by William Shakespeare.",
                                   "It is set in Denmark; the prince is Hamlet.")
    assert samples[1].references == ("John Heminges", "Henry Condell")
    assert [s.id for s in samples] == ["1", "2"] and "Unnamed: 0" not in table[0]
    assert "index written by pandas" in capsys.readouterr().err


def test_a_list_written_twice_over_with_numpy_items_inside(tmp_path):
    # as in ragas_rmcv_results.csv: a Python list holding one string, itself a numpy-printed list
    inner = "[\"<1-hop>\\n\\nfirst passage\"\n \"<2-hop>\\n\\nsecond passage\"]"
    buf = io.StringIO()
    csv.writer(buf).writerows([["user_input", "retrieved_contexts", "response"], ["q", str([inner]), "a"]])
    samples, _, _ = read_samples(write(tmp_path / "twice.csv", buf.getvalue()))
    assert samples[0].contexts == ("first passage", "second passage")  # <N-hop> markers taken off


def test_result_csv_keeps_our_metric_under_its_plain_name(tmp_path, capsys):
    path = write(tmp_path / "r.csv", RAGAS_01_RESULTS.replace("faithfulness", "exact_match"))
    out = ragsweep.score(str(path), ["exact_match"]).write(tmp_path / "out")
    assert "'exact_match' is written as 'input_exact_match'" in capsys.readouterr().err
    with (out / "result.csv").open(newline="") as fh:
        header, *rows = list(csv.reader(fh))
    assert len(set(header)) == len(header) and not any(h.startswith("Unnamed") or not h for h in header)
    at = header.index
    assert [r[at("exact_match")] for r in rows] == ["1.0", "1.0"]  # ours: Henry Condell is one of the references
    assert [r[at("input_exact_match")] for r in rows] == ["0.25", "0.5"]  # the file's, kept


def test_several_references_best_match_for_lexical_all_joined_for_recall(tmp_path):
    rows = [{"question": "Who wrote it?", "answer": "Bob", "contexts": ["Alice wrote the first draft."],
             "ground_truths": ["Alice", "Bob"]},
            {"question": "Who?", "answer": "Alice wrote it", "contexts": ["Alice wrote the first draft."],
             "ground_truths": ["Alice wrote the first draft.", "Bob checked every page of it."]}]
    path = tmp_path / "multi.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lexical = ["exact_match", "token_f1", "rouge_l", "bleu", "string_similarity"]
    scores = ragsweep.score(str(path), [*lexical, "context_recall"], embedder=None)
    frame = scores.to_pandas()
    for name in ("exact_match", "token_f1", "rouge_l", "string_similarity"):
        assert frame[name][0] == 1.0, name  # "Bob" matches the second reference exactly
    first = next(e for e in scores.explanations if e["metric"] == "exact_match" and e["sample_id"] == "1")
    assert first["explanation"]["reference_index"] == 1 and first["explanation"]["per_reference"] == [0.0, 1.0]
    recall = next(e for e in scores.explanations if e["metric"] == "context_recall" and e["sample_id"] == "2")
    # claim recall reads every reference: Bob's claim is not in the contexts, so recall is below 1
    assert len(recall["explanation"]["claims"]) == 2 and recall["value"] < 1.0


class WordEmbedder:
    """A bag-of-words embedder: the cosine of two texts is their word overlap, known exactly."""

    VOCAB = ("alice", "bob", "wrote", "edited", "it")

    def embed(self, texts):
        return [[float(w in t.lower().replace(".", "").split()) + 1e-9 for w in self.VOCAB] for t in texts]


def test_several_references_semantic_similarity_best_and_correctness_joined(tmp_path):
    path = tmp_path / "multi.jsonl"
    path.write_text(json.dumps({"question": "Who?", "answer": "Bob edited it.",
                                "ground_truths": ["Alice wrote it.", "Bob edited it."]}) + "\n")
    scores = ragsweep.score(str(path), ["answer_semantic_similarity", "factual_correctness"],
                            embedder=WordEmbedder())
    frame = scores.to_pandas()
    assert frame["answer_semantic_similarity"][0] == pytest.approx(1.0)  # the second reference, word for word
    correctness = next(e for e in scores.explanations if e["metric"] == "factual_correctness")
    # claim-based: both references' sentences are claims to cover, so Alice's missing one costs recall
    assert len(correctness["explanation"]["reference_claims"]) == 2 and correctness["value"] < 1.0


def test_a_single_reference_is_never_split_on_semicolons(tmp_path):
    text = "question,answer,ground_truth,ground_truths\nq,a,\"Alice; Bob\",Alice;Bob\n"
    samples, _, _ = read_samples(write(tmp_path / "one.csv", text.replace(",ground_truths", "").replace(",Alice;Bob", "")))
    assert samples[0].reference == "Alice; Bob" and samples[0].references is None
    samples, _, _ = read_samples(write(tmp_path / "two.csv", text.replace("ground_truth,", "").replace('"Alice; Bob",', "")))
    assert samples[0].references == ("Alice", "Bob")  # ragas_once's list column, items joined by ';'


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_spreadsheets_semicolon_or_tab_csv_is_read_by_its_header(tmp_path, sep):
    # a comma inside a cell does not make the file comma-separated: the header alone decides
    rows = [["question", "answer", "contexts", "ground_truth"],
            ["Who wrote it, and when?", "Ada, in 1843.", '["Ada wrote it in 1843."]', '"Ada; 1843"']]
    path = write(tmp_path / "sheet.csv", "\n".join(sep.join(r) for r in rows) + "\n")
    samples, _, _ = read_samples(path)
    assert samples[0].question == "Who wrote it, and when?" and samples[0].answer == "Ada, in 1843."
    assert samples[0].contexts == ("Ada wrote it in 1843.",) and samples[0].reference == "Ada; 1843"
    # a comma header keeps commas, semicolons inside its cells stay text
    comma = write(tmp_path / "comma.csv", 'question,answer\n"a;b",c\n')
    assert read_samples(comma)[0][0].question == "a;b"


def test_a_deeply_nested_cell_is_bad_input_naming_row_and_column(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    path = write(tmp_path / "deep.csv", f"question,contexts,answer\nq,ok,a\nq,\"{deep}\",a\n")
    with pytest.raises(InputError, match=r"deep.csv row 2, column contexts: .*nested more than"):
        read_samples(path)
    jsonl = write(tmp_path / "deep.jsonl", json.dumps({"question": "q", "answer": "a"}) + "\n"
                  + '{"question": "q", "contexts": ' + deep + "}\n")
    with pytest.raises(InputError, match=r"deep.jsonl, line 2: JSON nested too deep"):
        read_samples(jsonl)


def test_deep_nesting_exits_2_from_the_command(tmp_path, ragsweep):
    deep = "[" * 5000 + "]" * 5000
    write(tmp_path / "deep.csv", f"question,contexts,answer\nq,\"{deep}\",a\n")
    proc = ragsweep("score", "progress=false", "llm=none", "input=deep.csv", "out=out", "metrics=[token_f1]",
                    cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "row 1, column contexts" in proc.stderr and "Traceback" not in proc.stderr


DEEPEVAL_CASES = [
    {"input": "Who wrote Hamlet?", "actual_output": "Shakespeare", "expected_output": "William Shakespeare",
     "retrieval_context": ["Hamlet is by Shakespeare."], "context": ["Hamlet was written by William Shakespeare."]},
    {"input": "Where is Elsinore?", "actual_output": "Denmark", "expected_output": "Denmark",
     "retrieval_context": ["Elsinore is in Denmark."], "context": None},
]


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_deepeval_test_cases_are_read(tmp_path, suffix):
    path = tmp_path / f"cases{suffix}"
    path.write_text(json.dumps(DEEPEVAL_CASES) if suffix == ".json"
                    else "".join(json.dumps(c) + "\n" for c in DEEPEVAL_CASES))
    samples, fields, _ = read_samples(path)
    assert fields == {"question": "input", "answer": "actual_output", "contexts": "retrieval_context",
                      "reference": "expected_output", "reference_contexts": "context"}
    assert samples[0].answer == "Shakespeare" and samples[0].reference_contexts == (
        "Hamlet was written by William Shakespeare.",)
    assert ragsweep.score(str(path), ["token_f1"]).mean("token_f1") == pytest.approx(5 / 6)


def test_layouts_are_told_by_columns_with_any_case(tmp_path):
    # DeepEval's CSV: headers as a script wrote them, contexts joined by '|' as DeepEval's save_as does
    text = "Input,Actual Output,Expected Output,Context\nq,a,a,first|second\n"
    samples, fields, _ = read_samples(write(tmp_path / "d.csv", text))
    assert fields["answer"] == "Actual Output" and samples[0].reference_contexts == ("first", "second")
    # Ragas 0.1 test set: its contexts are the reference contexts
    text = "question,contexts,ground_truth,evolution_type\nq,\"['c1', 'c2']\",g,simple\n"
    samples, fields, _ = read_samples(write(tmp_path / "t.csv", text))
    assert samples[0].reference_contexts == ("c1", "c2") and samples[0].contexts is None


def test_an_unknown_layout_names_the_layouts_and_the_columns(tmp_path):
    with pytest.raises(InputError, match=r"x.csv: cannot tell what wrote .*\(foo, bar\); understood: .*deepeval"):
        read_samples(write(tmp_path / "x.csv", "foo,bar\n1,2\n"))


def test_a_dataframe_of_strings_reads_list_cells_as_the_file_does(tmp_path):
    pd = pytest.importorskip("pandas")
    path = write(tmp_path / "r.csv", RAGAS_01_RESULTS)
    from_file = ragsweep.score(str(path), ["token_f1", "rouge_l"])
    from_frame = ragsweep.score(pd.read_csv(path), ["token_f1", "rouge_l"])
    assert [s.contexts for s in from_frame.samples] == [s.contexts for s in from_file.samples]
    assert [s.references for s in from_frame.samples] == [s.references for s in from_file.samples]
    assert from_frame.to_pandas().drop(columns="id").equals(from_file.to_pandas().drop(columns="id"))
