"""The one LLM interface shared by the judge, the question writer and the answerer.

Every backend implements :class:`LLM`. Backends return raw text through a small ``generate``
function; :func:`complete_structured` turns that into a validated object: it asks the
backend to constrain decoding to the schema where it can, parses JSON out of the text,
and on failure sends the bad output back once with the validation error before giving up
with :class:`~metrics.errors.JudgeError` (the raw text kept).

Schemas are pydantic models. A plain JSON-schema ``dict`` is accepted too, for callers that
already hold one; it is then checked for JSON types, required keys and enums only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

import pydantic

from ragsweep.metrics.errors import JudgeError, scrub
from ragsweep.metrics.llm import lines

Schema = type[pydantic.BaseModel] | dict[str, Any]
Logprobs = list[dict[str, float]]
"""Top log-probabilities per generated position: ``[{token: logprob, ...}, ...]``."""


class Message(TypedDict):
    """One chat message, in the OpenAI shape every backend understands."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class PromptId:
    """Which prompt produced the messages; its version is part of every cache key.

    Attributes:
        name: Stable prompt name, e.g. ``"faithfulness.claims"``.
        version: Bumped whenever the wording or the examples change.
    """

    name: str
    version: str


@dataclass
class Usage:
    """Token counts of one call (or a sum of calls)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass
class Completion:
    """The result of :meth:`LLM.complete`.

    Attributes:
        text: The raw text the model produced (after a repair, the repaired text).
        parsed: The validated object when a schema was given: a model instance for a
            pydantic schema, the decoded JSON for a dict schema; otherwise None.
        usage: Tokens spent, including a repair attempt.
        logprobs: Top log-probabilities per position, or None when not asked for or the
            backend gives none.
        cached: True when the result came from the cache and no model ran.
        stopped: True when a :class:`StopRule` ended the reply before the model did: ``text`` is the reply so
            far, ``parsed`` is None.
    """

    text: str
    parsed: Any = None
    usage: Usage = field(default_factory=Usage)
    logprobs: Logprobs | None = None
    cached: bool = False
    stopped: bool = False


@runtime_checkable
class LLM(Protocol):
    """A chat model. Implemented by the OpenAI-compatible client, the in-process
    llama.cpp model, the scripted fake and the caching wrapper."""

    @property
    def model_id(self) -> str:
        """A short human-readable model name, for reports."""
        ...

    def identity(self) -> dict[str, Any]:
        """Everything about this model that changes its output (model, endpoint or file
        hash, sampling parameters). Used in cache keys, so it never holds timeouts,
        retry settings or credentials."""
        ...

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
        """Run the model on ``messages``; validate against ``schema`` when given. ``bias``: words whose
        tokens get this much added to their logits while the model writes (:func:`supports_bias` says
        whether a backend can; one that cannot raises). ``stop``: a rule that may end the reply early
        (:class:`StopRule`; a backend that does not stream lets the model finish, so the rule only saves time).

        Raises:
            JudgeError: The call failed for good, or the output did not validate after
                one repair attempt.
        """
        ...


#: Words (each as the model writes it, e.g. " protein") and the logit each of their tokens gains: negative
#: makes the model avoid them. llama.cpp takes words as they are; OpenAI's API wants token ids, so only the
#: in-process model honours it (:func:`supports_bias`).
WordBias = dict[str, float]


def _wrapped_flag(llm: Any, flag: str) -> bool:
    """True when ``llm`` or a model it wraps (a cache, a meter: ``inner``) sets ``flag``."""
    for _ in range(8):
        if getattr(llm, flag, False):
            return True
        llm = getattr(llm, "inner", None)
        if llm is None:
            return False
    return False


def supports_bias(llm: Any) -> bool:
    """True when ``llm`` (or the model it wraps: a cache, a meter) applies a :data:`WordBias`."""
    return _wrapped_flag(llm, "word_bias")


class StopRule(Protocol):
    """Ends a reply as soon as its text so far shows it will be thrown away (a question a gate rejects, read
    before its answer is written): the model's remaining tokens are not generated. The reply is then returned
    as far as it got, with ``stopped=True`` and no ``parsed``. ``name`` identifies the rule and whatever it
    reads (thresholds, lists) in cache keys: a stopped reply is stored as such, and the same call under
    another rule must not replay it."""

    name: str

    def __call__(self, text: str) -> bool:
        """True to end a reply whose text so far is ``text``."""
        ...


def supports_stop(llm: Any) -> bool:
    """True when ``llm`` (or the model it wraps: a cache, a meter) ends a reply early on a :class:`StopRule`."""
    return _wrapped_flag(llm, "streams")


def supports_lines(llm: Any) -> bool:
    """True when ``llm`` (or the model it wraps) holds a reply to the lines layout (:mod:`metrics.llm.lines`) by
    grammar; another backend is asked for JSON."""
    return _wrapped_flag(llm, "line_replies")


Generate = Callable[[list[Message], dict[str, Any] | None, bool, int | None], Awaitable[Completion]]
"""A backend's raw call: (messages, json_schema or None, logprobs, max_tokens) -> Completion."""


