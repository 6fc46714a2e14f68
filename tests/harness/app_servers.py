"""Applications for the ``ragsweep run`` tests: an HTTP service on 127.0.0.1 that counts its calls
and can be told to fail, and the reference pipeline (our retriever + extractive answerer) to put
behind it. Every server binds the loopback address only and stops with its test."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class AppServer:
    """A JSON-over-HTTP application: POST ``{question, ...}`` (or a chat request) -> ``answer(body)``.

    Attributes:
        calls: Calls received per question (failed ones included).
        fail_after: When set, every call after this many answered ones gets HTTP 500.
        on_call: Called with the number of calls so far before each is answered (a test hook).
        headers: The headers of the last request.
    """

    def __init__(self, answer: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.answer = answer
        self.calls: Counter[str] = Counter()
        self.answered = 0
        self.fail_after: int | None = None
        self.on_call: Callable[[int], None] | None = None
        self.headers: dict[str, str] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                asked = body.get("question") or body["messages"][-1]["content"]  # a chat request's last turn
                with server._lock:
                    server.calls[asked] += 1
                    server.headers = dict(self.headers)
                    n = sum(server.calls.values())
                    failing = server.fail_after is not None and server.answered >= server.fail_after
                    if not failing:
                        server.answered += 1
                if server.on_call is not None:
                    server.on_call(n)
                if failing:
                    self._send(500, {"error": "the application is down"})
                    return
                self._send(200, server.answer(body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/ask"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> AppServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ReferencePipeline:
    """The sweep's own pipeline (shipped corpus, default recursive chunker, MiniLM, flat index) and
    its extractive answerer, answering one question at a time as an application would."""

    def __init__(self, cache_dir: Path, chunk_size: int = 512) -> None:
        from hydra import compose, initialize_config_module
        from ragsweep.gen.parts import build
        from ragsweep.harness.cache import Cache
        from ragsweep.harness.pipeline.pipeline import Pipeline

        with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
            cfg = compose(config_name="sweep", overrides=[f"chunker.size={chunk_size}", "progress=false"])
        self.pipe = Pipeline(build(cfg.corpus, "corpus"), build(cfg.chunker, "chunker"),
                             build(cfg.embedder, "embedder"), build(cfg.index, "index"), Cache(cache_dir),
                             retrieval=build(cfg.retrieval, "retrieval"))
        self.answerer = build(cfg.answerer, "answerer", llm=None, embedder=self.pipe.cached_embedder)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:  # one model, many server threads
            found = self.pipe.search([body["question"]], int(body.get("top_k", 5)))[0]
            contexts = [r.text for r in found]
            answer = self.answerer.answer_all([body["question"]], [contexts])[0]
        return {"answer": answer, "sources": [{"text": t, "score": r.score} for t, r in zip(contexts, found)],
                "usage": {"prompt_tokens": sum(len(t.split()) for t in contexts), "completion_tokens": len(answer.split())}}


def chat_completion(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-compatible chat endpoint's reply: the first numbered context's first sentence."""
    prompt = body["messages"][-1]["content"]
    first = prompt.split("[1] ", 1)[1].split(". ")[0] if "[1] " in prompt else "I don't know."
    return {"id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": first}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(first.split())}}
