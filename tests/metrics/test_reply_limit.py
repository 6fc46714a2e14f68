"""A judge reply over ``max_reply_chars`` is an error naming its size: never sent back in a repair request,
never cached, kept only cut to the limit."""

from __future__ import annotations

import asyncio
import json

import pytest
from chat_server import ChatServer

from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.llm import CachedLLM, OpenAICompatLLM, ScriptedLLM
from ragsweep.metrics.llm.base import MAX_REPLY_CHARS
from ragsweep.metrics.llm.factory import openai
from ragsweep.metrics.scoring import score_samples

HUGE = "x" * (3 * MAX_REPLY_CHARS)  # not JSON either: without the limit it would go back in a repair request


def _judge(server: ChatServer, cache, **kw) -> CachedLLM:
    llm = OpenAICompatLLM("judge", base_url=server.url, max_retries=0, api_key_env="RAGSWEEP_TEST_NO_KEY", **kw)
    return CachedLLM(llm, cache)


def test_a_huge_reply_is_an_error_not_repaired_and_not_cached(tmp_path):
    with ChatServer(lambda body, headers: HUGE) as server:
        judge = _judge(server, tmp_path / "llm.sqlite")
        with pytest.raises(JudgeError) as err:
            asyncio.run(judge.complete([{"role": "user", "content": "Say {}"}], {"type": "object"}))
        assert len(server.requests) == 1  # no repair request carrying the reply back
        assert len(judge.store) == 0
        assert f"reply of {len(HUGE):,} characters is over the limit of {MAX_REPLY_CHARS:,}" in str(err.value)
        assert err.value.raw == HUGE[:MAX_REPLY_CHARS]


def test_a_sample_with_a_huge_reply_gets_an_error_status_naming_the_size(tmp_path):
    with ChatServer(lambda body, headers: HUGE) as server:
        judge = _judge(server, tmp_path / "llm.sqlite", max_reply_chars=1000)
        samples = [RagSample("s1", question="Who?", answer="Ada built it.", contexts=("Ada built the bridge.",))]
        rows = asyncio.run(score_samples(samples, resolve(["faithfulness"]), judge=judge, concurrency=1,
                                         progress=False))
    assert [r.result.status for r in rows] == ["error"]
    reason = rows[0].result.explanation["reason"]
    assert f"reply of {len(HUGE):,} characters is over the limit of 1,000" in reason
    assert len(json.dumps(rows[0].result.explanation)) < 3000  # the reply is kept cut, not whole


def test_a_reply_within_the_limit_is_parsed_and_cached(tmp_path):
    with ChatServer(lambda body, headers: json.dumps({"a": "y" * 500})) as server:
        judge = _judge(server, tmp_path / "llm.sqlite", max_reply_chars=1000)
        done = asyncio.run(judge.complete([{"role": "user", "content": "q"}], {"type": "object"}))
    assert done.parsed == {"a": "y" * 500} and len(judge.store) == 1


def test_the_repair_reply_is_held_to_the_limit_too():
    llm = ScriptedLLM(["not json", "z" * (MAX_REPLY_CHARS + 1)])
    with pytest.raises(JudgeError, match="over the limit"):
        asyncio.run(llm.complete([{"role": "user", "content": "q"}], {"type": "object"}))


@pytest.mark.parametrize("value", [0, -5, "big", True])
def test_a_bad_limit_is_refused(value):
    with pytest.raises(InputError, match="llm.max_reply_chars must be a positive number"):
        openai("m", base_url="http://127.0.0.1:9/v1", max_reply_chars=value, cache=False)
