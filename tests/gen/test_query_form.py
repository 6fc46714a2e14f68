"""The query form (gen.query_form): a checked question and its answer stated as one claim, for applications
searched with statements."""

import asyncio
import json

import pytest
from omegaconf import OmegaConf

from ragsweep.gen.app import gen_config
from ragsweep.gen.documents import read_shipped
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.query_form import STATE_CLAIM, as_claim, claim_problem
from ragsweep.gen.reword import RewordConfig, evidence_bias
from ragsweep.gen.testset import Span, TestSample
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import ScriptedLLM
from tests.gen.test_gen_writer import good_reply

DOC = ("The protein kinase Zarel-4 suppresses tumour growth in Mdm2-null mice. Tumours grew faster without "
       "Zarel-4. Proteins were measured in 2019 by Okonkwo.")
QUESTION = "Which protein kinase suppresses tumour growth in Mdm2-null mice?"


def _sample(kind="single_hop", reference="Zarel-4"):
    return TestSample(id="q1", question=QUESTION, reference=reference, evidence=(Span("d1", 0, 70),),
                      kind=kind)


def _run(llm, sample=None, bias=None):
    return asyncio.run(as_claim(llm, sample or _sample(), [DOC], bias))


def test_the_question_and_its_answer_become_one_claim_and_the_provenance_keeps_the_question():
    llm = ScriptedLLM([{"claim": "Zarel-4 keeps cancers from spreading in Mdm2-null rodents."}])
    out, usage, calls = _run(llm)
    assert out.question == "Zarel-4 keeps cancers from spreading in Mdm2-null rodents."
    assert out.provenance["form"] == {"claim": True, "from": QUESTION}
    assert out.reference == "Zarel-4" and out.evidence == _sample().evidence and calls == 1
    (call,) = llm.calls
    assert call.prompt.name == STATE_CLAIM.name and call.bias is None  # no reword pass: no bias
    assert json.loads(call.messages[-1]["content"]) == {"question": QUESTION, "answer": "Zarel-4"}


def test_under_the_reword_bias_the_questions_copied_words_are_kept_off_but_the_answers_words_are_free():
    llm = ScriptedLLM([{"claim": "Zarel-4 stops cancers in Mdm2-null rodents."}], word_bias=True)
    sample = _sample(reference="the kinase Zarel-4")
    out, _, _ = _run(llm, sample, bias=-5.0)
    assert out.provenance["form"]["claim"] is True
    (call,) = llm.calls
    words = {w.strip().lower() for w in call.bias}
    assert {"suppresses", "tumour", "growth", "mice"} <= words   # copied from the evidence by the question
    assert "kinase" not in words                                 # the answer says it: the claim must too
    assert set(call.bias) < set(evidence_bias(QUESTION, [DOC], -5.0))


@pytest.mark.parametrize("reply, why", [
    ("Which kinase is it in Mdm2-null mice?", "not a statement"),
    ("A protein kinase suppresses tumour growth in Mdm2-null mice.", "lost zarel-4"),    # the answer is gone
    ("Zarel-4 suppresses tumour growth in mice.", "lost mdm2-null"),                     # a name of the question
])
def test_a_claim_that_asks_or_loses_a_name_or_number_keeps_the_question(reply, why):
    assert claim_problem(reply, QUESTION, "Zarel-4") == why
    # a possessive is the same name
    assert claim_problem("Zarel-4 protects Mdm2-null mice.", "What is Zarel-4's role in Mdm2-null mice?", "x") is None
    # a yes or no is stated by the claim's verb, not by the word
    assert claim_problem("Metformin lowers the risk of type 2 diabetes.", "Does metformin lower the risk of type 2 "
                         "diabetes?", "Yes") is None
    out, _, calls = _run(ScriptedLLM([{"claim": reply}]))
    assert out.question == QUESTION and out.provenance["form"] == f"kept the question: {why}" and calls == 1


def test_no_call_for_kinds_without_an_answer_to_state():
    llm = ScriptedLLM([])
    for sample in (_sample(kind="unanswerable", reference=""), _sample(kind="follow_up")):
        out, _, calls = _run(llm, sample)
        assert out == sample and calls == 0
    assert llm.calls == []


def test_a_failed_call_keeps_the_question():
    out, _, calls = _run(ScriptedLLM(["not json", "still not json"]))
    assert out.question == QUESTION and out.provenance["form"].startswith("kept the question: failed") and calls == 1


def test_generation_writes_claims_after_the_round_trip_and_reports_them():
    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        if "sentences" in data and "kind" in data:
            return good_reply(messages, schema)
        if list(data) == ["question", "answer"]:
            return {"claim": f"{data['question'].rstrip('?')}: {data['answer']}."}
        raise AssertionError(data)

    llm = ScriptedLLM(reply)
    result = generate(read_shipped(), LLMWriter(llm), GenConfig(n=2, kinds=(("single_hop", 1.0),), seed=0,
                                                                form="claim"))
    assert result.samples and result.report.to_dict()["form"].get("claims") == len(result.samples)
    for s in result.samples:
        first = s.provenance["form"]["from"]
        assert first.startswith("For ") and s.question == f"{first.rstrip('?')}: {s.reference}."
    names = [c.prompt.name for c in llm.calls]
    # each claim is stated once its question was written and through the gates
    assert names.count(STATE_CLAIM.name) >= len(result.samples) and names[0] != STATE_CLAIM.name


def test_the_report_keeps_both_the_form_asked_for_and_what_the_pass_did(tmp_path):
    from ragsweep.gen.app import produce

    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        if list(data) == ["question", "answer"]:
            return {"claim": f"{data['question'].rstrip('?')}: {data['answer']}."}
        return good_reply(messages, schema)

    cfg = OmegaConf.merge(OmegaConf.load("conf/gen.yaml"), {"n": 2, "form": "claim", "kinds": {"single_hop": 1},
                                                            "styles": [], "gates": {"embed": False, "roundtrip": False}})
    result, extra = produce(cfg, read_shipped(), ScriptedLLM(reply))
    report = {**result.report.to_dict(), **extra}  # as the generation report file is written
    assert report["query_form"] == "claim" and report["form"]["claims"] == len(result.samples) > 0


def test_the_configuration_is_checked():
    base = OmegaConf.load("conf/gen.yaml")
    assert gen_config(base, 1).form == "question"
    assert gen_config(OmegaConf.merge(base, {"form": "claim"}), 1).form == "claim"
    with pytest.raises(InputError, match="form must be one of question, claim"):
        gen_config(OmegaConf.merge(base, {"form": "keywords"}), 1)
    with pytest.raises(InputError, match="form=claim needs a model writer"):
        gen_config(OmegaConf.merge(base, {"form": "claim"}), 1, rule_writer=True)
    assert GenConfig(n=1).reword == RewordConfig()
