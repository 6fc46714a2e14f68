"""Tests for metrics.retrieval: hand-computed cases, and agreement with trec_eval (pytrec_eval)."""

from __future__ import annotations

import ast
import json
import math
import operator
import random
from pathlib import Path

import pytest
import pytrec_eval

from ragsweep.metrics.retrieval import (
    RANK_METRICS,
    average_precision_at_k,
    ndcg_at_k,
    precision_at_k,
    rank,
    recall_at_k,
    span_char_metrics,
    span_gains,
)

CASES = json.loads((Path(__file__).parent / "retrieval_cases.json").read_text())["cases"]
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _arith(expr: str) -> float:
    """Evaluate the hand-written arithmetic in the cases file: numbers, + - * /, (), log2()."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "log2":
            (arg,) = node.args
            return math.log2(walk(arg))
        raise ValueError(f"unsupported expression {expr!r}")

    return walk(ast.parse(expr, mode="eval"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("metric", sorted(RANK_METRICS))
def test_hand_computed_cases(case: dict, metric: str) -> None:
    got = RANK_METRICS[metric](case["gains"], case["k"], case["ideal_gains"])
    assert got == pytest.approx(_arith(case["expected"][metric]), abs=1e-12, rel=0)


def test_cases_cover_every_metric() -> None:
    assert all(set(c["expected"]) == set(RANK_METRICS) for c in CASES)


def test_rank_ties_descending_id_as_observed_in_pytrec_eval() -> None:
    # Order read off pytrec_eval: all scores equal, relevant doc's recip_rank gives its position.
    scores = {d: 1.0 for d in ["a", "b", "c", "d10", "d9", "D", "_x"]}
    assert rank(scores) == ["d9", "d10", "c", "b", "a", "_x", "D"]
    assert rank({"a": 2.0, "b": 1.0, "c": 2.0, "z": 1.0}) == ["c", "a", "z", "b"]


def test_rank_tie_order_matches_pytrec_eval_directly() -> None:
    ids = ["z", "é", "\U0001f600", "ab", "a b", "a", "A", "0", "10", "9", "d-1", "d_1"]
    scores = {d: 0.5 for d in ids}
    ranking = rank(scores)
    for doc in ids:
        evaluator = pytrec_eval.RelevanceEvaluator({"q": {doc: 1}}, {"recip_rank"})
        rr = evaluator.evaluate({"q": scores})["q"]["recip_rank"]
        assert round(1 / rr) == ranking.index(doc) + 1, doc


def test_rank_rejects_nan() -> None:
    with pytest.raises(ValueError):
        rank({"a": float("nan")})


def _random_queries(n_queries: int, seed: int) -> tuple[dict, dict]:
    """Runs with many tied scores and graded qrels, some with relevant docs never retrieved."""
    rnd = random.Random(seed)
    runs, qrels = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [rnd.choice(["d", "D", "doc_", "x"]) + str(rnd.randrange(40)) for _ in range(16)]
        retrieved = sorted(set(pool[: rnd.randrange(0, 16)]))
        runs[qid] = {d: rnd.choice([0.0, 0.25, 0.5, 1.0, 2.0]) for d in retrieved}
        judged = {d: rnd.choice([0, 0, 1, 2]) for d in retrieved if rnd.random() < 0.6}
        for i in range(rnd.randrange(0, 3)):  # relevant items the run never retrieved
            judged[f"unretrieved{i}"] = rnd.choice([0, 1, 2])
        if q % 10 == 0:  # queries with nothing relevant: trec_eval scores every measure 0
            judged = {d: 0 for d in judged}
        qrels[qid] = judged or {"unretrieved0": 0}  # trec_eval drops queries without judgements
    return runs, qrels


def _our_scores(runs: dict, qrels: dict, k: int, ranker=rank) -> dict:
    out = {}
    for qid, scores in runs.items():
        gains = [float(qrels[qid].get(d, 0)) for d in ranker(scores)]
        ideal = [float(g) for g in qrels[qid].values()]
        out[qid] = {name: fn(gains, k, ideal) for name, fn in RANK_METRICS.items()}
    return out


CUTOFFS = (1, 3, 5, 10)
_TREC = {"hit": "success_{k}", "precision": "P_{k}", "recall": "recall_{k}",
         "ndcg": "ndcg_cut_{k}", "map": "map_cut_{k}"}


def test_random_queries_agree_with_pytrec_eval() -> None:
    runs, qrels = _random_queries(300, seed=20240501)
    cut = ",".join(map(str, CUTOFFS))
    measures = {f"{m}.{cut}" for m in ("P", "recall", "ndcg_cut", "map_cut", "success")}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(runs)
    assert set(trec) == set(runs)
    compared = 0
    for k in CUTOFFS:
        ours = _our_scores(runs, qrels, k)
        # MRR@k is trec_eval's recip_rank on the run cut to its top k.
        top_k = {q: {d: s[d] for d in rank(s)[:k]} for q, s in runs.items()}
        trec_rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top_k)
        for qid in runs:
            for name, key in _TREC.items():
                assert ours[qid][name] == pytest.approx(trec[qid][key.format(k=k)], abs=1e-9), (qid, name, k)
            assert ours[qid]["mrr"] == pytest.approx(trec_rr[qid]["recip_rank"], abs=1e-9), (qid, k)
            compared += 6
    assert compared == 300 * len(CUTOFFS) * 6


def test_random_queries_exercise_tie_breaking() -> None:
    # The agreement test is only meaningful if the data makes a wrong tie order fail it.
    runs, qrels = _random_queries(300, seed=20240501)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P.3", "ndcg_cut.3"}).evaluate(runs)
    ascending_ties = lambda s: sorted(s, key=lambda d: (-s[d], d))  # noqa: E731
    wrong = _our_scores(runs, qrels, 3, ranker=ascending_ties)
    assert any(abs(wrong[q]["ndcg"] - trec[q]["ndcg_cut_3"]) > 1e-9 for q in runs)


def test_no_relevant_queries_present_in_random_data() -> None:
    _, qrels = _random_queries(300, seed=20240501)
    assert sum(all(g == 0 for g in j.values()) for j in qrels.values()) >= 30


def test_rank_metric_errors() -> None:
    with pytest.raises(ValueError):
        precision_at_k([1.0], 0)
    with pytest.raises(ValueError):
        precision_at_k([-1.0], 1)
    with pytest.raises(ValueError):  # two relevant retrieved, only one exists
        recall_at_k([1.0, 1.0], 2, 1)
    with pytest.raises(ValueError):
        average_precision_at_k([1.0, 1.0], 2, 1)
    with pytest.raises(ValueError):  # grade 2 retrieved, judgements only know grade 1
        ndcg_at_k([2.0], 1, [1.0])


# --- character spans -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("retrieved", "gold", "expected"),
    [
        # Overlapping retrieved spans merge to [0, 15): 15 chars; shared [10, 15): 5; union 20.
        ([("a", 0, 10), ("a", 5, 15)], [("a", 10, 20)], (5 / 10, 5 / 15, 5 / 20)),
        # Two docs: shared a[0,5) + b[5,10) = 10; |R| = 20; |G| = 5 + 15 = 20; union 30.
        ([("a", 0, 10), ("b", 0, 10)], [("a", 0, 5), ("b", 5, 20)], (10 / 20, 10 / 20, 10 / 30)),
        # Same offsets in another document share nothing.
        ([("b", 0, 10)], [("a", 0, 10)], (0.0, 0.0, 0.0)),
        # Half-open: [0, 10) and [10, 20) touch but share no character.
        ([("a", 0, 10)], [("a", 10, 20)], (0.0, 0.0, 0.0)),
        # Duplicated gold spans count once.
        ([("a", 0, 10)], [("a", 0, 10), ("a", 2, 8)], (1.0, 1.0, 1.0)),
        # Retrieved inside gold: recall 4/10, precision 1, IoU 4/10.
        ([("a", 3, 7)], [("a", 0, 10)], (4 / 10, 1.0, 4 / 10)),
        # Nothing retrieved: precision defined as 0.
        ([], [("a", 0, 10)], (0.0, 0.0, 0.0)),
    ],
)
def test_span_char_metrics(retrieved, gold, expected) -> None:
    assert span_char_metrics(retrieved, gold) == pytest.approx(expected, abs=1e-12)


def test_span_char_metrics_errors() -> None:
    with pytest.raises(ValueError):
        span_char_metrics([("a", 0, 5)], [])
    with pytest.raises(ValueError):  # gold covering no character is as empty
        span_char_metrics([("a", 0, 5)], [("a", 3, 3)])
    with pytest.raises(ValueError):
        span_char_metrics([("a", 5, 2)], [("a", 0, 5)])


def test_span_gains() -> None:
    gold = [("a", 5, 11)]
    retrieved = [("a", 0, 10), ("a", 10, 20), ("b", 0, 8), ("a", 11, 30), ("a", 6, 6), ("a", 0, 5)]
    assert span_gains(retrieved, gold) == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert span_gains([], gold) == []
