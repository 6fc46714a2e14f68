"""``target=openai``: an OpenAI-compatible chat endpoint as the application, alone or with the
reference retriever in front.

Alone, the model gets the question and nothing else (a closed-book baseline: its answer metrics
only). With ``retrieve: true`` the run's corpus is chunked, embedded and searched by the same
:class:`~ragsweep.harness.pipeline.pipeline.Pipeline` a sweep uses (cached alike), and the model answers
from the top-``k`` chunks, numbered; those chunks are the contexts the run locates and scores.

In a conversation the earlier turns are sent as the chat's earlier messages, and the retriever
searches with every turn joined (a follow-up may not name what it asks about).

The endpoint is called with plain HTTP (``POST {base_url}/chat/completions``), so no SDK is needed;
the key is read from the environment variable named by ``api_key_env`` (a local server needs none).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import OmegaConf

from ragsweep.harness.app.replies import Reply, TargetError
from ragsweep.harness.app.targets import Target, check_status, messages_of
from ragsweep.metrics import InputError, looks_like_key, register_secret

SYSTEM = ("Answer the question using only the numbered contexts. Be brief: one or two sentences. "
          "If the contexts do not contain the answer, say \"I don't know.\"")
SYSTEM_CLOSED_BOOK = "Answer the question briefly: one or two sentences."


class OpenAITarget(Target):
    """A chat model behind an OpenAI-compatible endpoint, optionally reading the reference retriever's chunks."""

    kind = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 params: Mapping[str, Any] | None = None, retrieve: bool = False, top_k: int = 5,
                 system: str | None = None, retriever: Any = None, corpus: Any = None,
                 cache_dir: str = "~/.cache/ragsweep", **_: Any) -> None:
        if not model:
            raise InputError("target=openai needs the model: target.model=NAME")
        if looks_like_key(str(api_key_env)):
            raise InputError("target.api_key_env must NAME the environment variable holding the key, not hold the key")
        self.model, self.api_key_env = str(model), str(api_key_env)
        self.base_url = (base_url or "https://api.openai.com/v1").rstrip("/")
        self.params = dict(params or {})
        # top_k is the retriever's depth (a param, so that target.params.top_k=3,5 makes versions);
        # every other param goes into the request (temperature, max_tokens, ...).
        self.top_k = int(self.params.get("top_k", top_k))
        self.retrieve = bool(retrieve)
        self.system = system or (SYSTEM if self.retrieve else SYSTEM_CLOSED_BOOK)
        self._parts = {"retriever": _plain(retriever), "corpus": _plain(corpus)}
        self.cache_dir = cache_dir
        self._client: Any = None
        self._pipeline: Any = None
        self._lock = asyncio.Lock()

    def identity(self) -> dict[str, Any]:
        out = {"kind": self.kind, "model": self.model, "base_url": self.base_url, "params": self.params,
               "retrieve": self.retrieve, "system": self.system}
        if self.retrieve:
            out.update(top_k=self.top_k, retriever=self._parts["retriever"])
        return out

    def label(self) -> str:
        return f"{self.model}{' + retriever' if self.retrieve else ''}"

    async def start(self) -> None:
        import httpx

        headers = {}
        key = os.environ.get(self.api_key_env)
        if key:
            register_secret(key)
            headers["Authorization"] = f"Bearer {key}"
        elif "api.openai.com" in self.base_url:
            raise InputError(f"the environment variable {self.api_key_env} (target.api_key_env) is not set")
        self._client = httpx.AsyncClient(headers=headers, timeout=None)
        if self.retrieve:
            self._pipeline = await asyncio.to_thread(self._build_pipeline)

    def _build_pipeline(self) -> Any:
        from ragsweep.gen import build
        from ragsweep.harness.cache import Cache
        from ragsweep.harness.pipeline.pipeline import Pipeline

        parts = self._parts["retriever"] or {}
        if self._parts["corpus"] is None or not {"chunker", "embedder", "index"} <= set(parts):
            raise InputError("target.retrieve=true needs target.corpus and target.retriever.{chunker,embedder,index}")
        node = OmegaConf.create({**parts, "corpus": self._parts["corpus"]})
        return Pipeline(build(node.corpus, "corpus"), build(node.chunker, "chunker"), build(node.embedder, "embedder"),
                        build(node.index, "index"), Cache(self.cache_dir))

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _contexts(self, question: str) -> list[str]:
        if self._pipeline is None:
            return []
        async with self._lock:  # one model and one FAISS index for every call in flight
            found = await asyncio.to_thread(self._pipeline.search, [question], self.top_k)
        return [r.text for r in found[0]]

    async def call(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Reply:
        import httpx

        # The retriever searches with the conversation's turns joined (a follow-up may not name its subject).
        contexts = await self._contexts("\n".join([*(str(t.get("content", "")) for t in history), question]))
        if self.retrieve:
            numbered = "\n\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts)) or "(no context)"
            user = f"Contexts:\n{numbered}\n\nQuestion: {question}\nAnswer:"
        else:
            user = question
        earlier = messages_of(question, history)[:-1]  # the conversation so far, as chat turns
        body = {"model": self.model, "messages": [{"role": "system", "content": self.system}, *earlier,
                                                  {"role": "user", "content": user}],
                **{k: v for k, v in self.params.items() if k != "top_k"}}
        try:
            response = await self._client.post(f"{self.base_url}/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise TargetError(f"{type(exc).__name__}: {exc}", retryable=True) from exc
        check_status(response, self.base_url)
        try:
            data = response.json()
            answer = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise TargetError("not a chat completion (choices[0].message.content)", retryable=False,
                              raw=response.text[:2000]) from None
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else None
        tokens = {k: int(usage[k]) for k in ("prompt_tokens", "completion_tokens") if isinstance(usage.get(k), int)} \
            if usage else None
        return Reply(answer, contexts if self.retrieve else None, None, tokens or None, data)


def _plain(node: Any) -> Any:
    """A config node as plain data (``_target_`` keys kept: the parts are built on first use)."""
    if node is None:
        return None
    if OmegaConf.is_config(node):
        return OmegaConf.to_container(node, resolve=True)
    return dict(node)
