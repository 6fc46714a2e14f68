"""Questions that ask for a fact about one thing: the specificity gate (a question whose every content word
another document also holds does not say which document it asks about: ``unspecific``) and the definition
gate ("Who was Kevin Mark DuBrow?" has no answer but a restated sentence: ``definition``)."""

import json
from dataclasses import replace

import pytest

from ragsweep.gen.absence import CorpusWords, unspecific
from ragsweep.gen.documents import Corpus, Document
from ragsweep.gen.documents import Span
from ragsweep.gen.gates import GateConfig, check_sample, definition_question
from ragsweep.gen.testset import TestSample
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

ALBUMS = Corpus([
    Document("a", "Night Harbour is the second album by the Kestrel Band. The album was released in 1994 on a small "
                  "label in Leeds after two years of recording."),
    Document("b", "Paper Lanterns is an album by the singer Ada Morrow. The album was released in 2003 in Leeds and "
                  "reached the top ten in Ireland within a month."),
    Document("c", "The Kestrel Band is an English rock group from Leeds, formed by three brothers who met at school."),
], source="mem")


def test_the_documents_holding_every_word_by_hand():
    words = CorpusWords(ALBUMS)
    assert words.holding_all({"album", "relea"}) == {"a", "b"}
    assert words.holding_all({"album", "kestr"}) == {"a"}
    assert words.holding_all({"album", "nowhere"}) == set() and words.holding_all(set()) == set()


@pytest.mark.parametrize("question, evidence, other", [
    ("When was the album released?", {"a"}, "b"),                           # both albums were released
    ("When was the album Night Harbour released?", {"a"}, None),             # named: only a says so
    ("Which English rock group formed in Leeds?", {"c"}, None),
    ("Where is the Kestrel Band from?", {"c"}, "a"),                         # a names the band too
    ("Where is the Kestrel Band from?", {"a", "c"}, None),                   # ... unless it is evidence
])
def test_a_question_another_document_answers_as_well_is_unspecific(question, evidence, other):
    assert unspecific(question, evidence, CorpusWords(ALBUMS)) == other


def _writer(question_of):
    """Writes ``question_of(document id)`` about the shown sentence; the answer is its last three words."""
    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        sentence = data["sentences"][-1]
        doc = next(d.id for d in ALBUMS.documents if sentence in d.text)
        return {"question": question_of(doc, sentence), "answer": " ".join(sentence.rstrip(".").split()[-3:]),
                "used": [len(data["sentences"])]}
    return LLMWriter(ScriptedLLM(reply))


def test_generate_rejects_an_unspecific_question_and_reports_the_other_document():
    def vague(doc, sentence):  # vague for the release sentences, named for the others
        if "released" in sentence:  # names Leeds, which both release sentences name
            return "When was the album released in Leeds?"
        return {"a": "Which band recorded Night Harbour over two years?", "b": "Who is the singer Ada Morrow?",
                "c": "How did the brothers of the Kestrel Band meet?"}[doc]

    # named_subject off: "The album was released ..." names no album, so by default it is never asked at all
    # (test_a_sentence_that_does_not_name_its_subject_is_not_asked); here the gate after the writer is tested.
    cfg = GenConfig(n=6, kinds=(("single_hop", 1.0),), seed=1, max_attempts=40, min_sentence_chars=20,
                    gates=GateConfig(roundtrip=False, min_question_words=4, named_subject=False))
    result = generate(ALBUMS, _writer(vague), cfg)
    assert result.samples and all("released" not in s.question for s in result.samples)
    assert result.report.rejected["unspecific"] >= 1
    example = next(e for e in result.report.examples["unspecific"])
    assert example["question"].startswith("When was the album released") and example["unspecific_doc"] in {"a", "b"}

    off = GenConfig(n=6, kinds=cfg.kinds, seed=1, max_attempts=40, min_sentence_chars=20,
                    gates=GateConfig(roundtrip=False, min_question_words=4, specific=False, named_subject=False))
    loose = generate(ALBUMS, _writer(vague), off)
    assert any("released" in s.question for s in loose.samples) and loose.report.rejected["unspecific"] == 0


