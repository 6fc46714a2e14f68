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
    ("Written by Ottokar Kernstock, it was sung to the tune of the imperial anthem.", False),
    ("Born and raised in Wrenmouth, he studied physics at Calder University.", False),
    ("A sequel to \"Dawn of the Planet of the Apes\" (2014), it is the third installment.", False),
    ("In 2012, he portrayed Pip in the film adaptation of Great Expectations.", False),
    ("In 2012, Jeremy Irvine portrayed Pip in the film adaptation.", True),
    ("Born to Run is the third studio album by Bruce Springsteen.", True),   # a title, not a participle phrase
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


def test_a_heading_joined_to_the_lead_sentence_is_cut_from_it():
    from ragsweep.gen.units import document_units

    doc = Document("vance.md", "# Teodora Vance\n\nTeodora Vance is the mayor of Port Calder since 2018. "
                               "On the night of the flood Vance ordered the low streets to be evacuated early.")
    units = document_units(doc, 20)
    assert [u.text for u in units] == ["Teodora Vance is the mayor of Port Calder since 2018.",
                                       "On the night of the flood Vance ordered the low streets to be evacuated early."]
    assert all(doc.text[u.start:u.end] == u.text for u in units)
    # a heading alone, or a heading with a short line under it, gives no unit
    assert document_units(Document("h.md", "# Heading only\n\nToo short."), 20) == []


MAYOR = Corpus([
    Document("vance.md", "# Teodora Vance\n\nTeodora Vance is the mayor of Port Calder since 2018. "
                         "She was re-elected in May 2022 with 54 percent of the vote. "
                         "On the night of the flood Vance ordered the low streets to be evacuated early. "
                         "Port Calder raised the harbour wall by 1.2 metres in 2021 after a long public debate."),
    Document("quay.md", "# Old Quay\n\nThe Old Quay is the oldest wharf of Port Calder, built in 1790. "
                        "Ships of up to 4,000 tonnes can berth there at high water. "
                        "The wharf's tide gauge has recorded the water level every hour since 1911."),
], source="mem")


def _subject_writer(question_of):
    """Asks for the document's subject (its heading) of the last shown sentence."""
    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        sentence = data["sentences"][-1]
        doc = next(d for d in MAYOR.documents if sentence in d.text)
        question, answer = question_of(sentence, doc.text.split("\n", 1)[0].lstrip("# "))
        return {"question": question, "answer": answer, "used": [len(data["sentences"])]}
    return LLMWriter(ScriptedLLM(reply))


def test_a_reference_naming_the_documents_subject_gets_the_sentence_that_names_it():
    def subject(sentence, topic):
        if "ordered" in sentence:
            return "Who ordered the low streets of Port Calder to be evacuated on the night of the flood?", topic
        if "tide gauge" in sentence:
            return "Which wharf of Port Calder has a tide gauge recording every hour since 1911?", topic
        if "harbour wall" in sentence:  # names neither the mayor nor refers to her: not hers to answer
            return "Who raised the harbour wall of Port Calder by 1.2 metres in 2021?", topic
        if "Ships" in sentence:
            return "How large can ships berthing at the Old Quay of Port Calder be?", "up to 4,000 tonnes"
        if "1790" in sentence:
            return "In which year was the Old Quay of Port Calder built?", "1790"
        return "In which year did Teodora Vance become mayor of Port Calder?", "2018"

    cfg = GenConfig(n=7, kinds=(("single_hop", 1.0),), seed=0, max_attempts=10, min_sentence_chars=20,
                    gates=GateConfig(roundtrip=False, min_question_words=4, specific=False))
    result = generate(MAYOR, _subject_writer(subject), cfg)
    by_q = {s.question: s for s in result.samples}
    vance = by_q["Who ordered the low streets of Port Calder to be evacuated on the night of the flood?"]
    # "Vance ordered ..." holds only her surname: the lead sentence that names her in full joins the evidence
    assert vance.reference == "Teodora Vance" and vance.provenance["evidence_named"] is True
    assert [MAYOR.get(sp.doc_id).text[sp.start:sp.end] for sp in vance.evidence] == [
        "Teodora Vance is the mayor of Port Calder since 2018.",
        "On the night of the flood Vance ordered the low streets to be evacuated early."]
    quay = by_q["Which wharf of Port Calder has a tide gauge recording every hour since 1911?"]
    assert quay.reference == "Old Quay" and [sp.start for sp in quay.evidence] == [12, 135]  # the lead, the gauge
    # The harbour-wall sentence neither names the mayor nor refers to anyone: her name stays unsupported.
    assert not any("harbour wall" in q for q in by_q)
    assert result.report.rejected["unsupported"] == 1 and len(result.samples) == 5
    assert result.report.examples["unsupported"][0]["question"].startswith("Who raised the harbour wall")


