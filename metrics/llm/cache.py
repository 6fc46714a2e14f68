"""A content-addressed SQLite cache for LLM calls.

The key is the sha256 of a canonical JSON of everything that changes a model's output:
the backend's :meth:`~metrics.llm.base.LLM.identity` (model, endpoint or file hash, sampling
parameters), the prompt name and version, the messages, the schema, and the logprobs and
max_tokens options. Timeouts, retry settings and API keys are not part of an identity, so
they never reach the key or the file.

SQLite in WAL mode lets several processes (joblib or Ray workers on one machine) read while
one writes; within a process, one connection is shared by threads under a lock, and calls
run in a worker thread so the event loop is not blocked while SQLite waits for a lock.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ragsweep.metrics.errors import scrub
from ragsweep.metrics.llm.base import (
    LLM,
    Completion,
    Message,
    PromptId,
    Schema,
    Usage,
    json_schema_of,
    parse_structured,
)

_KEY_FORMAT = 1  # bump when the key layout changes, so old entries stop matching

_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model_id TEXT NOT NULL,
    prompt TEXT,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    logprobs TEXT,
    created REAL NOT NULL
)
"""


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace, so equal content gives equal bytes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(
    identity: dict[str, Any],
    messages: list[Message],
    schema: Schema | None = None,
    *,
    prompt: PromptId | None = None,
    logprobs: bool = False,
    max_tokens: int | None = None,
) -> str:
    """The sha256 hex key of one call."""
    payload = {
        "format": _KEY_FORMAT,
        "identity": identity,
        "prompt": None if prompt is None else [prompt.name, prompt.version],
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "schema": None if schema is None else json_schema_of(schema),
        "logprobs": logprobs,
        "max_tokens": max_tokens,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class CompletionStore:
    """The SQLite table behind :class:`CachedLLM`.

    Args:
        path: The database file; its folder is created.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # Autocommit mode (isolation_level=None): each statement is its own short
        # transaction, so no process holds the write lock longer than one insert.
        self._conn = sqlite3.connect(
            self.path, timeout=60.0, isolation_level=None, check_same_thread=False
        )
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA_SQL)

    def get(self, key: str) -> tuple[str, Usage, Any] | None:
        """Return (text, usage, logprobs) for a key, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, prompt_tokens, completion_tokens, logprobs "
                "FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, p_tok, c_tok, lp = row
        return text, Usage(p_tok, c_tok), None if lp is None else json.loads(lp)

    def put(self, key: str, model_id: str, prompt: PromptId | None, result: Completion) -> None:
        """Store one result (text, usage, logprobs; never the parsed object or credentials)."""
        row = (
            key,
            model_id,
            None if prompt is None else f"{prompt.name}@{prompt.version}",
            scrub(result.text),  # whatever a server echoed, no credential is stored
            result.usage.prompt_tokens,
            result.usage.completion_tokens,
            None if result.logprobs is None else json.dumps(result.logprobs),
            time.time(),
        )
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


class CachedLLM:
    """An :class:`~metrics.llm.base.LLM` that answers repeated calls from SQLite.

    Only successful results are stored; a call that raised is tried again next time.
    Identical calls running at the same time in one process share a single model call.

    Args:
        inner: The model to call on a miss.
        path: The SQLite file, e.g. ``<cache>/llm.sqlite``.
    """

    def __init__(self, inner: LLM, path: str | Path) -> None:
        self.inner = inner
        self.store = CompletionStore(path)
        self.hits = 0
        self.misses = 0
        self._inflight: dict[str, asyncio.Future[Completion]] = {}

    @property
    def model_id(self) -> str:
        """The inner model's id."""
        return self.inner.model_id

    def identity(self) -> dict[str, Any]:
        """The inner model's identity (caching does not change outputs)."""
        return self.inner.identity()

    async def complete(
        self,
        messages: list[Message],
        schema: Schema | None = None,
        *,
        prompt: PromptId | None = None,
        logprobs: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        """See :meth:`metrics.llm.base.LLM.complete`. A hit has ``cached=True`` and the
        usage recorded when the result was first computed."""
        # In a thread: a local model's identity may first have to assemble and hash its file.
        identity = await asyncio.to_thread(self.inner.identity)
        key = cache_key(
            identity, messages, schema,
            prompt=prompt, logprobs=logprobs, max_tokens=max_tokens,
        )  # fmt: skip
        if key in self._inflight:
            return await self._join(key)
        hit = await asyncio.to_thread(self.store.get, key)
        if hit is not None:
            text, usage, lps = hit
            try:
                parsed = parse_structured(text, schema) if schema is not None else None
            except ValueError:
                parsed = _MISS  # stored under an older, looser schema check: recompute
            if parsed is not _MISS:
                self.hits += 1
                return Completion(text, parsed, usage, lps, cached=True)
        if key in self._inflight:  # another task started it while we read the store
            return await self._join(key)
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            self.misses += 1
            result = await self.inner.complete(
                messages, schema, prompt=prompt, logprobs=logprobs, max_tokens=max_tokens
            )
            await asyncio.to_thread(self.store.put, key, self.model_id, prompt, result)
            future.set_result(result)
            return result
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as err:
            future.set_exception(err)
            future.exception()  # mark it retrieved: there may be no waiter
            raise
        finally:
            del self._inflight[key]

    async def _join(self, key: str) -> Completion:
        shared = await asyncio.shield(self._inflight[key])
        self.hits += 1
        return Completion(shared.text, shared.parsed, shared.usage, shared.logprobs, cached=True)


_MISS = object()
