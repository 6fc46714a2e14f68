"""A write whose question a question gate rejects is ended before its answer is written (gen.gates.QuestionStop),
and the gates decide exactly as they do for the whole reply. Scripted model, no weights."""


import json

import pytest

from ragsweep.gen.documents import read_shipped
from ragsweep.gen.gates import GateConfig, QuestionStop, question_reason
from ragsweep.gen.kinds import kind_problems, question_kind_problems
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.prompts import WRITE_QUESTION
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM
from tests.gen.test_gen_writer import good_reply

UNNAMED = "What is the name of the relief vessel?"  # names nothing: not_self_contained


def unnamed_every_third(messages, schema):
    """good_reply, except that every third write asks a question that names nothing."""
    unnamed_every_third.n += 1
    reply = good_reply(messages, schema)
    return {**reply, "question": UNNAMED} if unnamed_every_third.n % 3 == 0 else reply


def test_the_rule_reads_the_question_once_its_string_is_closed():
    stop = QuestionStop(GateConfig())
    assert not stop('{"question": "What is the name of the relief')  # not closed yet
    assert stop(f'{{"question": "{UNNAMED}", "')
    assert not stop('{"question": "Who owns \\"Calder Ferries\\" at Port Calder?", "answer": "')
    assert QuestionStop.question('{"question": "Who owns \\"X\\" now?"') == 'Who owns "X" now?'
    assert question_reason(UNNAMED, GateConfig()) == "not_self_contained"
    # A family switched off is not stopped on, and the rule's cache name says so.
    off = GateConfig(families_off=("names_nothing",))
    assert question_reason(UNNAMED, off) is None and not QuestionStop(off)(f'{{"question": "{UNNAMED}", "')
    assert QuestionStop(off).name != stop.name


def _run(streams, path):
    unnamed_every_third.n = 0
    llm = ScriptedLLM(unnamed_every_third, streams=streams)
    cfg = GenConfig(n=6, kinds=(("single_hop", 1.0),), seed=0)
    return llm, generate(read_shipped(), LLMWriter(CachedLLM(llm, path / "llm.sqlite")), cfg)


def test_a_stopped_write_is_rejected_as_the_whole_reply_is(tmp_path):
    """The same script with and without a model that streams: the same samples, the same rejections; with
    streaming every rejected question's reply ends after its question, with no answer written."""
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    plain_llm, plain = _run(False, tmp_path / "a")
    llm, streamed = _run(True, tmp_path / "b")
    assert not any(c.stop for c in plain_llm.calls)  # a backend that cannot stop lets the model finish
    assert all(c.stop is not None for c in llm.calls if c.prompt.name == "gen.write_question")
    assert [s.question for s in streamed.samples] == [s.question for s in plain.samples] and plain.samples
    assert streamed.report.rejected == plain.report.rejected
    n = streamed.report.rejected["not_self_contained"]
    assert n >= 2 and all(s.question != UNNAMED for s in streamed.samples)
    # What a stopped write cost: the words up to its question's closing quote (the scripted model counts words),
    # where the whole reply also held its answer and sentence numbers.
    stopped_words = len(f'{{"question": "{UNNAMED}"'.split())
    assert streamed.report.spent["not_self_contained"]["generated_tokens"] == n * stopped_words
    assert plain.report.spent["not_self_contained"]["generated_tokens"] > n * stopped_words


def test_a_stopped_reply_is_cached_and_replayed_stopped(tmp_path):
    unnamed_every_third.n = 2  # the first write names nothing
    first = ScriptedLLM(unnamed_every_third, streams=True)
    cfg = GenConfig(n=2, kinds=(("single_hop", 1.0),), seed=0)
    one = generate(read_shipped(), LLMWriter(CachedLLM(first, tmp_path / "llm.sqlite")), cfg)
    assert one.report.rejected.get("not_self_contained") == 1
    again = ScriptedLLM(lambda m, s: pytest.fail("replayed calls reach no model"), streams=True)
    two = generate(read_shipped(), LLMWriter(CachedLLM(again, tmp_path / "llm.sqlite")), cfg)
    assert [s.question for s in two.samples] == [s.question for s in one.samples]
    assert two.report.rejected == one.report.rejected and not again.calls


