"""A scripted fake LLM, so that every judged metric can be tested without a model.

It goes through the same parsing and repair path as the real backends, so a broken reply
followed by a good one exercises the repair, and two broken replies end in JudgeError.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import lines
from ragsweep.metrics.llm.base import (
    Completion,
    Logprobs,
    Message,
    PromptId,
    Schema,
    StopRule,
    Usage,
    WordBias,
    complete_structured,
    json_schema_of,
)

Reply = Union[str, dict[str, Any], BaseException]
"""A scripted reply: text, a dict sent as JSON text (as lines when the call's schema asks for lines:
:mod:`metrics.llm.lines`), or an exception to raise."""
Responder = Callable[[list[Message], Union[Schema, None]], Union[str, dict[str, Any]]]


class ScriptExhausted(AssertionError):
    """The test made more model calls than it scripted replies for."""


@dataclass
class ScriptedCall:
    """One model call as the fake saw it (a repair is a call of its own)."""

    messages: list[Message]
    schema: Schema | None
    prompt: PromptId | None
    logprobs: bool
    max_tokens: int | None
    bias: WordBias | None = None
    stop: StopRule | None = None


class ScriptedLLM:
    """An :class:`~metrics.llm.base.LLM` that replies from a script and records every call.

    Args:
        responses: Replies served in order, or a function ``(messages, schema) -> str | dict``
            called for every call (it may raise to simulate a failure). A reply that is an
            exception instance is raised instead of returned, e.g. ``JudgeError("down")``.
        logprobs: Returned when a call asks for logprobs; None simulates a backend that
            gives none. A function ``(reply text) -> Logprobs`` gives each reply its own.
        model_id: The id to report.
        temperature: Only part of :meth:`identity`, so tests can show that a sampling
            change misses the cache.
        word_bias: Accept a word bias (recorded in each call's ``bias``), as the in-process model does;
            without it a biased call raises, as an OpenAI-compatible backend's does.
        streams: Honour a :class:`~metrics.llm.base.StopRule` as the in-process model does: the reply is
            "written" one character at a time and ends at the first prefix the rule stops (recorded in each
            call's ``stop``); without it the rule is ignored, as an OpenAI-compatible backend ignores it.
        line_replies: Say it holds replies to the lines layout (:mod:`metrics.llm.lines`), as the in-process model
            does, so that a writer asks it for lines rather than JSON.
    """

    def __init__(
        self,
        responses: Sequence[Reply] | Responder,
        *,
        logprobs: Logprobs | Callable[[str], Logprobs] | None = None,
        model_id: str = "scripted",
        temperature: float = 0.0,
        word_bias: bool = False,
        streams: bool = False,
        line_replies: bool = False,
    ) -> None:
        self.line_replies = line_replies  # asked for lines replies (metrics.llm.base.supports_lines), as llama.cpp is
        self.streams = streams  # end replies early on a stop rule (metrics.llm.base.supports_stop), as llama.cpp does
        self.word_bias = word_bias  # accept word biases (metrics.llm.base.supports_bias), as llama.cpp does
        self._responder = responses if callable(responses) else None
        self._replies = [] if callable(responses) else list(responses)
        self.logprobs = logprobs
        self._model_id = model_id
        self.temperature = temperature
        self.calls: list[ScriptedCall] = []

    @property
    def model_id(self) -> str:
        """The id given to the constructor."""
        return self._model_id

    def identity(self) -> dict[str, Any]:
        """Backend name, model id and temperature."""
        return {"backend": "scripted", "model": self._model_id, "temperature": self.temperature}

    @property
    def remaining(self) -> int:
        """Scripted replies not used yet (0 for a function script)."""
        return max(0, len(self._replies) - len(self.calls))

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
        """See :meth:`metrics.llm.base.LLM.complete`."""
        if bias and not self.word_bias:
            raise JudgeError("this scripted model cannot bias words (ScriptedLLM(word_bias=True) can)")

        async def generate(
            msgs: list[Message], _js: Any, want_lp: bool, limit: int | None
        ) -> Completion:
            rule = stop if self.streams else None
            return self._reply(ScriptedCall(list(msgs), schema, prompt, want_lp, limit, bias or None, rule))

        return await complete_structured(
            generate, messages, schema, logprobs=logprobs, max_tokens=max_tokens
        )

    def _reply(self, call: ScriptedCall) -> Completion:
        index = len(self.calls)
        self.calls.append(call)
        if self._responder is not None:
            reply: Reply = self._responder(call.messages, call.schema)
        elif index < len(self._replies):
            reply = self._replies[index]
        else:
            raise ScriptExhausted(
                f"ScriptedLLM got call {index + 1} but only {len(self._replies)} replies are scripted"
            )
        if isinstance(reply, BaseException):
            raise reply
        text = reply if isinstance(reply, str) else _as_text(reply, call.schema)
        stopped = False
        if call.stop is not None:
            end = next((i for i in range(1, len(text) + 1) if call.stop(text[:i])), None)
            text, stopped = (text, False) if end is None or end == len(text) else (text[:end], True)
        prompt_words = sum(len(m["content"].split()) for m in call.messages)
        return Completion(
            text=text,
            stopped=stopped,
            usage=Usage(prompt_words, len(text.split())),  # words stand in for tokens
            logprobs=(self.logprobs(text) if callable(self.logprobs) else self.logprobs) if call.logprobs else None,
        )


def _as_text(reply: dict[str, Any], schema: Schema | None) -> str:
    """A dict reply as the call's schema lays it out: lines or JSON."""
    if schema is not None and lines.is_lines(json_schema_of(schema)):
        return lines.render(reply)
    return json.dumps(reply)
