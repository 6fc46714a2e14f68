"""Corpus readers: folder, JSONL, BEIR layout (SciFact as shipped in ../shared), and their errors."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from ragsweep.gen.documents import Span, read_beir, read_folder, read_jsonl
from ragsweep.metrics.errors import InputError

SCIFACT = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scifact"


def test_folder_reads_text_markdown_and_html(tmp_path):
    (tmp_path / "a.txt").write_text("Alpha text.", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("# B\n\nBeta.", encoding="utf-8")
    (tmp_path / "c.html").write_text("<html><style>x{}</style><p>Gamma <b>bold</b></p><p>Two</p></html>")
    (tmp_path / "ignored.bin").write_bytes(b"\0\1")
    corpus = read_folder(tmp_path)
    assert [d.id for d in corpus.documents] == ["a.txt", "c.html", "sub/b.md"]
    assert corpus.get("c.html").text == "Gamma bold\n\nTwo"  # one paragraph per <p>, tags left out
    assert corpus.get("sub/b.md").text == "# B\n\nBeta."


@pytest.mark.parametrize("setup, message", [
    (lambda p: None, "no .txt"),
    (lambda p: (p / "e.md").write_text("  \n"), "empty"),
    (lambda p: (p / "bad.txt").write_bytes(b"\xff\xfe bad"), "not UTF-8"),
])
def test_folder_errors_name_the_file(tmp_path, setup, message):
    setup(tmp_path)
    with pytest.raises(InputError, match=message):
        read_folder(tmp_path)


def test_missing_paths_are_input_errors(tmp_path):
    for reader in (read_folder, read_jsonl, read_beir):
        with pytest.raises(InputError, match="not found"):
            reader(tmp_path / "nope")


def test_jsonl_with_title_and_gzip(tmp_path):
    rows = [{"id": "1", "title": "T", "text": "body", "lang": "en"}, {"id": "2", "text": "two"}]
    path = tmp_path / "kb.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(json.dumps(r) for r in rows))
    corpus = read_jsonl(path)
    assert corpus.get("1").text == "T body" and corpus.get("1").metadata["lang"] == "en"
    assert corpus.get("2").text == "two"


def test_jsonl_errors_name_line_and_column(tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text('{"id": "1", "text": "ok"}\n{"id": "2"}\n')
    with pytest.raises(InputError, match=r"line 2: missing or non-string column 'text'"):
        read_jsonl(path)
    path.write_text('{"id": "1", "text": "ok"}\n{broken\n')
    with pytest.raises(InputError, match="line 2: not valid JSON"):
        read_jsonl(path)
    path.write_text('{"id": "1", "text": "a"}\n{"id": "1", "text": "b"}\n')
    with pytest.raises(InputError, match="appears twice"):
        read_jsonl(path)


def test_jsonl_reader_takes_a_byte_order_mark_and_names_bad_bytes_and_non_objects(tmp_path):
    from ragsweep.gen.documents import iter_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "1"}\n\n{"id": "2"}\n')
    assert list(iter_jsonl(path)) == [(1, {"id": "1"}), (3, {"id": "2"})]
    path.write_bytes(b'{"id": "1"}\n[1, 2]\n')
    with pytest.raises(InputError, match="line 2: expected a JSON object, got list"):
        list(iter_jsonl(path))
    path.write_bytes(b'{"id": "1"}\n{"id": "\xff"}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        list(iter_jsonl(path))


def _beir(tmp_path: Path, qrels: str) -> Path:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "x"}\n{"_id": "d2", "text": "y"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "what"}\n{"_id": "q2", "text": "unjudged"}\n')
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text(qrels)
    return tmp_path


def test_beir_layout_keeps_judged_queries(tmp_path):
    corpus = read_beir(_beir(tmp_path, "query-id\tcorpus-id\tscore\nq1\td2\t1\n"))
    assert [q.id for q in corpus.queries] == ["q1"]
    assert corpus.qrels == {"q1": {"d2": 1}}


def test_beir_qrels_naming_a_missing_document(tmp_path):
    with pytest.raises(InputError, match=r"line 2: corpus-id 'd9' is not in the corpus"):
        read_beir(_beir(tmp_path, "query-id\tcorpus-id\tscore\nq1\td9\t1\n"))


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="../shared/data/scifact not present")
def test_scifact_loads_as_it_is():
    corpus = read_beir(SCIFACT, split="dev")
    assert len(corpus.documents) == 5183
    assert len(corpus.queries) == 300  # = BEIR's SciFact test split
    assert sum(len(v) for v in corpus.qrels.values()) == 339
    evidence = read_beir(SCIFACT, split="dev", qrels="evidence")
    assert sum(len(v) for v in evidence.qrels.values()) < 339


def test_span_overlap_is_half_open():
    s = Span("d", 10, 20)
    assert s.overlaps("d", 19, 25) and s.overlaps("d", 0, 11)
    assert not s.overlaps("d", 20, 30) and not s.overlaps("d", 0, 10) and not s.overlaps("e", 12, 13)


MINI_TRUTHFULQA = SCIFACT.parent / "interop" / "corpus_minitruthfulqa"


@pytest.mark.skipif(not MINI_TRUTHFULQA.is_dir(), reason="the shared interop data is not here")
def test_a_folder_with_empty_files_reads_the_others_and_reports_the_empty_ones(caplog):
    files = sorted(p for p in MINI_TRUTHFULQA.rglob("*") if p.is_file())
    blank = [p.relative_to(MINI_TRUTHFULQA).as_posix() for p in files if not p.read_text(encoding="utf-8").strip()]
    assert len(files) == 48 and len(blank) == 22
    with caplog.at_level(logging.WARNING):
        corpus = read_folder(MINI_TRUTHFULQA)
    assert len(corpus.documents) == 26 and list(corpus.empty) == blank
    assert not set(blank) & {d.id for d in corpus.documents}
    assert corpus.report()["empty_files"] == {"count": 22, "files": blank[:10]}
    assert "left out 22 empty file(s) of 48" in caplog.text and blank[0] in caplog.text


def test_whitespace_only_files_are_left_out_and_a_folder_of_them_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("Alpha text.", encoding="utf-8")
    (tmp_path / "b.md").write_text(" \n\t\n", encoding="utf-8")
    (tmp_path / "c.html").write_text("<html><p> </p></html>", encoding="utf-8")
    corpus = read_folder(tmp_path, duplicates="drop")
    assert [d.id for d in corpus.documents] == ["a.txt"] and corpus.empty == ("b.md", "c.html")
    assert corpus.originals().empty == corpus.empty and "empty_files" in corpus.report()
    from ragsweep.gen.app import duplicates_report  # what the generation report records of the corpus

    assert duplicates_report(corpus)["empty_files"] == {"count": 2, "files": ["b.md", "c.html"]}
    (tmp_path / "a.txt").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{tmp_path}: every one of its 3 .* files is empty \(a.txt, b.md, c.html\)"):
        read_folder(tmp_path)


def test_files_in_hidden_folders_are_left_out_with_a_warning_unless_asked_for(tmp_path, caplog):
    (tmp_path / "guide.md").write_text("# Guide\n\nHow to start the service.", encoding="utf-8")
    (tmp_path / ".mintlify" / "skills").mkdir(parents=True)
    (tmp_path / ".mintlify" / "skills" / "SKILL.md").write_text("Instructions for a coding agent.", encoding="utf-8")
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / ".draft.md").write_text("An unpublished draft.", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        corpus = read_folder(tmp_path)
    assert [d.id for d in corpus.documents] == ["guide.md"]
    assert "left out 2 file(s) in hidden folders" in caplog.text and ".mintlify/skills/SKILL.md" in caplog.text
    assert [d.id for d in read_folder(tmp_path, hidden=True).documents] == [
        ".mintlify/skills/SKILL.md", "api/.draft.md", "guide.md"]
    (tmp_path / "guide.md").unlink()
    with pytest.raises(InputError, match=r"every one of its 2 .* files is in a hidden folder .*corpus.hidden=true"):
        read_folder(tmp_path)
