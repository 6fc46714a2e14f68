"""The pure parts of benchmarks/validity_generation.py (``validity.py --kind generation``): the variant
list, people's answers, the scoring of scripted answers and the table's shape (no corpus, no model)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from ragsweep.metrics.errors import InputError

from tests.benchmarks.scripts import loaded


@pytest.fixture(scope="module")
def vg():
    yield from loaded("validity_generation.py")


def test_the_variant_list_crosses_answerer_k_and_context(vg):
    variants = vg.generation_variants()
    names = [x.name for x in variants]
    assert len(variants) >= 8 and len(set(names)) == len(names)
    assert {x.answerer for x in variants} == {"extractive", "local_small", "local"}
    assert {x.k for x in variants} == {1, 3, 8}
    assert {x.context for x in variants} == {"chunks", "window"}
    # every answerer is seen at every K, so K's effect is not confounded with the model's
    for who in vg.ANSWERERS:
        assert {x.k for x in variants if x.answerer == who and x.context == "chunks"} == {1, 3, 8}
    assert vg.GenVariant("local", 3, "window").name == "local K=3 window"
    with pytest.raises(ValueError):
        vg.GenVariant("gpt", 3)
    with pytest.raises(ValueError):
        vg.GenVariant("local", 0)


def _halueval(tmp_path, rows):
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_people_answers_match_by_question_text(vg, tmp_path):
    path = _halueval(tmp_path, [{"question": "Where is it? ", "right_answer": "Delhi"},
                                {"question": "Who?", "right_answer": "Ann"}])
    assert vg.people_answers([("q1", "Who?"), ("q0", " Where is it?")], path) == ["Ann", "Delhi"]
    with pytest.raises(InputError, match="'q9'"):
        vg.people_answers([("q9", "Nobody asked this?")], path)


def test_people_answers_refuse_conflicting_or_broken_rows(vg, tmp_path):
    path = _halueval(tmp_path, [{"question": "Who?", "right_answer": "Ann"},
                                {"question": "Who?", "right_answer": "Bob"}])
    with pytest.raises(InputError, match="2 different"):
        vg.people_answers([("q1", "Who?")], path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "Who?", "right_answer": "Ann"}\n{"question": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2"):
        vg.people_answers([("q1", "Who?")], broken)


def test_lexical_scores_by_hand(vg):
    answers = ["Delhi", "It is in Delhi.", None, "Mumbai"]
    refs = ["Delhi", "Delhi", "Delhi", "Delhi"]
    # "it is in delhi" against "delhi": P = 1/4, R = 1 -> F1 = 2 * 0.25 / 1.25 = 0.4; a missing answer scores 0
    assert vg.lexical_scores(answers, refs, "token_f1") == pytest.approx([1.0, 0.4, 0.0, 0.0])
    assert vg.lexical_scores(answers, refs, "exact_match").tolist() == [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="question 1"):
        vg.lexical_scores(["a", "b"], ["a", " "], "token_f1")
    with pytest.raises(ValueError):
        vg.lexical_scores(["a"], ["a", "b"], "token_f1")


def test_score_matrix_of_scripted_variants(vg):
    refs = ["Delhi", "Ann Smith"]
    answers = {"good": ["Delhi", "Ann Smith"], "half": ["Delhi", "Bob Smith"], "bad": [None, "no idea"]}
    m = vg.score_matrix(answers, refs, ["bad", "good", "half"], lambda a, r: vg.lexical_scores(a, r, "token_f1"))
    assert m.shape == (2, 3)
    assert m.mean(axis=0) == pytest.approx([0.0, 1.0, 0.75])
    with pytest.raises(ValueError, match="missing"):
        vg.score_matrix(answers, refs, ["good", "missing"], lambda a, r: vg.lexical_scores(a, r, "token_f1"))


def _args():
    return argparse.Namespace(resamples=50, winner_resamples=5, splits=50, stat_seed=0)


def test_report_has_the_retrieval_table_shape(vg):
    rng = np.random.default_rng(0)
    names = ["a", "b", "c", "d"]
    base = np.array([0.9, 0.6, 0.4, 0.1])
    scores = {s: {"token_f1": np.clip(base + rng.normal(0, 0.1, (12, 4)), 0, 1),
                  "exact_match": np.zeros((12, 4))}  # every variant tied: no ranking to correlate
              for s in ("human", "none")}
    lines = vg.report(names, scores, ["token_f1", "exact_match"], "none", _args(),
                      {"human": (0.7, 7.0), "none": (0.9, 11.0)})
    header = vg.v.HEADER[0]
    rows = [line for line in lines if line.startswith("| hotpot |")]
    assert [r.split(" | ")[2] for r in rows] == ["token_f1", "exact_match"]
    assert all(r.count("|") == header.count("|") for r in rows)  # the same columns
    assert "★ a" in rows[0]  # the same clear order on both sets: people's winner wins there too
    assert "ties every system" in rows[1]
    board = [line for line in lines if line.split(" | ")[0] in {f"| {n}" for n in names}]
    assert len(board) == 4 and all(r.count(" | ") == 4 for r in board)  # 2 sets x 2 metrics per variant
    assert all(cell.endswith("(4)") for cell in board[3].split(" | ")[1:3])  # d is last on token_f1 on both sets


def test_judged_scores_with_a_scripted_judge(vg):
    """answer_correctness per answer through a judge replying from the metric tests' case; a missing
    answer scores 0 without a call."""
    from ragsweep.metrics.llm import ScriptedLLM
    from ragsweep.metrics.prompts import identify

    cases = json.loads((Path(__file__).resolve().parents[1] / "metrics" / "judged_cases.json").read_text())
    replies = cases["correctness"][0]["replies"]
    vectors = {k: np.asarray(x, dtype=float) for k, x in cases["correctness"][3]["vectors"].items()}

    class Embedder:
        def identity(self):
            return {"backend": "fake"}

        def embed(self, texts, *, progress=False):
            rows = np.stack([vectors[t] for t in texts])
            return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    calls = []

    def reply(messages, schema):
        calls.append(identify(messages).name)
        return replies[identify(messages).name]

    got = vg.judged_scores(["A.", None], ["R.", "R."], ScriptedLLM(reply), Embedder())
    assert got == pytest.approx([0.75 * 4 / 7 + 0.25 * 0.8, 0.0])  # Ragas' weights on the case's F1 and cosine
    n_calls = len(calls)
    vg.judged_scores([None], ["R."], ScriptedLLM(reply), Embedder())
    assert len(calls) == n_calls  # nothing asked for a missing answer
