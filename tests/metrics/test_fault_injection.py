"""Judged metrics against a real HTTP server that misbehaves: no row lost, failures explained,
and once the faults stop, the same scores as a fault-free run (from the cache).

The server is a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 speaking ``/v1/chat/completions``.
Faults are planned per sample (the sample's tag, ``sample alpha`` for sample 0, is in the request)
and per attempt of each distinct request, so the outcome does not depend on how concurrent requests interleave.
"""

import asyncio
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.llm import CachedLLM, OpenAICompatLLM
from ragsweep.metrics.prompts import identify
from ragsweep.metrics.scoring import score_samples

# The client's timeout. Generous, so that a fault-free reply never exceeds it on a loaded 2-core
# machine (at 0.4 s a retried reply timed out while two test suites shared the cores); the "slow"
# fault waits 2.5 times as long.
TIMEOUT_S = 2.0
# sample number -> the faults of its 1st, 2nd, ... attempt of each prompt ("ok" afterwards).
PLAN = {
    1: ["429"],                  # rate limited once, then served: recovered by a retry
    2: ["500"],                  # server error once: recovered
    3: ["slow"],                 # answers after the client's timeout: recovered
    4: ["bad_body"],             # a 200 whose body is not JSON: recovered
    5: ["bad_content"],          # content is not JSON: recovered by the repair prompt
    6: ["bad_content"] * 2,      # not JSON, and the repair neither: unrecoverable
    7: ["500"] * 9,              # never recovers
    8: ["429"] * 9,              # never recovers
}
UNRECOVERABLE = {6: "does not match schema", 7: "gave up after 1 retries", 8: "gave up after 1 retries"}
METRICS = ["faithfulness", "hallucination", "context_precision", "context_recall"]
_TAGS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
SAMPLES = [RagSample(f"s{k}", question=f"Question about sample {_TAGS[k]}?", answer=f"Answer of sample {_TAGS[k]}.",
                     contexts=tuple(f"Passage {i} of sample {_TAGS[k]}." for i in range(1, 2 + k % 3)),
                     reference=f"Reference of sample {_TAGS[k]}.") for k in range(10)]


def distinct_calls(k: int) -> int:
    """Sample k's distinct judge calls: faithfulness's and context recall's claim_check, hallucination's
    claims_verdicts, and context precision's claim_check of the reference on each context alone (with one context,
    that is context recall's call)."""
    n = len(SAMPLES[k].contexts)
    return 3 + (n if n > 1 else 0)


def good_reply(prompt: str, k: int, n: int) -> dict:
    """A valid reply that depends on the sample, so the scores differ from sample to sample."""
    if prompt == "claims_verdicts":
        return {"claims": [{"claim": f"claim {i}", "reason": "r", "verdict": v, "supporting": s, "contradicting": c}
                           for i, (v, s, c) in enumerate([("supported", [1], []), ("contradicted", [], [n]),
                                                          ("not_found", [], [])][: 1 + k % 3])]}
    if prompt == "claim_check":
        return {"answer": "yes" if k % 2 else "no"}
    if prompt == "chunk_verdicts":
        return {"verdicts": [{"chunk": i, "reason": "r", "relevant": (i + k) % 2 == 0} for i in range(1, n + 1)]}
    if prompt == "reference_claims_attribution":
        return {"claims": [{"claim": f"ref {i}", "reason": "r", "attributed": i < k % 4, "passages": [1]}
                           for i in range(3)]}
    raise AssertionError(f"unexpected prompt {prompt}")


class FaultyServer:
    def __init__(self):
        self.faults_on = False
        self.attempts: dict[tuple[int, str], int] = {}
        self.requests = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                try:
                    server.handle(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout fault)

        # A listen backlog above the client's 8 concurrent requests: with the default 5, a burst
        # of distinct calls gets connections reset that never reach the fault plan.
        self.httpd = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 64})(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.watchdog = threading.Timer(120, self.stop)  # never outlive a stuck test

    def __enter__(self):
        self.thread.start()
        self.watchdog.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self.watchdog.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, h):
        body = json.loads(h.rfile.read(int(h.headers["content-length"])))
        messages = body["messages"]
        prompt = identify(messages).name
        sample_text = next(m["content"] for m in reversed(messages) if "sample " in m["content"])
        k = _TAGS.index(re.search(r"sample (\w+)", sample_text).group(1))
        n = len(re.findall(r"^\[\d+\] ", sample_text, re.MULTILINE))
        with self.lock:
            self.requests += 1
            # One plan per distinct request (a repair of a reply continues its request's plan).
            key = (k, prompt, next(m["content"] for m in messages if m["role"] == "user" and "sample " in m["content"]))
            attempt = self.attempts.get(key, 0)
            self.attempts[key] = attempt + 1
        plan = PLAN.get(k, []) if self.faults_on else []
        fault = plan[attempt] if attempt < len(plan) else "ok"
        if fault == "429":
            return self.send(h, 429, {"error": {"message": "rate limited", "type": "rate_limit"}})
        if fault == "500":
            return self.send(h, 500, {"error": {"message": "boom", "type": "server_error"}})
        if fault == "slow":
            time.sleep(TIMEOUT_S * 2.5)
        if fault == "bad_body":
            return self.send(h, 200, b'{"id": "x", "choices": [')
        content = "Sure! The verdicts are mostly fine." if fault == "bad_content" else json.dumps(good_reply(prompt, k, n))
        self.send(h, 200, {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                        "message": {"role": "assistant", "content": content}}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    @staticmethod
    def send(h, status, payload):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)


def run(server, cache_path):
    llm = OpenAICompatLLM("judge", base_url=server.url, max_retries=1, timeout_s=TIMEOUT_S, backoff_s=0.01,
                          api_key_env="RAGSWEEP_TEST_NO_KEY")
    judge = CachedLLM(llm, cache_path)
    rows = asyncio.run(score_samples(SAMPLES, resolve(METRICS), judge=judge, concurrency=8, progress=False))
    return rows, judge


def test_faults_lose_no_row_and_the_cache_restores_clean_scores(tmp_path):
    with FaultyServer() as server:
        clean, _ = run(server, tmp_path / "clean.sqlite")
        assert all(r.result.status == "ok" for r in clean), [r.result.explanation for r in clean]
        assert len({r.result.value for r in clean if r.metric == "faithfulness"}) > 1

        server.faults_on, server.attempts = True, {}
        faulty, judge = run(server, tmp_path / "faulty.sqlite")
        # One retry per distinct call of samples 1-4, 7 and 8.
        assert judge.inner.retries == sum(distinct_calls(k) for k in (1, 2, 3, 4, 7, 8))
        assert [(r.sample_id, r.metric) for r in faulty] == [(r.sample_id, r.metric) for r in clean]
        for row, ref in zip(faulty, clean):
            k = int(row.sample_id[1:])
            if k in UNRECOVERABLE:
                assert row.result.status == "error" and row.result.value is None
                assert UNRECOVERABLE[k] in row.result.explanation["reason"], row.result.explanation
            else:
                assert row.result == ref.result, (row.sample_id, row.metric)

        server.faults_on = False
        before = server.requests
        healed, judge = run(server, tmp_path / "faulty.sqlite")
        assert [r.result for r in healed] == [r.result for r in clean]
        # Only the calls that failed are made again: every call of each unrecoverable sample.
        assert judge.misses == sum(map(distinct_calls, UNRECOVERABLE)) == server.requests - before
