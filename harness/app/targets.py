"""Application targets for ``ragsweep run``: the user's application, called once per test question.

Each target (config group ``target``) implements one async :meth:`Target.call` that takes a question
and returns a :class:`Reply`: the answer, the context strings the application used (when it says),
the tokens it reports, and its raw response. Timeouts, retries and concurrency are not the target's
business: :mod:`ragsweep.harness.run` applies them around every call (they are left out of the
run's fingerprint, as they never change an answer).

- ``http``: POST a JSON body built from a template to ``url``; read the answer, contexts and usage
  from the response by simple paths (``answer``, ``data.sources[*].text``, ``choices[0].message.content``).
  Secret headers come from environment variables named in the config, never from the config itself.
- ``python``: ``module:function`` (sync or async), called as ``function(question, **params)``,
  returning a string or ``{"answer": ..., "contexts": [...], "usage": {...}}``.
- ``langchain`` and ``llamaindex`` (:mod:`ragsweep.harness.app.frameworks`), ``openai``
  (:mod:`ragsweep.harness.app.openai_target`).

``params`` is how one application becomes several variants: every key is passed through to the
application (a body field, a keyword argument) and names the variant on the leaderboard.

**Conversations.** A test sample that is a conversation is sent as its last user turn with the turns
before it (``history``: ``[{"role": "user" | "assistant", "content": ...}, ...]``, oldest first):

- ``python``: as ``history=`` when the function has a parameter of that name, and as
  ``messages=`` (the history and the question as the last user message) when it has that one;
  a function with neither gets the last turn alone (a warning says so once).
- ``http``: the body template may place ``"{history}"`` or ``"{messages}"`` (whole-string
  placeholders keep the list); when it places neither, the body gets ``history_field``
  (``messages`` by default: the whole conversation as a list of messages) for conversation samples
  only, so single questions are sent exactly as before.
- ``openai``: the history becomes the chat's earlier messages.
- ``langchain`` and ``llamaindex`` get the last turn alone (wrap the chain in a ``python`` target to
  pass the history your way).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragsweep.harness.app.replies import (
    Reply,
    TargetError,
    cited_sentences,
    context_score,
    context_text,
    get_path,
    parse_path,
    reply_from,
    usage_of,
)
from ragsweep.metrics import InputError, looks_like_key, register_secret

RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
log = logging.getLogger(__name__)


def check_status(response: Any, where: str) -> None:
    """A TargetError for an HTTP status of 300 or more, retryable for the statuses a retry may mend."""
    if response.status_code >= 300:
        raise TargetError(f"HTTP {response.status_code} from {where}",
                          retryable=response.status_code in RETRYABLE_STATUS, raw=response.text[:2000])


class Target:
    """The interface every target implements (``start`` and ``close`` are optional)."""

    kind = "target"

    def identity(self) -> dict[str, Any]:
        """What this application version is (no secrets): the run's fingerprint and the variant's name."""
        raise NotImplementedError

    def label(self) -> str:
        """The application, short: a URL, ``module:function``, a model name."""
        raise NotImplementedError

    async def start(self) -> None:
        """Open connections, build the pipeline (once per run, in the run's event loop)."""

    async def call(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Reply:
        """Ask ``question``; ``history`` holds the conversation's earlier turns (empty for a single question)."""
        raise NotImplementedError

    async def close(self) -> None:
        """Release what :meth:`start` opened."""


def messages_of(question: str, history: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as chat messages: the history (``role``/``content``), then the question as a user turn."""
    return [*({"role": str(t.get("role")), "content": str(t.get("content", ""))} for t in history),
            {"role": "user", "content": question}]


# ---------------------------------------------------------------- http

def _env_header(header: str, spec: str) -> str:
    """``"APP_TOKEN"`` or ``"Bearer $APP_TOKEN"`` -> the value, read from the environment now."""
    names = re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", spec)
    if not names:
        names, spec = [spec], f"${spec}"
    missing = [n for n in names if n not in os.environ]
    if missing:
        raise InputError(f"the environment variable {missing[0]} (for the header {header} of target.env_headers) "
                         "is not set")
    for n in names:
        register_secret(os.environ[n])  # scrubbed from every error message and raw response kept
    return re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", lambda m: os.environ[m.group(1)], spec)


def fill(template: Any, values: Mapping[str, Any]) -> Any:
    """The body template with ``{question}`` / ``{sample_id}`` filled in (a whole-string placeholder keeps the value's type)."""
    if isinstance(template, str):
        whole = re.fullmatch(r"\{(\w+)\}", template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)
    if isinstance(template, Mapping):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


class HttpTarget(Target):
    """An application behind an HTTP endpoint that takes JSON and returns JSON."""

    kind = "http"

    def __init__(self, url: str, method: str = "POST", body: Mapping[str, Any] | None = None,
                 params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
                 env_headers: Mapping[str, str] | None = None, answer_path: str = "answer",
                 contexts_path: str | None = "contexts", usage_path: str | None = None,
                 history_field: str | None = "messages", citations_path: str | None = None,
                 citation_base: int = 1, **_: Any) -> None:
        if not url:
            raise InputError("target=http needs the endpoint: target.url=http://host:port/path")
        if not str(url).startswith(("http://", "https://")):
            raise InputError(f"target.url must start with http:// or https://, got {url!r}")
        self.url, self.method = str(url), str(method).upper()
        self.body = dict(body or {"question": "{question}"})
        self.params = dict(params or {})
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        self.env_headers = {str(k): str(v) for k, v in (env_headers or {}).items()}
        for header, value in self.headers.items():
            if re.search(r"(?i)auth|key|token|secret|cookie", header) or looks_like_key(value):
                raise InputError(f"target.headers.{header} looks like a secret: config.yaml would keep it; name the "
                                 f"environment variable instead: target.env_headers.{header}='Bearer $MY_TOKEN'")
        for header, spec in self.env_headers.items():
            if looks_like_key(spec.replace("$", "")):
                raise InputError(f"target.env_headers.{header} must name an environment variable "
                                 "(e.g. 'Bearer $APP_TOKEN'), not hold the secret itself")
        self.answer_path, self.contexts_path, self.usage_path = answer_path, contexts_path, usage_path
        self.history_field = history_field or None
        self.citations_path, self.citation_base = citations_path or None, int(citation_base)
        if self.citation_base not in (0, 1):
            raise InputError(f"target.citation_base must be 0 or 1 (the number of the first context), got {citation_base}")
        self.places_history = bool(re.search(r"\{(?:history|messages)\}", json.dumps(self.body)))
        for path in (answer_path, contexts_path, usage_path, self.citations_path):
            if path:
                parse_path(path)  # a bad path is bad input before any call
        self._client: Any = None

    def identity(self) -> dict[str, Any]:
        out = {"kind": self.kind, "url": self.url, "method": self.method, "body": self.body, "params": self.params,
               "headers": sorted(self.headers), "env_headers": dict(self.env_headers),
               "answer_path": self.answer_path, "contexts_path": self.contexts_path}
        if self.history_field != "messages":  # the default leaves the fingerprints of earlier runs as they were
            out["history_field"] = self.history_field
        if self.citations_path:  # likewise
            out.update(citations_path=self.citations_path, citation_base=self.citation_base)
        return out

    def label(self) -> str:
        return self.url

    async def start(self) -> None:
        import httpx

        headers = {**self.headers, **{h: _env_header(h, spec) for h, spec in self.env_headers.items()}}
        self._client = httpx.AsyncClient(headers=headers, timeout=None)  # the runner times each call

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def request_body(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Any:
        messages = messages_of(question, history)
        body = fill(self.body, {"question": question, "sample_id": sample_id, **self.params,
                                "history": messages[:-1], "messages": messages})
        if isinstance(body, dict):
            body = {**self.params, **body}  # params are body fields unless the template places them
            if history and not self.places_history and self.history_field:
                body.setdefault(self.history_field, messages)
        return body

    async def call(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Reply:
        import httpx

        body = self.request_body(question, sample_id, history)
        try:
            if self.method == "GET":
                response = await self._client.get(self.url, params=body)
            else:
                response = await self._client.request(self.method, self.url, json=body)
        except httpx.HTTPError as exc:  # connection refused or dropped: worth another try
            raise TargetError(f"{type(exc).__name__}: {exc}", retryable=True) from exc
        check_status(response, self.url)
        try:
            data = response.json()
        except ValueError:
            raise TargetError("the response is not JSON", retryable=False, raw=response.text[:2000]) from None
        return self.read(data)

    def read(self, data: Any) -> Reply:
        try:
            answer = get_path(data, self.answer_path)
        except KeyError as exc:
            raise TargetError(f"no answer at target.answer_path ({exc.args[0]})", retryable=False, raw=data) from None
        contexts = scores = items = None
        if self.contexts_path:
            try:
                items = get_path(data, self.contexts_path)
            except KeyError as exc:
                raise TargetError(f"no contexts at target.contexts_path ({exc.args[0]})", retryable=False,
                                  raw=data) from None
            if not isinstance(items, list):
                raise TargetError(f"target.contexts_path {self.contexts_path!r} is a {type(items).__name__}, "
                                  "not a list", retryable=False, raw=data)
            contexts = [context_text(c) for c in items]
            found = [context_score(c) for c in items]
            scores = found if found and all(s is not None for s in found) else None
        usage = None
        if self.usage_path:
            try:
                usage = usage_of(get_path(data, self.usage_path))
            except KeyError:
                usage = None  # usage is optional: an application may report it on some answers only
        cited = None
        if self.citations_path:
            try:
                given = get_path(data, self.citations_path)
            except KeyError:
                given = None  # an answer without a source list: its inline markers, if any, are read
            if given is not None:
                cited = cited_sentences(given, items, self.citation_base, "target.citations_path")
        return Reply(None if answer is None else str(answer), contexts, scores, usage, data, cited)  # type: ignore[arg-type]


# ---------------------------------------------------------------- python

def import_object(spec: str, what: str) -> Any:
    """``module:attr`` (``module.attr`` accepted), importable from the current folder."""
    module_name, sep, attr = spec.partition(":")
    if not sep:
        module_name, _, attr = spec.rpartition(".")
    if not module_name or not attr:
        raise InputError(f"{what} must be module:name, got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"{what}={spec}: cannot import {module_name} from {cwd} ({exc})") from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"{what}={spec}: {module_name} has no {attr}")
        obj = getattr(obj, part)
    return obj


async def call_maybe_async(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await an async function; run a sync one in a worker thread (the event loop keeps calling others)."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None)):
        return await fn(*args, **kwargs)
    out = await asyncio.to_thread(fn, *args, **kwargs)
    return await out if inspect.isawaitable(out) else out


class PythonTarget(Target):
    """A Python function ``module:function``, called as ``function(question, **params)``."""

    kind = "python"

    def __init__(self, function: str | None, params: Mapping[str, Any] | None = None, citation_base: int = 1,
                 **_: Any) -> None:
        if not function:
            raise InputError("target=python needs the function: target.function=module:function")
        self.spec = str(function)
        self.params = dict(params or {})
        self.citation_base = int(citation_base)
        self.fn = import_object(self.spec, "target.function")
        if not callable(self.fn):
            raise InputError(f"target.function={self.spec} is not callable")
        self._warned = False

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "function": self.spec, "params": self.params}

    def label(self) -> str:
        return self.spec

    async def call(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Reply:
        extra: dict[str, Any] = {}
        if history:
            takes = conversation_parameters(self.fn)
            if "history" in takes:
                extra["history"] = messages_of(question, history)[:-1]
            if "messages" in takes:
                extra["messages"] = messages_of(question, history)
            if not takes and not getattr(self, "_warned", False):
                self._warned = True
                log.warning("%s has no history= (or messages=) parameter: conversation samples get their last "
                            "turn only", self.spec)
        return reply_from(await call_maybe_async(self.fn, question, **self.params, **extra),
                          citation_base=getattr(self, "citation_base", 1))


def conversation_parameters(fn: Callable[..., Any]) -> set[str]:
    """Which of ``history`` and ``messages`` the function takes by name."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or a C callable: no signature to read
        return set()
    return {name for name in ("history", "messages") if name in params
            and params[name].kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}


class CallableTarget(PythonTarget):
    """A function passed in from Python (``ragsweep.run(app=fn)``): the in-process twin of ``python``."""

    def __init__(self, fn: Callable[..., Any], params: Mapping[str, Any] | None = None) -> None:
        self.fn, self.params = fn, dict(params or {})
        self._warned = False
        self.spec = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"


OPEN_KEYS = re.compile(r"^target\.(params|headers|env_headers|body|input)\.[^=]+=")


def open_keys(overrides: Sequence[str]) -> list[str]:
    """``target.params.top_k=5`` -> ``++target.params.top_k=5``: the application's settings, headers and
    body fields are open-ended, so setting one adds it (Hydra would refuse a key the config lacks)."""
    return [f"++{o}" if OPEN_KEYS.match(o) else o for o in overrides]
