"""`ragsweep sweep rerank=llm query=multi_query,hyde` on the shipped corpus with a scripted model: the
variants, the reranked runs, the cost columns, the LLM cache on a repeat, and llm=none refused."""

from __future__ import annotations

import csv
import json

import pytest

# A stand-in model: relevance is the share of the question's longer words found in the passage (given as
# the verdict token's log-probabilities); rewrites are fixed transformations of the question. Cached like
# the llm group's models, in the run's cache folder.
FAKE = '''
import math
import os
from pathlib import Path

from ragsweep.metrics.llm import CachedLLM, ScriptedLLM


def field(text, name):
    return text.split(f"<{name}>\\n", 1)[1].split(f"\\n</{name}>", 1)[0]


def share(messages):
    text = messages[-1]["content"]
    words = {w.strip("?,.").lower() for w in field(text, "question").split() if len(w) > 3}
    passage = field(text, "passage").lower()
    return sum(w in passage for w in words) / max(1, len(words))


class Model(ScriptedLLM):
    def _reply(self, call):
        done = super()._reply(call)
        if "<passage>" in call.messages[-1]["content"]:
            p = share(call.messages)
            done.logprobs = [{"{": -0.01}, {"yes": math.log(0.05 + 0.9 * p), "no": math.log(0.95 - 0.9 * p)}]
        return done


def reply(messages, schema):
    text = messages[-1]["content"]
    if schema.__name__ == "RelevanceOutput":
        return {"relevant": "yes" if share(messages) >= 0.5 else "no"}
    question = field(text, "question")
    if schema.__name__ == "RephraseOutput":
        return {"queries": [question.rstrip("?") + " facts", "details: " + question, question.lower()]}
    return {"passage": "A report says: " + question.rstrip("?") + "."}


def make(**_):
    return CachedLLM(Model(reply), Path(os.environ["RAGSWEEP_CACHE_DIR"]) / "llm.sqlite")
'''

GRID = ("rerank=llm", "query=multi_query,hyde", "llm._target_=fakellm.make", "answerer=none", "chunker.size=512",
        "retriever.top_k=[1,5]", "retriever.latency_queries=0", "max_queries=12", "progress=false")


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory, ragsweep):
    cwd = tmp_path_factory.mktemp("rerank_sweep")
    (cwd / "fakellm.py").write_text(FAKE)
    first = ragsweep("sweep", *GRID, "hydra.sweep.dir=sw", cwd=cwd)
    assert first.returncode == 0, first.stderr[-3000:]
    again = ragsweep("sweep", *GRID, "hydra.sweep.dir=sw2", cwd=cwd)
    assert again.returncode == 0, again.stderr[-3000:]
    return cwd, first


def _summaries(folder):
    return {json.loads(p.read_text())["variants"][0]["params"]["query"]: json.loads(p.read_text())
            for p in folder.glob("*/summary.json")}


def test_variants_are_named_by_their_rerank_and_query_settings(sweeps):
    cwd, _ = sweeps
    with (cwd / "sw" / "leaderboard.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    assert {(r["query"], r["rerank"], r["rerank.top_n"]) for r in rows} == {("multi_query", "llm", "20"),
                                                                           ("hyde", "llm", "20")}
    assert all("rerank=llm,rerank.top_n=20" in r["variant"] for r in rows)


