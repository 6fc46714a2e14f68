"""Checks on the knowledge base and hand-checked test set that ship with ragsweep."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ragsweep.gen.documents import read_folder, shipped_corpus_path, shipped_testset_path
from ragsweep.gen.testset import KINDS, check_against, read_testset

EXPECTED_KINDS = {"single_hop": 24, "multi_hop": 8, "comparative": 4, "conditional": 4}


@pytest.fixture(scope="module")
def corpus():
    return read_folder(shipped_corpus_path())


@pytest.fixture(scope="module")
def samples():
    return read_testset(shipped_testset_path())


@pytest.fixture(scope="module")
def raw_rows():
    lines = shipped_testset_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_corpus_documents_are_markdown_with_a_title(corpus):
    assert 24 <= len(corpus.documents) <= 28
    for doc in corpus.documents:
        assert doc.id.endswith(".md")
        assert doc.text.startswith("# "), doc.id
        assert "\r" not in doc.text, doc.id
        assert 120 <= len(doc.text.split()) <= 350, doc.id


def test_forty_rows_with_unique_ids(samples, raw_rows):
    assert len(samples) == 40
    assert len(raw_rows) == 40
    ids = [s.id for s in samples]
    assert len(set(ids)) == len(ids)


def test_spans_match_documents(samples, corpus):
    check_against(samples, corpus, str(shipped_testset_path()))  # raises on any mismatch
    for s in samples:
        assert s.evidence, s.id
        assert len(s.quotes) == len(s.evidence) and all(q is not None for q in s.quotes), s.id
        for span, quote in zip(s.evidence, s.quotes):
            assert span.doc_id in corpus, (s.id, span.doc_id)
            assert corpus.get(span.doc_id).text[span.start : span.end] == quote, s.id


def test_spans_match_files_on_disk(raw_rows):
    root = shipped_corpus_path()
    for row in raw_rows:
        for ev in row["evidence"]:
            path = root / ev["doc_id"]
            assert path.is_file(), (row["id"], ev["doc_id"])
            text = path.read_text(encoding="utf-8")
            assert text[ev["start"] : ev["end"]] == ev["text"], row["id"]


def test_kind_counts(samples):
    counts = Counter(s.kind for s in samples)
    assert set(counts) <= set(KINDS)
    assert dict(counts) == EXPECTED_KINDS


def test_multi_hop_spans_come_from_two_documents(samples):
    for s in samples:
        if s.kind == "multi_hop":
            assert len({span.doc_id for span in s.evidence}) >= 2, s.id


def test_questions_are_self_contained_and_distinct(samples):
    for s in samples:
        q = s.question.lower()
        assert "passage" not in q, s.id
        assert "this document" not in q, s.id
        assert s.reference.strip(), s.id
    lowered = [" ".join(s.question.lower().split()) for s in samples]
    assert len(set(lowered)) == len(lowered)


def test_provenance_is_human(raw_rows):
    for row in raw_rows:
        assert row["provenance"].get("backend") == "human", row["id"]
