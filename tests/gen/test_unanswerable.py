"""Unanswerable questions: both writers write them, their answer is in no document (words and
embeddings), retrieval metrics skip them and `ragsweep score` rewards the refusal."""

from __future__ import annotations

import asyncio
import csv
import itertools
import json

import numpy as np
import pytest
from ragsweep.gen.absence import AbsenceCheck, anchors, question_words
from ragsweep.gen.candidates import Candidate
from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.documents import Corpus, Document, read_shipped
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.prompts import WRITE_UNANSWERABLE
from ragsweep.gen.rules import _WH_MARK, RuleWriter, swap_anchor
from ragsweep.gen.testset import read_testset
from ragsweep.gen.units import Unit
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import ScriptedLLM
from ragsweep.metrics.offline import content_words
from ragsweep.metrics.refusal import UNANSWERABLE, declines, is_unanswerable, refusal
from ragsweep.metrics.retrieval import NO_RELEVANT
from ragsweep.metrics.scoring import score_samples

N = 30  # the default mix with llm=none, follow-ups off: single_hop 0.4 and unanswerable 0.1 -> 24 and 6


@pytest.fixture(scope="module")
def corpus():
    return read_shipped()


@pytest.fixture(scope="module")
def generated(tmp_path_factory, ragsweep):
    cwd = tmp_path_factory.mktemp("unanswerable")
    out = cwd / "ts.jsonl"
    done = ragsweep("gen", "llm=none", f"n={N}", "kinds.follow_up=0", f"out={out}", "progress=false", cwd=cwd,
                    cache=cwd / "cache")
    assert done.returncode == 0, done.stderr[-3000:]
    samples = read_testset(out)
    return cwd, samples, [s for s in samples if s.kind == "unanswerable"], done


@pytest.fixture(scope="module")
def minilm():
    from ragsweep.metrics.embedding import OnnxMiniLM

    return OnnxMiniLM().embed


def _holders(corpus: Corpus, value: str) -> list[Document]:
    return [d for d in corpus.documents if value.lower() in d.text.lower()]


def test_the_default_mix_writes_them_and_the_report_counts_them(generated):
    cwd, samples, unanswerable, done = generated
    report = json.loads((cwd / "ts.report.json").read_text())
    assert len(samples) == N and len(unanswerable) == 6
    assert report["accepted_by_kind"] == {"single_hop": 24, "unanswerable": 6}
    assert report["kinds_configured"]["unanswerable"] == 0.1
    assert report["gates"]["absent_cover"] == 0.75 and report["gates"]["definitions"] is False
    assert report["tried_by_kind"]["unanswerable"] >= 6
    assert report["overlap"]["n"] == 24  # no evidence, no overlap
    assert "unanswerable: 6 accepted" in done.stdout and "by kind: single_hop=24, unanswerable=6" in done.stdout
    for s in unanswerable:
        assert s.evidence == () and s.reference == UNANSWERABLE
        swap = s.provenance["swap"]
        assert swap["to"] in s.question and swap["from"] not in s.question
        assert s.provenance["absence"]["cosine"] is not None  # the embedding check ran


def test_their_answer_is_in_no_document_by_words(generated, corpus):
    """The swapped-in value never stands in a document beside most of the question's other words,
    and the sentence's own document does not hold it at all."""
    *_, unanswerable, _ = generated
    for s in unanswerable:
        new = s.provenance["swap"]["to"]
        source = s.provenance["candidate"].split(":", 1)[1].split("@")[0]
        holders = _holders(corpus, new)
        assert source not in {d.id for d in holders}, s.question
        words = set(content_words(s.question))
        for doc in holders:
            share = len(words & set(content_words(doc.text))) / len(words)
            assert share < 0.75, (s.question, doc.id, share)


