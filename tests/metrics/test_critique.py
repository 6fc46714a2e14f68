"""Aspect critiques (majority vote) and the G-Eval judge (probability-weighted score)."""

import asyncio
import math

import pytest

from ragsweep.metrics.catalogue import catalogue
from ragsweep.metrics.critique import ASPECTS, aspect_critique, geval
from ragsweep.metrics.judging import score_distribution
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM
from ragsweep.metrics.prompts import identify


def votes(*verdicts):
    return [{"reason": f"vote {i}", "verdict": v} for i, v in enumerate(verdicts)]


def test_builtin_aspects_are_specs_with_direction():
    table = catalogue()
    for name, (definition, higher) in ASPECTS.items():
        assert table[name].options["definition"] == definition
        assert table[name].higher_is_better is higher
    assert not table["harmfulness"].higher_is_better and table["coherence"].higher_is_better


@pytest.mark.parametrize("verdicts, strictness, expected", [
    ((True,), 1, 1.0), ((False,), 1, 0.0),
    ((True, False, True), 3, 1.0), ((False, False, True), 3, 0.0),
    ((True, False, True), 2, 1.0),  # an even strictness becomes the next odd number: 3 votes
])
def test_majority_vote(verdicts, strictness, expected):
    judge = ScriptedLLM(votes(*verdicts))
    out = asyncio.run(aspect_critique("Q?", "A.", judge=judge, aspect="coherence",
                                      definition=ASPECTS["coherence"][0], strictness=strictness))
    assert out.value == expected and out.explanation["votes"] == len(verdicts) == len(judge.calls)


def test_votes_are_separate_cache_entries(tmp_path):
    inner = ScriptedLLM(votes(True, False, False))
    out = asyncio.run(aspect_critique("Q?", "A.", judge=CachedLLM(inner, tmp_path / "c.sqlite"),
                                      definition="d", strictness=3))
    assert len(inner.calls) == 3 and out.value == 0.0


def test_user_defined_aspect_needs_a_definition():
    with pytest.raises(InputError):
        asyncio.run(aspect_critique("Q?", "A.", judge=ScriptedLLM([])))
    judge = ScriptedLLM(votes(True))
    out = asyncio.run(aspect_critique("Q?", "A.", judge=judge, aspect="politeness", definition="Is it polite?"))
    assert out.value == 1.0 and "Is it polite?" in judge.calls[0].messages[-1]["content"]


STEPS = {"steps": ["Read the answer.", "Check it against the criteria."]}
SCORE = {"score": 4, "reason": "Mostly meets the criteria."}
# The score token is at position 2: top alternatives 4 (0.6), 3 (0.3), 5 (0.1).
LOGPROBS = [{'{"': 0.0}, {"score": 0.0, "reason": -3.0},
            {"4": math.log(0.6), "3": math.log(0.3), " 5": math.log(0.1)}, {",": 0.0}]


def scripted_geval(logprobs):
    return ScriptedLLM(lambda m, s: STEPS if identify(m).name == "geval_steps" else SCORE, logprobs=logprobs)


def test_geval_weights_the_score_by_probability():
    out = asyncio.run(geval("Q?", "A.", judge=scripted_geval(LOGPROBS), criteria="Is it helpful?"))
    weighted = 4 * 0.6 + 3 * 0.3 + 5 * 0.1
    assert out.value == pytest.approx((weighted - 1) / 4)
    assert out.explanation["score"] == 4 and out.explanation["steps"] == STEPS["steps"]
    assert out.explanation["probabilities"] == pytest.approx({"3": 0.3, "4": 0.6, "5": 0.1})


def test_geval_without_logprobs_uses_the_written_score():
    out = asyncio.run(geval("Q?", "A.", judge=scripted_geval(None), criteria="Is it helpful?"))
    assert out.value == pytest.approx(0.75) and out.explanation["probabilities"] is None


def test_geval_writes_the_steps_once_per_run(tmp_path):
    inner = scripted_geval(None)
    judge = CachedLLM(inner, tmp_path / "c.sqlite")

    async def both():
        return await asyncio.gather(geval("Q1?", "A1.", judge=judge, criteria="c"),
                                    geval("Q2?", "A2.", judge=judge, criteria="c"))

    asyncio.run(both())
    names = [identify(c.messages).name for c in inner.calls]
    assert names.count("geval_steps") == 1 and names.count("geval_score") == 2


def test_geval_with_given_steps_skips_the_steps_call():
    judge = scripted_geval(None)
    asyncio.run(geval("Q?", "A.", judge=judge, criteria="c", steps=["s1"]))
    assert [identify(c.messages).name for c in judge.calls] == ["geval_score"]


def test_score_distribution_ignores_positions_before_the_score():
    assert score_distribution(None, 3) is None
    assert score_distribution([{"2": 0.0}], 3) is None
    assert score_distribution([{"1": -0.1, "x": -3}], 1) == {1: 1.0}
