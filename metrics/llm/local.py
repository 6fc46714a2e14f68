"""llama.cpp in-process through ``xllamacpp``: the default, offline LLM.

xllamacpp embeds llama.cpp's own server (``xllamacpp.Server``) and takes OpenAI-shaped
request dicts directly, without HTTP. What this module relies on:

* ``Server.handle_chat_completions(request: dict) -> dict`` (no callback: one blocking call
  that returns the whole response, or ``{"error": {...}}``; bad schemas raise ValueError);
* ``"json_schema": {...}`` in the request constrains decoding to the schema (llama.cpp turns
  it into a grammar; this build routes it through LLGuidance);
* ``"logprobs": True, "top_logprobs": N`` returns ``choices[0].logprobs.content`` as OpenAI does.
  The top log-probabilities are the model's own distribution before the grammar mask: under
  a schema, position 0 can list tokens such as "Here" that the grammar would never allow;
* ``"grammar": "<GBNF>"`` constrains decoding to a GBNF grammar (the lines layout, :mod:`metrics.llm.lines`);
* ``"cache_prompt": True`` keeps the KV cache of the previous prompt, so calls that share a
  long prefix (same instructions, same contexts) only evaluate the new tail.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.llm import lines, models
from ragsweep.metrics.llm.base import (
    MAX_REPLY_CHARS,
    Completion,
    Logprobs,
    Message,
    StopRule,
    StructuredBackend,
    Usage,
    WordBias,
    chat_request,
)

# Small models sometimes loop instead of stopping; bound a call when the caller gives no limit.
DEFAULT_MAX_TOKENS = 1024


class LocalLLM(StructuredBackend):
    """A GGUF model run in this process by llama.cpp, on CPU.

    The model loads on the first call, not in the constructor. Calls run on ``parallel`` worker
    threads, one per llama.cpp slot, so the event loop stays free while the model runs. With one
    slot (the default) calls are serialised. With several, llama.cpp decodes the slots' sequences
    together in one batch (continuous batching), and each slot keeps its own prompt cache, so two
    prompts used in turn (the question writer and its round trip) each keep their prefix.

    Args:
        model_path: A GGUF file, or the name of a packaged model (a key of
            :data:`metrics.llm.models.PACKAGED_MODELS`), assembled and hash-checked on
            first use.
        n_ctx: Context size in tokens (prompt plus output).
        n_threads: CPU threads for prompt evaluation and generation.
        temperature: Sampling temperature; 0 is greedy and repeatable.
        seed: Sampling seed.
        parallel: llama.cpp slots (sequences decoded at once), each with ``n_ctx`` tokens. Batched
            decoding sums in another order than one sequence alone, so a greedy output can differ in
            a rare near-tie; it is not part of :meth:`identity` (the cache replays either).
        max_reply_chars: Longest reply accepted, in characters (None: no limit); a longer one is an
            error naming its size, never repaired or cached.
    """

    def __init__(
        self,
        model_path: str | Path,
        n_ctx: int = 4096,
        n_threads: int = 2,
        temperature: float = 0.0,
        seed: int = 0,
        parallel: int = 1,
        max_reply_chars: int | None = MAX_REPLY_CHARS,
    ) -> None:
        if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
            raise InputError(f"llm.parallel must be a positive integer (llama.cpp slots), got {parallel!r}")
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.temperature = temperature
        self.seed = seed
        self.parallel = parallel
        self.max_reply_chars = max_reply_chars
        self.usage = Usage()  # all tokens spent by this object
        self.prompt_evaluated = 0  # prompt tokens llama.cpp evaluated (the rest came from its prompt cache)
        self.last_timings: dict[str, Any] = {}  # llama.cpp's timings of the last call
        # Seconds spent finding (assembling, hash-checking) the model file and loading it: a cold run's fixed cost.
        self.resolve_seconds = 0.0
        self.load_seconds = 0.0
        self._server: Any = None
        self._file: Path | None = None
        self._sha256: str | None = None
        self._init_lock = threading.RLock()  # finding the file (identity() needs it, not the loaded model)
        self._load_lock = threading.Lock()  # loading the model: held for seconds, so identity() does not wait on it
        self._executor = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="llama")

    word_bias = True  # llama.cpp's logit_bias takes words (metrics.llm.base.WordBias)
    streams = True  # a stop rule ends a reply while it is written (metrics.llm.base.StopRule)
    line_replies = True  # a grammar holds a reply to the lines layout (metrics.llm.lines)

    @property
    def model_id(self) -> str:
        """The packaged model name, or the GGUF file's stem."""
        name = str(self.model_path)
        return name if name in models.PACKAGED_MODELS else Path(name).stem

    def identity(self) -> dict[str, Any]:
        """Model file hash, context size and sampling parameters."""
        if self._sha256 is None:
            self._sha256 = models.file_sha256(self._resolve())
        return {
            "backend": "llama.cpp",
            "model": self.model_id,
            "sha256": self._sha256,
            "n_ctx": self.n_ctx,  # a smaller context can fail or truncate where a larger does not
            "temperature": self.temperature,
            "seed": self.seed,
        }

    def close(self) -> None:
        """Free the model and the worker thread."""
        self._executor.shutdown(wait=True)
        self._server = None

    async def _generate(
        self,
        messages: list[Message],
        json_schema: dict[str, Any] | None,
        logprobs: bool,
        max_tokens: int | None,
        bias: WordBias | None = None,
        stop: StopRule | None = None,
    ) -> Completion:
        request = chat_request(messages, temperature=self.temperature, seed=self.seed, logprobs=logprobs,
                               max_tokens=max_tokens or DEFAULT_MAX_TOKENS)
        request["cache_prompt"] = True
        if bias:  # llama.cpp tokenizes each word and shifts every one of its tokens
            request["logit_bias"] = [[word, value] for word, value in sorted(bias.items())]
        if lines.is_lines(json_schema):  # a reply laid out as lines (metrics.llm.lines), held to them by GBNF
            request["grammar"] = lines.grammar(json_schema)  # type: ignore[arg-type]
        elif json_schema is not None and "x-guidance" in json_schema:
            # llama.cpp's json_schema field drops LLGuidance's layout options; its grammar field keeps them.
            request["grammar"] = "%llguidance {}\nstart: %json " + json.dumps(json_schema, ensure_ascii=False)
        elif json_schema is not None:
            request["json_schema"] = json_schema
        loop = asyncio.get_running_loop()
        if stop is not None and not logprobs:
            return await loop.run_in_executor(self._executor, self._streamed, request, stop)
        response = await loop.run_in_executor(self._executor, self._call, request)
        if "error" in response:
            err = response["error"]
            message = err.get("message", err) if isinstance(err, dict) else err
            raise JudgeError(f"{self.model_id}: llama.cpp error: {message}")
        choice = response["choices"][0]
        raw_usage = response.get("usage") or {}
        usage = Usage(raw_usage.get("prompt_tokens", 0), raw_usage.get("completion_tokens", 0))
        self.usage = self.usage + usage
        self.last_timings = response.get("timings") or {}
        self.prompt_evaluated += int(self.last_timings.get("prompt_n") or 0)
        return Completion(
            text=choice["message"].get("content") or "",
            usage=usage,
            logprobs=_logprobs(choice) if logprobs else None,
        )

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Runs on the worker thread."""
        server = self._load()
        try:
            return dict(server.handle_chat_completions(request))
        except ValueError as err:  # e.g. a schema llama.cpp cannot turn into a grammar
            raise JudgeError(f"{self.model_id}: llama.cpp rejected the request: {err}") from None

    def _streamed(self, request: dict[str, Any], stop: StopRule) -> Completion:
        """A call whose reply llama.cpp streams, ended as soon as ``stop`` says so (runs on the worker thread)."""
        server = self._load()
        parts: list[str] = []
        state: dict[str, Any] = {"tokens": 0, "stopped": False, "error": None, "usage": None, "timings": None}

        def chunk(data: Any) -> bool:  # llama.cpp stops generating when this returns True
            item = json.loads(data) if isinstance(data, (str, bytes)) else data
            if not isinstance(item, dict):
                return False
            if "error" in item:
                state["error"] = item["error"]
                return True
            state["usage"] = item.get("usage") or state["usage"]
            state["timings"] = item.get("timings") or state["timings"]
            for choice in item.get("choices") or ():
                text = (choice.get("delta") or {}).get("content")
                if text:
                    parts.append(text)
                    state["tokens"] += 1
            if state["tokens"] and not state["stopped"] and stop("".join(parts)):
                state["stopped"] = True
            return bool(state["stopped"])

        try:
            server.handle_chat_completions({**request, "stream": True, "timings_per_token": True}, chunk)
        except ValueError as err:
            raise JudgeError(f"{self.model_id}: llama.cpp rejected the request: {err}") from None
        if state["error"] is not None:
            err = state["error"]
            message = err.get("message", err) if isinstance(err, dict) else err
            raise JudgeError(f"{self.model_id}: llama.cpp error: {message}")
        timings = state["timings"] or {}
        raw_usage = state["usage"] or {}
        # A stopped reply ends before llama.cpp's closing chunk and its usage: its tokens are the chunks received,
        # its prompt what the timings of the last chunk counted (the cached prefix and the tokens evaluated).
        usage = Usage(int(raw_usage.get("prompt_tokens") or (timings.get("cache_n", 0) + timings.get("prompt_n", 0))),
                      int(raw_usage.get("completion_tokens") or state["tokens"]))
        self.usage = self.usage + usage
        self.last_timings = timings
        self.prompt_evaluated += int(timings.get("prompt_n") or 0)
        return Completion(text="".join(parts), usage=usage, stopped=bool(state["stopped"]))

    def _resolve(self) -> Path:
        # Locked: identity() (from the cache's thread) and the worker may both come first.
        with self._init_lock:
            if self._file is None:
                started = time.perf_counter()
                name = str(self.model_path)
                if name in models.PACKAGED_MODELS:
                    self._file = models.assemble(name)
                else:
                    file = Path(name).expanduser()
                    if not file.is_file():  # checked before it is kept: every later call says so too
                        raise InputError(f"{file}: GGUF model file not found")
                    self._file = file
                self.resolve_seconds = time.perf_counter() - started
            return self._file

    def preload(self) -> None:
        """Start loading the model on a background thread, so that it loads while the caller prepares its first
        call (reads a corpus, builds indexes); the first call waits for it. A failure is left to the first call,
        which loads again and raises it."""

        def load() -> None:
            try:
                self._load()
            except Exception:  # noqa: BLE001 - raised again, with its message, by the first call
                pass

        # Not a daemon: a command that fails while the model loads waits for the load to end before it exits,
        # rather than tearing llama.cpp down under a thread still inside it.
        threading.Thread(target=load, name="llama-load").start()

    def _load(self) -> Any:
        with self._load_lock:
            if self._server is None:
                file = self._resolve()
                started = time.perf_counter()
                import xllamacpp  # optional dependency: imported only when the model is used

                params = xllamacpp.CommonParams()
                params.model.path = str(file)
                params.n_ctx = self.n_ctx * self.parallel  # llama.cpp splits it: n_ctx per slot
                params.n_parallel = self.parallel
                params.cpuparams.n_threads = self.n_threads
                params.cpuparams_batch.n_threads = self.n_threads
                params.cache_prompt = True
                params.sampling.temp = self.temperature
                params.sampling.seed = self.seed
                params.warmup = True  # without it the first request decodes several times slower
                params.verbosity = -1  # llama.cpp's per-request logs would flood stderr
                self._server = xllamacpp.Server(params)
                self.load_seconds = time.perf_counter() - started
            return self._server


def _logprobs(choice: dict[str, Any]) -> Logprobs | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    return [
        {t["token"]: t["logprob"] for t in pos.get("top_logprobs") or []}
        or {pos["token"]: pos["logprob"]}
        for pos in content
    ]