def test_their_answer_is_in_no_document_by_embeddings(generated, corpus, minilm):
    """No sentence of a document holding the swapped-in value comes close to the question (MiniLM),
    and the closest sentence of the corpus, the question's own frame, states another value."""
    *_, unanswerable, _ = generated
    sentences = [(d.id, d.text[a:b]) for d in corpus.documents for a, b in sentence_spans(d.text)]
    rows = minilm([t for _, t in sentences])
    questions = minilm([s.question for s in unanswerable])
    for s, q in zip(unanswerable, questions):
        cosine = rows @ q
        new = s.provenance["swap"]["to"]
        holders = {d.id for d in _holders(corpus, new)}
        close = [(sentences[i], float(cosine[i])) for i in np.flatnonzero(cosine >= 0.8)]
        assert not [c for c in close if c[0][0] in holders], (s.question, close)
        nearest = sentences[int(np.argmax(cosine))][1]
        assert new.lower() not in nearest.lower(), (s.question, nearest)


def test_the_gate_rejects_every_answerable_question_of_the_same_set(generated, corpus, minilm):
    """Not a vacuous gate: asked of the single_hop questions (whose answer is in the corpus), it rejects all."""
    *_, samples, _, _ = generated
    check = AbsenceCheck(corpus, minilm)
    answerable = [s for s in samples if s.kind == "single_hop"]
    verdicts = [check.check(s.question) for s in answerable]
    assert all(v.reason == "answer_in_corpus" for v in verdicts), [
        (s.question, v) for s, v in zip(answerable, verdicts) if v.reason is None]


CORPUS = Corpus([
    Document("port", "Port Calder handled 9,400 tonnes of fish in 2019. Its council has 45 members."),
    Document("ferry", "Calder Ferries carried 1.3 million passengers in 2023."),
    Document("staff", "The harbour employed 300 people in 2015, most of them on the quays."),
], source="mem")


def test_gate_rejects_an_answer_in_another_document_and_keeps_a_swapped_one():
    check = AbsenceCheck(CORPUS)
    found = check.check("How many passengers did Calder Ferries carry in 2023?")
    assert found.reason == "answer_in_corpus" and found.check == "words" and found.cover_doc == "ferry"
    assert set(found.anchors) == {"calde", "ferri", "2023"}
    absent = check.check("How many passengers did Calder Ferries carry in 2017?")
    assert absent.reason is None and absent.cover == 0.0  # no document names 2017
    assert absent.cosine is None  # no embedder: the word check only
    # A first word counts as a name only when the corpus writes it capitalised inside a sentence.
    assert "calde" in anchors("Calder Ferries carried how many passengers?", check.names)
    assert "how" not in question_words("How many tonnes?") and "year" not in question_words("In what year?")


def test_a_document_about_the_anchor_answers_with_fewer_shared_words():
    """HotpotQA, 1.5B writer: "What year was the film Breach released?" passed as unanswerable against a
    document opening "Breach is a 2007 American ... film" (2 of its 3 words, below cover 0.75)."""
    from ragsweep.gen.documents import Corpus, Document

    corpus = Corpus([Document("k1614", "Breach is a 2007 American historical and political thriller film "
                                        "directed by Billy Ray."),
                     Document("k1362", "The London Avenue Canal is a drainage canal in New Orleans, Louisiana, "
                                       "used for pumping rain water into Lake Pontchartrain. Its flood walls "
                                       "failed in a breach in 2005, and film crews filmed the damage.")], "mem")
    verdict = AbsenceCheck(corpus).check("What year was the film Breach released?")
    assert verdict.reason == "answer_in_corpus" and verdict.cover_doc == "k1614"
    assert verdict.cover == pytest.approx(2 / 3)
    # With about_cover at cover the rule is off; a document that names the anchor only later gets cover.
    assert AbsenceCheck(corpus, about_cover=0.75).check("What year was the film Breach released?").reason is None
    later = Corpus([corpus.get("k1362")], "mem")
    assert AbsenceCheck(later).check("What year was the film Breach released?").reason is None
    assert "name" not in question_words("What is the name of the movie Krantiveer?")