def test_the_board_and_summary_show_what_rewriting_and_reranking_cost_per_query(sweeps):
    cwd, first = sweeps
    with (cwd / "sw" / "leaderboard.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        assert float(r["rerank_llm_calls_per_q"]) == 20.0   # top_n candidates, one call each
        assert float(r["rewrite_llm_calls_per_q"]) == 1.0   # one rewrite per query
        assert float(r["rerank_llm_tokens_per_q"]) > 20 * 50 and float(r["rewrite_llm_tokens_per_q"]) > 50
        assert float(r["rerank_s_per_q"]) >= 0 and r["rewrite_s_per_q"] != ""
    markdown = (cwd / "sw" / "leaderboard.md").read_text()
    assert "rerank_llm_calls_per_q" in markdown and "Rewrite and rerank columns are per query" in markdown
    summaries = _summaries(cwd / "sw")
    for summary in summaries.values():
        rerank, rewrite = summary["cost"]["rerank"], summary["cost"]["query_rewrite"]
        assert rerank["queries"] == 12 and rerank["candidates"] == 240 and rerank["llm_calls"] == 240
        assert rerank["hard_verdicts"] == 0 and rerank["failed"] == 0
        assert rewrite["llm_calls"] == 12 and rewrite["failed"] == 0 and rewrite["llm_cached_calls"] == 0
        assert summary["cost"]["llm"]["calls"] == 252
    # Job 0 (multi_query) judged every pair afresh; hyde's job found many of the same (question, passage)
    # pairs among its candidates and took their verdicts from the cache.
    assert summaries["multi_query"]["cost"]["rerank"]["llm_cached_calls"] == 0
    assert 0 < summaries["hyde"]["cost"]["rerank"]["llm_cached_calls"] < 240
    assert "leaderboard.md" in first.stdout  # the terminal board points to the full one, which has the costs


def test_retrieval_is_scored_on_the_reranked_order(sweeps):
    cwd, _ = sweeps
    for mode, summary in _summaries(cwd / "sw").items():
        runs = [json.loads(line) for line in (cwd / "sw" / summary["job"].split("/")[-1] / "runs.jsonl").open()]
        assert len(runs) == 12
        for run in runs:
            head = [r["score"] for r in run["retrieved"][:20]]
            assert head == sorted(head, reverse=True) and all(0 <= s <= 1 for s in head)   # P(relevant), best first
            assert run["rewrites"] and (mode == "hyde") == run["rewrites"][0].startswith("A report says:")
        # multi_query: the fake's third rephrasing is the question in lower case, dropped as a duplicate.
        assert {len(run["rewrites"]) for run in runs} == ({1} if mode == "hyde" else {2})


def test_a_repeat_is_answered_from_the_llm_cache(sweeps):
    cwd, _ = sweeps
    first, again = _summaries(cwd / "sw"), _summaries(cwd / "sw2")
    for mode in ("multi_query", "hyde"):
        rerank = again[mode]["cost"]["rerank"]
        assert rerank["llm_calls"] == rerank["llm_cached_calls"] == 240
        assert again[mode]["cost"]["query_rewrite"]["llm_cached_calls"] == 12
        assert rerank["llm_prompt_tokens"] == first[mode]["cost"]["rerank"]["llm_prompt_tokens"]
        assert again[mode]["variants"][1]["metrics"] == first[mode]["variants"][1]["metrics"]


@pytest.mark.parametrize("overrides", [("rerank=none,llm",), ("query=hyde",), ("query=plain,multi_query", "llm=none")])
def test_llm_none_with_rerank_llm_or_a_rewrite_exits_2_before_any_job(tmp_path, ragsweep, overrides):
    done = ragsweep("sweep", *overrides, "hydra.sweep.dir=sw", "progress=false", cwd=tmp_path)
    assert done.returncode == 2
    assert "need" in done.stderr and "llm=none" in done.stderr and "llm=local" in done.stderr
    assert not (tmp_path / "sw").exists()


def test_a_cross_encoder_without_a_model_folder_exits_2_naming_the_key(tmp_path, ragsweep):
    done = ragsweep("sweep", "rerank=cross_encoder", "progress=false", cwd=tmp_path)
    assert done.returncode == 2 and "rerank.model" in done.stderr
    done = ragsweep("sweep", "rerank=cross_encoder", f"rerank.model={tmp_path / 'nowhere'}", "hydra.sweep.dir=sw",
                    "progress=false", "retriever.latency_queries=0", cwd=tmp_path)
    assert done.returncode == 2 and "nowhere: no such folder" in done.stderr


@pytest.mark.model
@pytest.mark.slow
def test_real_small_model_reranks_with_logprobs_and_writes_hyde_passages(tmp_path, ragsweep, small_model_cache):
    cache = small_model_cache
    done = ragsweep("sweep", "llm=local_small", "rerank=llm", "rerank.top_n=5", "query=hyde", "answerer=none",
                    "chunker.size=512", "retriever.top_k=[3]", "retriever.latency_queries=0", "max_queries=2",
                    "hydra.sweep.dir=sw", "progress=false", cwd=tmp_path, cache=cache, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    [summary_file] = (tmp_path / "sw").glob("*/summary.json")
    summary = json.loads(summary_file.read_text())
    rerank, rewrite = summary["cost"]["rerank"], summary["cost"]["query_rewrite"]
    assert rerank["candidates"] == 10 and rerank["llm_calls"] == 10 and rerank["failed"] == 0
    assert rerank["hard_verdicts"] < 10   # the local backend gives log-probabilities: P(relevant) is graded
    assert rewrite["llm_calls"] == 2 and rewrite["failed"] == 0
    runs = [json.loads(line) for line in (summary_file.parent / "runs.jsonl").open()]
    for run in runs:
        passage = run["rewrites"][0]
        assert len(passage.split()) >= 5 and passage != run["question"]
        head = [r["score"] for r in run["retrieved"][:5]]
        assert head == sorted(head, reverse=True) and all(0 <= s <= 1 for s in head)
    assert summary["variants"][0]["params"]["rerank"] == "llm"
    with (tmp_path / "sw" / "leaderboard.csv").open() as fh:
        row = next(csv.DictReader(fh))
    assert float(row["rerank_llm_calls_per_q"]) == 5.0 and float(row["rewrite_llm_calls_per_q"]) == 1.0


def test_a_rerank_none_llm_sweep_names_both_and_only_the_reranked_job_has_rerank_cost(tmp_path, ragsweep):
    (tmp_path / "fakellm.py").write_text(FAKE)
    done = ragsweep("sweep", "rerank=none,llm", "rerank.top_n=3", "llm._target_=fakellm.make", "retrieval=bm25",
                    "answerer=none", "chunker.size=512", "retriever.top_k=[3]", "retriever.latency_queries=0",
                    "max_queries=4", "hydra.sweep.dir=sw", "progress=false", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    with (tmp_path / "sw" / "leaderboard.csv").open() as fh:
        rows = {r["rerank"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"none", "llm"}
    assert rows["none"]["rerank_llm_calls_per_q"] == "" and float(rows["llm"]["rerank_llm_calls_per_q"]) == 3.0
    assert "rewrite_llm_calls_per_q" not in rows["llm"]   # no rewriting: no rewrite columns
