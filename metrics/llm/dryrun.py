"""A judge that runs no model: it records what a run would ask and answers with minimal valid JSON.

``ragsweep score dry_run=true`` scores the samples through :class:`DryRunLLM` (and
:class:`DryRunEmbedder`), then prints :func:`dry_run_report`: how many judge calls the run
would make, per prompt, with estimated prompt tokens and output limits. Identical calls are
counted once, as :class:`~metrics.llm.CachedLLM` makes them once (single-flight or cache).

The replies are the smallest objects the schema accepts, with as many list items as the sample
has numbered passages (at least one), so a metric that chains calls (claims, then a check of
those claims) runs its later calls too, and per-chunk verdicts are complete.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragsweep.metrics.llm.base import Completion, Message, PromptId, Schema, Usage, WordBias, json_schema_of
from ragsweep.metrics.llm.cache import cache_key


@dataclass(frozen=True)
class DryRunCall:
    """One judge call a run would make."""

    prompt: str
    prompt_tokens: int
    max_tokens: int | None
    shared: bool  # an identical call came earlier: served by single-flight or the cache


def estimate_tokens(messages: list[Message]) -> int:
    """About four characters per token (English text, BPE tokenizers)."""
    return sum(len(m["content"]) for m in messages) // 4


def minimal_instance(schema: dict[str, Any], defs: dict[str, Any] | None = None, *, items: int = 1,
                     ordinal: int = 1) -> Any:
    """The smallest JSON value valid under a (pydantic-made) JSON schema.

    Lists get ``items`` entries (at least ``minItems``); an integer with a lower bound of 1 in
    the i-th entry of a list is i, so numbered verdicts (chunk 1, chunk 2, ...) come out complete.
    """
    defs = schema.get("$defs", {}) if defs is None else defs

    def sub(s: dict[str, Any], k: int = ordinal) -> Any:
        return minimal_instance(s, defs, items=items, ordinal=k)

    if "$ref" in schema:
        return sub(defs[schema["$ref"].rsplit("/", 1)[-1]])
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            options = [s for s in schema[combo] if s.get("type") != "null"] or schema[combo]
            return sub(options[0])
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: sub(props.get(k, {})) for k in schema.get("required", [])}
    if kind == "array":
        count = max(items, int(schema.get("minItems", 1)))
        return [sub(schema.get("items", {}), i) for i in range(1, count + 1)]
    if kind == "string":
        return "x" * max(1, int(schema.get("minLength", 1)))
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        if kind == "integer" and low == 1 and ordinal <= schema.get("maximum", ordinal):
            return ordinal
        return low
    if kind == "boolean":
        return False
    return None


_NUMBERED = re.compile(r"^\[(\d+)\] ", re.MULTILINE)


class DryRunLLM:
    """An :class:`~metrics.llm.base.LLM` that records calls and returns minimal schema-valid replies.

    Attributes:
        calls: Every call in order, each marked ``shared`` when an identical one came first.
    """

    def __init__(self) -> None:
        self.calls: list[DryRunCall] = []
        self._seen: set[str] = set()

    @property
    def model_id(self) -> str:
        return "dry-run"

    def identity(self) -> dict[str, Any]:
        return {"backend": "dry-run"}

    async def complete(self, messages: list[Message], schema: Schema | None = None, *,
                       prompt: PromptId | None = None, logprobs: bool = False,
                       max_tokens: int | None = None, bias: WordBias | None = None) -> Completion:
        key = cache_key(self.identity(), messages, schema, prompt=prompt, logprobs=logprobs, max_tokens=max_tokens,
                        bias=bias)
        self.calls.append(DryRunCall(prompt.name if prompt else "(unnamed)", estimate_tokens(messages),
                                     max_tokens, shared=key in self._seen))
        self._seen.add(key)
        if schema is None:
            return Completion(text="", usage=Usage())
        # As many list items as the sample has numbered passages, so per-chunk verdicts are complete.
        numbers = [int(k) for k in _NUMBERED.findall(messages[-1]["content"])] if messages else []
        obj = minimal_instance(json_schema_of(schema), items=max([1, *numbers]))
        parsed = obj if isinstance(schema, dict) else schema.model_validate(obj)
        return Completion(text=json.dumps(obj), parsed=parsed, usage=Usage())


class DryRunEmbedder:
    """An embedder that returns the same unit vector for every text (the dry run loads no model)."""

    def identity(self) -> dict[str, Any]:
        return {"backend": "dry-run"}

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), 8), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def dry_run_report(calls: list[DryRunCall], n_samples: int | None = None) -> str:
    """A table of judge calls per prompt (identical calls counted once) and the totals."""
    made = [c for c in calls if not c.shared]
    per: dict[str, list[DryRunCall]] = defaultdict(list)
    for c in made:
        per[c.prompt].append(c)
    lines = [f"{'prompt':<30} {'calls':>6} {'prompt tokens~':>15} {'max out tokens':>15}"]
    for name in sorted(per):
        group = per[name]
        limit = sum(c.max_tokens or 0 for c in group)
        lines.append(f"{name:<30} {len(group):>6} {sum(c.prompt_tokens for c in group):>15} {limit:>15}")
    tokens = sum(c.prompt_tokens for c in made)
    lines.append(f"{'total':<30} {len(made):>6} {tokens:>15} {sum(c.max_tokens or 0 for c in made):>15}")
    per_sample = f" ({len(made) / n_samples:.1f} per sample)" if n_samples else ""
    lines.append(f"judge calls: {len(made)}{per_sample}; {len(calls) - len(made)} more requests are "
                 "identical to an earlier one and are shared (single-flight / cache)")
    return "\n".join(lines)
