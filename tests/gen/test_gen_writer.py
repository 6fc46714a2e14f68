"""The LLM writer and the generation loop, with a scripted model (no network, no weights)."""

import asyncio
import json
import re

import pytest

from ragsweep.gen.documents import Corpus, Document, read_shipped
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.prompts import WRITE_QUESTION
from ragsweep.gen.testset import KINDS, check_against
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM
from ragsweep.metrics.prompts.core import Prompt, render

MIX = (("single_hop", 0.4), ("multi_hop", 0.2), ("comparative", 0.2), ("conditional", 0.2))


def _longest(sentence, k=2, besides=""):
    """The sentence's ``k`` longest words that ``besides`` does not hold."""
    other = set(re.findall(r"[a-z]{4,}", besides.lower()))
    every = sorted(set(re.findall(r"[A-Za-z]{4,}", sentence)), key=lambda w: (-len(w), w))
    words = [w for w in every if w.lower() not in other]
    return (words + [w for w in every if w not in words])[:k]  # short of k: the shared ones too


def good_reply(messages, schema):
    """A plausible writer that respects its kind: names the topic, asks about the sentence's two longest
    words (multi_hop: the first sentence's, answered from the second; comparative: one word of each)."""
    data = json.loads(messages[-1]["content"])
    sents, kind, topic = data["sentences"], data["kind"], data["topics"][-1]
    last = sents[-1]
    answer = " ".join(last.rstrip(".").split()[-3:])
    words = _longest(last)
    question = f"For {topic}, what is said about {words[0]} and {words[1]}?"
    if kind == "multi_hop":
        question = "For {}, what follows from {} and {}?".format(topic, *_longest(sents[0], besides=last))
    elif kind == "comparative":
        question = (f"For {topic}, which is more, {_longest(sents[0], 1, last)[0]} "
                    f"or {_longest(last, 1, sents[0])[0]}?")
    elif kind == "conditional":
        question = f"If {topic} holds, what is said about {words[0]} and {words[1]}?"
    return {"question": question, "answer": answer, "used": list(range(1, len(sents) + 1))}


def test_prompt_is_typed_and_versioned():
    assert isinstance(WRITE_QUESTION, Prompt)  # the one prompt type, shared with the judge prompts
    msgs = render(WRITE_QUESTION, WRITE_QUESTION.input(kind="single_hop", sentences=["A b."], topics=["T"]))
    assert msgs[0]["role"] == "system" and "Example 1" in msgs[0]["content"]
    assert json.loads(msgs[1]["content"])["sentences"] == ["A b."]
    assert re.fullmatch(r"[0-9a-f]{12}", WRITE_QUESTION.version)
    # The version in every cached writer call: a change here orphans the users' LLM caches.
    assert WRITE_QUESTION.id.version == "b07fd364b5b8" and WRITE_QUESTION.max_tokens == 160


def test_prompts_contain_the_evidence_and_every_kind_is_written():
    corpus = read_shipped()
    llm = ScriptedLLM(good_reply)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=10, kinds=MIX, seed=1))
    assert len(result.samples) == 10
    assert {s.kind for s in result.samples} == {k for k, _ in MIX} == set(KINDS) - {"unanswerable", "follow_up"}
    check_against(result.samples, corpus)
    for s in result.samples:
        call_texts = [c.messages[-1]["content"] for c in llm.calls]
        for span, quote in zip(s.evidence, s.quotes):
            assert corpus.get(span.doc_id).text[span.start:span.end] == quote
            assert any(json.dumps(quote, ensure_ascii=False) in t for t in call_texts)  # shown to the model
        if s.kind in ("multi_hop", "comparative"):
            assert len(s.evidence) == 2
        if s.kind == "multi_hop" and "bridge" in s.provenance:  # the entity the first sentence links to the second
            assert s.provenance["bridge"] in s.quotes[0]
        assert s.provenance["prompt"] == f"gen.write_question@{WRITE_QUESTION.version}"
        assert s.provenance["model"] == "scripted" and s.provenance["seed"] == 1
    assert any("bridge" in s.provenance for s in result.samples)


