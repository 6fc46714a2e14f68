"""OpenAICompatLLM against a real HTTP server on 127.0.0.1 that replays a script."""

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pydantic
import pytest

from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import CachedLLM, OpenAICompatLLM
from ragsweep.metrics.llm.base import CompactReply

USER = [{"role": "user", "content": "Capital of France?"}]
KEY_ENV = "RAGSWEEP_TEST_OPENAI_KEY"


class Answer(pydantic.BaseModel):
    answer: str


def ok(content, logprobs=None):
    """A chat.completion body."""
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [choice],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }  # fmt: skip


class ScriptServer:
    """Serves scripted steps in order: (status, body), ("sleep", seconds, body) or ("hold", body):
    a held reply is sent only once the test sets :attr:`release` (or the loop's deadline passes).

    Its loop stops by itself after a deadline even if a test forgets to stop it.
    """

    def __init__(self, steps, deadline_s=20.0):
        self.steps = list(steps)
        self.requests = []  # (headers, json body) per request
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer._lock:
                    outer.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    step = outer.steps.pop(0) if outer.steps else (500, {"error": "script exhausted"})
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    if step[0] == "sleep":
                        time.sleep(step[1])
                        step = (200, step[2])
                    elif step[0] == "hold":
                        outer.release.wait(timeout=deadline_s)  # bounds the wait only; never asserted
                        step = (200, step[1])
                    data = json.dumps(step[1]).encode()
                    self.send_response(step[0])
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if step[0] == 429:
                        self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up, as intended
                finally:
                    with outer._lock:
                        outer.in_flight -= 1

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.timeout = 0.05
        end = time.monotonic() + deadline_s

        def loop():
            while not self._stop.is_set() and time.monotonic() < end:
                self.httpd.handle_request()
            self.httpd.server_close()

        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self):
        self._stop.set()
        self.thread.join(timeout=5)


@pytest.fixture
def serve():
    servers = []

    def start(steps):
        servers.append(ScriptServer(steps))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def make(server, **kw):
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("timeout_s", 5.0)
    return OpenAICompatLLM("m", server.base_url, api_key_env=KEY_ENV, **kw)


def test_plain_completion_and_usage(serve):
    server = serve([(200, ok("Paris"))])
    llm = make(server)
    out = asyncio.run(llm.complete(USER, max_tokens=12))
    assert (out.text, out.usage.prompt_tokens, out.usage.completion_tokens) == ("Paris", 7, 3)
    body = server.requests[0][1]
    assert body["model"] == "m" and body["max_tokens"] == 12 and body["temperature"] == 0.0
    assert "response_format" not in body and "logprobs" not in body


def test_429_then_success_is_retried(serve):
    server = serve([(429, {"error": {"message": "slow down"}}), (200, ok('{"answer": "Paris"}'))])
    llm = make(server)
    out = asyncio.run(llm.complete(USER, Answer))
    assert out.parsed == Answer(answer="Paris")
    assert (llm.retries, llm.requests, len(server.requests)) == (1, 2, 2)
    fmt = server.requests[0][1]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["required"] == ["answer"]


class CompactAnswer(CompactReply):
    answer: str


def test_a_compact_reply_sends_plain_json_schema(serve):
    server = serve([(200, ok('{"answer": "Paris"}'))])
    out = asyncio.run(make(server).complete(USER, CompactAnswer))
    assert out.parsed == CompactAnswer(answer="Paris")
    schema = server.requests[0][1]["response_format"]["json_schema"]["schema"]
    assert "x-guidance" in CompactAnswer.model_json_schema() and "x-guidance" not in schema  # llama.cpp's only
    assert schema["required"] == ["answer"]


def test_500_then_success_is_retried(serve):
    server = serve([(500, {"error": {"message": "boom"}}), (503, {"error": {}}), (200, ok("Paris"))])
    llm = make(server)
    assert asyncio.run(llm.complete(USER)).text == "Paris"
    assert (llm.retries, len(server.requests)) == (2, 3)


def test_timeout_then_success_is_retried(serve):
    server = serve([("hold", ok("late")), (200, ok("Paris"))])
    llm = make(server, timeout_s=0.3)
    try:
        assert asyncio.run(llm.complete(USER)).text == "Paris"  # the held reply was not awaited
    finally:
        server.release.set()
    assert llm.retries == 1 and len(server.requests) == 2
    # The retry reached the server while the first reply was still held back: the client gave up on it.
    assert server.max_in_flight == 2


