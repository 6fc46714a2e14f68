"""Calling the application: bounded concurrency, a timeout per call, retries with backoff, and an
append-only record that lets a stopped run resume.

Every finished call -- answered, or failed for good after its retries -- is one JSON line of
``calls.jsonl`` in the job folder, written and flushed as soon as the call ends. A run that is
stopped (killed, Ctrl-C, a crash) keeps every line it wrote; run again into the same folder, it
reads them and calls only the questions without an ``ok`` line (failed ones are tried again unless
``resume.retry_errors=false``). A line cut short by a kill is dropped when the file is reopened.
A later line for a question replaces an earlier one. The question text (and a conversation's earlier
turns, ``history``) is kept on each line: a line whose question no longer matches the test set is not
reused.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsweep.harness.app.replies import Reply, TargetError, jsonable
from ragsweep.harness.app.targets import Target
from ragsweep.metrics import InputError, scrub, scrub_all

log = logging.getLogger(__name__)
History = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class CallPolicy:
    """How the application is called. Left out of the run's fingerprint: none of it changes an answer.

    Attributes:
        concurrency: Calls in flight at once.
        timeout_s: Seconds one attempt may take before it is abandoned (and retried).
        retries: Further attempts after a failed one that may succeed on retry (timeouts, dropped
            connections, HTTP 408/429/5xx, exceptions of a Python application).
        backoff_s: Wait before the first retry; doubled each retry, with up to 25% jitter.
        backoff_max_s: Longest wait between two attempts.
    """

    concurrency: int = 4
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.timeout_s <= 0 or self.retries < 0 or self.backoff_s < 0:
            raise InputError(f"call: concurrency >= 1, timeout_s > 0, retries >= 0, backoff_s >= 0; got {self}")


class CallLog:
    """``calls.jsonl``: one line per finished call, appended and flushed as it ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: Any = None

    def read(self) -> dict[str, dict[str, Any]]:
        """The last line of each question (a line cut short by a kill is dropped)."""
        rows: dict[str, dict[str, Any]] = {}
        if not self.path.is_file():
            return rows
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # the last line of a killed run; its question is called again
            if isinstance(row, dict) and "sample_id" in row:
                rows[str(row["sample_id"])] = row
        return rows

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_file():  # drop a line cut short by a kill, so the next line starts clean
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                with self.path.open("r+b") as fh:
                    fh.truncate(data.rfind(b"\n") + 1)
        self._fh = self.path.open("a", encoding="utf-8")

    def append(self, row: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def pending(questions: Iterable[tuple[str, str]], done: Mapping[str, Mapping[str, Any]],
            retry_errors: bool = True, histories: Mapping[str, History] | None = None) -> list[tuple[str, str]]:
    """The (sample_id, question) pairs still to call: no line, an error line, or a changed question
    (or changed earlier turns, for a conversation in ``histories``)."""
    out = []
    for sid, question in questions:
        row = done.get(sid)
        history = [dict(t) for t in (histories or {}).get(sid, ())]
        if (row is None or row.get("question") != question or (row.get("history") or []) != history
                or (retry_errors and row.get("status") != "ok")):
            out.append((sid, question))
    return out


def _row(sid: str, question: str, reply: Reply | None, error: str | None, raw: Any, started: float,
         attempts: int, history: History = ()) -> dict[str, Any]:
    row: dict[str, Any] = {"sample_id": sid, "question": question, "status": "ok" if error is None else "error",
                           "latency_ms": round((time.perf_counter() - started) * 1000, 3), "attempts": attempts,
                           "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if history:
        row["history"] = [dict(t) for t in history]
    if reply is not None:
        row.update(answer=reply.answer, contexts=reply.contexts, scores=reply.scores, usage=reply.usage,
                   raw=scrub_all(jsonable(reply.raw)))
        if reply.citations is not None:  # a structured source list; inline markers are read from the answer
            row["citations"] = reply.citations
    else:
        row.update(error=scrub(error or "failed"), raw=scrub_all(jsonable(raw)))
    return row


async def call_one(target: Target, sid: str, question: str, policy: CallPolicy,
                   history: History = ()) -> dict[str, Any]:
    """One question (with a conversation's earlier turns), with retries; the row to record. Latency is
    that of the attempt that answered."""
    attempt = 0
    extra = {"history": history} if history else {}  # a target written before conversations takes none
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            reply = await asyncio.wait_for(target.call(question, sid, **extra), policy.timeout_s)
            return _row(sid, question, reply, None, None, started, attempt, history)
        except InputError:
            raise
        except (asyncio.TimeoutError, TimeoutError):
            error, raw, retryable = f"timed out after {policy.timeout_s:g} s", None, True
        except TargetError as exc:
            error, raw, retryable = str(exc), exc.raw, exc.retryable
        except Exception as exc:  # noqa: BLE001 - the application's own failure, kept as an error row
            error, raw, retryable = f"{type(exc).__name__}: {exc}", None, True
        if not retryable or attempt > policy.retries:
            return _row(sid, question, None, error, raw, started, attempt, history)
        wait = min(policy.backoff_max_s, policy.backoff_s * 2 ** (attempt - 1))
        log.info("%s: attempt %d failed (%s); retrying in %.2f s", sid, attempt, scrub(error), wait)
        await asyncio.sleep(wait * (1 + random.random() / 4))


async def call_all(target: Target, todo: list[tuple[str, str]], policy: CallPolicy, calls: CallLog,
                   progress: bool = False, histories: Mapping[str, History] | None = None) -> int:
    """Call every pending question (with its earlier turns from ``histories``), recording each as it
    finishes; return how many failed."""
    from tqdm import tqdm

    limit = asyncio.Semaphore(policy.concurrency)
    bar = tqdm(total=len(todo), desc="calling", unit="call", disable=not progress)
    failed = 0

    async def one(sid: str, question: str) -> None:
        nonlocal failed
        async with limit:
            row = await call_one(target, sid, question, policy, (histories or {}).get(sid, ()))
        calls.append(row)  # one event loop thread: lines never interleave
        failed += row["status"] != "ok"
        bar.update(1)

    await target.start()
    calls.open()
    try:
        await asyncio.gather(*(one(sid, q) for sid, q in todo))
    finally:
        calls.close()
        bar.close()
        await target.close()
    return failed
