"""Factories behind the shared ``llm`` config group (``conf/llm/*.yaml``).

Each builds one backend and, unless ``cache`` is off, wraps it in a
:class:`~metrics.llm.CachedLLM` under ``<cache_dir>/llm.sqlite``, so every command that uses
the group (``gen``, ``score``) replays identical calls for free and resumes after a crash.
``none`` builds no model: the command falls back to its deterministic heuristics.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from ragsweep.metrics.errors import InputError, looks_like_key, register_secret
from ragsweep.metrics.llm.base import LLM, MAX_REPLY_CHARS
from ragsweep.metrics.llm.cache import CachedLLM
from ragsweep.metrics.llm.local import LocalLLM
from ragsweep.metrics.llm.openai_compat import OpenAICompatLLM


log = logging.getLogger(__name__)
_warned: set[str] = set()


def check_key_env(name: str, key: str = "llm.api_key_env") -> None:
    """Warn once when ``name`` is not a set variable, or is a key itself (which is then scrubbed everywhere).

    The key a variable holds is registered for scrubbing (:func:`metrics.errors.scrub`).
    """
    if looks_like_key(name):
        register_secret(name)
        message = (f"{key} looks like an API key, not the NAME of a variable holding one; it is not sent "
                   f"and not saved in config.yaml. Export the key and pass {key}=NAME_OF_VARIABLE")
    elif not os.environ.get(name):
        message = f"{key}: variable {name} is not set; requests go without a key (fine for a local server)"
    else:
        register_secret(os.environ[name])
        return
    if message not in _warned:
        _warned.add(message)
        log.warning(message)


def _reply_limit(value: Any) -> int | None:
    """``llm.max_reply_chars`` checked: a positive number of characters, or null for no limit."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"llm.max_reply_chars must be a positive number of characters (or null: no limit), "
                         f"got {value!r}")
    return value


def _wrap(inner: Any, cache: bool, cache_dir: str | None, max_concurrency: int) -> LLM:
    llm = CachedLLM(inner, Path(cache_dir).expanduser() / "llm.sqlite") if cache and cache_dir else inner
    llm.max_concurrency = max_concurrency  # type: ignore[union-attr]  # read by callers that batch calls
    return llm


def local(model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m", n_ctx: int = 4096, threads: int = 2,
          temperature: float = 0.0, seed: int = 0, cache: bool = True, cache_dir: str | None = None,
          parallel: int = 1, max_reply_chars: int | None = MAX_REPLY_CHARS) -> LLM:
    """llama.cpp in-process on a packaged GGUF (a key of ``PACKAGED_MODELS``) or a GGUF path;
    ``parallel`` slots decode at once, and callers keep that many calls in flight."""
    return _wrap(LocalLLM(model, n_ctx=n_ctx, n_threads=threads, temperature=temperature, seed=seed,
                          parallel=parallel, max_reply_chars=_reply_limit(max_reply_chars)), cache, cache_dir,
                 parallel)


def openai(model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
           temperature: float = 0.0, seed: int = 0, max_concurrency: int = 8, timeout_s: float = 60.0,
           max_retries: int = 5, cache: bool = True, cache_dir: str | None = None,
           max_reply_chars: int | None = MAX_REPLY_CHARS) -> LLM:
    """Any OpenAI-compatible endpoint; the key is read from the variable named ``api_key_env``."""
    check_key_env(api_key_env)
    inner = OpenAICompatLLM(model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                            max_concurrency=max_concurrency, timeout_s=timeout_s, max_retries=max_retries,
                            seed=seed, max_reply_chars=_reply_limit(max_reply_chars))
    return _wrap(inner, cache, cache_dir, max_concurrency)


def none(**_: Any) -> None:
    """No model: commands use their rule-based fallbacks."""
    return None


def concurrency_of(llm: Any) -> int:
    """How many calls a caller should have in flight at once (1 when unknown)."""
    return int(getattr(llm, "max_concurrency", None) or getattr(getattr(llm, "inner", None), "max_concurrency", 1) or 1)
