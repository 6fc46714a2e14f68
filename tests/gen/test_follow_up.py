"""Follow-up questions: `ragsweep gen` writes conversations whose second turn needs the first, and
the gates hold them to it (both writers, the pronoun rewriting, the pair's gates)."""

from __future__ import annotations

import json

import pytest

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import read_shipped
from ragsweep.gen.followup import (
    WRITE_FOLLOW_UP,
    check_follow_up,
    names,
    pronoun_of,
    pronounise,
    refers_back,
)
from ragsweep.gen.gates import GateConfig, check_sample
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.testset import TestSample, check_against, read_testset
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

N = 12


@pytest.fixture(scope="module")
def corpus():
    return read_shipped()


@pytest.fixture(scope="module")
def generated(tmp_path_factory, ragsweep):
    cwd = tmp_path_factory.mktemp("follow_up")
    out = cwd / "ts.jsonl"
    done = ragsweep("gen", "llm=none", f"n={N}", "kinds={single_hop: 0.5, unanswerable: 0, follow_up: 0.5}",
                    f"out={out}", "progress=false", "gates.embed=false", cwd=cwd, cache=cwd / "cache")
    assert done.returncode == 0, done.stderr[-3000:]
    return cwd, read_testset(out), done


def test_gen_writes_follow_ups_that_pass_their_gates(generated, corpus):
    cwd, samples, done = generated
    report = json.loads((cwd / "ts.report.json").read_text())
    follow = [s for s in samples if s.kind == "follow_up"]
    assert report["accepted_by_kind"] == {"single_hop": N // 2, "follow_up": N // 2} and len(follow) == N // 2
    assert report["kinds_configured"]["follow_up"] == 0.5 and "follow_up_self_contained" in report["reasons"]
    assert f"follow_up: {N // 2} accepted" in done.stdout
    check_against(samples, corpus)  # the second turn's evidence, verbatim
    for s in follow:
        info = s.provenance["follow_up"]
        first = info["first"]
        assert [t["role"] for t in s.conversation] == ["user", "assistant", "user"]
        assert s.conversation[0]["content"] == first["question"]
        assert s.conversation[1]["content"] == first["reference"]  # the first turn's reference answer
        assert s.conversation[2]["content"] == s.question
        # The follow-up needs the first turn: it refers back and names none of its subject's words,
        # which the first turn and the written-out question do.
        assert refers_back(s.question) and not names(s.question, info["subject"])
        assert names(first["question"], info["subject"]) and names(info["standalone"], info["subject"])
        for e in first["evidence"]:  # the first turn's evidence is verbatim too
            assert corpus.get(e["doc_id"]).text[e["start"]:e["end"]] == e["text"]
        # Read back from the file, the pair passes its gates again.
        assert check_follow_up(s, corpus, GateConfig())[1] is None


def test_the_follow_up_reads_as_one_conversation(generated):
    *_, samples, _ = generated
    s = next(s for s in samples if s.kind == "follow_up")
    standalone, subject = s.provenance["follow_up"]["standalone"], s.provenance["follow_up"]["subject"]
    # The pronoun stands where the subject stood: the rest of the question is the written-out one's.
    rest = standalone.replace(subject + "'s", "").replace(subject, "")
    assert set(rest.lower().split()) - set(s.question.lower().split()) <= {"the"}


@pytest.mark.parametrize(("question", "subject", "pronoun", "expected"), [
    ("Calder Ferries moved to its present terminal in Ferrybank in what year?", "Calder Ferries", "it",
     "It moved to its present terminal in Ferrybank in what year?"),
    ("The Fenwick Inquiry also found that what float gauge had jammed?", "Fenwick Inquiry", "it",
     "It also found that what float gauge had jammed?"),
    ("Marine Systems Lab's best-known facility is what?", "Marine Systems Lab", "it",
     "Its best-known facility is what?"),
    ("Which board was led by Ines Marrow in 2019?", ["Ines Marrow", "Marrow"], "she",
     "Which board was led by her in 2019?"),
    ("Oduya Lenning was made professor in what year?", ["Oduya Lenning", "Lenning"], "he",
     "He was made professor in what year?"),
    ("What did the city award in 2019?", "Ines Marrow", "she", None),  # no subject to replace
])
def test_pronounise(question, subject, pronoun, expected):
    assert pronounise(question, subject, pronoun) == expected


def test_the_pronoun_follows_the_document(corpus):
    assert pronoun_of(document_units(corpus.get("ines-marrow.md"))) == "she"
    assert pronoun_of(document_units(corpus.get("oduya-lenning.md"))) == "he"
    assert pronoun_of(document_units(corpus.get("calder-ferries.md"))) == "it"


FIRST = "Calder Ferries moved to its present terminal in Ferrybank in what year?"


def _pair(corpus, follow_up: str, reference: str = "Pellow", first_question: str = FIRST) -> TestSample:
    doc = corpus.get("calder-ferries.md").text
    first = "The company moved to its present terminal in Ferrybank in 1963."
    second = "It is still owned by the Pellow family"
    a, b = doc.index(first), doc.index(second)
    ev = [{"doc_id": "calder-ferries.md", "start": a, "end": a + len(first), "text": first}]
    from ragsweep.gen.documents import Span

    return TestSample("x", follow_up, reference, (Span("calder-ferries.md", b, b + len(second)),), "follow_up",
                      {"follow_up": {"first": {"question": first_question, "reference": "1963", "evidence": ev},
                                     "subject": "Calder Ferries",
                                     "standalone": "Calder Ferries is still owned by what family?"}})


def test_the_gates_of_a_pair(corpus):
    cfg = GateConfig()
    sample, reason = check_follow_up(_pair(corpus, "It is still owned by what family?"), corpus, cfg)
    assert reason is None and sample.conversation[1] == {"role": "assistant", "content": "1963"}
    # Standing on its own (names the subject, or nothing refers back): not a follow-up.
    assert check_follow_up(_pair(corpus, "Calder Ferries is still owned by what family?"), corpus, cfg)[1] \
        == "follow_up_self_contained"
    assert check_follow_up(_pair(corpus, "Which family still owns the ferry company?"), corpus, cfg)[1] \
        == "follow_up_self_contained"
    # The first turn gives the follow-up's answer away.
    given = "Calder Ferries, owned by the Pellow family, moved to its present terminal in what year?"
    assert check_follow_up(_pair(corpus, "It is still owned by what family?", first_question=given),
                           corpus, cfg)[1] == "trivial"
    # The usual gates hold for the written-out follow-up (answerability) ...
    assert check_follow_up(_pair(corpus, "It is still owned by what family?", reference="the Smiths"),
                           corpus, cfg)[1] == "unsupported"
    # ... and a standalone check alone would have rejected the follow-up: it opens with a pronoun.
    assert check_sample(_pair(corpus, "It is still owned by what family?"), corpus, cfg) == "not_self_contained"


def _llm_reply(self_contained: bool):
    def reply(messages, schema):
        system = messages[0]["content"]
        assert "first two user turns" in system  # the follow-up prompt, not WRITE_QUESTION
        data = json.loads(messages[-1]["content"])
        s1, s2 = data["sentences"]
        topic = data["topics"][0]
        w1 = sorted({w.strip(".,") for w in s1.split() if len(w) > 6})[:2]
        w2 = sorted({w.strip(".,") for w in s2.split() if len(w) > 6})[:2]
        follow = f"What about {' and '.join(w2)} there?"
        return {"first_question": f"What does the {topic} record about {' and '.join(w1)}?",
                "first_answer": " ".join(s1.rstrip(".").split()[-3:]),
                "follow_up": f"What does {topic} say about {' and '.join(w2)}?" if self_contained else follow,
                "answer": " ".join(s2.rstrip(".").split()[-3:]),
                "subject": topic, "standalone": f"What does {topic} say about {' and '.join(w2)}?"}
    return reply


def test_the_llm_writer_has_its_own_prompt(corpus):
    llm = ScriptedLLM(_llm_reply(self_contained=False))
    result = generate(corpus.originals(), LLMWriter(llm), GenConfig(n=3, kinds=(("follow_up", 1.0),), seed=2))
    assert [s.kind for s in result.samples] == ["follow_up"] * 3, result.report.rejected
    for s in result.samples:
        assert s.provenance["prompt"] == f"gen.write_follow_up@{WRITE_FOLLOW_UP.version}"
        assert len(s.conversation) == 3 and s.conversation[-1]["content"] == s.question
    assert all(c.prompt.name == "gen.write_follow_up" for c in llm.calls)
    # A model that names the subject in the follow-up writes nothing that passes.
    named = generate(corpus.originals(), LLMWriter(ScriptedLLM(_llm_reply(self_contained=True))),
                     GenConfig(n=2, kinds=(("follow_up", 1.0),), seed=2, max_attempts=6))
    assert named.samples == [] and named.report.rejected["follow_up_self_contained"] > 0


def test_candidates_are_two_sentences_of_one_document(corpus):
    from ragsweep.gen.candidates import candidates
    from ragsweep.gen.units import corpus_units

    units = corpus_units(corpus, [d.id for d in corpus.documents])
    first = [c for _, c in zip(range(40), candidates(units, "follow_up", 0))]
    assert first and all(isinstance(c, Candidate) and len(c.shown) == 2 for c in first)
    assert all(c.shown[0].doc_id == c.shown[1].doc_id and c.shown[0].index < c.shown[1].index for c in first)


def test_the_rule_writer_writes_no_follow_up_when_the_subject_is_unknown():
    import asyncio

    from ragsweep.gen.documents import Document
    from ragsweep.gen.rules import RuleWriter
    from ragsweep.gen.writer import WriteFailed

    doc = Document("k2", "Marrow founded Tidewright Energy in Port Calder in 2009 with two partners. "
                         "She designed its first turbine prototype in 2011 at the university.")
    units = document_units(doc, 20)
    cand = Candidate("follow_up", (units[0], units[1]), (0, 1))
    draft = asyncio.run(RuleWriter().write(cand, ["Ines Marrow", "Ines Marrow"]))
    assert "she" in draft.question.lower().split() or "her" in draft.question.lower().split()
    # A passage opening with a pronoun has no topic (gen.units.unit_topics): no subject for the pronoun to stand for.
    with pytest.raises(WriteFailed, match="subject is not known"):
        asyncio.run(RuleWriter().write(cand, ["", ""]))
