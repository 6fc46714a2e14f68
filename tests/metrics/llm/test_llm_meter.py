"""The meter: calls, cache hits, failures and tokens of a wrapped LLM, and per-stretch differences."""

import asyncio

import pydantic
import pytest

from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import CachedLLM, LLMCost, Meter, PromptId, ScriptedLLM
from ragsweep.metrics.llm.factory import concurrency_of

USER = [{"role": "user", "content": "Is Paris in France?"}]  # 4 words: the scripted model's prompt tokens


class Verdict(pydantic.BaseModel):
    verdict: bool


def test_counts_calls_hits_failures_and_tokens(tmp_path):
    inner = ScriptedLLM(['{"verdict": true}', "no json", "still none"])
    meter = Meter(CachedLLM(inner, tmp_path / "llm.sqlite"))
    p = PromptId("judge.verdict", "1")
    asyncio.run(meter.complete(USER, Verdict, prompt=p))
    start = meter.snapshot()
    assert start == LLMCost(calls=1, cached_calls=0, failed_calls=0, prompt_tokens=4, completion_tokens=2)
    asyncio.run(meter.complete(USER, Verdict, prompt=p))  # a cache hit keeps its recorded tokens
    with pytest.raises(JudgeError):  # invalid, then invalid after the one repair
        asyncio.run(meter.complete([{"role": "user", "content": "Other?"}], Verdict, prompt=p))
    assert meter.snapshot() - start == LLMCost(calls=2, cached_calls=1, failed_calls=1, prompt_tokens=4,
                                               completion_tokens=2)
    assert len(inner.calls) == 3  # the first call, and the failed one with its repair
    assert meter.snapshot().to_dict() == {"llm_calls": 3, "llm_cached_calls": 1, "llm_failed_calls": 1,
                                          "llm_prompt_tokens": 8, "llm_completion_tokens": 4}
    assert meter.usage.prompt_tokens == 8 and meter.evaluated == 0


def test_is_transparent_to_callers():
    inner = ScriptedLLM(["ok"], model_id="tiny", temperature=0.5)
    inner.max_concurrency = 3
    meter = Meter(inner)
    assert meter.model_id == "tiny" and meter.identity() == inner.identity()
    assert concurrency_of(meter) == 3 and concurrency_of(Meter(ScriptedLLM(["ok"]))) == 1
    assert asyncio.run(meter.complete(USER)).text == "ok"


def test_counts_each_prompt_apart(tmp_path):
    inner = ScriptedLLM(['{"verdict": true}', '{"verdict": false}', "no json", "still none"])
    meter = Meter(CachedLLM(inner, tmp_path / "llm.sqlite"))
    write, check = PromptId("gen.write", "1"), PromptId("gen.check", "1")
    asyncio.run(meter.complete(USER, Verdict, prompt=write))
    asyncio.run(meter.complete(USER, Verdict, prompt=write))  # replayed from the cache
    asyncio.run(meter.complete([{"role": "user", "content": "Is Rome in Spain?"}], Verdict, prompt=check))
    with pytest.raises(JudgeError):
        asyncio.run(meter.complete([{"role": "user", "content": "Other?"}], Verdict))
    table = meter.prompt_table()
    assert {k: (v["calls"], v["cached_calls"], v["failed_calls"]) for k, v in table.items()} == {
        "gen.write": (2, 1, 0), "gen.check": (1, 0, 0), "(unnamed)": (1, 0, 1)}
    assert table["gen.write"]["prompt_tokens"] == 8 and table["gen.check"]["completion_tokens"] == 2
    assert all(v["seconds"] >= 0 for v in table.values())
    assert sum(v["calls"] for v in table.values()) == meter.calls
