"""A variant's parameters name the parts it uses and no others (harness/sweep_variants.py variant_params): BM25
search names no index and no embedder (its embedder, when the answers use it, is ``answer_embedder``);
dense and hybrid names stay as they were, so existing boards compare."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_module

from ragsweep.harness.records import Cut
from ragsweep.harness.sweep_variants import embedder_use, variant_name, variant_params
from ragsweep.metrics.catalogue import resolve

CUT = Cut("top_k", 5)


def config(retrieval: str, *overrides: str):
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[f"retrieval={retrieval}", *overrides])
    choices = {"corpus": "shipped", "chunker": "recursive", "embedder": "minilm", "retrieval": retrieval,
               "index": "flat", "context": "chunks", "query": "plain", "rerank": "none"}
    return cfg, choices


class Embeds:  # an answerer that picks sentences by embedding (as ExtractiveAnswerer does)
    embedder = object()


@pytest.mark.parametrize("retrieval, name", [
    ("dense", ("chunker=recursive,embedder=minilm,retrieval=dense,index=flat,chunker.size=512,chunker.overlap=64,"
               "top_k=5")),
    ("hybrid", ("chunker=recursive,embedder=minilm,retrieval=hybrid,index=flat,chunker.size=512,"
                "chunker.overlap=64,retrieval.fusion=rrf,retrieval.rrf_k=60,top_k=5")),
])
def test_dense_and_hybrid_names_are_as_they_were(retrieval, name):
    cfg, choices = config(retrieval)
    use = embedder_use(cfg, Embeds(), resolve(["answer_semantic_similarity"]))
    assert use == embedder_use(cfg, None, []) == "retrieval"
    assert variant_name(variant_params(cfg, choices, CUT, embedder=use)) == name


def test_bm25_names_no_index_and_no_embedder_when_nothing_embeds():
    cfg, choices = config("bm25")
    use = embedder_use(cfg, None, resolve(["token_f1", "recall@5"]))
    params = variant_params(cfg, choices, CUT, embedder=use)
    assert use is None and "embedder" not in params and "index" not in params and "answer_embedder" not in params
    assert variant_name(params) == "chunker=recursive,retrieval=bm25,chunker.size=512,chunker.overlap=64,top_k=5"


@pytest.mark.parametrize("answerer, metrics", [(Embeds(), ["token_f1"]), (None, ["answer_semantic_similarity"])])
def test_bm25_names_the_embedder_its_answers_use_as_answer_embedder(answerer, metrics):
    cfg, choices = config("bm25")
    use = embedder_use(cfg, answerer, resolve(metrics))
    params = variant_params(cfg, choices, CUT, embedder=use)
    assert use == "answers" and params["answer_embedder"] == "minilm" and "embedder" not in params


def test_bm25_answer_relevancy_names_an_embedder_only_in_the_method_that_embeds():
    """The default judge method reads no embedding, so the variant names none; Ragas' generated-questions method
    compares embeddings, so it does."""
    cfg, choices = config("bm25")
    assert embedder_use(cfg, None, resolve(["answer_relevancy", "summary_score"])) is None
    cfg, choices = config("bm25", "+metrics.options.answer_relevancy.method=questions")
    assert embedder_use(cfg, None, resolve(["answer_relevancy"])) == "answers"