def test_gate_rejects_a_paraphrase_by_embedding():
    """Words miss "staff"/"employed"; a sentence of a document naming 2015 is close in meaning."""
    def embed(texts):
        return np.array([[1.0, 0.0] if ("employed" in t or "staff" in t) else [0.0, 1.0] for t in texts])

    question = "How many staff worked in the port in 2015?"
    assert AbsenceCheck(CORPUS).check(question).reason is None
    verdict = AbsenceCheck(CORPUS, embed).check(question)
    assert verdict.reason == "answer_in_corpus" and verdict.check == "embedding" and verdict.cosine_doc == "staff"
    assert AbsenceCheck(CORPUS, embed).check("How many staff worked in the port in 2011?").reason is None


def test_swaps_key_the_asked_fact():
    mark = _WH_MARK
    year = swap_anchor(f"During the 2019 flood the warning came {mark}how many minutes{mark} before high water", 3, [])
    assert year == (f"During the 2015 flood the warning came {mark}how many minutes{mark} before high water",
                    "2019", "2015")
    number = swap_anchor(f"The market handled 9,400 tonnes of fish {mark}in what year{mark}", 0, [])
    assert number is not None and number[1:] == ("9,400 tonnes", "18,800 tonnes")
    # A number beside an asked number, a detail in another clause, "a 1931 film": nothing to swap.
    assert swap_anchor(f"The ship carries {mark}how many passengers{mark} and 60 cars", 0, []) is None
    assert swap_anchor(f"Built in 1997, the ship carries {mark}how many passengers{mark}", 0, []) is None
    assert swap_anchor(f"Dracula is a 1931 film starring {mark}what{mark}", 0, []) is None
    # A name for a name with the same head word, never one the sentence already holds.
    names = ["Hollin Island", "Ashby Swing Bridge", "Saltgate Bridge"]
    entity = swap_anchor(f"Saltgate Bridge opened {mark}in what year{mark}", 0, names)
    assert entity is not None and entity[1:] == ("Saltgate Bridge", "Ashby Swing Bridge")


def test_rule_writer_is_deterministic():
    text = "The market handled 9,400 tonnes of fish and shellfish in 2019, a fifth of it by lorry."
    cand = Candidate("unanswerable", (Unit("d", 0, len(text), text, 0),), (0,))
    a = asyncio.run(RuleWriter().write(cand, ["Fish market"]))
    b = asyncio.run(RuleWriter().write(cand, ["Fish market"]))
    assert a.question == b.question and a.reference == UNANSWERABLE and a.evidence == ()
    assert a.provenance["swap"]["from"] in text and a.provenance["swap"]["to"] not in text


def test_kinds_can_be_turned_off():
    corpus = read_shipped()
    on = generate(corpus, RuleWriter(), GenConfig(n=10, kinds=(("single_hop", 0.4), ("unanswerable", 0.1)), seed=1))
    off = generate(corpus, RuleWriter(), GenConfig(n=10, kinds=(("single_hop", 0.4), ("unanswerable", 0.0)), seed=1))
    assert on.report.accepted_by_kind == {"single_hop": 8, "unanswerable": 2}
    assert off.report.accepted_by_kind == {"single_hop": 10} and "unanswerable" not in off.report.tried_by_kind
    assert off.report.unanswerable_line() is None


def _writer():
    """A scripted writer: every other reply asks what its sentence states (the gate must catch it)."""
    calls = itertools.count(1)

    def reply(messages, schema):
        assert "missing" in schema.model_fields  # only unanswerable candidates in this test
        data = json.loads(messages[-1]["content"])
        if next(calls) % 2:
            return {"question": "Is it true that " + data["sentences"][-1].rstrip(".") + "?", "missing": "nothing"}
        return {"question": f"How many lifeboats did {data['topics'][0]} own in 1850?", "missing": "the lifeboats"}

    return ScriptedLLM(reply)