@pytest.mark.parametrize("question, evidence, ordinal", [
    # the packaged 1.5B on HotpotQA: "Seed of Chucky is ... the fifth installment of the Child's Play series"
    ("What is the name of the first installment of the Child's Play series?",
     "Seed of Chucky is a 2004 American film, the fifth installment of the \"Child's Play\" series.", "first"),
    ("What was the second series of the BBC radio show 'Release the Hounds'?",
     "Reggie Yates hosted the ITV2 reality show \"Release the Hounds\" from 2013 until 2017.", "second"),
    ("What is Kansas's fourth live album?", "Device is the 3rd live album by Kansas.", "fourth"),
    ("Who hosted the 57th Filmfare Awards?", "Saif Ali Khan hosted the 56th Filmfare Awards.", "57th"),
    # stated, in words or digits
    ("What is the second solo album by Bob Welch?", "Three Hearts is the 2nd solo album by Bob Welch.", None),
    ("Which country hosted the 4th Pan American Games?", "The fourth Pan American Games were held in Brazil.", None),
    ("What was the first album released by Hector on Stilts?", "Pretty Please is the debut album of Hector on Stilts.",
     None),
    ("Who was the 21st President of the United States?", "Chester A. Arthur was the 21st president.", None),
    # not an ordinal that picks one of a series
    ("Who was born first, Pablo Trapero or Aleksander Ford?", "Pablo Trapero was born in 1971.", None),
    ("When did the Dolphins win the title for the first time?", "The Dolphins won the title in 1972.", None),
])
def test_an_ordinal_the_evidence_does_not_state(question, evidence, ordinal):
    from ragsweep.gen.gates import unstated_ordinal

    assert unstated_ordinal(question, evidence) == ordinal


def test_check_sample_rejects_an_unstated_ordinal():
    text = ALBUMS.get("a").text
    sample = TestSample("s", "What is the name of the first album by the Kestrel Band?", "Night Harbour",
                        (Span("a", 0, len(text)),), "single_hop", {}, (text,))
    assert check_sample(sample, ALBUMS, GateConfig()) == "unstated_ordinal"
    stated = replace(sample, question="What is the name of the second album by the Kestrel Band?")
    assert check_sample(stated, ALBUMS, GateConfig()) is None


@pytest.mark.parametrize("question, reference, given", [
    ("What is the name of the movie Prometheus?", "Prometheus (2012)", True),     # packaged 1.5B, HotpotQA
    ("What is the name of the movie Prometheus?", "Prometheus", True),
    ("Who directed the 2012 film Prometheus?", "Ridley Scott (director)", False),
    ("Who are Chuck and Sarah assigned to train under?", "Craig and Laura Turner (Fred Willard and Swoosie Kurtz)",
     False),
    ("In which year was Prometheus released?", "(2012)", False),                   # only an aside: kept whole
])
def test_a_question_that_gives_its_reference_away(question, reference, given):
    from ragsweep.gen.gates import gives_away

    assert gives_away(question, reference) is given


@pytest.mark.parametrize("question, reference, evidence, inverted", [
    # the packaged 1.5B on HotpotQA, both read as wrong references
    ("Who is Jerry Van Dyke's younger brother?", "Dick Van Dyke",
     "Jerry Van Dyke (born July 27, 1931) is an American comedian and actor, the younger brother of Dick Van Dyke.",
     True),
    ("Who was Beatrice Helen Beckett's first wife?", "Anthony Eden",
     "Beatrice Helen Beckett (27 July 1905 – 29 June 1957) was the first wife of the British statesman Anthony Eden.",
     True),
    # the right way round
    ("Who was Anthony Eden's first wife?", "Beatrice Helen Beckett",
     "Beatrice Helen Beckett (27 July 1905 – 29 June 1957) was the first wife of the British statesman Anthony Eden.",
     False),
    ("Who is Dick Van Dyke's younger brother?", "Jerry Van Dyke",
     "Jerry Van Dyke (born July 27, 1931) is an American comedian and actor, the younger brother of Dick Van Dyke.",
     False),
    ("What is Lil' Mo's fifth studio album?", "The Scarlet Letter",
     "The Scarlet Letter is the fifth studio album by American recording artist Lil' Mo.", False),
])
def test_a_relation_turned_round(question, reference, evidence, inverted):
    from ragsweep.gen.gates import inverted_relation

    assert inverted_relation(question, reference, evidence) is inverted


# HotpotQA's passages glue two Wikipedia articles with no space after the full stop; no title, an opaque id.
GLUED = Corpus([
    Document("k7", "Ring of Fire is a song written by June Carter and Merle Kilgore in 1962.Lil Bit is an American "
                   "rapper from Houston. She signed to the label Big Vault in 2004 after a mixtape. Her second album "
                   "Hard Candy was released in 2011 and reached the Billboard Top 40."),
    Document("k8", "Perth Street Bridge carries the A94 road over the River Tay in the centre of Perth, Scotland."),
], source="mem")


