"""A judge server that echoes the request's Authorization header in its error bodies: no credential
reaches result.csv, summary.csv, explanations.jsonl, config.yaml, the cache or the command's output.

The server is a stdlib ``ThreadingHTTPServer`` on 127.0.0.1, as in ``tests/metrics/test_fault_injection.py``.
"""

from __future__ import annotations

import csv
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import run_cli

KEY_ENV = "RAGSWEEP_SECRET_TEST_KEY"
KEY = "sk-test-Echo0fTheKey-4b1d9c77e2"
CREDENTIAL = re.compile(r"sk-[A-Za-z0-9]|Bearer [A-Za-z0-9._~+/=-]{8,}|Echo0fTheKey")


class EchoServer:
    """Answers every chat request with 401, 403 or 500 in turn, quoting the request's Authorization."""

    def __init__(self) -> None:
        self.requests = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer.lock:
                    outer.requests += 1
                    status = (401, 403, 500)[outer.requests % 3]
                auth = self.headers.get("Authorization", "")
                # 401: JSON with the key in its message; 403: plain text, which the SDK quotes whole;
                # 500: the key in fields the SDK leaves out of its message
                body = (f"Forbidden. Request headers:\nAuthorization: {auth}\nHost: x\napi_key={auth[7:]}\n".encode()
                        if status == 403 else json.dumps(
                            {"error": {"message": f"rejected credentials {auth}"}} if status == 401
                            else {"detail": "upstream failed", "request": {"Authorization": auth}}).encode())
                self.send_response(status)
                self.send_header("Content-Type", "text/plain" if status == 403 else "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = EchoServer()
    yield s
    s.stop()


def _input(path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truth"])
        w.writerow(["Who built the bridge?", "Ada built it.", "Ada built the bridge in 1901.", "Ada"])
        w.writerow(["When?", "In 1901.", "It opened in 1901.", "1901"])
    return path


def _judge(server: EchoServer, key_env: str) -> list[str]:
    return ["llm=openai", "llm.model=m", f"llm.base_url={server.base_url}", f"llm.api_key_env={key_env}",
            "llm.max_retries=1", "llm.timeout_s=10", "metrics=[faithfulness,answer_relevancy_llm]",
            "progress=false", "out=out", "input=in.csv"]


def _leaks(root: Path, *texts: str) -> list[str]:
    found = [f"output: {m}" for t in texts for m in CREDENTIAL.findall(t)]
    for f in root.rglob("*"):
        if f.is_file() and f.name != "in.csv":
            data = f.read_bytes().decode("utf-8", "replace")
            found += [f"{f.relative_to(root)}: {m}" for m in CREDENTIAL.findall(data)]
    return found


def test_echoed_authorization_never_reaches_an_output(tmp_path, server):
    _input(tmp_path / "in.csv")
    proc = run_cli("score", *_judge(server, KEY_ENV), cwd=tmp_path, env={KEY_ENV: KEY}, timeout=300)
    assert proc.returncode == 3, proc.stderr[-3000:]  # every judged score is an error: nothing measured
    assert "could not score: every judged score is an error" in proc.stderr
    assert server.requests >= 4
    explanations = [json.loads(line) for line in (tmp_path / "out" / "explanations.jsonl").open()]
    reasons = " ".join(e["explanation"]["reason"] for e in explanations)
    assert {e["status"] for e in explanations} == {"error"}
    assert "401" in reasons and "403" in reasons and "<redacted>" in reasons  # the error is kept, the key not
    assert _leaks(tmp_path, proc.stdout, proc.stderr) == []


@pytest.mark.parametrize("command", ["score", "sweep"])
def test_a_key_passed_as_the_variable_name_is_refused_before_anything_is_written(tmp_path, server, command):
    _input(tmp_path / "in.csv")
    args = _judge(server, KEY) if command == "score" else [f"++llm.api_key_env={KEY}", "corpus.max_docs=3"]
    proc = run_cli(command, *args, cwd=tmp_path, env={KEY_ENV: None}, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "llm.api_key_env takes the NAME of an environment variable, not the key itself" in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "outputs").exists()  # no multirun.yaml with it
    assert _leaks(tmp_path, proc.stdout, proc.stderr) == []
    assert server.requests == 0


def test_a_credential_in_any_override_is_refused(tmp_path):
    proc = run_cli("sweep", f"++retriever.note={KEY}", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "retriever.note looks like a credential" in proc.stderr
    assert KEY not in proc.stderr and not (tmp_path / "outputs").exists()


def test_the_python_api_warns_and_keeps_a_key_given_as_a_name_out_of_the_config(tmp_path, server):
    import ragsweep

    judge = ragsweep.llm.openai("m", base_url=server.base_url, api_key_env=KEY)
    scores = ragsweep.score([{"question": "q", "answer": "a.", "contexts": ["c."]}], metrics=["faithfulness"],
                            judge=judge)
    scores.write(tmp_path / "out")
    assert _leaks(tmp_path, "", "") == []


def test_an_unset_key_variable_is_warned_about_once(tmp_path, server):
    _input(tmp_path / "in.csv")
    proc = run_cli("score", *_judge(server, KEY_ENV), cwd=tmp_path, env={KEY_ENV: None}, timeout=300)
    assert proc.returncode == 3
    assert proc.stderr.count(f"llm.api_key_env: variable {KEY_ENV} is not set") == 1


# ---------------------------------------------------------------- a judge that echoes the credentials it got

ECHO_KEY = "Zq7pLm3xVt9wKc2RbN"  # in no known key format: only knowing the key in use can scrub it
ECHO_PW = "hunter2pass99"


def _echoing_reply(body: dict, headers: dict) -> str:
    auth = headers.get("Authorization") or headers.get("authorization") or ""
    return json.dumps({"claims": [{"claim": "Ada built it.", "verdict": "supported", "supporting": [1],
                                   "contradicting": [],
                                   "reason": f"you sent {auth}; key {ECHO_KEY}; password {ECHO_PW}"}]})


def _secrets_in(root: Path, *texts: str) -> list[str]:
    import base64

    secrets = [ECHO_KEY, ECHO_PW, base64.b64encode(f"judge:{ECHO_PW}".encode()).decode()]
    found = [f"output: {s}" for t in texts for s in secrets if s in t]
    for f in root.rglob("*"):
        if f.is_file() and f.name != "in.csv":
            data = f.read_bytes().decode("utf-8", "replace")
            found += [f"{f.relative_to(root)}: {s}" for s in secrets if s in data]
    return found


def test_a_judge_that_echoes_the_key_and_the_url_password_leaves_them_nowhere(tmp_path):
    """The reply is valid, so it is cached and explained: the key, the password in llm.base_url (given as a
    reference to a variable) and the Basic credentials made of it reach no file, cache or log line."""
    import base64

    from chat_server import ChatServer

    _input(tmp_path / "in.csv")
    with ChatServer(_echoing_reply) as server:
        url = server.url.replace("http://", "http://judge:${oc.env:RAGSWEEP_TEST_JUDGE_PW}@")
        proc = run_cli("score", "llm=openai", "llm.model=m", f"llm.base_url={url}", "llm.api_key_env=MY_JUDGE_VAR",
                       "llm.max_retries=0", "metrics=[hallucination]", "progress=false", "out=out", "input=in.csv",
                       cwd=tmp_path, env={"MY_JUDGE_VAR": ECHO_KEY, "RAGSWEEP_TEST_JUDGE_PW": ECHO_PW}, timeout=300)
        sent = server.requests[0][1].get("Authorization", "")
        assert sent.startswith("Basic ") and ECHO_PW in base64.b64decode(sent[6:]).decode()  # really used
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "cache" / "llm.sqlite").is_file()
    explanations = (tmp_path / "out" / "explanations.jsonl").read_text()
    assert "<redacted>" in explanations and "you sent" in explanations  # the reply is kept, the secrets not
    assert "base_url: http://<redacted>@127.0.0.1:" in (tmp_path / "out" / "config.yaml").read_text()
    assert _secrets_in(tmp_path, proc.stdout, proc.stderr) == []


def test_a_url_with_a_literal_password_is_refused_before_hydra_saves_it(tmp_path):
    proc = run_cli("sweep", f"++llm.base_url=http://judge:{ECHO_PW}@127.0.0.1:9/v1", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and "llm.base_url holds a URL with a password" in proc.stderr, proc.stderr
    assert ECHO_PW not in proc.stderr and not (tmp_path / "outputs").exists()


def test_log_lines_are_scrubbed_whatever_the_handler(caplog):
    import logging

    from ragsweep.metrics.errors import register_url

    register_url(f"http://judge:{ECHO_PW}@127.0.0.1:9/v1")
    with caplog.at_level(logging.INFO):
        logging.getLogger("httpx").info("HTTP Request: POST %s", f"http://judge:{ECHO_PW}@127.0.0.1:9/v1/chat")
        logging.getLogger("some.lib").warning("server said: password %s", ECHO_PW)
    text = "\n".join(r.getMessage() for r in caplog.records) + caplog.text
    assert ECHO_PW not in text and "POST http://<redacted>@127.0.0.1:9/v1/chat" in text
