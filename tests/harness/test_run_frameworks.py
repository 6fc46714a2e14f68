"""`ragsweep run target=langchain|llamaindex` end to end, each on a real small pipeline over the shipped
corpus built offline with the framework's own fake LLM and embeddings (skipped without the extra)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

LANGCHAIN_APP = '''
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter

from ragsweep.gen.documents import read_shipped


def build_chain(k=2):
    docs = [Document(page_content=d.text, metadata={"source": d.id}) for d in read_shipped().documents]
    chunks = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=40).split_documents(docs)
    store = InMemoryVectorStore.from_documents(chunks, DeterministicFakeEmbedding(size=64))
    prompt = PromptTemplate.from_template("Context:\\n{context}\\n\\nQuestion: {question}\\nAnswer:")
    llm = FakeListLLM(responses=["The harbour opened in 1890."])
    answer = ({"context": lambda x: "\\n\\n".join(d.page_content for d in x["context"]),
               "question": lambda x: x["question"]} | prompt | llm | StrOutputParser())
    retriever = store.as_retriever(search_kwargs={"k": k})
    return RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(answer=answer)
'''

LLAMAINDEX_APP = '''
from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter

from ragsweep.gen.documents import read_shipped

Settings.llm = MockLLM(max_tokens=12)
Settings.embed_model = MockEmbedding(embed_dim=32)


def build_engine(similarity_top_k=2):
    docs = [Document(text=d.text, id_=d.id) for d in read_shipped().documents]
    splitter = SentenceSplitter(chunk_size=128, chunk_overlap=16, tokenizer=str.split)
    index = VectorStoreIndex.from_documents(docs, transformations=[splitter])
    return index.as_query_engine(similarity_top_k=similarity_top_k)
'''


def board(root: Path) -> list[dict[str, str]]:
    with (root / "leaderboard.csv").open() as fh:
        return list(csv.DictReader(fh))


def check_versions(root: Path, key: str, ks: tuple[int, int]) -> None:
    rows = board(root)
    assert sorted(int(r[f"target.params.{key}"]) for r in rows) == sorted(ks)
    for r in rows:
        assert r["app_errors"] == "0" and r["contexts_unlocated"] == "0" and int(r["mrr@10_n_ok"]) == 40
    assert {r["verdict"] for r in rows} & {"baseline"}
    returned = sum(int(r["contexts_returned"]) for r in rows)
    assert returned == 40 * sum(ks)
    job = json.loads((root / "0" / "runs.jsonl").read_text().splitlines()[0])
    assert job["answers"] and job["retrieved"] and all(m["method"] in ("exact", "normalised") for m in job["located"])


def test_langchain_chain_from_a_factory_two_versions(tmp_path, ragsweep):
    pytest.importorskip("langchain_core")
    (tmp_path / "lc_app.py").write_text(LANGCHAIN_APP, encoding="utf-8")
    out = ragsweep("run", "target=langchain", "target.runnable=lc_app:build_chain", "target.params.k=2,4",
                   "out=outs/lc", "progress=false", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    check_versions(tmp_path / "outs/lc", "k", (2, 4))
    first = json.loads((tmp_path / "outs/lc/0/runs.jsonl").read_text().splitlines()[0])
    assert first["answers"] == {"top_k=2": "The harbour opened in 1890."}


def test_langchain_runnable_object_from_python(tmp_path, monkeypatch, cache_dir):
    pytest.importorskip("langchain_core")
    import ragsweep

    (tmp_path / "lc_app.py").write_text(LANGCHAIN_APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    from lc_app import build_chain  # type: ignore[import-not-found]

    got = ragsweep.run("progress=false", app=build_chain(3), dir="runs", name="chain")
    assert got.rows[0].cost["contexts_returned"] == 120 and got.rows[0].cost["contexts_unlocated"] == 0


def test_llamaindex_query_engine_from_a_factory_two_versions(tmp_path, ragsweep):
    pytest.importorskip("llama_index.core", reason="pip install 'ragsweep[llamaindex]'")
    (tmp_path / "li_app.py").write_text(LLAMAINDEX_APP, encoding="utf-8")
    out = ragsweep("run", "target=llamaindex", "target.query_engine=li_app:build_engine",
                   "target.params.similarity_top_k=1,3", "out=outs/li", "progress=false", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    check_versions(tmp_path / "outs/li", "similarity_top_k", (1, 3))
