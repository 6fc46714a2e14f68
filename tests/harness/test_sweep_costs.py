"""Per-variant LLM cost: a sweep job on the shipped corpus with ``answerer=llm`` on a scripted model.

The jobs run in-process (``run_job``) with the scripted LLM put where ``llm=...`` would build one;
everything else is the real pipeline (MiniLM, FAISS) with a cache folder of the test's own.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import ragsweep.harness.sweep as sweep
from hydra import compose, initialize_config_module
from ragsweep.harness.board.leaderboard import build as build_board
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM

CHOICES = {"corpus": "shipped", "chunker": "recursive", "embedder": "minilm", "index": "flat"}
ANSWER = "The answer is in the first context."  # 7 words: the scripted model counts words as tokens
N_SAMPLES = 40  # the shipped test set


def run(tmp: Path, job: Path, llm: object, *overrides: str) -> dict:
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=["chunker.size=512", f"cache.dir={tmp / 'cache'}",
                                                       "progress=false", *overrides])
    real = sweep.build
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sweep, "build", lambda node, what, **kw: llm if what == "llm" else real(node, what, **kw))
        return sweep.run_job(cfg, job, CHOICES)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """An LLM job (top-K 1 and 3), its repeat on a warm LLM cache, and a job without an LLM."""
    tmp = tmp_path_factory.mktemp("costs")
    first_model = ScriptedLLM(lambda messages, schema: ANSWER)
    first = run(tmp, tmp / "sweep" / "0", CachedLLM(first_model, tmp / "llm.sqlite"),
                "answerer=llm", "retriever.top_k=[1,3]")
    plain = run(tmp, tmp / "sweep" / "1", None, "answerer=none", "retriever.top_k=[5]")
    again_model = ScriptedLLM(lambda messages, schema: ANSWER)
    again = run(tmp, tmp / "again" / "0", CachedLLM(again_model, tmp / "llm.sqlite"),
                "answerer=llm", "retriever.top_k=[1,3]")
    return tmp, first, first_model, plain, again, again_model


def test_each_variant_counts_one_answer_call_per_sample_and_its_tokens(jobs):
    _, first, model, _, _, _ = jobs
    assert len(model.calls) == 2 * N_SAMPLES
    words = [sum(len(m["content"].split()) for m in call.messages) for call in model.calls]
    k1, k3 = (v["cost"] for v in first["variants"])
    # The variants run one after another: the first 40 calls are top_k=1's, the next 40 top_k=3's.
    assert k1 == {"llm_calls": N_SAMPLES, "llm_cached_calls": 0, "llm_failed_calls": 0,
                  "llm_prompt_tokens": sum(words[:N_SAMPLES]), "llm_completion_tokens": 7 * N_SAMPLES}
    assert k3["llm_calls"] == N_SAMPLES and k3["llm_prompt_tokens"] == sum(words[N_SAMPLES:])
    assert k3["llm_prompt_tokens"] > k1["llm_prompt_tokens"]  # three contexts per question instead of one
    assert first["cost"]["llm"] == {"calls": 2 * N_SAMPLES, "cached_calls": 0, "failed_calls": 0,
                                    "prompt_tokens": sum(words), "completion_tokens": 14 * N_SAMPLES}
    written = json.loads(Path(first["job"], "summary.json").read_text())
    assert [v["cost"] for v in written["variants"]] == [k1, k3]


def test_a_repeat_is_answered_from_the_llm_cache_with_the_same_token_counts(jobs):
    _, first, _, _, again, again_model = jobs
    assert again_model.calls == []
    for before, after in zip(first["variants"], again["variants"]):
        assert after["cost"] == {**before["cost"], "llm_cached_calls": N_SAMPLES}


def test_without_an_llm_there_are_no_llm_counts(jobs):
    _, _, _, plain, _, _ = jobs
    assert "llm" not in plain["cost"] and all("cost" not in v for v in plain["variants"])


def test_the_leaderboard_shows_each_variants_llm_cost_and_blanks_without_one(jobs):
    tmp, first, _, _, _, _ = jobs
    paths = build_board(tmp / "sweep", "ndcg@10", n_resamples=200)
    rows = {r["top_k"]: r for r in csv.DictReader(paths["csv"].open())}
    costs = {v["params"]["top_k"]: v["cost"] for v in first["variants"]}
    for k in ("1", "3"):
        for col in ("llm_calls", "llm_cached_calls", "llm_prompt_tokens", "llm_completion_tokens"):
            assert rows[k][col] == str(costs[int(k)][col])
        assert float(rows[k]["seconds"]) > 0 and int(rows[k]["embedded_texts"]) > 0
    assert [rows["5"][c] for c in ("llm_calls", "llm_prompt_tokens")] == ["", ""]  # the job without an LLM
    md, html = paths["md"].read_text(), paths["html"].read_text()
    assert "| llm_calls | llm_cached_calls | llm_prompt_tokens | llm_completion_tokens |" in md
    assert f"| {N_SAMPLES} | 0 | {costs[3]['llm_prompt_tokens']} | {7 * N_SAMPLES} |" in md
    assert "<th class=\"\">llm_prompt_tokens</th>" in html and f"<td>{costs[1]['llm_prompt_tokens']}</td>" in html
    for text in (paths["csv"].read_text(), md):
        assert "nan" not in text.lower().replace("nanmean", "")


def test_a_board_without_llm_jobs_has_no_llm_columns(jobs):
    tmp, _, _, _, _, _ = jobs
    paths = build_board(tmp / "sweep" / "1", "ndcg@10", n_resamples=200, html=False)
    header = paths["csv"].read_text().splitlines()[0]
    assert "seconds,embedded_texts" in header and "llm_" not in header
    assert "llm" not in paths["md"].read_text().lower()
