"""LlamaIndex datasets: ``LabelledRagDataset`` and ``EmbeddingQAFinetuneDataset`` JSON.

As LlamaIndex saves them (``llama-index-core/llama_index/core/llama_dataset/rag.py`` and
``base.py``, ``legacy/embedding.py`` in https://github.com/run-llama/llama_index; docs
https://developers.llamaindex.ai/python/framework/module_guides/evaluating/evaluating_with_llamadatasets/):

- ``LabelledRagDataset.save_json``: ``{"examples": [{"query", "query_by", "reference_contexts",
  "reference_answer", "reference_answer_by"}, ...]}``, where ``query_by`` and ``reference_answer_by``
  are ``CreatedBy`` objects ``{"model_name": str, "type": "human" | "ai"}`` or null. Examples have
  no id, kind or metadata: a sample's id is its position (``1``, ``2``, ...), and written back the
  examples keep the test set's order; ``query_by`` says who wrote the question (a ragsweep sample
  written by people is ``human``, one written by a model or the rule writer ``ai`` with the model's name).
- ``EmbeddingQAFinetuneDataset.save_json``: ``{"queries": {id: text}, "corpus": {node id: text},
  "relevant_docs": {query id: [node ids]}, "mode": "text"}``. A query's relevant nodes are its
  reference contexts (node ids kept); written here, each evidence span is a node named by its span id
  ``<doc_id>:<start>-<end>``. The format holds no reference answer, kind or metadata.

A conversation is written as its question (its last user turn): neither format holds turns.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ragsweep.gen.documents import Corpus
from ragsweep.gen.formats.rows import (
    bad,
    contexts_of,
    fields_for,
    imported,
    read_json,
    text_of,
    texts_of,
    unique_ids,
    write_json,
)
from ragsweep.gen.testset import TestSample
from ragsweep.metrics import InputError

LABELLED = "llamaindex"
QA = "llamaindex_qa"


def _created_by(path: Path, label: str, name: str, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("type") not in ("human", "ai"):
        raise bad(path, label, name, f"expected a CreatedBy object {{\"model_name\", \"type\": human | ai}} "
                                     f"or null, got {str(value)[:60]!r}")
    return value


def created_by(provenance: dict[str, Any]) -> dict[str, Any] | None:
    """The ``CreatedBy`` of a sample's question and answer, from its provenance (None: not known)."""
    backend = provenance.get("backend")
    if backend == "human":
        return {"model_name": "", "type": "human"}
    if backend in (None, "imported", "qrels"):
        return None
    return {"model_name": str(provenance.get("model") or backend), "type": "ai"}


