"""Counting what an LLM is asked to do: calls, calls served from the cache, tokens.

:class:`Meter` wraps any :class:`~metrics.llm.base.LLM` and implements the same ``complete``; the
sweep reads a :class:`LLMCost` per variant (a snapshot before and after, subtracted), the
calibration benchmark its totals.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from ragsweep.metrics.llm.base import Completion, Message, PromptId, Schema, StopRule, Usage, WordBias


@dataclass(frozen=True)
class LLMCost:
    """What a stretch of work asked of the model.

    Attributes:
        calls: ``complete`` calls, failed ones included (a repair inside a call is not a call).
        cached_calls: Calls answered from the cache: no model ran for them.
        failed_calls: Calls that raised (e.g. output still invalid after the repair).
        prompt_tokens: Prompt tokens of the calls that returned, as the backend counted them;
            a cache hit counts the tokens recorded when it was first computed, so a variant's
            figure does not depend on what an earlier run left in the cache.
        completion_tokens: Generated tokens, counted the same way.
    """

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __sub__(self, other: LLMCost) -> LLMCost:
        return LLMCost(*(a - b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def __add__(self, other: LLMCost) -> LLMCost:
        return LLMCost(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self) -> tuple[int, ...]:
        return (self.calls, self.cached_calls, self.failed_calls, self.prompt_tokens, self.completion_tokens)

    def to_dict(self, prefix: str = "llm_") -> dict[str, int]:
        """The counts under prefixed names, e.g. ``{"llm_calls": 40, ...}``: the sweep's cost keys."""
        return {prefix + k: v for k, v in asdict(self).items()}


class Meter:
    """An LLM that passes every call to ``inner`` and counts it.

    Attributes:
        inner: The wrapped model (often a :class:`~metrics.llm.CachedLLM`).
        calls, cached_calls, failed_calls: Running counts (see :class:`LLMCost`).
        usage: Tokens of every call that returned, cache hits included.
        evaluated: Prompt tokens llama.cpp actually evaluated (not served from its KV cache) on
            calls that ran the model; 0 for backends that report no timings.
        by_prompt: The same counts per prompt name (``"(unnamed)"`` for a call without one), with the seconds
            spent waiting for each: where a run's model time goes (:meth:`prompt_table`).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0
        self.cached_calls = 0
        self.failed_calls = 0
        self.usage = Usage()
        self.evaluated = 0
        self.by_prompt: dict[str, dict[str, float]] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def max_concurrency(self) -> int | None:
        """The wrapped model's (see :func:`metrics.llm.factory.concurrency_of`)."""
        return getattr(self.inner, "max_concurrency", None)

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def snapshot(self) -> LLMCost:
        """The counts so far; subtract an earlier snapshot for the cost of what ran in between."""
        return LLMCost(self.calls, self.cached_calls, self.failed_calls, self.usage.prompt_tokens,
                       self.usage.completion_tokens)

    async def complete(self, messages: list[Message], schema: Schema | None = None, *,
                       prompt: PromptId | None = None, logprobs: bool = False,
                       max_tokens: int | None = None, bias: WordBias | None = None,
                       stop: StopRule | None = None) -> Completion:
        """See :meth:`metrics.llm.base.LLM.complete`."""
        self.calls += 1
        tally = self.by_prompt.setdefault(prompt.name if prompt is not None else "(unnamed)", dict.fromkeys(
            ("calls", "cached_calls", "failed_calls", "seconds", "prompt_tokens", "evaluated", "completion_tokens"), 0))
        tally["calls"] += 1
        started = time.perf_counter()
        try:
            out = await self.inner.complete(messages, schema, prompt=prompt, logprobs=logprobs,
                                            max_tokens=max_tokens, **({"bias": bias} if bias else {}),
                                            **({"stop": stop} if stop is not None else {}))
        except BaseException:
            self.failed_calls += 1
            tally["failed_calls"] += 1
            raise
        finally:
            tally["seconds"] += time.perf_counter() - started
        self.usage = self.usage + out.usage
        tally["prompt_tokens"] += out.usage.prompt_tokens
        tally["completion_tokens"] += out.usage.completion_tokens
        if out.cached:
            self.cached_calls += 1
            tally["cached_calls"] += 1
        else:
            timings = getattr(getattr(self.inner, "inner", self.inner), "last_timings", None) or {}
            evaluated = int(timings.get("prompt_n", 0) or 0)
            self.evaluated += evaluated
            tally["evaluated"] += evaluated
        return out

    def prompt_table(self) -> dict[str, dict[str, float]]:
        """:attr:`by_prompt` with the seconds rounded, the slowest prompt first."""
        return {name: {**t, "seconds": round(t["seconds"], 2)}
                for name, t in sorted(self.by_prompt.items(), key=lambda kv: -kv[1]["seconds"])}
