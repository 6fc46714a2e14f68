"""A Ragas KnowledgeGraph JSON (``KnowledgeGraph.save``) as a corpus: the exact texts Ragas wrote its
test set from.

The file is ``{"nodes": [{"id", "type", "properties": {"page_content", "document_metadata", ...}}],
"relationships": [{"source", "target", "type", ...}]}``. Its ``document`` nodes are the documents.
Its ``chunk`` nodes are pieces of them (Ragas splits documents into chunks and links each to its
document by a ``child`` relationship): a chunk is read as a document of its own only when it belongs to
no document node, by relationship or by text -- a graph built from chunks alone (Ragas's
``generate_with_chunks``) has only chunks, and each is then a document. So no text is read twice.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from ragsweep.gen.corpus import Corpus, Document, check_documents, with_duplicates
from ragsweep.metrics import InputError

log = logging.getLogger(__name__)


def looks_like_kg(data: Any) -> bool:
    """True for the object a Ragas ``KnowledgeGraph.save`` writes."""
    return isinstance(data, dict) and isinstance(data.get("nodes"), list) and "relationships" in data


def read_ragas_kg(path: str | Path, duplicates: str = "equal", near_duplicates: float | None = 0.9) -> Corpus:
    """Read the documents of a Ragas KnowledgeGraph JSON (see the module docstring); the id of a
    document is its node's id. Copies among the documents: :func:`gen.documents.with_duplicates`."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: Ragas knowledge graph not found")
    try:
        data = json.loads(file.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{file}: not UTF-8 text ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{file}, line {exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not looks_like_kg(data):
        raise InputError(f"{file}: not a Ragas knowledge graph (expected an object with 'nodes' and 'relationships')")
    nodes = [_node(file, i, n) for i, n in enumerate(data["nodes"])]
    texts = [n for n in nodes if n is not None]
    whole = [n for n in texts if n["type"] == "document"]
    parents = _children_of_documents(data.get("relationships") or [], {n["id"] for n in whole})
    docs = [_document(n) for n in whole]
    parts = 0
    for n in texts:
        if n["type"] == "document":
            continue
        if n["id"] in parents or any(n["text"] in d.text for d in docs):
            parts += 1  # a piece of a document read already
            continue
        docs.append(_document(n))
    log.info("%s: %d documents from %d document nodes; %d chunk nodes are parts of them and not read again",
             file, len(docs), len(whole), parts)
    return with_duplicates(Corpus(check_documents(docs, str(file)), source=str(file)), duplicates, near_duplicates)


def _node(file: Path, i: int, node: Any) -> dict[str, Any] | None:
    """A node's id, type, text and properties; None for a node without text (an entity, a theme)."""
    if not isinstance(node, dict) or not isinstance(node.get("properties", {}), dict):
        raise InputError(f"{file}, nodes[{i}]: expected an object with 'id', 'type' and 'properties'")
    props = node.get("properties") or {}
    text = props.get("page_content")
    if text is None:
        return None
    if not isinstance(text, str):
        raise InputError(f"{file}, nodes[{i}], column page_content: expected text, got {type(text).__name__}")
    if "id" not in node:
        raise InputError(f"{file}, nodes[{i}]: missing column 'id'")
    if not text.strip():
        if node.get("type") == "document":
            log.warning("%s, nodes[%d]: document node %s has no text; left out", file, i, node["id"])
        return None
    return {"id": str(node["id"]), "type": str(node.get("type") or ""), "text": text, "props": props}


def _children_of_documents(relationships: list[Any], documents: set[str]) -> set[str]:
    """Ids of the nodes a document node points to with a ``child`` relationship (its chunks)."""
    return {str(r.get("target")) for r in relationships
            if isinstance(r, dict) and r.get("type") == "child" and str(r.get("source")) in documents}


def _document(node: dict[str, Any]) -> Document:
    """The node's text as it is, its ``document_metadata`` and its other short properties as metadata
    (embeddings left out: they describe the text, they are not about the document)."""
    props = node["props"]
    meta: dict[str, Any] = {"ragas_node": node["id"], "ragas_type": node["type"]}
    source = props.get("document_metadata")
    if isinstance(source, dict):
        meta.update(source)
    elif source is not None:
        meta["document_metadata"] = source
    for key, value in props.items():
        if key not in ("page_content", "document_metadata") and "embedding" not in key:
            meta.setdefault(key, value)
    return Document(node["id"], node["text"], meta)
