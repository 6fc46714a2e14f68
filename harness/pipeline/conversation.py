"""Conversations in sweeps and runs: what a variant searches with, and the per-turn summary.

A test sample may be a conversation (``TestSample.conversation``): its question is the last user
turn, and the turns before it are the history. A sweep variant's retriever sees one query per
sample, chosen by ``conversation.query`` (a key sweepable with commas, ``conversation.query=last,history``):

- ``last``: the last user turn as it stands ("When was it opened?": the subject is missing),
- ``history``: every turn of the conversation, oldest first, joined with the last turn (user and
  assistant turns: the subject may only be in an answer),
- ``condensed``: the last turn rewritten by the ``llm`` into a standalone question that names what
  it refers to (:data:`CONDENSE_QUESTION`, one call per conversation, cached like every LLM call).

A single question is its own query under every option, so the axis changes nothing on a test set
without conversations. The variant's answerer gets the same query (a standalone question to answer).

:func:`conversation_summary` adds to a variant's summary, when the test set has conversations, the
share of turns answered well per turn index and the share of conversations answered well in every
turn (:func:`metrics.conversation.turn_summary`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ragsweep.gen import TestSample
from ragsweep.metrics import (
    InputError,
    JudgeError,
    Prompt,
    ScoredSample,
    complete,
    split,
    transcript,
    turn_index,
    turn_summary,
)

log = logging.getLogger(__name__)

QUERY_MODES = ("last", "history", "condensed")
#: The metrics that say a turn was answered well, and the least value that counts (conf: conversation.*).
SUMMARY_METRICS = ("faithfulness", "answer_relevancy")
SUMMARY_THRESHOLD = 0.5


class CondenseInput(BaseModel):
    """A conversation so far and its last user question."""

    conversation: str = Field(description="the earlier turns, one 'role: text' line each, oldest first")
    question: str = Field(description="the last user question, which may lean on the earlier turns")


class CondenseOutput(BaseModel):
    """The last question, rewritten to stand on its own."""

    question: str


CONDENSE_QUESTION: Prompt[CondenseInput, CondenseOutput] = Prompt(
    name="harness.condense_question",
    instruction=(
        "Rewrite the last user question of a conversation as one standalone question for a search engine. "
        "Replace every pronoun or omission that refers to an earlier turn (it, its, she, they, 'and in "
        "2023?') with what it refers to, by name. Keep the question's meaning, wording and language "
        "otherwise; do not answer it and do not add facts. If it already stands on its own, return it unchanged."
    ),
    input=CondenseInput,
    output=CondenseOutput,
    examples=(
        (CondenseInput(conversation="user: When did the Forth Bridge open?\nassistant: 1890",
                       question="Who designed it?"),
         CondenseOutput(question="Who designed the Forth Bridge?")),
        (CondenseInput(conversation="user: Where was Marie Curie born?\nassistant: Warsaw",
                       question="And when did she win the Nobel Prize in Chemistry?"),
         CondenseOutput(question="When did Marie Curie win the Nobel Prize in Chemistry?")),
    ),
    max_tokens=96,  # one question
)


def query_mode(conversation: Mapping[str, Any] | None) -> str:
    """``conversation.query`` checked (``history`` when the key is absent)."""
    mode = str((conversation or {}).get("query", "history"))
    if mode not in QUERY_MODES:
        raise InputError(f"conversation.query must be one of {', '.join(QUERY_MODES)}, got {mode!r}")
    return mode


def history_of(sample: TestSample) -> tuple[Mapping[str, Any], ...]:
    """The turns before the sample's question (none for a single question)."""
    return split(sample.conversation)[0] if sample.conversation else ()


def joined(sample: TestSample) -> str:
    """The ``history`` query: every earlier turn's text, then the question, one per line."""
    return "\n".join([*(str(t.get("content", "")) for t in history_of(sample)), sample.question])


def queries(samples: Sequence[TestSample], mode: str, llm: Any = None, concurrency: int = 1) -> list[str]:
    """What each sample's retrieval searches with under ``mode`` (see the module docstring).

    Raises:
        InputError: ``condensed`` without an LLM (``llm=none``) on a test set with conversations.
    """
    if mode == "last":
        return [s.question for s in samples]
    if mode == "history":
        return [joined(s) for s in samples]
    todo = [i for i, s in enumerate(samples) if history_of(s)]
    out = [s.question for s in samples]
    if not todo:
        return out
    if llm is None:
        raise InputError("conversation.query=condensed needs an LLM to rewrite the follow-ups: llm=local, "
                         "llm=openai ... (or conversation.query=last|history)")
    rewritten = asyncio.run(_condense_all([samples[i] for i in todo], llm, concurrency))
    failed = 0
    for i, text in zip(todo, rewritten):
        if text is None:  # the call failed for good: the history joined, so the question keeps its subject
            failed += 1
            text = joined(samples[i])
        out[i] = text
    if failed:
        log.warning("condensing failed for %d of %d conversations: they search with the history joined",
                    failed, len(todo))
    return out


async def _condense_all(samples: Sequence[TestSample], llm: Any, concurrency: int) -> list[str | None]:
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(s: TestSample) -> str | None:
        async with limit:
            try:
                done = await complete(llm, CONDENSE_QUESTION,
                                      CondenseInput(conversation=transcript(history_of(s)), question=s.question))
            except JudgeError as exc:
                log.info("%s: condensing failed (%s)", s.id, exc)
                return None
        text = " ".join(str(done.parsed.question).split())
        return text or None

    return list(await asyncio.gather(*(one(s) for s in samples)))


def has_conversations(samples: Sequence[TestSample]) -> bool:
    return any(history_of(s) for s in samples)


def conversation_summary(rows: Sequence[ScoredSample], samples: Sequence[TestSample],
                         options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A variant's per-turn summary from its scores (one row per sample x metric).

    A sample's conversation is ``provenance.conversation_id`` when the test set holds one sample per
    turn of a conversation, else the sample alone (so a follow-up is a conversation of one scored
    turn: the earlier turn's answer in its history is the reference's, not the system's).
    ``options``: ``summary_metrics`` and ``threshold`` (conf: ``conversation``).
    """
    opts = dict(options or {})
    metrics = list(opts.get("summary_metrics") or SUMMARY_METRICS)
    threshold = float(opts.get("threshold", SUMMARY_THRESHOLD))
    values: dict[str, dict[str, float | None]] = {}
    for r in rows:
        values.setdefault(r.sample_id, {})[r.metric] = r.result.value if r.result.status == "ok" else None
    turns = {s.id: turn_index(history_of(s)) for s in samples}
    groups = {s.id: str(s.provenance.get("conversation_id") or s.id) for s in samples}
    return turn_summary(values, turns, groups, metrics, threshold)
