"""The reword pass (gen.reword): a written question said again while the model is kept off its evidence's words."""

import asyncio
import json

import pytest
from omegaconf import OmegaConf

from ragsweep.gen.app import gen_config
from ragsweep.gen.documents import read_shipped
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.reword import REWORD_QUESTION, SAME_QUESTION, RewordConfig, evidence_bias, names_and_numbers, reword
from ragsweep.gen.wording import lexical_overlap
from ragsweep.gen.writer import Draft, LLMWriter
from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM, cache_key, supports_bias
from tests.gen.test_gen_writer import good_reply

DOC = ("The protein kinase Zarel-4 suppresses tumour growth in Mdm2-null mice. Tumours grew faster without "
       "Zarel-4. Proteins were measured in 2019 by Okonkwo.")
QUESTION = "Does the protein kinase Zarel-4 suppress tumour growth in Mdm2-null mice?"
ON = RewordConfig(bias=-5.0, above=0.6)


def _draft(question=QUESTION):
    return Draft(question, "yes", ())


def _run(llm, draft, kind="single_hop", docs=(DOC,), cfg=ON):
    return asyncio.run(reword(llm, draft, kind, list(docs), cfg))


def test_the_bias_takes_every_form_of_the_copied_words_and_spares_names_and_numbers():
    bias = evidence_bias(QUESTION, [DOC], -5.0)
    words = {w.strip().lower() for w in bias}
    # Each copied word with its other forms in the evidence ("Tumours" opening a sentence is "tumours"),
    # mid-sentence and capitalised, all at the given value.
    assert {"kinase", "suppress", "suppresses", "tumour", "tumours", "growth", "mice"} <= words
    assert " Tumours" in bias and " tumours" in bias and set(bias.values()) == {-5.0}
    # Names (only ever capitalised, or holding a digit), words the question does not use, and the first common
    # word, which says what the question asks for, stay free.
    assert not words & {"zarel-4", "mdm2-null", "okonkwo", "measured", "faster", "grew", "2019", "protein", "proteins"}
    assert " capacity" not in evidence_bias("What is the capacity of the Skerry Array?",
                                           ["The Skerry Array has a capacity of 21 megawatts."], -5.0)
    assert names_and_numbers("When did Okonkwo measure 12 proteins in Oslo?") == {"okonkwo", "12", "oslo"}


def test_a_copied_question_is_reworded_under_the_bias_and_the_provenance_keeps_the_first_wording():
    llm = ScriptedLLM([{"question": "Can the Zarel-4 enzyme stop cancers spreading in Mdm2-null rodents?"},
                       {"answer": "yes"}], word_bias=True)
    out = _run(llm, _draft())
    assert out.question == "Can the Zarel-4 enzyme stop cancers spreading in Mdm2-null rodents?"
    assert out.reference == "yes" and out.provenance["reword"]["from"] == QUESTION
    call, same = llm.calls
    assert call.prompt.name == REWORD_QUESTION.name and call.bias == evidence_bias(QUESTION, [DOC], -5.0)
    assert json.loads(call.messages[-1]["content"]) == {"question": QUESTION}  # the question only, no evidence
    # The same model is asked whether both ask the same thing, with no bias.
    assert same.prompt.name == SAME_QUESTION.name and same.bias is None and same.logprobs
    assert json.loads(same.messages[-1]["content"]) == {"first": QUESTION, "second": out.question}
    assert lexical_overlap(out.question, [DOC]).share < lexical_overlap(QUESTION, [DOC]).share


@pytest.mark.parametrize("reply, why", [
    ("Can the enzyme stop cancers spreading in Mdm2-null rodents?", "lost zarel-4"),
    ("The Zarel-4 enzyme stops cancers in Mdm2-null rodents.", "not a question"),
    ("Does the protein kinase Zarel-4 suppress tumour growth in Mdm2-null mice?", "no fewer evidence words"),
])
def test_a_rewording_that_drops_a_name_is_no_question_or_copies_as_much_keeps_the_original(reply, why):
    llm = ScriptedLLM([{"question": reply}], word_bias=True)
    out = _run(llm, _draft())
    assert out.question == QUESTION and out.provenance["reword"] == f"kept the original: {why}"


def test_a_rewording_the_model_finds_asks_something_else_keeps_the_original():
    llm = ScriptedLLM([{"question": "How much water can the Zarel-4 enzyme hold in Mdm2-null rodents?"},
                       {"answer": "no"}], word_bias=True)
    out = _run(llm, _draft())
    assert out.question == QUESTION and out.provenance["reword"] == "kept the original: asks something else"