def test_the_gen_config_reads_both_switches():
    from hydra import compose, initialize_config_module

    from ragsweep.gen.app import gen_config

    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        on = compose(config_name="gen", overrides=["llm=none"])
        off = compose(config_name="gen", overrides=["llm=none", "gates.specific=false", "gates.definitions=true"])
    assert (gen_config(on, 1).gates.specific, gen_config(on, 1).gates.definitions) == (True, False)
    assert (gen_config(off, 1).gates.specific, gen_config(off, 1).gates.definitions) == (False, True)


@pytest.mark.parametrize("question, definition", [
    ("Who was Kevin Mark DuBrow?", True),
    ("What are CTCF and Cohesin?", True),
    ("What is Canty Bay known for?", True),
    ("What is IL-6?", True),
    ("Who is Yulia Zagoruychenko's dance partner?", False),        # people's questions (HotpotQA)
    ("Who is an American musician, Peter Chelsom or Billy Bob Thornton?", False),
    ("Who was the first president of Ghana?", False),
    ("What is Kruppel-like factor 2 (KLF2) and how does it regulate inflammation?", False),
    ("What is the 2013 Conference USA men's soccer season called?", False),
])
def test_a_definition_question_by_hand(question, definition):
    assert definition_question(question) is definition


def test_the_definition_gate_rejects_unless_definitions_are_asked_for():
    text = ALBUMS.get("c").text
    sample = TestSample("s", "Who is the Kestrel Band?", "an English rock group from Leeds",
                        (Span("c", 0, len(text)),), "single_hop", {}, (text,))
    assert check_sample(sample, ALBUMS, GateConfig(min_question_words=4)) == "definition"
    assert check_sample(sample, ALBUMS, GateConfig(min_question_words=4, definitions=True)) is None


@pytest.mark.parametrize("question, reference, restated", [
    ("What was the critical success of the album 'Shotgun Willie'?",
     "The album 'Shotgun Willie' (1973) was critically successful.", True),       # packaged 1.5B, HotpotQA
    ("What was the title of the I'Anson Baronetcy of Bassetbury?",
     "The I'Anson Baronetcy of Bassetbury was a title in the Baronetage of England.", True),
    ("When was the album Night Harbour released?", "1994", False),
    ("Who produced the movie 'Annoying Orange'?", "Daneboe's company Annoying Orange, Inc.", False),  # adds the answer
    ("What is IL-6?", "IL-6 is an interleukin.", False),                      # too few words to tell
])
def test_a_reference_that_restates_its_question_by_hand(question, reference, restated):
    from ragsweep.gen.gates import restates

    assert restates(question, reference) is restated


def test_check_sample_rejects_a_restating_reference():
    text = ALBUMS.get("a").text
    sample = TestSample("s", "When was the second album by the Kestrel Band released?",
                        "The second album by the Kestrel Band was released in 1994.",
                        (Span("a", 0, len(text)),), "single_hop", {}, (text,))
    assert check_sample(sample, ALBUMS, GateConfig()) == "restated"
    answer = TestSample("s", sample.question, "in 1994", sample.evidence, "single_hop", {}, sample.quotes)
    assert check_sample(answer, ALBUMS, GateConfig()) is None


@pytest.mark.parametrize("question, reference, partial", [
    ("Which actress is best known for her films from the 1980s Korean cinema?", "Lee", True),   # packaged 1.5B
    ("Who was named the Most Valuable Player of Super Bowl XLVIII?", "Smith", True),
    ("What is the name of the player who scored the winning goal?", "Müller.", True),
    ("Who composed A Bayou Legend?", "William Grant Still", False),
    ("Which band released the album Nevermind?", "Nirvana", False),            # not a person
    ("Who developed the vaccine?", "GSK", False),                              # an acronym
    ("When was Smith named the most valuable player?", "2014", False),
])
def test_a_bare_surname_for_a_person_by_hand(question, reference, partial):
    from ragsweep.gen.gates import bare_surname

    assert bare_surname(question, reference) is partial


