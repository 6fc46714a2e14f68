"""What a documentation question and its reference are about, on a small made-up product's docs (issue #34): the
heading over a text names its subject for the writer and for the round trip's answerer; a code answer's
question asks for the block its cue sentence introduces, not an earlier step; a reference from a pointer sentence
names where it points instead of claiming what the linked page may say."""

from __future__ import annotations

import asyncio

import pytest

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import Corpus, read_folder
from ragsweep.gen.drafts import Passed, misused_pointer
from ragsweep.gen.grounding import asks_earlier_step, claims_pointed
from ragsweep.gen.roundtrip import round_trip
from ragsweep.gen.style_checks import pointer_target
from ragsweep.gen.styles import section_candidates
from ragsweep.gen.testset import TestSample
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import Draft, LLMWriter, WriteFailed
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Tidewell

Tidewell reads tide gauges along a coast and raises alarms when the water rises too fast.

## Alarms router

The alarms router holds the routes that manage a gauge's alarms.

### `POST /silence`

Silences the alarm of one gauge for an hour. To stop people guessing gauge names, the route will always
return a `202 Accepted` response, even if the gauge does not exist.

## Offline use

The default build of Tidewell only reads gauges over the network. See the [offline instructions](#offline) to
read gauges from a file. Install [Tidewell Drivers](https://drivers.example.org) with pip to read serial gauges.

## Import a gauge

First we need to register the gauge and import its tide history into the Tidewell archive (you can import any
gauge this way). Let's install the gauge drivers from the package index:

```bash
pip install tidewell-drivers
```
"""


@pytest.fixture()
def doc(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "tidewell.md").write_text(PAGE, encoding="utf-8")
    return read_folder(tmp_path / "d").get("tidewell.md")


def _unit(doc, holding):
    return next(u for u in document_units(doc) if holding in u.text)


def _write(cand, reply):
    llm = ScriptedLLM(lambda m, s: reply)
    draft = asyncio.run(LLMWriter(llm).write(cand, ["Tidewell"] * len(cand.shown), None, cand.style))
    return draft, llm


def test_the_writer_sees_the_innermost_heading_as_the_texts_subject(doc):
    cand = next(c for style in ("troubleshooting", "how_to", "option", "code_answer")
                for c in section_candidates(doc, document_units(doc), style)
                if any("202" in u.text for u in c.shown))
    assert cand.section[-1] == "POST /silence"
    _, llm = _write(cand, {"question": "What does Tidewell's POST /silence route return for an unknown gauge?",
                           "answer": "A 202 Accepted response", "used": [1]})
    prompt = llm.calls[0].messages[0]["content"]
    assert "last title names" in prompt and "Alarms router > POST /silence" in llm.calls[0].messages[-1]["content"]


def _passed(section):
    sample = TestSample(id="", question="What does the POST /silence route of Tidewell return?",
                        reference="a 202 Accepted response", evidence=(), kind="single_hop",
                        provenance={"style": "fact"})
    return Passed(sample, {}, ("the route will always return a 202 Accepted response",), section=section)


def test_the_round_trip_answerer_reads_the_headings_of_a_documentation_text():
    llm = ScriptedLLM(lambda m, s: {"answer": "a 202 Accepted response"})
    out = asyncio.run(round_trip(_passed("Tidewell > Alarms router > POST /silence"), llm, 0.5))
    assert out.reason is None
    assert "Alarms router > POST /silence" in llm.calls[0].messages[-1]["content"]
    plain = ScriptedLLM(lambda m, s: {"answer": "a 202 Accepted response"})
    asyncio.run(round_trip(_passed(""), plain, 0.5))
    assert '"section"' not in plain.calls[0].messages[-1]["content"]  # other kinds' calls are as before


def test_a_pointer_sentence_is_a_link_that_a_verb_sends_the_reader_to(doc):
    see = _unit(doc, "offline instructions")
    assert pointer_target(doc, see.start, see.end) == "offline instructions"
    step = _unit(doc, "serial gauges")  # a linked object of a step is no pointer
    assert pointer_target(doc, step.start, step.end) is None


def test_a_reference_may_not_claim_what_its_text_only_points_to(doc):
    first, see = _unit(doc, "only reads gauges"), _unit(doc, "offline instructions")
    cand = Candidate("single_hop", (first, see), (1,), style="how_to", section=("Tidewell", "Offline use"),
                     product="Tidewell", pointers=((1, "offline instructions"),))
    question = "How do I read gauges from a file with Tidewell?"
    with pytest.raises(WriteFailed) as caught:
        _write(cand, {"question": question, "answer": "Install the offline build to read from a file", "used": [2]})
    assert caught.value.reason == "points_elsewhere"
    draft, _ = _write(cand, {"question": question, "answer": "See the offline instructions", "used": [2]})
    assert draft.reference == "See the offline instructions"
    # a reference that leans on the text's other sentence is not the pointer's claim
    assert claims_pointed(question, "Tidewell reads gauges over the network by default", [first.text, see.text],
                          [(1, "offline instructions")]) is None
    # the link named, for a question that asks for none of what the sentence says the link is for
    with pytest.raises(WriteFailed) as caught:
        _write(cand, {"question": "Where is the changelog of Tidewell's offline use?",
                      "answer": "In the offline instructions", "used": [2]})
    assert caught.value.reason == "points_elsewhere"


def test_a_code_answer_asks_for_the_block_its_cue_introduces_not_an_earlier_step(doc):
    cand = next(c for c in section_candidates(doc, document_units(doc), "code_answer")
                if "pip install" in c.shown[c.required[0]].text)
    with pytest.raises(WriteFailed) as caught:
        _write(cand, {"question": "How do I import the tide history of a gauge into the Tidewell archive?"})
    assert caught.value.reason == "earlier_step"
    draft, _ = _write(cand, {"question": "How do I install the Tidewell gauge drivers?"})
    assert draft.reference == "pip install tidewell-drivers"
    assert not asks_earlier_step("How do I import a gauge?", ["Run the import:"], "tidewell import", "Tidewell")


def test_a_plain_fact_from_a_pointer_sentence_is_gated_too(doc):
    see = _unit(doc, "offline instructions")
    corpus = Corpus([doc], "test")
    wrong = Draft("Where is the full changelog of Tidewell?", "The offline instructions", (see,))
    assert misused_pointer(wrong, corpus) == "offline instructions"
    right = Draft("Where do I learn to read gauges from a file in Tidewell?", "The offline instructions", (see,))
    assert misused_pointer(right, corpus) is None
    # the product's name is shared with every text of its page: no sign the question asks what the link is for
    see_all = Draft("Where is the changelog of Tidewell's gauges?", "The offline instructions", (see,))
    assert misused_pointer(see_all, corpus) is None and misused_pointer(see_all, corpus, "tidewell-gauges")