def test_gives_up_after_max_retries(serve):
    server = serve([(500, {"error": {}})] * 5)
    llm = make(server, max_retries=2)
    with pytest.raises(JudgeError, match="gave up after 2 retries"):
        asyncio.run(llm.complete(USER))
    assert (llm.retries, len(server.requests)) == (2, 3)


def test_client_errors_are_not_retried(serve):
    server = serve([(401, {"error": {"message": "bad key"}})])
    llm = make(server)
    with pytest.raises(JudgeError, match="401"):
        asyncio.run(llm.complete(USER))
    assert len(server.requests) == 1


def test_rejected_response_format_falls_back_to_parsing(serve):
    server = serve([(400, {"error": {"message": "response_format not supported"}}),
                    (200, ok('```json\n{"answer": "Paris"}\n```')),
                    (200, ok('{"answer": "Rome"}'))])  # fmt: skip
    llm = make(server)
    assert asyncio.run(llm.complete(USER, Answer)).parsed.answer == "Paris"
    assert asyncio.run(llm.complete(USER, Answer)).parsed.answer == "Rome"
    assert [("response_format" in body) for _, body in server.requests] == [True, False, False]


def test_logprobs_are_requested_and_returned(serve):
    lp = [{"token": "Yes", "logprob": -0.1, "top_logprobs": [
        {"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.4}]}]  # fmt: skip
    server = serve([(200, ok("Yes", logprobs=lp))])
    out = asyncio.run(make(server).complete(USER, logprobs=True))
    assert out.logprobs == [{"Yes": -0.1, "No": -2.4}]
    body = server.requests[0][1]
    assert body["logprobs"] is True and body["top_logprobs"] == 5


def test_concurrency_is_bounded(serve):
    server = serve([("sleep", 0.15, ok(str(i))) for i in range(6)])
    llm = make(server, max_concurrency=2)

    async def many():
        return await asyncio.gather(*(llm.complete([{"role": "user", "content": str(i)}]) for i in range(6)))

    assert len(asyncio.run(many())) == 6
    assert server.max_in_flight == 2


def test_key_from_env_is_sent_but_never_cached_or_in_identity(serve, monkeypatch, tmp_path):
    secret = "sk-test-DO-NOT-STORE-8c1f"
    monkeypatch.setenv(KEY_ENV, secret)
    server = serve([(200, ok('{"answer": "Paris"}'))])
    inner = make(server)
    llm = CachedLLM(inner, tmp_path / "llm.sqlite")
    first = asyncio.run(llm.complete(USER, Answer))
    second = asyncio.run(llm.complete(USER, Answer))
    assert (first.cached, second.cached, second.parsed) == (False, True, Answer(answer="Paris"))
    assert len(server.requests) == 1
    assert server.requests[0][0]["authorization"] == f"Bearer {secret}"
    assert secret not in json.dumps(inner.identity()) and secret not in repr(vars(inner))
    files = list(tmp_path.iterdir())
    assert any(f.name == "llm.sqlite" for f in files)
    for f in files:  # the database and its -wal / -shm files
        assert secret.encode() not in f.read_bytes(), f


@pytest.mark.parametrize("status, retries", [(401, 0), (500, 1)])
def test_an_error_body_echoing_the_key_is_scrubbed_from_the_error(serve, monkeypatch, status, retries):
    secret = "echo-ME-not-7d2e9b41c0"  # no known key format: found because it is the key in use
    monkeypatch.setenv(KEY_ENV, secret)
    body = {"error": {"message": f"invalid key {secret}", "request_headers": {"Authorization": f"Bearer {secret}"}}}
    server = serve([(status, body)] * 2)
    with pytest.raises(JudgeError) as caught:
        asyncio.run(make(server, max_retries=retries).complete(USER))
    assert str(status) in str(caught.value) and secret not in str(caught.value)
    assert "<redacted>" in str(caught.value)


def test_missing_key_sends_placeholder(serve, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    server = serve([(200, ok("hi"))])
    asyncio.run(make(server).complete(USER))
    assert server.requests[0][0]["authorization"] == "Bearer not-needed"


def test_identity_leaves_out_timeouts_and_retries():
    a = OpenAICompatLLM("m", "http://h/v1/", timeout_s=1, max_retries=0, max_concurrency=1)
    b = OpenAICompatLLM("m", "http://h/v1", timeout_s=99, max_retries=9)
    assert a.identity() == b.identity()
    assert a.identity() != OpenAICompatLLM("m", "http://h/v1", temperature=0.7).identity()