def test_each_article_of_a_glued_passage_has_its_own_topic():
    from ragsweep.gen.units import document_units, unit_topics

    doc = GLUED.get("k7")
    units = document_units(doc, 20)
    assert [u.text[:12] for u in units] == ["Ring of Fire", "Lil Bit is a", "She signed t", "Her second a"]
    assert unit_topics(doc, units) == ["Ring of Fire", "Lil Bit", "Lil Bit", "Lil Bit"]
    # The sentence before is shown as context only from the same article: "Ring of Fire ..." ends another one.
    from ragsweep.gen.candidates import candidates

    topics = {(u.doc_id, u.start): t for u, t in zip(units, unit_topics(doc, units))}
    shown = {c.shown[-1].text[:12]: [u.text[:12] for u in c.shown]
             for c in candidates({"k7": units}, "single_hop", 0, topics, named_subject=False)}
    assert shown["Lil Bit is a"] == ["Lil Bit is a"] and shown["Her second a"] == ["She signed t", "Her second a"]
    loose = {c.shown[-1].text[:12]: [u.text[:12] for u in c.shown]
             for c in candidates({"k7": units}, "single_hop", 0, named_subject=False)}
    assert loose["Lil Bit is a"] == ["Ring of Fire", "Lil Bit is a"]
    # A title or heading keeps one topic: a glued cut there is a section label, not another article.
    titled = Document("4983", "Background: obesity is common in adults (SAP).Methods and Results were then "
                              "compared across nine clinics.", {"title": "Obesity in adults"})
    assert set(unit_topics(titled, document_units(titled, 20))) == {"Obesity in adults"}
    # A passage that opens with a pronoun does not say whom it is about: no topic rather than "He".
    fragment = Document("k9", "He was born in Leeds in 1950 and trained as an architect.Park Avenue is a "
                              "boulevard in New York City that carries north and southbound traffic.")
    assert unit_topics(fragment, document_units(fragment, 20)) == ["", "Park Avenue"]


def test_the_writer_is_shown_the_topic_of_the_sentences_own_article():
    shown = []

    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        shown.append((data["sentences"][-1][:12], data["topics"][-1]))
        sentence, used = data["sentences"][-1], [len(data["sentences"])]
        if "Hard Candy" in sentence:  # "Her": the rapper named two sentences before
            return {"question": "Which rapper from Houston released the album Hard Candy in 2011?",
                    "answer": "Lil Bit", "used": used}
        if "Big Vault" in sentence:
            return {"question": "Which label did the rapper Lil Bit sign to in 2004?", "answer": "Big Vault",
                    "used": used}
        if "Houston" in sentence:
            return {"question": "Which city is the American rapper Lil Bit from?", "answer": "Houston", "used": used}
        return {"question": "Who wrote the 1962 song Ring of Fire with Merle Kilgore?", "answer": "June Carter",
                "used": used}

    cfg = GenConfig(n=4, kinds=(("single_hop", 1.0),), seed=0, max_attempts=6, min_sentence_chars=20,
                    gates=GateConfig(roundtrip=False, specific=False, named_subject=False))
    result = generate(GLUED, LLMWriter(ScriptedLLM(reply)), cfg)
    assert ("Her second a", "Lil Bit") in shown and ("Ring of Fire", "Ring of Fire") in shown
    candy = next(s for s in result.samples if "Hard Candy" in s.question)
    # "Her" refers to the second article's subject, so the sentence naming Lil Bit joins the evidence;
    # with the passage's first article as the topic, the name stayed unsupported.
    assert candy.provenance["evidence_named"] is True
    assert [GLUED.get("k7").text[sp.start:sp.end][:12] for sp in candy.evidence] == ["Lil Bit is a", "Her second a"]


def test_a_follow_up_does_not_join_two_articles_of_a_glued_passage():
    from ragsweep.gen.candidates import candidates
    from ragsweep.gen.units import document_units, unit_topics

    doc = Document("k3", "Arthur Ransome wrote the novel Swallows and Amazons in 1930 in the Lake District. He was "
                         "born in Leeds in 1884 and worked as a journalist in Russia.Swallows and Amazons is a "
                         "children's novel published by Jonathan Cape. It sold 9,000 copies in its first year.")
    units = {"k3": document_units(doc, 20)}
    topics = {("k3", u.start): t for u, t in zip(units["k3"], unit_topics(doc, units["k3"]))}
    assert topics[("k3", units["k3"][2].start)] == "Swallows and Amazons"
    pairs = {tuple(u.text[:10] for u in c.shown) for c in candidates(units, "follow_up", 0, topics)}
    every = {tuple(u.text[:10] for u in c.shown) for c in candidates(units, "follow_up", 0)}
    # "It" is the novel, not Ransome
    across = {("Arthur Ran", "Swallows a"), ("Arthur Ran", "It sold 9,"), ("He was bor", "It sold 9,")}
    assert across <= every and not across & pairs
    assert pairs == every - across and {("Arthur Ran", "He was bor"), ("Swallows a", "It sold 9,")} <= pairs
