"""The LLM store checks itself: a row failing its checksum is quarantined and the call made again; a file
that is not a database is named, moved aside and replaced by a fresh store; a secret echoed in a reply is
never stored."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pydantic

from ragsweep.metrics.errors import register_secret
from ragsweep.metrics.llm import CachedLLM, CompletionStore, PromptId, ScriptedLLM

USER = [{"role": "user", "content": "Is Paris in France?"}]
P1 = PromptId("judge.verdict", "1")


class Verdict(pydantic.BaseModel):
    verdict: bool


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_corrupt_store_is_named_moved_aside_and_started_afresh(tmp_path, caplog):
    path = tmp_path / "llm.sqlite"
    path.write_bytes(b"this is not a database, it is a truncated download " * 200)
    with caplog.at_level(logging.WARNING):
        llm = CachedLLM(ScriptedLLM(['{"verdict": true}']), path)
        done = asyncio.run(llm.complete(USER, Verdict, prompt=P1))
    assert done.parsed == Verdict(verdict=True) and len(llm.store) == 1
    moved = llm.store.quarantined
    assert len(moved) == 1 and moved[0].parent == tmp_path / "quarantine"
    assert moved[0].read_bytes().startswith(b"this is not a database")
    [warning] = _warnings(caplog)
    assert str(path) in warning and str(moved[0]) in warning and "not a readable database" in warning


def test_a_row_that_fails_its_checksum_is_quarantined_and_called_again(tmp_path, caplog):
    path = tmp_path / "llm.sqlite"
    inner = ScriptedLLM(['{"verdict": true}', '{"verdict": true}'])
    llm = CachedLLM(inner, path)
    asyncio.run(llm.complete(USER, Verdict, prompt=P1))
    with sqlite3.connect(path) as conn:  # a flipped answer: still valid JSON, the wrong verdict
        conn.execute("""UPDATE completions SET text = '{"verdict": false}'""")
    with caplog.at_level(logging.WARNING):
        again = asyncio.run(llm.complete(USER, Verdict, prompt=P1))
        third = asyncio.run(llm.complete(USER, Verdict, prompt=P1))
    assert again.parsed == Verdict(verdict=True) and not again.cached and third.cached
    assert len(inner.calls) == 2 and len(_warnings(caplog)) == 1
    assert str(path) in _warnings(caplog)[0]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT text FROM quarantined").fetchall() == [('{"verdict": false}',)]


def test_rows_written_before_checksums_are_still_read(tmp_path):
    path = tmp_path / "llm.sqlite"
    llm = CachedLLM(ScriptedLLM(['{"verdict": true}']), path)
    asyncio.run(llm.complete(USER, Verdict, prompt=P1))
    llm.store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE completions SET checksum = NULL")
    replay = CachedLLM(ScriptedLLM([]), path)
    assert asyncio.run(replay.complete(USER, Verdict, prompt=P1)).cached


def test_a_store_from_before_checksums_gains_the_column(tmp_path):
    path = tmp_path / "llm.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE completions (key TEXT PRIMARY KEY, model_id TEXT NOT NULL, prompt TEXT, "
                     "text TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
                     "logprobs TEXT, created REAL NOT NULL)")
    store = CompletionStore(path)
    assert store.get("missing") is None and len(store) == 0


def test_a_reply_echoing_the_key_is_stored_without_it(tmp_path):
    key = "Qm4xTr8wLp2vNc7KzH"
    register_secret(key)
    path = tmp_path / "llm.sqlite"
    llm = CachedLLM(ScriptedLLM([f'{{"verdict": true, "note": "your key is {key}"}}']), path)
    asyncio.run(llm.complete(USER, Verdict, prompt=P1))
    llm.store.close()
    assert key.encode() not in path.read_bytes() and b"<redacted>" in path.read_bytes()
