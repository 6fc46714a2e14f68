"""context=chunks|window|parent: spans by hand, the budget keeping the hit, and sweeps that show the effect.

The constructed corpus has paragraphs whose first sentence names a landmark and whose other sentences
say "it": a question about a landmark finds that one sentence (BM25), and its evidence is the whole
paragraph. At one budget, passing on sentence chunks spends the rest of the budget on other
landmarks' sentences; a window brings the hit's neighbours, a parent the whole paragraph. So span
recall must rise from chunks to window to parent. On the shipped corpus, where evidence is mostly one
sentence, the window's neighbours displace other hits instead, and span recall falls.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from ragsweep.gen.chunking import Chunk
from ragsweep.gen.documents import Document
from ragsweep.harness.pipeline.context import Chunks, Parent, Window, distinct, expand
from ragsweep.harness.records import Cut, Retrieved, RunSample
from ragsweep.metrics.errors import InputError

TEXT = "# Title\n\nAaa one. Bbb two. Ccc three.\n\nDdd four. Eee five.\n\n# Next\n\nFff six."


def _chunks(doc: Document, pieces: list[str]) -> list[Chunk]:
    out = []
    for p in pieces:
        s = doc.text.index(p)
        out.append(Chunk(f"{doc.id}#{s}-{s + len(p)}", doc.id, s, s + len(p), p))
    return out


@pytest.fixture
def doc_and_chunks():
    doc = Document("d.md", TEXT)
    return doc, _chunks(doc, ["# Title", "Aaa one.", "Bbb two.", "Ccc three.", "Ddd four.", "Eee five.", "# Next",
                              "Fff six."])


def _texts(doc, spans):
    return [doc.text[s:e] for s, e in spans]


def test_window_of_chunks_and_of_sentences(doc_and_chunks):
    doc, chunks = doc_and_chunks
    got = _texts(doc, expand(Window(1), [doc], chunks))
    assert got[0] == "# Title\n\nAaa one."                       # the first chunk has no left neighbour
    assert got[2] == "Aaa one. Bbb two. Ccc three."
    assert got[4] == "Ccc three.\n\nDdd four. Eee five."          # neighbours cross paragraphs, not documents
    assert _texts(doc, expand(Window(0), [doc], chunks)) == [c.text for c in chunks]
    assert not Window(0).expands and Window(1).expands
    prose = Document("p.txt", "The pier opened in 1866. It is long. It was rebuilt in 1990. It has a cafe.")
    wide = _texts(prose, expand(Window(1, "sentences"), [prose], _chunks(prose, ["It was rebuilt"])))
    assert wide == ["It is long. It was rebuilt in 1990. It has a cafe."]  # the hit's sentence and one each side


def test_parent_paragraph_section_and_chunk(doc_and_chunks):
    doc, chunks = doc_and_chunks
    para = _texts(doc, expand(Parent("paragraph"), [doc], chunks))
    assert para[1] == para[2] == para[3] == "Aaa one. Bbb two. Ccc three."
    assert para[5] == "Ddd four. Eee five." and para[7] == "Fff six."
    section = _texts(doc, expand(Parent("section"), [doc], chunks))
    assert section[2] == "# Title\n\nAaa one. Bbb two. Ccc three.\n\nDdd four. Eee five."
    assert section[7] == "# Next\n\nFff six."
    plain = Document("p.txt", "No headings here. Just text.")
    assert _texts(plain, expand(Parent("section"), [plain], _chunks(plain, ["Just text."]))) == [plain.text]
    # A chunk across a paragraph break passes on both paragraphs.
    across = _chunks(doc, ["Ccc three.\n\nDdd four."])
    assert _texts(doc, expand(Parent("paragraph"), [doc], across)) == ["Aaa one. Bbb two. Ccc three.\n\nDdd four. Eee five."]
    small = _texts(doc, expand(Parent("chunk", size=30), [doc], chunks))
    assert all(c.text in s and len(s) <= 30 for c, s in zip(chunks, small))


def test_bad_options_are_input_errors():
    for make in (lambda: Window(-1), lambda: Window(1, "words"), lambda: Parent("page"), lambda: Parent("chunk", 0)):
        with pytest.raises(InputError):
            make()
    assert Chunks().params() == {"name": "chunks"} and not Chunks().expands


def test_a_span_inside_a_better_ranked_one_is_passed_on_once():
    spans = [("d", 0, 50), ("d", 10, 20), ("e", 10, 20), ("d", 40, 60), ("d", 0, 50)]
    assert distinct(spans) == [0, 2, 3]


def test_a_budget_cut_keeps_the_hit_of_an_expanded_span():
    text = "0123456789" * 10
    window = Retrieved("d#40-50", "d", 20, 80, 1.0, text[20:80], hit=(40, 50))
    first = Retrieved("d#0-10", "d", 0, 10, 2.0, text[:10])
    (a, b) = Cut("budget", 35).passed((first, window))
    assert (a.start, a.end) == (0, 10)
    assert (b.start, b.end, b.hit) == (40, 65, (40, 50)) and b.text == text[40:65]  # from the hit on
    (c,) = Cut("budget", 50).passed((Retrieved("d#70-80", "d", 20, 80, 1.0, text[20:80], hit=(70, 80)),))
    assert (c.start, c.end) == (30, 80)  # the span ends first: moved back, the hit kept whole
    (plain,) = Cut("budget", 5).passed((first,))
    assert (plain.start, plain.end, plain.hit) == (0, 5, None)  # a chunk keeps its beginning, as before


def test_hit_is_kept_in_run_records_and_absent_without_expansion():
    with_hit = RunSample("q", "v", (Retrieved("d#4-6", "d", 0, 9, 1.0, "x" * 9, hit=(4, 6)),))
    row = with_hit.to_dict()
    assert row["retrieved"][0]["hit"] == [4, 6]
    assert RunSample.from_dict(json.loads(json.dumps(row))) == with_hit
    plain = RunSample("q", "v", (Retrieved("d#0-9", "d", 0, 9, 1.0, "x" * 9),)).to_dict()
    assert "hit" not in plain["retrieved"][0]


# ---- sweeps ----

LANDMARKS = [("Amberley lighthouse", "1871"), ("Brockwell bridge", "1903"), ("Cresswell mill", "1788"),
             ("Dunmore abbey", "1152"), ("Elmstead tower", "1930"), ("Farleigh pier", "1866")]
FILLER = ["It stands near the old quay and can be seen from the water.",
          "It was repaired after a storm and painted white again.",
          "It is open to visitors on summer weekends."]


def _kb(root: Path) -> tuple[Path, Path]:
    """Two documents of three paragraphs; a question per landmark whose evidence is its paragraph."""
    kb = root / "kb"
    kb.mkdir()
    samples = []
    for d in range(2):
        paragraphs = []
        for name, year in LANDMARKS[3 * d: 3 * d + 3]:
            paragraphs.append(f"The {name} was built in {year} by the county. " + " ".join(FILLER))
        text = "\n\n".join(paragraphs) + "\n"
        (kb / f"doc{d}.md").write_text(text, encoding="utf-8")
        for name, _ in LANDMARKS[3 * d: 3 * d + 3]:
            start = text.index(f"The {name}")
            end = text.index("\n\n", start) if "\n\n" in text[start:] else len(text) - 1
            samples.append({"id": name.split()[0], "question": f"When was the {name} built?", "reference": "",
                            "evidence": [{"doc_id": f"doc{d}.md", "start": start, "end": end}]})
    ts = root / "ts.jsonl"
    ts.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return kb, ts


def _board(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "leaderboard.csv").open() as fh:
        return {r["context"]: r for r in csv.DictReader(fh)}


QUIET = ["progress=false", "answerer=none", "metrics.generation=[]", "retriever.latency_queries=0"]


def test_window_and_parent_raise_span_recall_at_an_equal_budget_on_passages(tmp_path, ragsweep):
    kb, ts = _kb(tmp_path)
    common = ["corpus=folder", f"corpus.path={kb}", f"testset={ts}", "retrieval=bm25", "chunker=sentence",
              "chunker.size=80", "chunker.overlap=0", "retriever.budget=300", *QUIET]
    done = ragsweep("sweep", *common, "context=chunks,window,parent", "hydra.sweep.dir=ctx", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _board(tmp_path / "ctx")
    recall = {c: float(rows[c]["span_recall"]) for c in ("chunks", "window", "parent")}
    assert recall["chunks"] < recall["window"] < recall["parent"], recall
    assert recall["parent"] > 0.9 and recall["chunks"] < 0.5, recall
    assert {float(r["context_chars"]) for r in rows.values()} == {300.0}  # one budget: the same text passed on
    assert rows["window"]["context.neighbours"] == "1" and rows["parent"]["context.by"] == "paragraph"
    assert "context_chars" in (tmp_path / "ctx" / "leaderboard.md").read_text()

    # context=chunks is the pipeline as it was: the same records and scores as without the group.
    again = ragsweep("sweep", *common, "~context", "hydra.sweep.dir=plain", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    chunks_job = next(p.parent for p in (tmp_path / "ctx").glob("*/summary.json")
                      if json.loads(p.read_text())["config"]["context"]["_target_"].endswith("Chunks"))
    for name in ("runs.jsonl", "scores.jsonl"):
        assert (chunks_job / name).read_bytes() == (tmp_path / "plain" / "0" / name).read_bytes()
    assert '"hit"' not in (chunks_job / "runs.jsonl").read_text()
    assert "context" not in json.loads((chunks_job / "summary.json").read_text())["variants"][0]["params"]


@pytest.mark.slow  # two dense jobs on the shipped corpus (~40 s on a busy 2-core machine)
def test_a_window_lowers_span_recall_on_one_sentence_evidence_at_an_equal_budget(tmp_path, ragsweep):
    done = ragsweep("sweep", "chunker=sentence", "chunker.size=200", "chunker.overlap=0", "context=chunks,window",
                    "retriever.budget=800", *QUIET, "hydra.sweep.dir=ctx", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _board(tmp_path / "ctx")
    # Measured: 0.642 (chunks) against 0.520 (window): the neighbours take budget from other hits.
    assert float(rows["window"]["span_recall"]) < float(rows["chunks"]["span_recall"]) - 0.05
