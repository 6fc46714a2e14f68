"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp server, LM Studio.

The ``openai`` package is imported when the first call is made, so ``metrics`` imports
without it. The SDK's own retries are off (``max_retries=0``): retrying happens here, with
exponential backoff and full jitter, so that it is counted and testable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from typing import Any

from ragsweep.metrics.errors import JudgeError, register_secret, register_url
from ragsweep.metrics.llm.base import (
    MAX_REPLY_CHARS,
    Completion,
    Logprobs,
    Message,
    StructuredBackend,
    Usage,
    chat_request,
    without_layout,
)

log = logging.getLogger(__name__)

_NO_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one
_MAX_BACKOFF_S = 30.0


class OpenAICompatLLM(StructuredBackend):
    """A chat model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    Structured output is requested with ``response_format={"type": "json_schema", ...}``;
    a server that rejects it (HTTP 400) is asked again without it, and from then on the
    JSON is parsed from the text (with one repair, see :mod:`metrics.llm.base`).

    Args:
        model: Model name as the server knows it.
        base_url: Endpoint root, e.g. ``http://127.0.0.1:8000/v1``; None means OpenAI.
        api_key_env: Name of the environment variable holding the key. The key is read at
            the first call and never stored on this object, logged or cached; error texts are
            scrubbed of it (a server may echo the Authorization header in an error body). When
            the variable is unset a placeholder is sent (local servers need no key).
        temperature: Sampling temperature; 0 for repeatable judging.
        max_concurrency: Requests in flight at once from this object.
        timeout_s: Per-request timeout, seconds.
        max_retries: Retries after the first attempt on 429, 5xx, timeouts and
            connection errors.
        seed: Sampling seed, sent to servers that honour it.
        backoff_s: First retry delay, seconds; doubles each retry (with jitter).
        max_reply_chars: Longest reply accepted, in characters (None: no limit); a longer one is an
            error naming its size, never repaired or cached.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        max_concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 5,
        seed: int = 0,
        *,
        backoff_s: float = 0.5,
        max_reply_chars: int | None = MAX_REPLY_CHARS,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/") if base_url else None
        register_url(self.base_url)  # its password, should the URL carry one, is scrubbed wherever it is echoed
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.seed = seed
        self.backoff_s = backoff_s
        self.max_reply_chars = max_reply_chars
        self.usage = Usage()  # all tokens spent by this object
        self.requests = 0  # HTTP attempts, retries included
        self.retries = 0
        self._constrain = True  # False once the server has rejected response_format
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sem: asyncio.Semaphore | None = None

    @property
    def model_id(self) -> str:
        """The model name."""
        return self.model

    def identity(self) -> dict[str, Any]:
        """Model, endpoint and sampling parameters (no timeout, retries or key)."""
        return {
            "backend": "openai-compat",
            "model": self.model,
            "base_url": self.base_url or "https://api.openai.com/v1",
            "temperature": self.temperature,
            "seed": self.seed,
        }

    async def _generate(
        self,
        messages: list[Message],
        json_schema: dict[str, Any] | None,
        logprobs: bool,
        max_tokens: int | None,
    ) -> Completion:
        # max_tokens, not max_completion_tokens: every compatible server accepts it.
        request = {"model": self.model, **chat_request(messages, temperature=self.temperature, seed=self.seed,
                                                       logprobs=logprobs, max_tokens=max_tokens)}
        if json_schema is not None and self._constrain:
            name = str(json_schema.get("title", "output"))[:64] or "output"
            request["response_format"] = {
                "type": "json_schema",
                # strict=False: pydantic schemas rarely meet OpenAI's strict subset; the
                # parsed text is validated anyway.
                "json_schema": {"name": name, "schema": without_layout(json_schema), "strict": False},
            }
        response = await self._send(request)
        choice = response.choices[0]
        usage = Usage()
        if response.usage is not None:
            usage = Usage(response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0)
            self.usage = self.usage + usage
        return Completion(
            text=choice.message.content or "",
            usage=usage,
            logprobs=_logprobs(choice) if logprobs else None,
        )

    async def _send(self, request: dict[str, Any]) -> Any:
        """One chat call with retries. Sleeps outside the semaphore so that waiting for a
        retry does not hold a concurrency slot."""
        import openai  # optional dependency: imported only when a call is made

        client, sem = self._client_for_loop(openai)
        # A 200 whose body is not JSON (a proxy cut the response short) is as transient as a 5xx.
        retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError,
                     openai.APIResponseValidationError, json.JSONDecodeError)
        attempt = 0
        while True:
            try:
                async with sem:
                    self.requests += 1
                    return await client.chat.completions.create(**request)
            except openai.BadRequestError as err:
                if "response_format" not in request:
                    raise JudgeError(f"{self.model}: request rejected: {err.message}") from None
                log.warning("%s: server rejected response_format; parsing JSON from text", self.model)
                self._constrain = False
                request = {k: v for k, v in request.items() if k != "response_format"}
                continue
            except retryable as err:
                failure: Exception = err
            except openai.APIStatusError as err:
                if err.status_code < 500:
                    raise JudgeError(f"{self.model}: HTTP {err.status_code}: {err.message}") from None
                failure = err
            if attempt >= self.max_retries:
                raise JudgeError(
                    f"{self.model}: gave up after {attempt} retries: "
                    f"{type(failure).__name__}: {failure}"
                )
            attempt += 1
            self.retries += 1
            delay = self._delay(attempt - 1, failure)
            log.warning(
                "%s: %s, retry %d/%d in %.1fs",
                self.model, type(failure).__name__, attempt, self.max_retries, delay,
            )  # fmt: skip
            await asyncio.sleep(delay)

    def _delay(self, attempt: int, err: Exception) -> float:
        """Full-jitter exponential backoff; a server's Retry-After wins when it is longer."""
        delay = random.uniform(0, min(_MAX_BACKOFF_S, self.backoff_s * 2**attempt))
        response = getattr(err, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        try:
            delay = max(delay, min(_MAX_BACKOFF_S, float(retry_after)))
        except (TypeError, ValueError):
            pass
        return delay

    def _client_for_loop(self, openai: Any) -> tuple[Any, asyncio.Semaphore]:
        # The SDK's HTTP client and the semaphore belong to one event loop; a new loop
        # (another asyncio.run) gets new ones.
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            key = os.environ.get(self.api_key_env)
            register_secret(key)  # scrubbed from every error text, should a server echo it back
            self._client = openai.AsyncOpenAI(
                api_key=key or _NO_KEY,
                base_url=self.base_url,
                timeout=self.timeout_s,
                max_retries=0,
            )
            self._sem = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
        assert self._sem is not None
        return self._client, self._sem


def _logprobs(choice: Any) -> Logprobs | None:
    content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
    if not content:
        return None
    return [
        {t.token: t.logprob for t in (pos.top_logprobs or [])} or {pos.token: pos.logprob}
        for pos in content
    ]
