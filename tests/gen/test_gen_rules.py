"""The llm=none writer: answer phrases, question templates, a whole run on the shipped corpus."""

import asyncio

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import read_shipped
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.rules import RuleWriter, question_for
from ragsweep.gen.testset import check_against
from ragsweep.gen.units import Unit, answer_phrases


def test_answer_phrases_find_dates_years_numbers_and_entities():
    s = "The Calder Harbour Act of 1921 gave 45 members a vote on 3 May 1922, at a cost of £24."
    got = [(p.kind, p.text) for p in answer_phrases(s)]
    assert ("entity", "Calder Harbour Act") in got
    assert ("year", "1921") in got
    assert ("number", "45 members") in got
    assert ("date", "3 May 1922") in got
    assert ("number", "£24") in got


def test_question_templates():
    s = "Calder Ferries moved to its present terminal in Ferrybank in 1963."
    year = next(p for p in answer_phrases(s) if p.kind == "year")
    assert question_for(s, year, "Calder Ferries") == "Calder Ferries moved to its present terminal in Ferrybank in what year?"
    s = "In 2022 the array generated 58 gigawatt-hours of electricity."
    year = next(p for p in answer_phrases(s) if p.kind == "year")
    assert question_for(s, year, "Array") == "The array generated 58 gigawatt-hours of electricity in what year?"
    s = "It received its town charter in 1687."
    year = next(p for p in answer_phrases(s) if p.kind == "year")
    assert question_for(s, year, "Port Calder") == "Port Calder received its town charter in what year?"


def test_rule_writer_is_deterministic_and_leaves_out_the_answer():
    text = "Port Calder is governed by a directly elected mayor and a city council of 45 members."
    cand = Candidate("single_hop", (Unit("d", 0, len(text), text, 0),), (0,))
    a = asyncio.run(RuleWriter().write(cand, ["Port Calder"]))
    b = asyncio.run(RuleWriter().write(cand, ["Port Calder"]))
    assert a.question == b.question and a.reference == b.reference
    assert a.reference.lower() not in a.question.lower()
    assert a.evidence == cand.shown


def test_rules_run_on_shipped_corpus():
    corpus = read_shipped()
    cfg = GenConfig(n=12, kinds=(("single_hop", 1.0), ("multi_hop", 1.0)), seed=3)
    first = generate(corpus, RuleWriter(), cfg)
    assert len(first.samples) == 12
    assert {s.kind for s in first.samples} == {"single_hop"}  # rules write factual questions only
    check_against(first.samples, corpus)
    for s in first.samples:
        for span, quote in zip(s.evidence, s.quotes):
            assert corpus.get(span.doc_id).text[span.start:span.end] == quote
        assert s.provenance["backend"] == "rules" and s.provenance["seed"] == 3
    again = generate(corpus, RuleWriter(), cfg)
    assert [s.question for s in again.samples] == [s.question for s in first.samples]
    assert len({s.question for s in first.samples}) == 12
