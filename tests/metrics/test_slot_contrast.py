"""The contrast check of a claim's slots: the claim's verdict against the same claim with another value."""

from __future__ import annotations

import asyncio
import json
import math
import re

import pytest

from ragsweep.metrics import slots
from ragsweep.metrics.judging import sentence_support
from ragsweep.metrics.llm import ScriptedLLM

TOWER = ("The Harl Tower stands on the waterfront of Kelmford. Designed by the architect Ilsa Varn, it was "
         "completed in 1804 and rises 473 metres above the harbour. Beside it stands Drom Hall, which is 906 metres "
         "tall and opened in 1982 to plans by Pell Oster.")
QUESTION = "How tall is the Harl Tower?"


def _statement(messages) -> str:
    m = re.search(r"<statement>\n(.*?)\n</statement>", messages[-1]["content"], re.S)
    return m.group(1) if m else ""


def reader(p_yes: dict[str, float], asked: list[str]):
    """A judge whose P(yes) for a statement is ``p_yes`` of the height it states (0.5 otherwise); it
    writes the verdict that probability favours and never sees options (a cloze would fail here)."""

    def reply(messages, schema):
        statement = _statement(messages)
        assert "___" not in statement and "<options>" not in messages[-1]["content"]
        asked.append(statement)
        height = re.search(r"(\d+) metres", statement)
        p = p_yes.get(height.group(1) if height else "", 0.5)
        return {"answer": "yes" if p >= 0.5 else "no", "p": p}

    return reply


def _logprobs(text: str):
    p = json.loads(text)["p"]
    return [{"{": 0.0}, {'"yes"': math.log(p), '"no"': math.log(1 - p)}]


def test_the_claim_s_value_holds_only_when_its_statement_beats_each_rival():
    asked: list[str] = []
    judge = ScriptedLLM(reader({"473": 0.8, "906": 0.6}, asked), logprobs=_logprobs)
    right = asyncio.run(slots.contrast(judge, "The Harl Tower is 473 metres tall.", QUESTION, [TOWER], 0.8))
    assert asked == ["The Harl Tower is 906 metres tall."]  # the rival, the claim's own verdict is given
    (row,) = right
    assert row["kind"] == "number" and row["options"] == ["473", "906"] and row["chosen"] == "473"
    assert row["p_claim"] == pytest.approx(1 / (1 + (0.6 / 0.4) / (0.8 / 0.2)))
    # The swapped claim: the judge's yes to it (0.6) is weaker than its yes to the evidence's value.
    (row,) = asyncio.run(slots.contrast(judge, "The Harl Tower is 906 metres tall.", QUESTION, [TOWER], 0.6))
    assert row["chosen"] == "473" and row["p_claim"] < 0.5


def test_a_judge_that_says_yes_to_every_value_alike_gives_the_contrast_nothing():
    judge = ScriptedLLM(reader({"473": 0.9, "906": 0.9}, []), logprobs=_logprobs)
    (row,) = asyncio.run(slots.contrast(judge, "The Harl Tower is 906 metres tall.", QUESTION, [TOWER], 0.9))
    assert row["p_claim"] == pytest.approx(0.5)
    assert slots.slot_penalty([row]) == 0.0  # only a value that loses lowers a claim


def test_a_slot_with_nothing_to_confuse_asks_no_rival():
    asked: list[str] = []
    judge = ScriptedLLM(reader({}, asked), logprobs=_logprobs)
    got = asyncio.run(slots.contrast(judge, "It opened in 1982.", None, ["It opened in 1982."], 0.9))
    assert got == [] and asked == []


def test_the_sentence_judge_lowers_a_swapped_value_by_contrast(monkeypatch):
    monkeypatch.setattr(slots, "SLOT_CHECK", "contrast")
    judge = ScriptedLLM(reader({"473": 0.8, "906": 0.6}, []), logprobs=_logprobs)
    right, swapped = asyncio.run(sentence_support(judge, QUESTION, ["The Harl Tower is 473 metres tall.",
                                                                     "The Harl Tower is 906 metres tall."], [TOWER]))
    assert [s["check"] for s in swapped["slots"] if s["kind"] == "number"] == ["contrast"]
    assert swapped["p_blend"] < 0.5 <= right["p_blend"]
    assert "the evidence gives '473', not '906'" in swapped["evidence"]
    assert not any(s.get("check") == "contrast" and s["p_claim"] < 0.5 for s in right["slots"])
