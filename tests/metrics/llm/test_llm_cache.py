"""The SQLite LLM cache: hits, what makes a miss, persistence, concurrency."""

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pydantic
import pytest

from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import CachedLLM, CompletionStore, PromptId, ScriptedLLM, cache_key

USER = [{"role": "user", "content": "Is Paris in France?"}]
P1 = PromptId("judge.verdict", "1")
REPO = Path(__file__).resolve().parents[3]


class Verdict(pydantic.BaseModel):
    verdict: bool


def run(coro):
    return asyncio.run(coro)


def test_second_identical_call_is_a_hit(tmp_path):
    inner = ScriptedLLM(['{"verdict": true}'], logprobs=[{"{": -0.01}])
    llm = CachedLLM(inner, tmp_path / "llm.sqlite")
    first = run(llm.complete(USER, Verdict, prompt=P1, logprobs=True))
    second = run(llm.complete(USER, Verdict, prompt=P1, logprobs=True))
    assert (first.cached, second.cached) == (False, True)
    assert second.parsed == Verdict(verdict=True) and second.text == first.text
    assert second.logprobs == [{"{": -0.01}] and second.usage == first.usage
    assert len(inner.calls) == 1 and (llm.hits, llm.misses) == (1, 1)


def test_cache_survives_a_new_process_object(tmp_path):
    run(CachedLLM(ScriptedLLM(["Paris"]), tmp_path / "c.sqlite").complete(USER, prompt=P1))
    fresh_inner = ScriptedLLM([])  # would raise ScriptExhausted if called
    out = run(CachedLLM(fresh_inner, tmp_path / "c.sqlite").complete(USER, prompt=P1))
    assert out.cached and out.text == "Paris" and fresh_inner.calls == []


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"prompt": PromptId("judge.verdict", "2")},
        {"prompt": PromptId("judge.other", "1")},
        {"schema": None},
        {"logprobs": True},
        {"max_tokens": 5},
        {"messages": [{"role": "user", "content": "Is Rome in France?"}]},
    ],
)
def test_anything_that_changes_the_output_misses(tmp_path, change):
    path = tmp_path / "llm.sqlite"
    base = {"messages": USER, "schema": Verdict, "prompt": P1, "logprobs": False, "max_tokens": None}
    run(CachedLLM(ScriptedLLM(['{"verdict": true}']), path).complete(**{**base, "messages": USER}))
    args = {**base, **{k: v for k, v in change.items() if k != "temperature"}}
    inner = ScriptedLLM(['{"verdict": false}'], temperature=change.get("temperature", 0.0))
    out = run(CachedLLM(inner, path).complete(**args))
    assert not out.cached and len(inner.calls) == 1


def test_key_is_stable_and_canonical():
    ident = {"model": "m", "temperature": 0.0}
    a = cache_key(ident, USER, Verdict, prompt=P1)
    b = cache_key({"temperature": 0.0, "model": "m"}, list(USER), Verdict, prompt=PromptId("judge.verdict", "1"))
    assert a == b and len(a) == 64


def test_failures_are_not_cached(tmp_path):
    inner = ScriptedLLM([JudgeError("down"), "Paris"])
    llm = CachedLLM(inner, tmp_path / "llm.sqlite")
    with pytest.raises(JudgeError):
        run(llm.complete(USER))
    assert run(llm.complete(USER)).text == "Paris"
    assert len(llm.store) == 1


class SlowLLM(ScriptedLLM):
    """Takes a while, so that identical calls overlap."""

    async def complete(self, *args, **kwargs):
        await asyncio.sleep(0.1)
        return await super().complete(*args, **kwargs)


def test_concurrent_identical_calls_share_one_model_call(tmp_path):
    inner = SlowLLM(lambda messages, schema: "Paris")
    llm = CachedLLM(inner, tmp_path / "llm.sqlite")

    async def many():
        return await asyncio.gather(*(llm.complete(USER) for _ in range(5)))

    outs = run(many())
    assert [o.text for o in outs] == ["Paris"] * 5
    assert len(inner.calls) == 1
    assert sum(o.cached for o in outs) == 4


def test_wal_mode_and_several_processes_writing(tmp_path):
    path = tmp_path / "shared.sqlite"
    CompletionStore(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    writer = textwrap.dedent(
        """
        import sys
        from ragsweep.metrics.llm import Completion, CompletionStore
        store = CompletionStore(sys.argv[1])
        for i in range(40):
            store.put(f"{sys.argv[2]}-{i}", "m", None, Completion(text=str(i)))
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", writer, str(path), tag], cwd=REPO)
        for tag in ("a", "b", "c")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    store = CompletionStore(path)
    assert len(store) == 120
    assert store.get("b-39")[0] == "39"


class _StopAt:
    """A stop rule that ends a reply once ``word`` is in it."""

    def __init__(self, word: str, name: str = "test:stop") -> None:
        self.word, self.name = word, name

    def __call__(self, text: str) -> bool:
        return self.word in text


def test_a_stopped_reply_is_stored_as_it_stopped_and_keyed_by_its_rule(tmp_path):
    path = tmp_path / "llm.sqlite"
    inner = ScriptedLLM(['{"verdict": true}'], streams=True)
    first = run(CachedLLM(inner, path).complete(USER, Verdict, prompt=P1, stop=_StopAt("verdict")))
    assert first.stopped and first.parsed is None and first.text == '{"verdict'
    # Replayed stopped, from another process's view of the file, with no model call.
    again = ScriptedLLM([], streams=True)
    replay = run(CachedLLM(again, path).complete(USER, Verdict, prompt=P1, stop=_StopAt("verdict")))
    assert replay.cached and replay.stopped and replay.text == first.text and not again.calls
    # Another rule, or none, is another call: a stopped reply never stands for a finished one.
    assert cache_key({}, USER, Verdict, prompt=P1, stop=_StopAt("x", "test:other")) != cache_key(
        {}, USER, Verdict, prompt=P1, stop=_StopAt("x")) != cache_key({}, USER, Verdict, prompt=P1)
    whole = ScriptedLLM(['{"verdict": false}'], streams=True)
    done = run(CachedLLM(whole, path).complete(USER, Verdict, prompt=P1))
    assert not done.stopped and done.parsed == Verdict(verdict=False) and len(whole.calls) == 1
    # A stored stop that today's rule (same name) would not make is computed again, not replayed.
    fresh = ScriptedLLM(['{"verdict": true}'], streams=True)
    redone = run(CachedLLM(fresh, path).complete(USER, Verdict, prompt=P1, stop=_StopAt("nowhere")))
    assert len(fresh.calls) == 1 and not redone.stopped and redone.parsed == Verdict(verdict=True)
