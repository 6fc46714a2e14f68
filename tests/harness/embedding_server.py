"""An OpenAI-compatible ``/v1/embeddings`` server on 127.0.0.1 for tests: a vector per text from its
hash (equal texts, equal vectors), so sweeps with ``embedder=openai`` run offline and fast."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def vector(text: str) -> list[float]:
    return [b / 255 - 0.5 for b in hashlib.sha256(text.encode()).digest()[:16]]


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        payload = {"object": "list", "model": body.get("model", "m"), "usage": {"prompt_tokens": 1, "total_tokens": 1},
                   "data": [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class EmbeddingServer:
    """``with EmbeddingServer() as url:`` -- the ``base_url`` (ending in ``/v1``) while the block runs."""

    def __enter__(self) -> str:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def dead_url() -> str:
    """A ``base_url`` on 127.0.0.1 where nothing listens (a port bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