def test_broken_json_is_rejected_counted_and_replaced():
    corpus = read_shipped()
    state = {"calls": 0}

    def flaky(messages, schema):
        state["calls"] += 1
        if state["calls"] <= 2:  # first call and its repair: both broken
            return "{not json"
        reply = good_reply(messages, schema)
        if state["calls"] == 3:
            reply["question"] = "According to the passage, " + reply["question"]
        return reply

    result = generate(corpus, LLMWriter(ScriptedLLM(flaky)), GenConfig(n=5, seed=0))
    assert len(result.samples) == 5
    assert result.report.rejected["write_failed"] == 1
    assert result.report.rejected["not_self_contained"] == 1
    assert result.attempts == 5 + result.report.n_rejected


def test_corpus_exhausted_says_so():
    corpus = Corpus([Document("a.md", "The Forth Bridge was opened in 1890 by the Prince of Wales in Scotland."),
                     Document("b.md", "The Tay Bridge collapsed in 1879 during a violent winter storm at night.")],
                    source="tiny")
    result = generate(corpus, LLMWriter(ScriptedLLM(good_reply)), GenConfig(n=10, kinds=MIX, seed=0))
    assert 0 < len(result.samples) < 10
    assert result.report.exhausted
    assert "exhausted" in result.report.message() and "fewer samples than requested" in result.report.message()


def test_deterministic_for_a_seed():
    corpus = read_shipped()
    run = lambda seed: [(s.question, s.evidence) for s in
                        generate(corpus, LLMWriter(ScriptedLLM(good_reply)), GenConfig(n=8, kinds=MIX, seed=seed)).samples]
    assert run(7) == run(7)
    assert run(7) != run(8)


def test_resume_from_cache_makes_no_model_calls(tmp_path):
    corpus = read_shipped()
    cfg = GenConfig(n=6, kinds=MIX, seed=2)
    first_inner = ScriptedLLM(good_reply)
    first = generate(corpus, LLMWriter(CachedLLM(first_inner, tmp_path / "llm.sqlite")), cfg)
    assert len(first_inner.calls) >= 6
    again_inner = ScriptedLLM(good_reply)
    cached = CachedLLM(again_inner, tmp_path / "llm.sqlite")
    again = generate(corpus, LLMWriter(cached), cfg)
    assert again_inner.calls == [] and cached.misses == 0
    assert [s.to_dict() for s in again.samples] == [s.to_dict() for s in first.samples]


def test_interrupted_run_resumes_where_it_stopped(tmp_path):
    corpus = read_shipped()
    cfg = GenConfig(n=6, kinds=MIX, seed=2)
    inner = ScriptedLLM(good_reply)
    generate(corpus, LLMWriter(CachedLLM(inner, tmp_path / "llm.sqlite")), GenConfig(n=3, kinds=MIX, seed=2))
    done_before = len(inner.calls)
    resumed_inner = ScriptedLLM(good_reply)
    generate(corpus, LLMWriter(CachedLLM(resumed_inner, tmp_path / "llm.sqlite")), cfg)
    full_inner = ScriptedLLM(good_reply)
    generate(corpus, LLMWriter(full_inner), cfg)
    assert len(resumed_inner.calls) <= len(full_inner.calls) - done_before + 2


def test_bad_n_is_an_input_error():
    from ragsweep.metrics.errors import InputError

    with pytest.raises(InputError, match="positive integer"):
        generate(read_shipped(), LLMWriter(ScriptedLLM(good_reply)), GenConfig(n=0))


@pytest.mark.parametrize("option, inner", [("local", "LocalLLM"), ("local_small", "LocalLLM"),
                                           ("openai", "OpenAICompatLLM"), ("none", None)])
def test_every_llm_option_composes_and_builds_without_loading_a_model(tmp_path, option, inner):
    from hydra import compose, initialize_config_module
    from hydra.utils import instantiate

    from ragsweep.metrics.llm.factory import concurrency_of

    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="gen", overrides=[f"llm={option}", f"cache.dir={tmp_path}"])
    llm = instantiate(cfg.llm)
    if inner is None:
        assert llm is None
        return
    assert isinstance(llm, CachedLLM) and type(llm.inner).__name__ == inner
    assert llm.store.path == tmp_path / "llm.sqlite"
    assert concurrency_of(llm) == (8 if option == "openai" else 1)
    if option == "local_small":
        assert llm.inner.model_path == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    if option == "openai":
        assert cfg.llm.api_key_env == "OPENAI_API_KEY"  # the variable's name, never a key


