"""A content-addressed SQLite cache for LLM calls.

The key is the sha256 of a canonical JSON of everything that changes a model's output:
the backend's :meth:`~metrics.llm.base.LLM.identity` (model, endpoint or file hash, sampling
parameters), the prompt name and version, the messages, the schema, and the logprobs and
max_tokens options. Timeouts, retry settings and API keys are not part of an identity, so
they never reach the key or the file.

Every row carries a checksum (sha256 of its key, text and logprobs): a row that fails it is moved into
the ``quarantined`` table, named in one warning, and the call is made again. Rows written before
checksums (``checksum`` NULL) are still read: SQLite checks its own pages, and calling a paid judge
again for every old row would cost more than it protects. A file that is not a readable database is
moved aside into ``<cache>/quarantine/`` (with its ``-wal`` and ``-shm``), named in a warning, and a
fresh store is started.

SQLite in WAL mode lets several processes (joblib or Ray workers on one machine) read while
one writes; within a process, one connection is shared by threads under a lock, and calls
run in a worker thread so the event loop is not blocked while SQLite waits for a lock.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
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
    StopRule,
    Usage,
    WordBias,
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
    created REAL NOT NULL,
    checksum TEXT
)
"""
_COLUMNS = "key, model_id, prompt, text, prompt_tokens, completion_tokens, logprobs, created, checksum"
_QUARANTINE_SQL = f"CREATE TABLE IF NOT EXISTS quarantined AS SELECT {_COLUMNS} FROM completions WHERE 0"

log = logging.getLogger(__name__)


def row_checksum(key: str, text: str, logprobs: str | None) -> str:
    """sha256 (hex) of what a row answers with, tied to its key."""
    return hashlib.sha256(canonical_json([key, text, logprobs]).encode("utf-8")).hexdigest()


def _is_corrupt(exc: BaseException) -> bool:
    # OperationalError (a lock, a full disk) is a DatabaseError too, but says nothing about the file.
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


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
    bias: WordBias | None = None,
    stop: StopRule | None = None,
) -> str:
    """The sha256 hex key of one call (a call without a word bias or a stop rule keys as it did before there
    were any)."""
    payload = {
        "format": _KEY_FORMAT,
        "identity": identity,
        "prompt": None if prompt is None else [prompt.name, prompt.version],
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "schema": None if schema is None else json_schema_of(schema),
        "logprobs": logprobs,
        "max_tokens": max_tokens,
    }
    if bias:
        payload["bias"] = dict(sorted(bias.items()))
    if stop is not None:
        payload["stop"] = stop.name
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class CompletionStore:
    """The SQLite table behind :class:`CachedLLM`.

    Args:
        path: The database file; its folder is created. A file that is not a readable database is
            moved aside (see the module docstring) and a fresh one started.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.quarantined: list[Path] = []  # where this process moved a corrupt file
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise
            self._set_aside(exc)
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        # Autocommit mode (isolation_level=None): each statement is its own short
        # transaction, so no process holds the write lock longer than one insert.
        conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA_SQL)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(completions)")}
            if "checksum" not in columns:  # a store from before checksums
                conn.execute("ALTER TABLE completions ADD COLUMN checksum TEXT")
            conn.execute(_QUARANTINE_SQL)
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_aside(self, exc: BaseException) -> None:
        """Move the unreadable file (and its WAL and shared-memory files) into ``quarantine/``."""
        dest = self.path.parent / "quarantine" / f"{self.path.name}.{time.time_ns()}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                os.replace(source, Path(f"{dest}{suffix}"))
        self.quarantined.append(dest)
        log.warning("LLM cache %s is not a readable database (%s); moved to %s, starting a fresh one",
                    self.path, exc, dest)

    def _restart(self, exc: BaseException) -> None:
        """The file went bad while open: close it, set it aside, open a fresh one (under the lock)."""
        try:
            self._conn.close()
        except sqlite3.Error:
            pass
        self._set_aside(exc)
        self._conn = self._open()

    def get(self, key: str) -> tuple[str, Usage, Any] | None:
        """Return (text, usage, logprobs) for a key, or None (a row failing its checksum is quarantined)."""
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT text, prompt_tokens, completion_tokens, logprobs, checksum "
                    "FROM completions WHERE key = ?",
                    (key,),
                ).fetchone()
            except sqlite3.DatabaseError as exc:
                if not _is_corrupt(exc):
                    raise
                self._restart(exc)
                return None
            if row is None:
                return None
            text, p_tok, c_tok, lp, checksum = row
            if checksum is not None and checksum != row_checksum(key, text, lp):
                self._conn.execute(f"INSERT INTO quarantined SELECT {_COLUMNS} FROM completions WHERE key = ?",
                                   (key,))
                self._conn.execute("DELETE FROM completions WHERE key = ?", (key,))
                log.warning("LLM cache %s: the row of call %s does not match its checksum; moved to its "
                            "'quarantined' table, the call is made again", self.path, key[:16])
                return None
        return text, Usage(p_tok, c_tok), None if lp is None else json.loads(lp)

    def put(self, key: str, model_id: str, prompt: PromptId | None, result: Completion) -> None:
        """Store one result (text, usage, logprobs; never the parsed object or credentials)."""
        text = scrub(result.text)  # whatever a server echoed, no credential is stored
        lp = None if result.logprobs is None else json.dumps(result.logprobs)
        row = (
            key,
            model_id,
            None if prompt is None else f"{prompt.name}@{prompt.version}",
            text,
            result.usage.prompt_tokens,
            result.usage.completion_tokens,
            lp,
            time.time(),
            row_checksum(key, text, lp),
        )
        sql = f"INSERT OR REPLACE INTO completions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        with self._lock:
            try:
                self._conn.execute(sql, row)
            except sqlite3.DatabaseError as exc:
                if not _is_corrupt(exc):
                    raise
                self._restart(exc)
                self._conn.execute(sql, row)

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
        bias: WordBias | None = None,
        stop: StopRule | None = None,
    ) -> Completion:
        """See :meth:`metrics.llm.base.LLM.complete`. A hit has ``cached=True`` and the
        usage recorded when the result was first computed; a reply that ``stop`` ended is stored as it was
        and replayed as stopped."""
        # In a thread: a local model's identity may first have to assemble and hash its file.
        identity = await asyncio.to_thread(self.inner.identity)
        key = cache_key(
            identity, messages, schema,
            prompt=prompt, logprobs=logprobs, max_tokens=max_tokens, bias=bias, stop=stop,
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
            if parsed is _MISS and stop is not None and stop(text):  # stored as the rule stopped it
                self.hits += 1
                return Completion(text, None, usage, lps, cached=True, stopped=True)
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
                messages, schema, prompt=prompt, logprobs=logprobs, max_tokens=max_tokens,
                **({"bias": bias} if bias else {}),  # a wrapped model written before word biases keeps working
                **({"stop": stop} if stop is not None else {}),
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
        return Completion(shared.text, shared.parsed, shared.usage, shared.logprobs, cached=True,
                          stopped=shared.stopped)


_MISS = object()
