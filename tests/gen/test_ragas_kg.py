"""A Ragas KnowledgeGraph JSON read as a corpus (gen/ragas_kg.py): document nodes become documents,
chunk nodes are not read twice, and bad files get errors naming the file and node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsweep.gen.documents import read_folder, read_jsonl
from ragsweep.gen.ragas_kg import read_ragas_kg
from ragsweep.metrics.errors import InputError

INTEROP = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "interop"
KG = INTEROP / "ragas_rmcv_pdf_knowledge_graph.json"
needs_interop = pytest.mark.skipif(not KG.is_file(), reason="the shared interop data is not here")

HARBOUR = "Port Calder's harbour opened in 1890. It has two piers, the north pier and the south pier."
FERRY = "Calder Ferries runs three boats. The first sailing leaves at six in the morning."


def node(nid: str, kind: str, text: str | None, **props) -> dict:
    return {"id": nid, "type": kind, "properties": ({"page_content": text} if text is not None else {}) | props}


def write_kg(tmp_path: Path, nodes: list[dict], relationships: list[dict] = ()) -> Path:
    path = tmp_path / "kg.json"
    path.write_text(json.dumps({"nodes": nodes, "relationships": list(relationships)}), encoding="utf-8")
    return path


@needs_interop
def test_the_document_nodes_of_a_real_graph_are_the_hand_extracted_corpus():
    corpus = read_ragas_kg(KG)
    by_hand = read_folder(INTEROP / "corpus_rmcv_pdf_kg")
    assert [d.text for d in corpus.documents] == [d.text for d in by_hand.documents]
    first = corpus.documents[0]
    assert first.id == "c3786086-616d-4ce7-85a6-b9ad91af4e4e"
    assert first.metadata["title"] == "A2A vs ACP" and first.metadata["chunk_index"] == 0
    assert "summary" in first.metadata and not any("embedding" in k for k in first.metadata)
    assert [d.text for d in read_jsonl(KG).documents] == [d.text for d in corpus.documents]  # detected


def test_chunk_nodes_of_a_document_are_not_read_again(tmp_path):
    nodes = [node("d1", "document", HARBOUR, document_metadata={"source": "a.pdf"}),
             node("c1", "chunk", HARBOUR[:37]),              # linked to d1
             node("c2", "chunk", HARBOUR[38:]),              # not linked, but its text is d1's
             node("c3", "chunk", FERRY),                     # a piece of no document: read
             node("e1", "", None, entities=["Port Calder"])]  # no text: not a document
    rels = [{"id": "r1", "type": "child", "source": "d1", "target": "c1", "bidirectional": False, "properties": {}}]
    corpus = read_ragas_kg(write_kg(tmp_path, nodes, rels))
    assert [(d.id, d.text) for d in corpus.documents] == [("d1", HARBOUR), ("c3", FERRY)]
    assert corpus.get("d1").metadata["source"] == "a.pdf"


def test_a_graph_of_chunks_alone_gives_a_document_per_chunk(tmp_path):
    corpus = read_ragas_kg(write_kg(tmp_path, [node("c1", "chunk", HARBOUR), node("c2", "chunk", FERRY)]))
    assert [d.id for d in corpus.documents] == ["c1", "c2"]


@pytest.mark.parametrize("content, message", [
    ('{"nodes": [', r"kg.json, line 1: not valid JSON"),
    ('{"rows": []}', r"kg.json: not a Ragas knowledge graph"),
    (json.dumps({"nodes": [node("d1", "document", HARBOUR), "x"], "relationships": []}), r"kg.json, nodes\[1\]"),
    (json.dumps({"nodes": [node("d1", "document", 42)], "relationships": []}),
     r"kg.json, nodes\[0\], column page_content"),
    (json.dumps({"nodes": [node("d1", "document", "  ")], "relationships": []}), r"kg.json: the corpus has no documents"),
])
def test_bad_graphs_are_input_errors_naming_file_and_node(tmp_path, content, message):
    path = tmp_path / "kg.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_ragas_kg(path)


def test_a_json_file_that_is_no_graph_is_refused_by_the_jsonl_reader(tmp_path):
    path = tmp_path / "docs.json"
    path.write_text(json.dumps([{"id": "a", "text": HARBOUR}]), encoding="utf-8")
    with pytest.raises(InputError, match="must be a Ragas knowledge graph"):
        read_jsonl(path)