def test_llm_writer_uses_its_own_prompt_and_the_gate_catches_a_copied_sentence():
    corpus = read_shipped()
    llm = _writer()
    result = generate(corpus, LLMWriter(llm), GenConfig(n=4, kinds=(("unanswerable", 1.0),), seed=0,
                                                        gates=GateConfig(dup_cosine=0.99)))
    assert [s.kind for s in result.samples] == ["unanswerable"] * 4
    for s in result.samples:
        assert s.reference == UNANSWERABLE and s.evidence == ()
        assert s.provenance["prompt"] == f"gen.write_unanswerable@{WRITE_UNANSWERABLE.version}"
        assert s.provenance["missing"] == "the lifeboats"
    assert any("sentences" in c.messages[-1]["content"] for c in llm.calls)
    assert result.report.rejected["answer_in_corpus"] >= 4  # every copied sentence
    examples = result.report.examples["answer_in_corpus"]
    assert all(e["absence"]["check"] == "words" for e in examples)


def test_a_testset_line_without_evidence_must_be_unanswerable(tmp_path):
    path = tmp_path / "ts.jsonl"
    path.write_text(json.dumps({"id": "u", "question": "q?", "reference": UNANSWERABLE, "evidence": [],
                                "kind": "unanswerable"}) + "\n")
    assert read_testset(path)[0].evidence == ()
    path.write_text(json.dumps({"id": "s", "question": "q?", "reference": "r", "evidence": []}) + "\n")
    with pytest.raises(InputError, match="only kind 'unanswerable' has none"):
        read_testset(path)


# ---- metrics: retrieval undefined, refusal scored --------------------------------------------------


def test_retrieval_metrics_are_undefined_without_evidence():
    names = ["ndcg@10", "recall@10", "mrr@10", "map@10", "hit@10", "precision@5", "span_recall", "span_iou"]
    # n_relevant=1 as `ragsweep run` pools it (at least one): the empty evidence must still win.
    sample = RagSample("u", question="q", retrieved=(("port", 0, 40), ("ferry", 0, 30)), top_k=2,
                       evidence=(), n_relevant=1)
    scored = asyncio.run(score_samples([sample], resolve(names), progress=False))
    for s in scored:
        assert s.result.status == "undefined" and s.result.value is None, s.metric
        assert s.result.explanation["reason"] == NO_RELEVANT


@pytest.mark.parametrize("answer, value", [
    ("I don't know.", 1.0),
    ("The context does not mention how many lifeboats the harbour owned.", 1.0),
    ("That is not in the knowledge base.", 1.0),
    ("I could not find this in the documents.", 1.0),
    ("There is no information about the 2014 flood in the sources.", 1.0),
    ("Unknown", 1.0),
    ("The harbour owned 12 lifeboats in 1850.", 0.0),
    ("In 2014 the warning came 25 minutes before high water.", 0.0),
])
def test_refusal_metric(answer, value):
    out = refusal(answer, "Not in the knowledge base.")
    assert out.status == "ok" and out.value == value
    assert (declines(answer) is not None) == (value == 1.0)
    assert refusal(answer, "1921").status == "undefined"
    assert is_unanswerable(" not in the knowledge base ") and not is_unanswerable("not in the base")


