"""The llm=none writer: answer phrases, question templates, a whole run on the shipped corpus."""

import asyncio
import statistics

import pytest

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import Corpus, Document, read_shipped
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.wording import lexical_overlap
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.rules import RuleWriter, keyword_question, parse_style, question_for
from ragsweep.gen.testset import check_against
from ragsweep.gen.units import Unit, answer_phrases, corpus_units
from ragsweep.metrics.errors import InputError


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


def test_parse_style():
    assert parse_style(None) is None and parse_style("question") is None
    assert parse_style("keywords") == 5 and parse_style("keywords@3") == 3
    for bad in ("formal", "keywords@0", "keywords@x"):
        with pytest.raises(InputError, match="rule writer"):
            parse_style(bad)


def test_keyword_question_keeps_the_heaviest_words_in_order():
    marked = "Port Calder received its town charter \x01in what year\x01"
    # Content-word keys: port, calde, recei, town, chart ("its" is a stop word).
    weights = {"chart": 3.0, "calde": 2.0, "town": 1.0}
    assert keyword_question(marked, 2, lambda k: weights.get(k, 0.0)) == "Calder charter in what year?"
    assert keyword_question(marked, 3, lambda k: weights.get(k, 0.0)) == "Calder town charter in what year?"
    # Equal weights: the first words win; words after the wh-phrase stay after it.
    assert keyword_question("the \x01what\x01 lanes, across the River Ashby.", 2, lambda k: 0.0) == "What lanes across?"


CORPUS = Corpus([
    Document("a", "The Saltgate Bridge over the River Ashby opened to traffic in 1932 after four years of work."),
    Document("b", "The ferry across the river began carrying traffic in 1921 after the old bridge closed."),
    Document("c", "The town hall near the river was rebuilt in 1950 after a fire destroyed the old building."),
], source="mem")


def test_keywords_style_keeps_the_rare_words_of_the_corpus():
    writer = RuleWriter()
    units = corpus_units(CORPUS, ["a", "b", "c"])
    writer.prepare(units, ("keywords@3",))
    unit = units["a"][0]
    cand = Candidate("single_hop", (unit,), (0,))
    full = asyncio.run(writer.write(cand, ["Saltgate Bridge"], style="question"))
    short = asyncio.run(writer.write(cand, ["Saltgate Bridge"], style="keywords@3"))
    assert full.question == "The Saltgate Bridge over the River Ashby opened to traffic in what year after four years of work?"
    # "river" is in every document, "bridge" and "traffic" in two; the rest in one, the first of them kept.
    assert short.question == "Saltgate Ashby opened in what year?"
    assert short.reference == full.reference == "1932" and short.evidence == full.evidence
    with pytest.raises(InputError):
        writer.prepare(units, ("keywords", "formal"))


def test_keywords_copy_fewer_evidence_words_on_the_shipped_corpus():
    corpus = read_shipped()
    runs = {style: generate(corpus, RuleWriter(), GenConfig(n=12, seed=3, styles=style)) for style in ((), ("keywords",))}

    def shared(result):
        return statistics.mean(lexical_overlap(s.question, [corpus.get(s.evidence[0].doc_id).text]).shared
                               for s in result.samples)

    full, short = runs[()], runs[("keywords",)]
    assert len(short.samples) == 12
    assert all(s.provenance["style"] == "keywords" for s in short.samples)
    assert all(0 <= s.provenance["overlap"] <= 1 for s in short.samples + full.samples)
    assert all(len(s.question.split()) < len(f.question.split()) for s, f in zip(short.samples, full.samples)
               if s.provenance["candidate"] == f.provenance["candidate"])
    assert shared(short) < shared(full) - 2  # about 5 words copied against about 9
    check_against(short.samples, corpus)


def test_overlap_cap_rejects_and_is_reported():
    corpus = read_shipped()
    capped = generate(corpus, RuleWriter(), GenConfig(n=6, seed=3, gates=GateConfig(max_overlap=0.9)))
    assert len(capped.samples) == 6
    assert all(s.provenance["overlap"] <= 0.9 for s in capped.samples)
    assert capped.report.rejected["high_overlap"] > 0
    summary = capped.report.to_dict()["overlap"]
    assert summary["n"] == 6 and summary["mean"] <= 0.9