def with_unanswerable(messages, schema):
    """unnamed_every_third, and an unanswerable question (a year the sentences never give) of the topic."""
    data = json.loads(messages[-1]["content"])
    if "kind" not in data:
        return {"question": f"In which year did {data['topics'][-1]} receive its first national award?",
                "missing": "the year of the first \"national\" award"}
    return unnamed_every_third(messages, schema)


def test_the_rule_reads_a_question_line_once_it_ends():
    stop = QuestionStop(GateConfig())
    assert not stop(f"question: {UNNAMED}")  # the line may go on
    assert stop(f"question: {UNNAMED}\n") and stop(f"question: {UNNAMED}\nanswer: The")
    assert QuestionStop.question('question: Who owns "X" now?\nans') == 'Who owns "X" now?'
    assert not stop('question: Who owns "Calder Ferries" at Port Calder?\n')


def json_and_lines(tmp_path, script, kinds, counter=None):
    """The same script through a JSON backend and through one that writes lines and streams, each with its
    own cache and ``counter`` (the script's function that counts calls) from zero: {name: (llm, result)}."""
    runs = {}
    for name, flags in (("json", {}), ("lines", {"line_replies": True, "streams": True})):
        (tmp_path / name).mkdir()
        (counter or script).n = 0
        llm = ScriptedLLM(script, **flags)
        cfg = GenConfig(n=6, kinds=kinds, seed=0)
        runs[name] = llm, generate(read_shipped(), LLMWriter(CachedLLM(llm, tmp_path / name / "llm.sqlite")), cfg)
    return runs


def test_a_model_held_to_lines_writes_lines_and_gives_the_same_test_set(tmp_path):
    """The same script through a JSON backend and one that writes lines (and streams): the same samples and
    rejections; the lines writer is asked for lines (the examples shown as lines, another prompt version), its
    stopped writes end after the question's line, and its replies hold fewer words than the JSON ones."""
    runs = json_and_lines(tmp_path, with_unanswerable, (("single_hop", 1.0), ("unanswerable", 0.3)),
                          counter=unnamed_every_third)
    (json_llm, plain), (llm, lined) = runs["json"], runs["lines"]
    assert [s.question for s in lined.samples] == [s.question for s in plain.samples] and plain.samples
    assert [s.reference for s in lined.samples] == [s.reference for s in plain.samples]
    assert lined.report.rejected == plain.report.rejected and lined.report.rejected["not_self_contained"] >= 2
    writes = [c for c in llm.calls if c.prompt.name == "gen.write_question"]
    assert writes and all(c.prompt.version != WRITE_QUESTION.version for c in writes)
    assert all(c.prompt.version == WRITE_QUESTION.version for c in json_llm.calls if c.prompt.name == WRITE_QUESTION.name)
    assert "used: 1" in writes[0].messages[0]["content"] and '"used": [1]' not in writes[0].messages[0]["content"]
    assert any(s.kind == "unanswerable" for s in lined.samples)
    assert all("missing: " in c.messages[0]["content"] for c in llm.calls if c.prompt.name == "gen.write_unanswerable")
    versions = {s.provenance["prompt"] for s in lined.samples if s.kind == "single_hop"}
    assert versions == {f"{WRITE_QUESTION.name}@{writes[0].prompt.version}"}
    stopped_words = len(f"question: {UNNAMED}".split())
    assert lined.report.spent["not_self_contained"]["generated_tokens"] == (
        lined.report.rejected["not_self_contained"] * stopped_words)
    spent = [sum(v["generated_tokens"] for v in r.report.spent.values()) for r in (plain, lined)]
    assert spent[1] < spent[0]


CURIE = ["Marie Curie was born in Warsaw in 1867.", "Warsaw is the capital of Poland."]
TOWERS = ["The Eiffel Tower is 330 metres tall.", "The Chrysler Building is 319 metres tall."]