def test_no_call_when_the_pass_cannot_or_need_not_run():
    able = ScriptedLLM([], word_bias=True)
    assert _run(able, _draft(), kind="unanswerable") == _draft()      # not about its sentences' words
    assert _run(able, _draft(), kind="follow_up") == _draft()
    assert _run(able, _draft("Who first described Zarel-4 as a suppressor of cancer in rodents?")).question.startswith(
        "Who first")                                                  # shares little: not reworded
    assert _run(able, _draft(), cfg=RewordConfig(bias=None)) == _draft()
    assert able.calls == []
    unable = ScriptedLLM([])                                          # an OpenAI-compatible backend, say
    assert not supports_bias(unable) and _run(unable, _draft()) == _draft() and unable.calls == []
    with pytest.raises(JudgeError, match="cannot bias words"):        # asked anyway, it refuses rather than ignores
        asyncio.run(unable.complete([{"role": "user", "content": "x"}], bias={" x": -1.0}))


def test_a_failed_rewording_call_keeps_the_question():
    llm = ScriptedLLM(["not json", "still not json"], word_bias=True)
    out = _run(llm, _draft())
    assert out.question == QUESTION and out.provenance["reword"].startswith("failed:")


def test_the_bias_is_part_of_the_cache_key_and_a_call_without_one_keys_as_before(tmp_path):
    msgs = [{"role": "user", "content": "q"}]
    assert cache_key({"m": 1}, msgs) == cache_key({"m": 1}, msgs, bias=None) == cache_key({"m": 1}, msgs, bias={})
    assert cache_key({"m": 1}, msgs, bias={" a": -5.0}) != cache_key({"m": 1}, msgs)
    assert cache_key({"m": 1}, msgs, bias={" a": -5.0}) != cache_key({"m": 1}, msgs, bias={" a": -2.0})
    inner = ScriptedLLM([{"question": "A?"}, {"question": "B?"}], word_bias=True)
    cached = CachedLLM(inner, tmp_path / "llm.sqlite")
    assert supports_bias(cached)  # through the wrapper
    first = asyncio.run(cached.complete(msgs, bias={" a": -5.0}))
    again = asyncio.run(cached.complete(msgs, bias={" a": -5.0}))
    other = asyncio.run(cached.complete(msgs, bias={" b": -5.0}))
    assert first.text == again.text != other.text and again.cached and inner.calls[0].bias == {" a": -5.0}


def test_generation_writes_the_reworded_question_and_reports_the_pass():
    corpus = read_shipped()

    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        if "sentences" in data and "kind" in data:  # the writer asks in its sentence's words
            return good_reply(messages, schema)
        if list(data) == ["question"]:              # the reword pass: its names and numbers, nothing else copied
            kept = sorted(names_and_numbers(data["question"]))
            return {"question": "Whereabouts might one learn what links " + " and ".join(kept) + "?"}
        if list(data) == ["first", "second"]:      # ... which asks the same thing
            return {"answer": "yes"}
        raise AssertionError(data)

    llm = ScriptedLLM(reply, word_bias=True)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=3, kinds=(("single_hop", 1.0),), seed=0, reword=ON))
    reworded = result.report.to_dict()["reword"]
    assert reworded.get("reworded", 0) >= 1 and set(reworded) <= {"reworded", "kept_the_original", "failed"}
    written = [s for s in result.samples if isinstance(s.provenance.get("reword"), dict)]
    assert written and all(s.question.startswith("Whereabouts") for s in written)
    for s in written:  # the reference and evidence are the first wording's; the overlap recorded is the new one's
        assert s.provenance["reword"]["from"].startswith("For ")
        assert s.provenance["overlap"] < s.provenance["reword"]["overlap_before"]
    assert all(c.bias for c in llm.calls if c.prompt.name == "gen.reword_question")


def test_the_configuration_is_checked():
    base = OmegaConf.load("conf/gen.yaml")
    assert gen_config(base, 1).reword == RewordConfig(None, 0.6)  # off by default
    on = OmegaConf.merge(base, {"reword": {"bias": -5, "above": 0.5}})
    assert gen_config(on, 1).reword == RewordConfig(-5.0, 0.5)
    for bad in ({"bias": 5}, {"bias": True}, {"above": 2}):
        with pytest.raises(InputError, match="reword"):
            gen_config(OmegaConf.merge(base, {"reword": bad}), 1)


def test_a_writer_that_cannot_bias_words_says_the_pass_is_ignored(caplog):
    from ragsweep.gen.app import produce

    cfg = OmegaConf.merge(OmegaConf.load("conf/gen.yaml"), {"n": 1, "reword": {"bias": -5}, "gates": {"embed": False}})
    with caplog.at_level("WARNING", logger="ragsweep"):
        result, _ = produce(cfg, read_shipped(), None)  # the rule writer
    assert result.samples and "reword.bias is ignored" in caplog.text
