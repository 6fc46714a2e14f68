"""The :class:`Prompt` type and how a prompt becomes chat messages and a parsed judge reply."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from ragsweep.metrics.llm.base import LLM, Completion, Message, PromptId

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)
Granularity = Literal["low", "high"]


@dataclass(frozen=True)
class Prompt(Generic[In, Out]):
    """One judge prompt.

    Attributes:
        name: Stable name, part of every cache key.
        instruction: The task, stated once (the system message).
        input: The pydantic model of the sample fields the prompt takes.
        output: The pydantic model the judge must return.
        examples: Few-shot ``(input, output)`` pairs, shown before the sample.
        max_tokens: Output limit for one call.
    """

    name: str
    instruction: str
    input: type[In]
    output: type[Out]
    examples: tuple[tuple[In, Out], ...] = field(default=())
    max_tokens: int = 768

    @property
    def version(self) -> str:
        """First 12 hex digits of the sha256 of instruction, examples and both schemas."""
        payload = {
            "instruction": self.instruction,
            "examples": [[i.model_dump(mode="json"), o.model_dump(mode="json")] for i, o in self.examples],
            "input": self.input.model_json_schema(),
            "output": self.output.model_json_schema(),
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def id(self) -> PromptId:
        return PromptId(self.name, self.version)


def _field_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "\n".join(f"[{i}] {item}" for i, item in enumerate(value, start=1)) or "(none)"
    return str(value) if str(value).strip() else "(empty)"


def render_input(inputs: BaseModel) -> str:
    """The sample as labelled sections, in the input model's field order; None fields are left out."""
    parts = []
    for name in type(inputs).model_fields:
        value = getattr(inputs, name)
        if value is not None:
            parts.append(f"## {name}\n{_field_text(value)}")
    return "\n\n".join(parts)


def render(prompt: Prompt[In, Out], inputs: In) -> list[Message]:
    """Chat messages: instruction and examples first (a prefix shared by all samples), sample last."""
    schema = json.dumps(prompt.output.model_json_schema(), separators=(",", ":"))
    system = (f"{prompt.instruction}\n\nReply with one JSON object that matches this JSON schema, "
              f"and nothing else:\n{schema}")
    messages: list[Message] = [{"role": "system", "content": system}]
    for example_in, example_out in prompt.examples:
        messages.append({"role": "user", "content": render_input(example_in)})
        messages.append({"role": "assistant", "content": example_out.model_dump_json()})
    messages.append({"role": "user", "content": render_input(inputs)})
    return messages


async def complete(judge: LLM, prompt: Prompt[In, Out], inputs: In, *, logprobs: bool = False) -> Completion:
    """One judge call of ``prompt`` on ``inputs``; ``parsed`` is an instance of ``prompt.output``."""
    return await judge.complete(render(prompt, inputs), prompt.output, prompt=prompt.id,
                                logprobs=logprobs, max_tokens=prompt.max_tokens)


async def ask(judge: LLM, prompt: Prompt[In, Out], inputs: In) -> Out:
    """The parsed reply of one judge call (raises JudgeError when the call fails for good)."""
    return (await complete(judge, prompt, inputs)).parsed