def read_labelled(path: Path) -> tuple[list[TestSample], dict[str, Any]]:
    """The examples of a ``LabelledRagDataset`` file, and its other top-level fields."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise InputError(f"{path}: expected a LabelledRagDataset object {{\"examples\": [...]}}")
    if not data["examples"]:
        raise InputError(f"{path}: the test set is empty")
    samples = []
    for n, ex in enumerate(data["examples"], start=1):
        label = f"example {n}"
        if not isinstance(ex, dict):
            raise InputError(f"{path}, {label}: expected a JSON object, got {type(ex).__name__}")
        by = _created_by(path, label, "query_by", ex.get("query_by"))
        _created_by(path, label, "reference_answer_by", ex.get("reference_answer_by"))
        base = None
        if by is not None:
            base = {"backend": "human"} if by["type"] == "human" else {"backend": "llm", "model": by.get("model_name")}
        fields = {k: v for k, v in ex.items() if k not in ("query", "reference_answer", "reference_contexts")}
        samples.append(imported(str(n), text_of(ex, path, label, "query", required=True),  # type: ignore[arg-type]
                                text_of(ex, path, label, "reference_answer"),
                                texts_of(ex, path, label, "reference_contexts"), None, "imported", LABELLED, label,
                                fields, base))
    return samples, {k: v for k, v in data.items() if k != "examples"}


def write_labelled(samples: list[TestSample], path: Path, corpus: Corpus | None,
                   extra: dict[str, Any] | None = None) -> Path:
    """Write a ``LabelledRagDataset`` file."""
    examples = []
    for s in samples:
        texts, _ = contexts_of(s, corpus)
        kept, by = fields_for(s, LABELLED), created_by(dict(s.provenance))
        ex = {"query": s.question, "query_by": kept.pop("query_by", by),
              "reference_contexts": texts if texts or "reference_contexts" in s.provenance else None,
              "reference_answer": s.reference, "reference_answer_by": kept.pop("reference_answer_by", by)}
        examples.append({**ex, **kept})
    return write_json(path, {"examples": examples, **(extra or {})})


def _str_map(data: dict[str, Any], path: Path, name: str, values: type) -> dict[str, Any]:
    value = data.get(name)
    if not isinstance(value, dict):
        raise InputError(f"{path}, field {name}: expected an object, got {type(value).__name__}")
    for key, item in value.items():
        ok = isinstance(item, str) if values is str else isinstance(item, list) and all(isinstance(i, str) for i in item)
        if not ok:
            what = "a string" if values is str else "a list of node ids"
            raise InputError(f"{path}, field {name}[{key!r}]: expected {what}, got {str(item)[:60]!r}")
    return value


def read_qa(path: Path) -> tuple[list[TestSample], dict[str, Any]]:
    """The queries of an ``EmbeddingQAFinetuneDataset`` file, and its corpus and other fields."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an EmbeddingQAFinetuneDataset object {{queries, corpus, relevant_docs}}")
    queries = _str_map(data, path, "queries", str)
    nodes = _str_map(data, path, "corpus", str)
    relevant = _str_map(data, path, "relevant_docs", list)
    if not queries:
        raise InputError(f"{path}: the test set is empty (no queries)")
    for qid, ids in relevant.items():
        if qid not in queries:
            raise InputError(f"{path}, field relevant_docs[{qid!r}]: no query has this id")
        missing = [i for i in ids if i not in nodes]
        if missing:
            raise InputError(f"{path}, field relevant_docs[{qid!r}]: node {missing[0]!r} is not in corpus")
    samples = []
    for qid, text in queries.items():
        if not text.strip():
            raise InputError(f"{path}, field queries[{qid!r}]: empty query")
        ids = relevant.get(qid)
        contexts = None if ids is None else [nodes[i] for i in ids]
        samples.append(imported(qid, text, None, contexts, ids, "imported", QA, f"query {qid!r}", {}))
    extra = {k: v for k, v in data.items() if k not in ("queries", "relevant_docs")}
    return unique_ids(samples, path), extra


def write_qa(samples: list[TestSample], path: Path, corpus: Corpus | None, extra: dict[str, Any] | None = None) -> Path:
    """Write an ``EmbeddingQAFinetuneDataset`` file (nodes of a file read before come first, in its order)."""
    extra = dict(extra or {})
    nodes: dict[str, str] = dict(extra.pop("corpus", None) or {})
    queries, relevant = {}, {}
    for s in samples:
        queries[s.id] = s.question
        texts, ids = contexts_of(s, corpus)
        if ids is None:  # contexts read without ids and not all located: name each by its text
            ids = ["text:" + hashlib.sha1(t.encode()).hexdigest()[:16] for t in texts]
        for node, text in zip(ids, texts):
            if nodes.setdefault(node, text) != text:
                raise InputError(f"sample {s.id}: node {node!r} has two different texts")
        if texts or not (s.provenance.get("format") == QA and "reference_contexts" not in s.provenance):
            relevant[s.id] = ids
    return write_json(path, {"queries": queries, "corpus": nodes, "relevant_docs": relevant,
                             "mode": extra.pop("mode", "text"), **extra})