def test_overlap_cap_keeps_the_reworded_questions_of_an_llm_writer():
    corpus = read_shipped()
    state = {"calls": 0}

    def alternating(messages, schema):
        """Every other reply copies the sentence up to its answer; the others ask in words the corpus does not use."""
        state["calls"] += 1
        data = json.loads(messages[-1]["content"])
        reply = good_reply(messages, schema)
        if state["calls"] % 2:
            reply["question"] = "What follows: " + " ".join(data["sentences"][-1].split()[:-3]) + "?"
        else:
            reply["question"] = f"Quibbling zephyrs aside, what about {reply['question'].split(' about ')[1]}"
        return reply

    # named_subject off: the scenario's candidates are the sentences it was written for, pronoun subjects too.
    result = generate(corpus, LLMWriter(ScriptedLLM(alternating)),
                      GenConfig(n=4, seed=1, gates=GateConfig(max_overlap=0.8, named_subject=False)))
    assert len(result.samples) == 4
    assert all(s.provenance["overlap"] <= 0.8 for s in result.samples)
    assert sum(s.question.startswith("Quibbling zephyrs") for s in result.samples) >= 3
    assert result.report.rejected["high_overlap"] >= 2
    assert result.report.overlap()["warning"] is None


def test_every_writing_prompt_asks_for_its_reply_laid_out_as_its_examples():
    """A compact reply (no line breaks, no indentation) in the separators the examples show: fewer tokens to
    generate, and the layout the model was shown."""
    from ragsweep.gen.followup import WRITE_FOLLOW_UP
    from ragsweep.gen.prompts import PROMPTS
    from ragsweep.gen.style_prompts import STYLE_PROMPTS
    from ragsweep.metrics.llm.base import COMPACT_JSON

    for prompt in (*PROMPTS.values(), WRITE_FOLLOW_UP, *STYLE_PROMPTS.values()):
        layout = prompt.output.model_json_schema()["x-guidance"]
        assert layout == COMPACT_JSON["x-guidance"] and layout["whitespace_flexible"] is False, prompt.name
        system = render(prompt, prompt.examples[0][0])[0]["content"]
        shown = json.loads(system.split("Example 1 output:\n", 1)[1].split("\n", 1)[0])
        assert json.dumps(shown, ensure_ascii=False, separators=(layout["item_separator"], layout["key_separator"])) \
            in system, prompt.name


def test_gen_preloads_the_in_process_model_and_reports_its_time():
    from ragsweep.gen.app import model_time, preload
    from ragsweep.metrics.llm import Meter

    class Local:
        def __init__(self):
            self.preloaded, self.load_seconds, self.resolve_seconds = 0, 3.25, 0.5

        def preload(self):
            self.preloaded += 1

    local = Local()
    cached = type("Cached", (), {"inner": local})()  # a cache wrapping the model
    preload(cached)
    preload(None)  # the rule writer: no model
    preload(ScriptedLLM(good_reply))  # a model that loads nothing
    assert local.preloaded == 1
    meter = Meter(cached)
    timing = model_time(meter)["model_time"]
    assert (timing["load_seconds"], timing["resolve_seconds"], timing["prompts"]) == (3.25, 0.5, {})
    assert model_time(None) == {}


def test_the_round_trip_asks_a_model_held_to_lines_for_lines():
    from ragsweep.gen.roundtrip import answer_from_evidence
    from ragsweep.metrics.llm import lines

    question, sentences = "Which is taller?", ["The Eiffel Tower is 330 metres tall.", "The Chrysler is 319 metres."]
    lined = ScriptedLLM(['answer: The "Eiffel" Tower'], line_replies=True)
    plain = ScriptedLLM([{"answer": 'The "Eiffel" Tower'}])
    for llm in (lined, plain):
        done = asyncio.run(answer_from_evidence(llm, question, sentences))
        assert done.parsed.answer == 'The "Eiffel" Tower'
    assert lines.is_lines(lined.calls[0].schema.model_json_schema())
    assert not lines.is_lines(plain.calls[0].schema.model_json_schema())
    assert lined.calls[0].prompt.version != plain.calls[0].prompt.version