def test_score_ranks_a_refusal_above_a_made_up_answer(generated, ragsweep):
    cwd, samples, unanswerable, _ = generated
    refusals = ["I don't know.", "The documents do not mention it.", "That is not in the knowledge base."]
    rows = []
    for i, s in enumerate(unanswerable):
        rows.append({"id": f"{s.id}-refuses", "question": s.question, "answer": refusals[i % 3],
                     "reference": s.reference})
        rows.append({"id": f"{s.id}-invents", "question": s.question, "answer": "It was 1921, with 45 members.",
                     "reference": s.reference})
    answerable = next(s for s in samples if s.kind == "single_hop")
    rows.append({"id": answerable.id, "question": answerable.question, "answer": answerable.reference,
                 "reference": answerable.reference})
    with (cwd / "answers.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    for args in ([], ["metrics=[refusal,factual_correctness,token_f1]"]):
        out = f"out{len(args)}"
        done = ragsweep("score", "input=answers.csv", "llm=none", "progress=false", f"out={out}", *args,
                        cwd=cwd, cache=cwd / "cache")
        assert done.returncode == 0, done.stderr[-3000:]
        with (cwd / out / "result.csv").open(newline="") as fh:
            result = {r["id"]: r for r in csv.DictReader(fh)}
        with (cwd / out / "summary.csv").open(newline="") as fh:
            summary = {r["metric"]: r for r in csv.DictReader(fh)}
        for s in unanswerable:
            assert float(result[f"{s.id}-refuses"]["refusal"]) == 1.0
            assert float(result[f"{s.id}-invents"]["refusal"]) == 0.0
            for metric in ("token_f1", *(["factual_correctness"] if args else [])):
                assert result[f"{s.id}-invents"][f"{metric}_status"] == "undefined"
        assert result[answerable.id]["refusal_status"] == "undefined"
        assert result[answerable.id]["token_f1_status"] == "ok"
        refused = summary["refusal"]
        assert float(refused["mean"]) == 0.5 and refused["n_ok"] == str(2 * len(unanswerable))
        assert refused["n_undefined"] == "1"
    explanations = [json.loads(line) for line in (cwd / "out1" / "explanations.jsonl").read_text().splitlines()]
    why = next(e for e in explanations if e["metric"] == "factual_correctness" and e["status"] == "undefined")
    assert "unanswerable" in why["explanation"]["reason"] and "refusal" in why["explanation"]["reason"]


def test_the_round_trip_rejects_an_unanswerable_question_its_own_sentences_answer():
    """The 1.5B asked "What is the distance between Brierfield railway station and Burnley Central railway
    station?" of the very sentence that gives it; the word check (5 of 7 words) let it through."""
    corpus = Corpus([
        Document("k915", "Brierfield railway station serves the small town of Brierfield, Lancashire, England and is "
                         "on the East Lancashire Line 2+1/4 mi east of Burnley Central railway station towards Colne."),
        Document("k16", "Colne is a market town in Lancashire, England, at the end of the East Lancashire Line."),
    ], source="mem")
    questions = {"k915": "What is the distance between Brierfield railway station and Burnley Central railway station?",
                 "k16": "In which year did the market in Colne first receive its charter?"}
    asked = []

    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        if "missing" in schema.model_fields:  # the writer
            doc = "k915" if "Brierfield" in data["sentences"][0] else "k16"
            return {"question": questions[doc], "missing": "a fact"}
        asked.append((data["question"], data["sentences"]))  # the round trip: answers only what its sentences say
        return {"answer": "2+1/4 mi" if "Brierfield" in data["question"] else "not stated"}

    llm = ScriptedLLM(reply)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=2, kinds=(("unanswerable", 1.0),), seed=0,
                                                        max_attempts=4, min_sentence_chars=20), judge=llm)
    assert [s.question for s in result.samples] == [questions["k16"]]
    kept = result.samples[0]
    assert kept.reference == UNANSWERABLE and kept.provenance["roundtrip"] == {"answer": "not stated", "declined": True}
    # asked of the sentences the writer was shown, not of evidence (it has none)
    assert (questions["k915"], [corpus.get("k915").text]) in asked
    assert result.report.rejected["answer_in_corpus"] == 1
    assert result.report.examples["answer_in_corpus"][0]["roundtrip"] == {"answer": "2+1/4 mi", "declined": False}
    assert result.report.roundtrip["answered_unanswerable"] == 1
