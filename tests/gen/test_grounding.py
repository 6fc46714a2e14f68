"""Where a documentation question's values come from (gen.grounding), on a small made-up product's docs: a value
copied from the writer's prompt, a "why" its text does not answer, a detail the text lacks and an example-only
value are refused, each under its own reason; the same question grounded in the text passes."""

from __future__ import annotations

import asyncio

import pytest

from ragsweep.gen.documents import Corpus, Document, Span, read_folder
from ragsweep.gen.gates import GateConfig, check_sample
from ragsweep.gen.grounding import (
    example_answer,
    leaks,
    prompt_terms,
    states_consequence,
    states_reason,
    unseen_values,
    unstated_ask,
    unstated_default,
)
from ragsweep.gen.style_prompts import STYLE_PROMPTS, WRITE_AVOID
from ragsweep.gen.styles import section_candidates
from ragsweep.gen.testset import TestSample
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter, WriteFailed
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Quayside

Quayside syncs the berth plans of a marina between its office and the harbour master.

## Sync errors

Quayside sync sends every changed berth plan to the harbour server.
If the harbour server rejects a plan, quayside sync stops with a PlanRejectedError naming the berth.

## Lock files

!!! warning

    Do not edit the quay.lock file by hand while quayside sync is running.

## Offline mode

!!! danger

    Never delete the outbox folder of Quayside, because unsent plans are kept there until the next sync.

## Retries

