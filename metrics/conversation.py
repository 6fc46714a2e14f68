"""Conversations: the last user turn is the question, the turns before it are its history.

A turn is a mapping ``{"role": "user" | "assistant" | ..., "content": str}`` (Ragas' messages say
``"type": "human" | "ai"``, read the same way). Metrics that need one question use the last user
turn (:func:`split`). A judged metric whose prompt reads the question sees the history too: the
scoring runner gives it :func:`with_history` in place of the question (``MetricSpec.reads_history``;
``answer_relevancy``, which compares embeddings of questions, keeps the last turn alone). Metrics
without a judge, and the ``llm=none`` stand-ins, read the last turn alone.

:func:`turn_summary` is the conversation-level summary of a variant: per turn index (1 = a first
question, 2 = a follow-up, ...), the share of turns answered well on each chosen metric and on all
of them, and the share of conversations every scored turn of which was answered well.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Turn = Mapping[str, Any]

#: Ragas message types as roles.
ROLE_OF_TYPE = {"human": "user", "ai": "assistant", "tool": "tool"}


def role(turn: Turn) -> str:
    """A turn's role: ``role``, or Ragas' ``type`` as a role (human -> user, ai -> assistant)."""
    value = turn.get("role")
    if value is None:
        value = ROLE_OF_TYPE.get(str(turn.get("type")), turn.get("type"))
    return str(value)


def split(turns: Sequence[Turn]) -> tuple[tuple[Turn, ...], str | None, tuple[Turn, ...]]:
    """``(history, question, after)``: the turns before the last user turn, its text, the turns after it.

    ``after`` holds the assistant's reply when the conversation ends with one (a Ragas multi-turn
    sample carries the response so). No user turn -> ``(turns, None, ())``.
    """
    for i in range(len(turns) - 1, -1, -1):
        if role(turns[i]) == "user":
            return tuple(turns[:i]), str(turns[i].get("content", "")), tuple(turns[i + 1:])
    return tuple(turns), None, ()


def turn_index(history: Sequence[Turn] | None) -> int:
    """The question's turn number: 1 + the user turns before it."""
    return 1 + sum(role(t) == "user" for t in history or ())


def transcript(turns: Iterable[Turn]) -> str:
    """Turns as ``role: content`` lines, oldest first."""
    return "\n".join(f"{role(t)}: {' '.join(str(t.get('content', '')).split())}" for t in turns)


def with_history(question: str | None, history: Sequence[Turn] | None) -> str | None:
    """The question as a judge sees it in a conversation: the earlier turns, then the question.

    No history -> the question unchanged (single questions keep their cache keys)."""
    if not history or question is None:
        return question
    return f"Conversation so far:\n{transcript(history)}\n\nLast user question: {question}"


def turn_summary(values: Mapping[str, Mapping[str, float | None]], turns: Mapping[str, int],
                 conversations: Mapping[str, str], metrics: Sequence[str], threshold: float) -> dict[str, Any]:
    """Per turn index and per conversation, the share of turns answered well.

    Args:
        values: sample id -> metric -> value (None when the metric is undefined or an error there).
        turns: sample id -> its turn index (:func:`turn_index`).
        conversations: sample id -> the conversation it belongs to (a sample alone is its own).
        metrics: The metrics that say "answered well" (e.g. faithfulness, answer_relevancy); those
            scored on no sample are left out (listed under ``missing``).
        threshold: A turn is answered well on a metric when its value is at least this.

    Returns:
        ``{"metrics", "missing", "threshold", "by_turn": {"1": {"n", "<metric>", "all"}, ...},
        "conversations": {"n", "all_turns"}}``: shares in [0, 1], each over the turns (or
        conversations) where every used metric has a value; None when there is none.
    """
    used = [m for m in metrics if any(values.get(s, {}).get(m) is not None for s in turns)]
    missing = [m for m in metrics if m not in used]

    def good(sid: str, metric: str) -> bool | None:
        value = values.get(sid, {}).get(metric)
        return None if value is None else value >= threshold

    def share(flags: Sequence[bool | None]) -> float | None:
        known = [f for f in flags if f is not None]
        return round(sum(known) / len(known), 4) if known else None

    def all_good(sid: str) -> bool | None:
        flags = [good(sid, m) for m in used]
        return None if not used or any(f is None for f in flags) else all(flags)

    by_turn: dict[str, dict[str, Any]] = {}
    for index in sorted(set(turns.values())):
        ids = [s for s, t in turns.items() if t == index]
        row: dict[str, Any] = {"n": len(ids)}
        for m in used:
            row[m] = share([good(s, m) for s in ids])
        row["all"] = share([all_good(s) for s in ids])
        by_turn[str(index)] = row
    groups: dict[str, list[str]] = {}
    for sid in turns:
        groups.setdefault(conversations.get(sid, sid), []).append(sid)
    whole = []
    for ids in groups.values():
        flags = [all_good(s) for s in ids]
        whole.append(None if any(f is None for f in flags) else all(flags))
    out = {"metrics": used, "missing": missing, "threshold": threshold, "by_turn": by_turn,
           "conversations": {"n": len(groups), "all_turns": share(whole)}}
    if not used:
        out["note"] = (f"none of {', '.join(metrics)} was scored: add them to the metrics (faithfulness runs a "
                       "deterministic stand-in with llm=none) or name others in conversation.summary_metrics")
    return out