@pytest.mark.parametrize("kind, question, sentences, bridge, family", [
    ("comparative", "How tall is the Eiffel Tower?", TOWERS, None, "kind_names_both"),
    ("comparative", "What are the Eiffel Tower and the Chrysler Building made of?", TOWERS, None,
     "kind_comparison_cue"),
    ("multi_hop", "Warsaw, where Marie Curie was born, is the capital of which country?", CURIE, "Warsaw",
     "kind_bridge_named"),
    ("multi_hop", "What did the Nobel committee award in 1911?", CURIE, None, "kind_one_sentence"),
    # Decided by the answer, so never stopped on: it may cross to the other sentence, or state a condition.
    ("multi_hop", "Marie Curie was born in the capital of which country?", CURIE, "Warsaw", None),
    ("multi_hop", "When was Marie Curie born?", CURIE, None, None),
    ("multi_hop", "In which capital city was Marie Curie born in 1867?", CURIE, "Warsaw", None),  # asks for it
    ("conditional", "What is the capital of Poland?", CURIE[1:], None, None),
    ("comparative", "Which is taller, the Eiffel Tower or the Chrysler Building?", TOWERS, None, None),
])
def test_the_kind_check_a_question_fails_whatever_its_answer(kind, question, sentences, bridge, family):
    found = [f for f, _ in question_kind_problems(kind, question, sentences, bridge)]
    assert found[:1] == ([family] if family else [])
    if family:  # the full kind check agrees, whatever the reference
        for reference in ("", "Poland", "The Eiffel Tower", "yes", "330 metres"):
            assert family in [f for f, _ in kind_problems(kind, question, reference, sentences, bridge)]
    stop = QuestionStop(GateConfig()).with_kind(kind, sentences, bridge)
    assert stop(f"question: {question}\nanswer: ") == bool(family)
    assert stop.name != QuestionStop(GateConfig()).name
    unchecked = QuestionStop(GateConfig(kind_check=False)).with_kind(kind, sentences, bridge)
    assert not unchecked(f"question: {question}\n")
    off = GateConfig(families_off=tuple(found))  # the families it fails, switched off: not stopped
    assert not QuestionStop(off).with_kind(kind, sentences, bridge)(f"question: {question}\n")


def one_sided_comparisons(messages, schema):
    """good_reply, except that every second comparative question names only its first thing."""
    reply = good_reply(messages, schema)
    data = json.loads(messages[-1]["content"])
    if data.get("kind") == "comparative":
        one_sided_comparisons.n += 1
        if one_sided_comparisons.n % 2:
            return {**reply, "question": f"For {data['topics'][0]}, how much is said of it in {data['topics'][0]}?"}
    return reply


def test_a_write_whose_question_fails_the_kind_check_is_stopped_and_rejected_as_wrong_kind(tmp_path):
    runs = json_and_lines(tmp_path, one_sided_comparisons, (("single_hop", 0.5), ("comparative", 0.5)))
    plain, lined = runs["json"][1], runs["lines"][1]
    assert [s.question for s in lined.samples] == [s.question for s in plain.samples]
    assert any(s.kind == "comparative" for s in lined.samples)
    # The same candidates rejected; a stopped one is counted under wrong_kind, where its whole reply may have met
    # an answer gate first (unresolved_subject here): the kind check comes last.
    assert lined.report.n_rejected == plain.report.n_rejected
    moved = lined.report.rejected["wrong_kind"] - plain.report.rejected.get("wrong_kind", 0)
    assert moved >= 0 and lined.report.rejected["wrong_kind"] >= 2
    assert sum(plain.report.rejected[r] - lined.report.rejected.get(r, 0) for r in plain.report.rejected
               if r != "wrong_kind") == moved
    spent = [sum(v["generated_tokens"] for v in r.report.spent.values()) for r in (plain, lined)]
    assert spent[1] < spent[0]
    assert lined.report.spent["wrong_kind"]["calls"] == lined.report.rejected["wrong_kind"]  # a write each, no trip