#: What a JSON schema holds to ask for its reply laid out as ``json.dumps`` lays it out (``{"a": 1, "b": [2]}``: no line
#: break, no indentation), as the ``json`` prompt layout shows its examples. Under a free layout the packaged 1.5B
#: writes most replies indented over several lines, and every line break and indent is a token generated one at a
#: time (benchmarks/results/2026-11-26-gen-speed-cold.md). Read by llama.cpp's grammar engine (LLGuidance's ``x-guidance``
#: options); the other backends drop it (:func:`without_layout`). Being part of the schema, it is part of the
#: cache key and of the prompt's version.
COMPACT_JSON: dict[str, Any] = {"x-guidance": {"whitespace_flexible": False, "item_separator": ", ",
                                               "key_separator": ": "}}


class CompactReply(pydantic.BaseModel):
    """A reply model whose JSON schema asks for :data:`COMPACT_JSON`."""

    model_config = pydantic.ConfigDict(json_schema_extra=COMPACT_JSON)


def without_layout(json_schema: dict[str, Any]) -> dict[str, Any]:
    """``json_schema`` without :data:`COMPACT_JSON`'s key, for a server that knows only JSON Schema's own keywords."""
    return {k: v for k, v in json_schema.items() if k not in COMPACT_JSON}


#: Alternatives returned per generated position when a call asks for log-probabilities.
TOP_LOGPROBS = 5

#: The longest reply accepted, in characters, unless a backend is configured otherwise (``llm.max_reply_chars``).
#: A judge's JSON is a few KiB; a reply far longer is a model looping or a server gone wrong, and must not be
#: sent back in a repair request, stored in the cache or kept whole in the explanations.
MAX_REPLY_CHARS = 65536


def check_reply_size(completion: Completion, limit: int | None) -> None:
    """Refuse a reply longer than ``limit`` characters (None: no limit) before anything uses it.

    Raises:
        JudgeError: Naming the reply's size and the limit; ``raw`` holds the reply cut to the limit.
    """
    if limit is not None and len(completion.text) > limit:
        raise JudgeError(f"reply of {len(completion.text):,} characters is over the limit of {limit:,} "
                         "(llm.max_reply_chars); not repaired, not cached", raw=completion.text[:limit])


def chat_request(messages: list[Message], *, temperature: float, seed: int | None, logprobs: bool,
                 max_tokens: int | None) -> dict[str, Any]:
    """The fields every chat-completions backend sends alike (each adds its own: model, grammar)."""
    request: dict[str, Any] = {
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "temperature": temperature,
        "seed": seed,
    }
    if max_tokens is not None:
        request["max_tokens"] = max_tokens
    if logprobs:
        request.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
    return request


def json_schema_of(schema: Schema) -> dict[str, Any]:
    """The JSON schema of a pydantic model or a schema dict (returned as is)."""
    if isinstance(schema, dict):
        return schema
    return schema.model_json_schema()


def schema_name(schema: Schema) -> str:
    """A name for the schema, as OpenAI's ``response_format`` requires one."""
    name = schema.get("title", "output") if isinstance(schema, dict) else schema.__name__
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(name))[:64] or "output"


def parse_structured(text: str, schema: Schema) -> Any:
    """Extract the JSON object from model text and validate it.

    Accepts bare JSON, JSON inside a ```json fence, or JSON after some chatter (the first
    balanced ``{...}`` is taken); a schema that asks for lines (:mod:`metrics.llm.lines`) is read as lines.

    Raises:
        ValueError: No JSON object found, or it does not match the schema; the message is
            what a repair prompt shows the model.
    """
    js = json_schema_of(schema)
    data = lines.parse(text, js) if lines.is_lines(js) else _extract_json(text)
    if isinstance(schema, dict):
        problems = _check(data, schema, "$")
        if problems:
            raise ValueError("; ".join(problems[:10]))
        return data
    try:
        return schema.model_validate(data)
    except pydantic.ValidationError as err:
        raise ValueError(str(err)) from None


