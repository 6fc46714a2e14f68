"""Name options typed by role (metrics/slots.py): a blank is offered the names that stand where it stands."""

import asyncio
import re

from ragsweep.metrics import slots
from ragsweep.metrics.llm import ScriptedLLM

TREATY = ["The Treaty of Thothstummere was signed in 1722 by the kingdoms of Lasaeth and Heithath.",
          "Under its terms Lasaeth ceded the province of Kosmere to Heithath and paid 6,389 gold crowns, "
          "while Heithath kept the port of Gaemere."]
TOWER = ["Designed by the architect Emric Krivund, the Harl Tower rises 473 metres.",
         "Beside it stands Drom Hall, which opened in 1982 to plans by Ilsa Dorn."]


def _options(claim: str, evidence: list[str], question: str | None = None) -> dict[str, list[str] | None]:
    return {slots.cloze(claim, s): slots.options_for(s, evidence, claim) for s in slots.slots_to_check(claim, question)}


def test_role_fit_counts_shared_words_before_with_before_and_after_with_after():
    claim = "Lasaeth ceded Kosmere to Heithath."
    (blank,) = [s for s in slots.values(claim) if s.text == "Heithath"]
    around = slots._around(claim, blank.start, blank.end)
    assert around == (frozenset({"ceded", "kosme", "to"}), frozenset())
    sentence = TREATY[1]
    occurrences = {v.start: v for v in slots.values(sentence) if v.text == "Heithath"}
    # "... province of Kosmere to [Heithath] and paid ..." shares "Kosmere" and "to" before; "while [Heithath] kept"
    # shares nothing; the words after never count against the words before.
    assert sorted(slots.role_fit(around, sentence, v) for v in occurrences.values()) == [0, 2]
    assert slots._around("It was the Harl Tower of the town.", 11, 21) == (
        frozenset({"it", "was"}), frozenset({"of", "town"}))  # articles left out, window of three words


def test_a_kingdom_s_blank_is_not_offered_the_province_the_treaty_or_the_port():
    # The right claim: only its own value stands after "Kosmere to", so the slot is not asked at all.
    assert _options("Lasaeth ceded Kosmere to Heithath.", TREATY)["Lasaeth ceded Kosmere to ___."] is None
    # The reversal keeps its rival: Heithath is what the evidence puts where the claim's blank stands.
    assert _options("Heithath ceded Kosmere to Lasaeth.", TREATY)["Heithath ceded Kosmere to ___."] \
        == ["Lasaeth", "Heithath"]


def test_a_swapped_name_keeps_the_value_the_evidence_gives_in_its_place():
    found = _options("The Harl Tower was designed by Ilsa Dorn.", TOWER)
    assert found["The Harl Tower was designed by ___."] == ["Emric Krivund", "Ilsa Dorn"]
    assert _options("The Harl Tower was designed by Emric Krivund.", TOWER)["The Harl Tower was designed by ___."] \
        is None


def test_names_with_no_word_around_them_in_common_with_the_blank_stay_untyped():
    evidence = ["Pell Orn met Sela Vant.", "Kessa Dune sang."]
    claim = "Its chair became Kessa Dune."
    (slot,) = slots.slots_to_check(claim, None)
    assert slots.options_for(slot, evidence, claim) == ["Pell Orn", "Sela Vant", "Kessa Dune"]


def test_numbers_are_not_typed_by_role():
    # A number's kind is in its form: 120, which stands nowhere like the claim's blank, stays offered.
    evidence = ["The hall is 906 metres tall.", "It cost 473 crowns, 120 more than planned."]
    claim = "The hall is 473 metres tall."
    (slot,) = slots.slots_to_check(claim, None)
    assert slots.options_for(slot, evidence, claim) == ["906", "473", "120"]


def test_the_judge_is_shown_only_the_typed_options_and_a_right_claim_costs_no_slot_call():
    shown: list[str] = []

    def reply(messages, schema):
        text = messages[-1]["content"]
        m = re.search(r"<options>\n(.*?)\n</options>", text, re.S)
        if m:
            shown.append(m.group(1))
            return {"answer": "B"}  # the second option: Heithath, the kingdom that received the province
        return {"answer": "yes"}

    judge = ScriptedLLM(reply, logprobs=None)
    (row,) = asyncio.run(slots.check(judge, "Heithath ceded Kosmere to Lasaeth.", None, TREATY))
    assert shown == ["A: Lasaeth\nB: Heithath\nC: not stated"]
    assert row["chosen"] == "Heithath" and row["p_claim"] == 0.0
    shown.clear()
    assert asyncio.run(slots.check(judge, "Lasaeth ceded Kosmere to Heithath.", None, TREATY)) == []
    assert shown == []
