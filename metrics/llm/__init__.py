"""The LLM interface shared by the judge, the question writer and the answerer.

Backends: :class:`OpenAICompatLLM` (any OpenAI-compatible endpoint), :class:`LocalLLM`
(llama.cpp in-process on a packaged GGUF) and :class:`ScriptedLLM` (a fake for tests);
:class:`CachedLLM` wraps any of them with a content-addressed SQLite cache and :class:`Meter`
counts their calls and tokens. Optional SDKs (``openai``, ``xllamacpp``) are imported only when a
call needs them.
"""

from ragsweep.metrics.llm.base import (
    LLM,
    Completion,
    Logprobs,
    Message,
    PromptId,
    Schema,
    StopRule,
    Usage,
    WordBias,
    complete_structured,
    parse_structured,
    supports_bias,
    supports_lines,
    supports_stop,
)
from ragsweep.metrics.llm.cache import CachedLLM, CompletionStore, cache_key
from ragsweep.metrics.llm.local import LocalLLM
from ragsweep.metrics.llm.meter import LLMCost, Meter
from ragsweep.metrics.llm.models import PACKAGED_MODELS, ModelIntegrityError, PackagedModel, assemble
from ragsweep.metrics.llm.openai_compat import OpenAICompatLLM
from ragsweep.metrics.llm.scripted import ScriptedCall, ScriptedLLM, ScriptExhausted

__all__ = [
    "LLM",
    "LLMCost",
    "PACKAGED_MODELS",
    "CachedLLM",
    "Completion",
    "CompletionStore",
    "LocalLLM",
    "Logprobs",
    "Message",
    "Meter",
    "StopRule",
    "WordBias",
    "supports_bias",
    "supports_lines",
    "supports_stop",
    "ModelIntegrityError",
    "OpenAICompatLLM",
    "PackagedModel",
    "PromptId",
    "Schema",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedLLM",
    "Usage",
    "assemble",
    "cache_key",
    "complete_structured",
    "parse_structured",
]