Quayside sync retries an upload that the harbour server did not answer, each time after a longer pause.
The retry_limit setting says how often quayside sync retries a failed upload, and its default is 3.
"""


@pytest.fixture()
def doc(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "quayside.md").write_text(PAGE, encoding="utf-8")
    return read_folder(tmp_path / "d").get("quayside.md")


def _candidate(doc, style, holding):
    return next(c for c in section_candidates(doc, document_units(doc), style)
                if any(holding in u.text for u in c.shown))


def _write(cand, reply):
    llm = ScriptedLLM(lambda m, s: reply)
    draft = asyncio.run(LLMWriter(llm).write(cand, ["Quayside"] * len(cand.shown), None, cand.style))
    return draft, llm


def test_prompt_terms_are_the_prompts_values_and_names_not_its_question_words():
    terms = prompt_terms("Ask 'Why does ... return a 422 error?' or 'Which Gizmo setting ...?'",
                         [({"text": "the wait_seconds setting"}, {"used": [2, 3]})])
    assert terms == {"422", "gizmo", "wait_seconds"}  # not "why", "which" (question words), not 2 or 3 (no text)
    assert leaks("Why does Quayside return a 422 error?", terms, "Quayside rejects a plan") == ["422"]
    assert leaks("Why does Quayside return a 422 error?", terms, "Quayside answers 422 when ...") == []


def test_a_troubleshooting_question_with_a_value_of_the_prompt_is_refused_and_one_from_its_text_passes(doc):
    cand = _candidate(doc, "troubleshooting", "PlanRejectedError")
    leaked = {"question": "Why does quayside sync fail with a 422 error in Quayside?",
              "answer": "The harbour server rejects a plan", "used": [2]}
    with pytest.raises(WriteFailed) as caught:
        # the examples' own error, not this page's
        _write(cand, {**leaked, "question": "Why does quayside sync stop with a BerthConflictError in Quayside?"})
    assert caught.value.reason == "prompt_leak" and "BerthConflictError" in str(caught.value)
    draft, llm = _write(cand, {**leaked, "question": "Why does quayside sync stop with a PlanRejectedError?"})
    assert draft.question.endswith("PlanRejectedError?")
    assert llm.calls[0].messages[0]["content"].startswith(STYLE_PROMPTS["troubleshooting"].instruction)


def test_a_warning_that_gives_no_reason_is_asked_what_to_avoid_never_why(doc):
    cand = _candidate(doc, "troubleshooting", "quay.lock")
    draft, llm = _write(cand, {"question": "What should I avoid doing to the quay.lock file while Quayside syncs?",
                               "answer": "Editing it by hand", "used": [1]})
    assert llm.calls[0].messages[0]["content"].startswith(WRITE_AVOID.instruction)
    assert draft.reference == "Editing it by hand"
    with pytest.raises(WriteFailed) as caught:
        _write(cand, {"question": "Why should I not edit the quay.lock file of Quayside by hand?",
                      "answer": "It is in use while quayside sync is running", "used": [1]})
    assert caught.value.reason == "unstated_ask"


def test_a_warning_that_gives_its_reason_may_be_asked_why(doc):
    cand = _candidate(doc, "troubleshooting", "outbox")
    draft, llm = _write(cand, {"question": "Why should I never delete the outbox folder of Quayside?",
                               "answer": "Unsent plans are kept there until the next sync", "used": [1]})
    assert llm.calls[0].messages[0]["content"].startswith(STYLE_PROMPTS["troubleshooting"].instruction)
    assert draft.question.startswith("Why")


def test_what_the_text_states_decides_what_may_be_asked():
    assert not states_reason(["Do not edit the lock file by hand while a sync runs."])  # "while" is no reason
    assert states_reason(["If the server rejects a plan, the sync stops with an error."])
    assert not states_reason(["When you deploy, never set debug to true."])  # an instruction under a condition
    assert states_consequence(["Large uploads will block the event loop."])
    assert not states_consequence(["Use a separate worker for large uploads."])
    assert unstated_ask("What happens if I upload a large file?", ["Use a separate worker for large uploads."])
    assert unstated_ask("What happens if I upload a large file?", ["Large uploads will block the loop."]) is None
    assert unstated_ask("How do I avoid this?", ["Use a separate worker."]) is None


def test_an_answer_that_adds_a_value_its_text_lacks_is_refused(doc):
    cand = _candidate(doc, "option", "retry_limit")
    with pytest.raises(WriteFailed) as caught:
        _write(cand, {"question": "Which Quayside setting says how often a failed upload is retried?",
                      "answer": "retry_limit (3 by default, at most 10)", "used": [1]})
    assert caught.value.reason == "unseen_value" and "10" in str(caught.value)
    draft, _ = _write(cand, {"question": "Which Quayside setting says how often a failed upload is retried?",
                             "answer": "retry_limit (3 by default)", "used": [1]})
    assert draft.reference == "retry_limit (3 by default)"
    assert unseen_values("v2 of PlanStore", "PlanStore, version 2") == ["v2"]


EXAMPLES = ("Quayside talks to the harbour server whose address you give, for example https://harbour.example.com/api. "
            "Quayside listens on port 7311 unless told otherwise. "
            "Name the marina in the config, such as my_marina.")


def _sample(question, reference, sentence, style=None):
    start = EXAMPLES.index(sentence)
    return TestSample("s", question, reference, (Span("e", start, start + len(sentence)),), "single_hop",
                      {"style": style} if style else {}, (sentence,))


def test_an_example_only_value_is_never_the_answer():
    corpus = Corpus([Document("e", EXAMPLES)], source="mem")
    url = EXAMPLES.split(". ")[0] + "."
    refused = _sample("Which URL does Quayside talk to?", "https://harbour.example.com/api", url)
    assert check_sample(refused, corpus, GateConfig()) == "example_value"
    name = _sample("What marina name does the Quayside config hold?", "my_marina",
                   "Name the marina in the config, such as my_marina.")
    assert check_sample(name, corpus, GateConfig()) == "example_value"
    port = _sample("Which port does Quayside listen on by default?", "7311",
                   "Quayside listens on port 7311 unless told otherwise.")
    assert check_sample(port, corpus, GateConfig()) is None
    # a reference that says more than the example value answers with what it says
    doc = corpus.get("e")
    said = example_answer("What does Quayside talk to?", "the harbour server whose address you give",
                          [(doc, 0, len(url))])
    assert said == []


def test_an_example_block_value_is_example_text_but_a_code_answer_is_its_code(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "q.md").write_text("# Quayside\n\n!!! example\n\n    Quayside then reports berth B-17 as "
                                         "free for the evening.\n", encoding="utf-8")
    doc = read_folder(tmp_path / "d").get("q.md")
    at = doc.text.index("Quayside then")
    end = doc.text.index("evening.") + len("evening.")
    assert example_answer("Which berth does Quayside report free?", "B-17", [(doc, at, end)]) == ["B-17"]
    assert example_answer("Which berth does Quayside report free?", "B-17", [(doc, at, end)],
                          code_is_example=False) == ["B-17"]  # an example admonition is example text either way


def test_a_model_that_streams_stops_a_refused_question_before_its_answer(doc):
    """The same refusal with and without a model that streams; with one, the answer is never generated."""
    cand = _candidate(doc, "troubleshooting", "quay.lock")
    reply = {"question": "Why should I not edit the quay.lock file of Quayside by hand?",
             "answer": "It is in use while quayside sync is running and " + "more words " * 30, "used": [1]}
    reasons, generated = [], []
    for streams in (False, True):
        llm = ScriptedLLM(lambda m, s: reply, streams=streams)
        writer = LLMWriter(llm)
        with pytest.raises(WriteFailed) as caught:
            asyncio.run(writer.write(cand, ["Quayside"] * len(cand.shown), None, cand.style))
        reasons.append(caught.value.reason)
        generated.append(writer.usage.completion_tokens)
    assert reasons == ["unstated_ask", "unstated_ask"]
    assert generated[1] < generated[0] / 2


def test_a_warnings_condition_says_when_not_why():
    warned = ["When you deploy Quayside, never run quayside sync with the debug flag."]
    assert states_reason(warned) is False
    told = ["If you run quayside sync with the debug flag, every plan is logged in full."]
    assert states_reason(told) and not states_reason(told, conditions=False)
    assert unstated_ask("Why is every plan logged in full?", told, conditions=False) == "why"


def test_a_default_read_off_an_examples_argument_is_not_a_stated_default(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "q.md").write_text(
        "# Quayside\n\nTo moor without checking the tide table, pass the skip_tide argument to the moor method:\n\n"
        "```python\nboat.moor(skip_tide=True)\n```\n\nQuayside waits for the tide by default, and skip_tide turns "
        "that wait off.\n", encoding="utf-8")
    corpus = read_folder(tmp_path / "d")
    doc = corpus.get("q.md")
    lead = doc.text.index("To moor")
    block_end = doc.text.index("True)") + len("True)\n```")
    waits = doc.text.index("Quayside waits")
    wait_end = doc.text.index("wait off.") + len("wait off.")
    # the lead-in and its block: True stands only in the example's argument, nothing says it is a default
    assert unstated_default("skip_tide (True by default)", [(doc, lead, block_end)])
    assert not unstated_default("pass skip_tide=True to moor", [(doc, lead, block_end)])  # no default claimed
    # the prose that says what happens by default
    assert not unstated_default("By default Quayside waits for the tide.", [(doc, waits, wait_end)])
    # a question that asks for a default: the reference need not say the word for the default to be made up
    asked = "What is the default value of skip_tide in Quayside?"
    assert unstated_default("True", [(doc, lead, block_end)], asked)
    assert not unstated_default("It waits for the tide.", [(doc, waits, wait_end)],
                                "What does Quayside do by default before mooring?")
    sample = TestSample("s", "What argument makes Quayside moor without checking the tide table?",
                        "skip_tide (True by default)", (Span("q.md", lead, block_end),), "single_hop",
                        {"style": "option"},
                        (doc.text[lead:block_end],))
    assert check_sample(sample, corpus, GateConfig()) == "unstated_default"
