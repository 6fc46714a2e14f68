"""Factual correctness, answer correctness and the summary score with a scripted judge."""

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from ragsweep.metrics.catalogue import catalogue
from ragsweep.metrics.catalogue import summary_score
from ragsweep.metrics.correctness import answer_correctness, f_beta, factual_correctness
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import ScriptedLLM
from ragsweep.metrics.prompts import identify

CASES = json.loads((Path(__file__).parent / "judged_cases.json").read_text())
F1_CASE = CASES["correctness"][0]


def routed(replies):
    """A ScriptedLLM replying by prompt name."""
    return ScriptedLLM(lambda messages, schema: replies[identify(messages).name])


class FakeEmbedder:
    def __init__(self, vectors):
        self.vectors = {k: np.asarray(v, dtype=float) for k, v in vectors.items()}

    def identity(self):
        return {"backend": "fake"}

    def embed(self, texts, *, progress=False):
        rows = np.stack([self.vectors[t] for t in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("case", CASES["correctness"], ids=lambda c: c["name"])
def test_worked_example(case):
    spec = catalogue()[case["metric"]]
    kwargs = {**spec.options, **case.get("options", {}), **case["inputs"], "judge": routed(case["replies"])}
    if spec.needs_embedder:
        kwargs["embedder"] = FakeEmbedder(case["vectors"])
    out = asyncio.run(spec.fn(**kwargs))
    e = case["expected"]
    assert out.status == "ok", out.explanation
    assert out.value == pytest.approx(e[0] / e[1] if isinstance(e, list) else e, abs=1e-12)


def test_f1_example_rounds_to_0_571_and_keeps_tp_fp_fn():
    out = asyncio.run(factual_correctness(**F1_CASE["inputs"], judge=routed(F1_CASE["replies"])))
    assert round(out.value, 3) == 0.571
    ex = out.explanation
    assert [c["claim"] for c in ex["tp"]] == ["a1", "a2"]
    assert [c["claim"] for c in ex["fp"]] == ["a3"]
    assert [c["claim"] for c in ex["fn"]] == ["r3", "r4"]
    assert (ex["precision"], ex["recall"]) == (pytest.approx(2 / 3), pytest.approx(1 / 2))


@pytest.mark.parametrize("tp, fp, fn, beta, f", [(2, 1, 2, 1.0, 4 / 7), (0, 3, 3, 1.0, 0.0),
                                                 (1, 0, 1, 2.0, 5 * 0.5 / (4 * 1 + 0.5))])
def test_f_beta(tp, fp, fn, beta, f):
    assert f_beta(tp, fp, fn, beta) == pytest.approx(f)


def test_precision_mode_makes_one_call():
    judge = routed(F1_CASE["replies"])
    asyncio.run(factual_correctness("A.", "R.", judge=judge, mode="precision"))
    assert len(judge.calls) == 1


def test_atomicity_and_coverage_reach_the_prompt():
    judge = routed(F1_CASE["replies"])
    asyncio.run(factual_correctness("A.", "R.", judge=judge, atomicity="high", coverage="low"))
    last = [c.messages[-1]["content"] for c in judge.calls]
    assert all("<atomicity>\nhigh\n</atomicity>" in m and "<coverage>\nlow\n</coverage>" in m for m in last)


def test_no_claims_on_either_side_is_undefined():
    judge = routed({"claims_verdicts": {"claims": []}, "reference_claims_attribution": {"claims": []}})
    assert asyncio.run(factual_correctness("", "R.", judge=judge)).status == "undefined"


def test_bad_mode_is_an_input_error():
    with pytest.raises(InputError):
        asyncio.run(factual_correctness("A.", "R.", judge=routed({}), mode="accuracy"))


def test_answer_correctness_weights_and_threshold():
    emb = FakeEmbedder(CASES["correctness"][3]["vectors"])
    run = lambda **kw: asyncio.run(answer_correctness("A.", "R.", judge=routed(F1_CASE["replies"]), embedder=emb, **kw))
    assert run(weights=(1, 1)).value == pytest.approx((4 / 7 + 0.8) / 2)
    assert run(weights=(1, 0)).value == pytest.approx(4 / 7)
    assert run(threshold=0.6).value == 1.0 and run(threshold=0.7).value == 0.0
    assert run(threshold=0.7).explanation["weighted"] == pytest.approx(0.75 * 4 / 7 + 0.2)
    with pytest.raises(InputError):
        run(weights=(0, 0))


# faithfulness with Ragas' claim decomposition, so the scripted claims_verdicts reply feeds it.
JUDGE_CLAIMS = {"faithfulness": {"claims": "judge"}, "context_recall": {"claims": "judge"}}
SUMMARY_REPLIES = {
    "claims_verdicts": {"claims": [{"claim": "a", "reason": "r", "verdict": "supported"},
                                   {"claim": "b", "reason": "r", "verdict": "not_found"}]},
    "reference_claims_attribution": {"claims": [{"claim": "r", "reason": "r", "attributed": True, "passages": [1]}]},
}


def test_summary_score_is_the_harmonic_mean():
    out = asyncio.run(summary_score("Q?", "A.", ["c"], "R.", judge=routed(SUMMARY_REPLIES), embedder=None,
                                    metrics=["faithfulness", "context_recall"], options=JUDGE_CLAIMS))
    assert out.value == pytest.approx(2 / (1 / 0.5 + 1 / 1.0))
    assert out.explanation["components"]["faithfulness"]["value"] == 0.5


def test_summary_score_is_zero_with_a_zero_and_undefined_with_an_undefined():
    zero = {**SUMMARY_REPLIES, "reference_claims_attribution": {"claims": [
        {"claim": "r", "reason": "r", "attributed": False}]}}
    out = asyncio.run(summary_score("Q?", "A.", ["c"], "R.", judge=routed(zero), embedder=None,
                                    metrics=["faithfulness", "context_recall"], options=JUDGE_CLAIMS))
    assert out.status == "ok" and out.value == 0.0
    undefined = {**SUMMARY_REPLIES, "claims_verdicts": {"claims": []}}
    out = asyncio.run(summary_score("Q?", "A.", ["c"], "R.", judge=routed(undefined), embedder=None,
                                    metrics=["faithfulness", "context_recall"], options=JUDGE_CLAIMS))
    assert out.status == "undefined" and "faithfulness" in out.explanation["reason"]


def test_summary_score_refuses_lower_is_better_metrics():
    with pytest.raises(InputError):
        asyncio.run(summary_score("Q?", "A.", ["c"], "R.", judge=routed({}), embedder=None,
                                  metrics=["faithfulness", "hallucination"]))


def test_factual_correctness_on_sentences_counts_hard_verdicts_exactly():
    # Answer: 2 sentences, 1 supported by the reference (TP 1, FP 1); reference: 2 sentences,
    # 1 not in the answer (FN 1) -> F1 = 2*1 / (2*1 + 1 + 1) = 0.5. A sentence that shares nothing
    # with the other text has no evidence to be judged on: unsupported, and no call is made for it.
    judge = ScriptedLLM(lambda messages, schema: {"answer": "yes"})
    out = asyncio.run(factual_correctness("Paris is in France. It has 9 million people.",
                                          "Paris is in France. It is the capital.", judge=judge, claims="sentences"))
    assert out.value == pytest.approx(0.5)
    assert (out.explanation["precision"], out.explanation["recall"]) == (0.5, 0.5)
    assert [r["claim"] for r in out.explanation["fn"]] == ["It is the capital."]
    assert len(judge.calls) == 2


def test_each_sentence_is_judged_in_its_own_call_on_its_own_evidence():
    from ragsweep.metrics.generation import faithfulness

    n = 15
    facts = [f"Fact number {i} concerns the {word} gate." for i, word in
             enumerate("north south east west upper lower inner outer old new main side back front grand".split())]
    answer = " ".join(facts[:n])
    judge = ScriptedLLM(lambda messages, schema: {"answer": "yes"})
    out = asyncio.run(faithfulness("Q?", answer, [" ".join(reversed(facts))], judge=judge))
    verdicts = [c for c in judge.calls if "<options>" not in c.messages[-1]["content"]]
    assert len(verdicts) == n and out.explanation["total"] == n and out.value == 1.0
    for fact, call in zip(facts, verdicts):
        assert fact in call.messages[-1]["content"]


GRADED = ("Paris is in France. It has 9 million people.", "Paris is in France. It is the capital.")


def test_graded_correctness_blends_the_weighted_grade_with_the_evidence():
    import math

    from ragsweep.metrics import offline
    from ragsweep.metrics.correctness import GRADE_WEIGHT

    # The score position lists 5 and 3 at equal probability: expected grade 4 -> (4 - 1) / 4.
    judge = ScriptedLLM([{"score": 5}], logprobs=[{"{": 0.0}, {"5": math.log(0.4), "3": math.log(0.4), "x": -9}])
    out = asyncio.run(factual_correctness(*GRADED, judge=judge, claims="graded", question="Tell me about Paris."))
    found = offline.factual_correctness(*GRADED, question="Tell me about Paris.")
    assert out.explanation["weighted_grade"] == pytest.approx(4.0)
    assert out.value == pytest.approx(GRADE_WEIGHT * 0.75 + (1 - GRADE_WEIGHT) * found.value)
    assert out.explanation["evidence_score"] == found.value
    assert out.explanation["recall"] == found.explanation["recall"]
    assert [r["claim"] for r in out.explanation["fp"]] == ["It has 9 million people."]
    # One call, and the reference comes before the answer (answers to one question share the prefix).
    (call,) = judge.calls
    assert identify(call.messages).name == "correctness_grade" and call.logprobs
    user = call.messages[-1]["content"]
    assert user.index("<question>") < user.index("<reference>") < user.index("<answer>")


def test_graded_correctness_without_logprobs_uses_the_written_grade_and_recall_needs_no_call():
    from ragsweep.metrics import offline
    from ragsweep.metrics.correctness import GRADE_WEIGHT

    judge = ScriptedLLM([{"score": 1}])
    out = asyncio.run(factual_correctness(*GRADED, judge=judge, claims="graded", mode="precision"))
    precision = offline.factual_correctness(*GRADED, mode="precision").value
    assert out.explanation["weighted_grade"] == 1.0 and out.explanation["grade_probabilities"] is None
    assert out.value == pytest.approx((1 - GRADE_WEIGHT) * precision)
    silent = ScriptedLLM([])
    recall = asyncio.run(factual_correctness(*GRADED, judge=silent, claims="graded", mode="recall"))
    assert silent.calls == [] and recall.value == out.explanation["recall"]


def test_graded_correctness_with_cosine_blends_the_embedded_evidence():
    from ragsweep.metrics import offline
    from ragsweep.metrics.correctness import GRADE_WEIGHT

    judge = ScriptedLLM([{"score": 3}])
    out = asyncio.run(factual_correctness(*GRADED, judge=judge, claims="graded", beta=0.5, cosine=True))
    found = offline.factual_correctness(*GRADED, beta=0.5, cosine=True)
    assert found.value != offline.factual_correctness(*GRADED, beta=0.5).value  # the cosine moved it
    assert out.explanation["cosine"] is True and out.explanation["evidence_score"] == found.value
    assert out.value == pytest.approx(GRADE_WEIGHT * 0.5 + (1 - GRADE_WEIGHT) * found.value)
    assert all(r["features"]["cosine"] > 0 for r in out.explanation["tp"] + out.explanation["fp"])
    with pytest.raises(InputError, match="cosine must be true or false"):
        asyncio.run(factual_correctness(*GRADED, judge=judge, claims="graded", cosine="yes"))


def test_graded_correctness_of_an_empty_answer_makes_no_call():
    judge = ScriptedLLM([])
    out = asyncio.run(factual_correctness("", GRADED[1], judge=judge, claims="graded"))
    assert judge.calls == [] and out.value == 0.0 and out.explanation["claims"] == "graded"