def test_check_sample_rejects_a_bare_surname():
    text = "Kestrel was the band's drummer for ten years. Later Kestrel founded a record label in Leeds."
    corpus = Corpus([Document("k", text)], source="mem")
    sample = TestSample("s", "Who founded a record label in Leeds after drumming?", "Kestrel",
                        (Span("k", 0, len(text)),), "single_hop", {}, (text,))
    assert check_sample(sample, corpus, GateConfig()) == "partial_name"


# --- sentences that do not name their subject (gen.units.names_subject; gates.named_subject) ---------------


@pytest.mark.parametrize("sentence, named", [
    ("Night Harbour is the second album by the Kestrel Band.", True),
    ("The Kestrel Band is an English rock group from Leeds.", True),
    ("The 2013 Conference USA season was the 19th season of soccer in the conference.", True),
    ("In 1994 the band moved to Leeds.", True),
    ("It is included on his major label debut album, Remington.", False),
    ("She also performed alongside the Beatles in their film.", False),
    ("Their debut album was released in 2006.", False),
    ("The album was released in 1994 on a small label.", False),
    ("The car, built in 1991, was powered by a V8 engine.", False),
    ("Created by Richard Levinson and William Link, the series ran for eight seasons.", False),
    ("Located in Leeds, the studio opened in 1990.", False),
    ("Sterling Heights is a city in Michigan.", True),              # a name ending in -ing
    ("Reading is a town in Berkshire, England.", True),            # ... not followed by a preposition
])
def test_names_subject(sentence, named):
    from ragsweep.gen.units import names_subject

    assert names_subject(sentence) is named


def test_a_sentence_that_does_not_name_its_subject_is_not_asked():
    asked: list[str] = []

    def record(doc, sentence):
        asked.append(sentence)
        return {"a": "Which band recorded Night Harbour over two years?", "b": "Who is the singer Ada Morrow?",
                "c": "How did the brothers of the Kestrel Band meet?"}[doc]

    cfg = GenConfig(n=6, kinds=(("single_hop", 1.0),), seed=1, max_attempts=40, min_sentence_chars=20,
                    gates=GateConfig(roundtrip=False, min_question_words=4))
    result = generate(ALBUMS, _writer(record), cfg)
    assert asked and not any(s.startswith("The album was released") for s in asked)
    assert {s.startswith(("Night Harbour", "Paper Lanterns", "The Kestrel Band")) for s in asked} == {True}
    # 5 sentences in all, 2 of them "The album was released ...": counted in the report, not asked
    assert result.report.units == {"sentences": 5, "unnamed_subject": 2, "left_out": 2}
    assert result.report.to_dict()["sentence_units"] == result.report.units
    # Short of questions, the end-of-run line says which sentences were not asked, and how to ask them.
    assert result.report.accepted < 6
    assert "(2 of its 5 sentences were not asked: they do not name their subject; gates.named_subject=false" \
        in result.report.message()
    asked.clear()
    generate(ALBUMS, _writer(record), replace(cfg, gates=replace(cfg.gates, named_subject=False)))
    assert any(s.startswith("The album was released") for s in asked)       # off: asked as before


def test_a_context_sentence_that_does_not_name_its_subject_is_not_shown():
    from ragsweep.gen.candidates import candidates
    from ragsweep.gen.units import corpus_units

    corpus = Corpus([Document("d", "The car was powered by a Cosworth V8 engine and ran on Pirelli tyres. "
                                   "Pirelli is a tyre company based in Milan, Italy, founded in 1872.")], source="mem")
    units = corpus_units(corpus, ["d"], 20)
    shown = [[u.text[:10] for u in c.shown] for c in candidates(units, "single_hop", 0)]
    assert shown == [["Pirelli is"]]                                    # asked alone, the car not shown
    loose = [[u.text[:10] for u in c.shown] for c in candidates(units, "single_hop", 0, named_subject=False)]
    assert sorted(loose) == [["The car wa"], ["The car wa", "Pirelli is"]]
