"""References with their citations (gen.citing): per reference sentence, the evidence spans it rests on."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ragsweep.gen.citing import cite_reference
from ragsweep.gen.testset import TestSample, read_testset
from ragsweep.metrics.errors import InputError

SPANS = ["The Harbour Bridge opened in 1932 and was designed by Ada Kerr.",
         "Ada Kerr was born in Leeds in 1890.",
         "The harbour ferry runs every hour between the two piers."]


def test_each_sentence_cites_the_spans_it_rests_on():
    assert cite_reference("The bridge opened in 1932.", SPANS) == ((0,),)
    assert cite_reference("Ada Kerr was born in 1890.", SPANS) == ((1,),)
    # a sentence that needs two spans cites both; each sentence of a reference gets its own list
    assert cite_reference("The bridge opened in 1932. Its designer Ada Kerr was born in Leeds.", SPANS) == \
        ((0,), (0, 1))
    assert cite_reference("Ada Kerr designed the Harbour Bridge, and she was born in Leeds.", SPANS) == ((0, 1),)


def test_a_sentence_no_span_supports_cites_none():
    assert cite_reference("The tunnel closed in 1999.", SPANS) == ((),)  # a date no span states
    assert cite_reference("Yes.", SPANS) == ((),)  # no content word: every span would pass it
    assert cite_reference("The bridge opened in 1932.", []) == ((),)


def test_the_question_is_not_evidence_for_a_reference_sentence():
    # As the citation metrics check a citation: the spans alone must support the sentence. The question
    # names the North Pier terminal; no span says when it opened, so nothing supports "before" it.
    from ragsweep.gen.citing import with_reference_citations
    from ragsweep.gen.corpus import Corpus, Document, Span

    text = " ".join(SPANS)
    spans = []
    for s in SPANS:
        start = text.index(s)
        spans.append(Span("d", start, start + len(s)))
    sample = TestSample("a", "Which opened first, the Harbour Bridge or the North Pier terminal?",
                        "The Harbour Bridge opened in 1932, before the North Pier terminal.", tuple(spans))
    corpus = Corpus([Document("d", text)], source="test")
    assert with_reference_citations([sample], corpus)[0].reference_citations == ((),)
    told = replace(sample, reference="The Harbour Bridge opened in 1932.")
    assert with_reference_citations([told], corpus)[0].reference_citations == ((0,),)


def _gen(tmp_path, monkeypatch, *extra):
    from hydra import compose, initialize_config_module

    from ragsweep.gen import app

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bridge.txt").write_text(
        "The Harbour Bridge opened to traffic in 1932 after four years of work by the city engineers. "
        "Its steel arch spans 503 metres across the inner harbour of Port Ellis.\n\n"
        "The bridge was designed by the engineer Ada Kerr, who had trained in Glasgow before the war. "
        "Kerr later designed the North Pier terminal, which opened in 1938.\n")
    (docs / "ferry.txt").write_text(
        "The Port Ellis ferry service began in 1871 with a single paddle steamer named Gannet. "
        "Today the ferry runs every forty minutes between the North Pier and the Old Quay.\n\n"
        "A return ticket for the ferry costs four pounds and children under five travel free.\n")
    out = tmp_path / "ts.jsonl"
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose("gen", overrides=["llm=none", "n=4", f"out={out}", "progress=false", "gates.embed=false",
                                        "corpus=folder", f"corpus.path={docs}", *extra])
    app.run(cfg, tmp_path / "run")
    return out


def test_gen_writes_reference_citations_when_asked(tmp_path, monkeypatch):
    from ragsweep.metrics import offline

    out = _gen(tmp_path, monkeypatch, "reference_citations=true")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    answerable = [r for r in rows if r["evidence"]]
    assert answerable
    for row in answerable:
        cites = row["reference_citations"]
        assert len(cites) == len(offline.sentences(row["reference"]))
        # the rule writer cuts its reference from its one evidence sentence: it rests on that span
        assert cites == [[0]] * len(cites), row
    assert all("reference_citations" not in r for r in rows if not r["evidence"])
    read = {s.id: s for s in read_testset(out)}  # whatever reads test sets reads the field back
    assert all(read[r["id"]].reference_citations == tuple(map(tuple, r["reference_citations"])) for r in answerable)


def test_gen_leaves_reference_citations_out_by_default(tmp_path, monkeypatch):
    out = _gen(tmp_path, monkeypatch)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all("reference_citations" not in r for r in rows)
    assert all(s.reference_citations is None for s in read_testset(out))


@pytest.mark.parametrize("value, message", [
    ([[1]], "1 is not an index of this row's 1 evidence spans"),
    ([[0], ["0"]], "'0' is not an index"),
    ([0], "one list of evidence indices per reference sentence"),
])
def test_bad_reference_citations_name_file_line_and_column(tmp_path, value, message):
    path = tmp_path / "ts.jsonl"
    good = {"id": "a", "question": "When?", "reference": "In 1932.",
            "evidence": [{"doc_id": "d", "start": 0, "end": 5}], "reference_citations": [[0]]}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "b", "reference_citations": value}) + "\n")
    with pytest.raises(InputError, match=rf"ts.jsonl, line 2, column reference_citations: .*{message}"):
        read_testset(path)