async def complete_structured(
    generate: Generate,
    messages: list[Message],
    schema: Schema | None,
    *,
    logprobs: bool = False,
    max_tokens: int | None = None,
    max_reply_chars: int | None = MAX_REPLY_CHARS,
) -> Completion:
    """Call ``generate`` and, with a schema, parse its text with one repair attempt.

    Args:
        generate: The backend's raw call; it receives the JSON schema so that it can
            constrain decoding when the backend supports it.
        messages: The chat.
        schema: Pydantic model or JSON-schema dict, or None for free text.
        logprobs: Ask for top log-probabilities.
        max_tokens: Limit on generated tokens, or None for the backend's default.
        max_reply_chars: Longest reply accepted (:func:`check_reply_size`), or None for no limit.

    Raises:
        JudgeError: Still invalid after the repair (``raw`` holds the last text), or a reply over
            ``max_reply_chars``.
    """
    js = json_schema_of(schema) if schema is not None else None
    first = _scrubbed(await generate(messages, js, logprobs, max_tokens))
    check_reply_size(first, max_reply_chars)
    if schema is None or first.stopped:  # a stopped reply is unfinished on purpose: neither parsed nor repaired
        return first
    try:
        first.parsed = parse_structured(first.text, schema)
        return first
    except ValueError as err:
        error = str(err)
    # One repair: show the model its own output and the error; small models often fix a
    # missing brace or a wrong field name when told exactly what is wrong.
    repair = [*messages, *repair_messages(first.text, error, js)]
    second = _scrubbed(await generate(repair, js, logprobs, max_tokens))
    check_reply_size(second, max_reply_chars)
    second.usage = first.usage + second.usage
    try:
        second.parsed = parse_structured(second.text, schema)
    except ValueError as err2:
        raise JudgeError(
            f"output does not match schema {schema_name(schema)} after one repair: {err2}",
            raw=second.text,
        ) from None
    return second


def _scrubbed(completion: Completion) -> Completion:
    """The reply with any credential it echoes (the key sent, a URL's password) removed before it is parsed,
    so neither the cache, the explanations nor a repair request ever holds one."""
    completion.text = scrub(completion.text)
    return completion


def repair_messages(bad: str, error: str, json_schema: dict[str, Any] | None) -> list[Message]:
    """The two messages appended to the chat to ask for corrected JSON."""
    if lines.is_lines(json_schema):
        return [{"role": "assistant", "content": bad},
                {"role": "user", "content": f"Your reply is not valid: {error}\nReply again with "
                 f"{lines.layout_note(json_schema)}."}]  # type: ignore[arg-type]
    schema_text = json.dumps(json_schema, ensure_ascii=False) if json_schema else "(see above)"
    return [
        {"role": "assistant", "content": bad},
        {
            "role": "user",
            "content": (
                f"Your reply is not valid: {error}\n"
                f"Reply again with only the corrected JSON object, matching this JSON schema:\n"
                f"{schema_text}\nNo explanations, no code fences."
            ),
        },
    ]


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def _extract_json(text: str) -> Any:
    stripped = text.strip()
    candidates = [stripped, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for cand in candidates:
        try:
            return json.loads(cand)
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        return obj
    raise ValueError("no JSON object found in the reply")


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _check(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    """A small JSON-schema check (type, required, properties, items, enum) for dict schemas."""
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        ok = any(
            isinstance(value, _JSON_TYPES.get(t, (object,)))
            and not (t in ("integer", "number") and isinstance(value, bool))
            for t in allowed
        )
        if not ok:
            return [f"{where}: expected {'/'.join(allowed)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}: missing required key {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value and isinstance(sub, dict):
                problems += _check(value[key], sub, f"{where}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problems += _check(item, schema["items"], f"{where}[{i}]")
    return problems


class StructuredBackend:
    """A backend that only implements the raw ``_generate`` call (the :data:`Generate` shape);
    :meth:`complete` adds schema constraint, parsing and the one repair attempt, and refuses a reply
    longer than ``max_reply_chars``."""

    max_reply_chars: int | None = MAX_REPLY_CHARS

    async def _generate(self, messages: list[Message], json_schema: dict[str, Any] | None, logprobs: bool,
                        max_tokens: int | None) -> Completion:
        raise NotImplementedError

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
        """See :meth:`metrics.llm.base.LLM.complete`. ``stop`` reaches ``_generate`` (as ``stop=``) only in a
        backend that ``streams``; others let the model finish."""
        del prompt  # only the cache uses it
        generate: Generate = self._generate
        if bias and not getattr(self, "word_bias", False):
            raise JudgeError(f"{type(self).__name__} cannot bias words (only the in-process llama.cpp model can)")
        extra: dict[str, Any] = {**({"bias": bias} if bias else {}),
                                 **({"stop": stop} if stop is not None and getattr(self, "streams", False) else {})}
        if extra:

            async def generate(m: list[Message], js: dict[str, Any] | None, lp: bool, mt: int | None) -> Completion:
                return await self._generate(m, js, lp, mt, **extra)  # type: ignore[call-arg]

        return await complete_structured(
            generate, messages, schema, logprobs=logprobs, max_tokens=max_tokens,
            max_reply_chars=self.max_reply_chars,
        )
