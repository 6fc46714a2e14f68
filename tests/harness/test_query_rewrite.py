"""query=multi_query|hyde: the rewrites, their fusion by RRF and what is searched, on the shipped corpus (BM25)."""

from __future__ import annotations

import numpy as np
import pytest
from ragsweep.gen.chunking import RecursiveChunker
from ragsweep.gen.documents import read_shipped
from ragsweep.harness.cache import Cache
from ragsweep.harness.pipeline.index import IndexSpec
from ragsweep.harness.pipeline.pipeline import Pipeline
from ragsweep.harness.pipeline.retrieval import Retrieval, retrieval, rrf
from ragsweep.harness.pipeline.rewrite import HYDE, MULTI_QUERY, QueryRewriter
from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM

QUESTION = "How long is the Saltgate Bridge?"


def test_rrf_sums_reciprocal_ranks_and_breaks_ties_by_position():
    a = (np.array([[3.0, 2.0, 1.0]]), np.array([[0, 1, 2]]))
    b = (np.array([[9.0, 8.0, -np.inf]]), np.array([[2, 0, -1]]))
    scores, ids = rrf([a, b], 4, rrf_k=60)
    # 0: 1/61 + 1/62, 2: 1/63 + 1/61, 1: 1/62; nothing else was ranked.
    assert ids[0].tolist() == [0, 2, 1, -1]
    assert scores[0][:3] == pytest.approx([1 / 61 + 1 / 62, 1 / 61 + 1 / 63, 1 / 62])
    tie = rrf([(np.zeros((1, 1)), np.array([[5]])), (np.zeros((1, 1)), np.array([[4]]))], 2)
    assert tie[1][0].tolist() == [4, 5]
    # Hybrid retrieval fuses with the same function.
    hybrid = Retrieval("hybrid")
    assert np.array_equal(hybrid.fuse(a, b, 3)[1], rrf([a, b], 3)[1])


def test_multi_query_keeps_the_query_and_n_distinct_rephrasings():
    llm = ScriptedLLM(lambda m, s: {"queries": ["Saltgate Bridge length", "how long is the saltgate bridge?",
                                                 "span of the Saltgate Bridge in metres", "Saltgate length", "extra"]})
    got = QueryRewriter("multi_query", n=3).rewrite([QUESTION], llm)
    assert got == [[QUESTION, "Saltgate Bridge length", "span of the Saltgate Bridge in metres", "Saltgate length"]]
    assert llm.calls[0].prompt == MULTI_QUERY.id and "<n>\n3\n</n>" in llm.calls[0].messages[-1]["content"]


def test_hyde_searches_a_passage_and_a_failed_call_keeps_the_query(tmp_path):
    first = ScriptedLLM(lambda m, s: {"passage": " The Saltgate Bridge is 410 metres long. "})
    rewriter = QueryRewriter("hyde")
    assert rewriter.rewrite([QUESTION], CachedLLM(first, tmp_path / "llm.sqlite")) == [
        ["The Saltgate Bridge is 410 metres long."]]
    assert first.calls[0].prompt == HYDE.id
    again = ScriptedLLM([])  # a repeat is answered from the cache: no call at all
    assert QueryRewriter("hyde").rewrite([QUESTION], CachedLLM(again, tmp_path / "llm.sqlite"))[0][0].startswith("The")
    broken = QueryRewriter("hyde")
    assert broken.rewrite([QUESTION], ScriptedLLM([JudgeError("down")])) == [[QUESTION]]
    assert broken.stats.failed == 1


def test_rewriting_without_an_llm_or_with_a_bad_kind_is_an_input_error():
    with pytest.raises(InputError, match="query=hyde needs an LLM"):
        QueryRewriter("hyde").rewrite([QUESTION], None)
    with pytest.raises(InputError, match="query must be one of"):
        QueryRewriter("step_back")
    assert QueryRewriter().rewrite(["a", "b"], None) == [["a"], ["b"]]


@pytest.fixture(scope="module")
def pipe(tmp_path_factory):
    cache = Cache(tmp_path_factory.mktemp("cache"))
    return Pipeline(read_shipped(), RecursiveChunker(512, 64), None, IndexSpec(), cache,  # type: ignore[arg-type]
                    retrieval=retrieval("bm25"))


def test_multi_query_searches_every_text_and_fuses_their_rankings(pipe):
    texts = [[QUESTION, "Saltgate Bridge span metres"], ["Who founded Tidewright Energy?"]]
    got = pipe.search([t[0] for t in texts], 5, texts=texts)
    depth = max(5, pipe.retrieval.depth)
    want = rrf([pipe.rank([QUESTION], depth), pipe.rank(["Saltgate Bridge span metres"], depth)], 5)
    assert [r.chunk_id for r in got[0]] == [pipe.chunks[i].id for i in want[1][0] if i >= 0]
    assert [r.score for r in got[0]] == pytest.approx(want[0][0][: len(got[0])].tolist())
    # A query searched with one text is that text's ranking.
    assert [r.chunk_id for r in got[1]] == [r.chunk_id for r in pipe.search(["Who founded Tidewright Energy?"], 5)[0]]
    # The rephrasing changes the ranking: fusion is not the question's ranking again.
    assert [r.chunk_id for r in got[0]] != [r.chunk_id for r in pipe.search([QUESTION], 5)[0]]


def test_hyde_searches_with_the_passage_in_place_of_the_question(pipe):
    passage = "The Saltgate Bridge is a cable-stayed bridge with a main span of 410 metres."
    got = pipe.search([QUESTION], 5, texts=[[passage]])
    assert [r.chunk_id for r in got[0]] == [r.chunk_id for r in pipe.search([passage], 5)[0]]
