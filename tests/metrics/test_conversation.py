"""The conversation helpers: the last user turn is the question; the per-turn summary, by hand."""

from ragsweep.metrics.conversation import split, transcript, turn_index, turn_summary, with_history

TURNS = [{"type": "human", "content": "When did the Forth Bridge open?"}, {"type": "ai", "content": "1890"},
         {"role": "user", "content": "Who designed it?"}, {"role": "assistant", "content": "Fowler and Baker"}]


def test_the_last_user_turn_is_the_question():
    history, question, after = split(TURNS)
    assert question == "Who designed it?" and len(history) == 2 and after[0]["content"] == "Fowler and Baker"
    assert turn_index(history) == 2 and turn_index(None) == 1
    assert split([{"role": "assistant", "content": "hi"}])[1] is None
    assert transcript(history) == "user: When did the Forth Bridge open?\nassistant: 1890"


def test_a_judge_sees_the_history_before_the_question():
    assert with_history("Who designed it?", None) == "Who designed it?"  # single questions unchanged
    text = with_history("Who designed it?", split(TURNS)[0])
    assert text.index("Forth Bridge open") < text.index("Last user question: Who designed it?")


def test_turn_summary_by_hand():
    values = {"a1": {"f": 0.9, "r": 0.8}, "a2": {"f": 0.4, "r": 0.9},   # conversation a: turn 2 unfaithful
              "b1": {"f": 1.0, "r": 1.0}, "b2": {"f": 0.7, "r": None},  # b: turn 2 relevancy unscored
              "c1": {"f": 0.6, "r": 0.5}}                                # c: a single question
    turns = {"a1": 1, "a2": 2, "b1": 1, "b2": 2, "c1": 1}
    groups = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "c1": "c"}
    out = turn_summary(values, turns, groups, ["f", "r", "missing"], 0.5)
    assert out["metrics"] == ["f", "r"] and out["missing"] == ["missing"]
    assert out["by_turn"]["1"] == {"n": 3, "f": 1.0, "r": 1.0, "all": 1.0}
    assert out["by_turn"]["2"] == {"n": 2, "f": 0.5, "r": 1.0, "all": 0.0}  # b2 has no r: left out of "all"
    # a fails (turn 2), b is unknown (b2 unscored), c passes: 1 of the 2 known.
    assert out["conversations"] == {"n": 3, "all_turns": 0.5}
