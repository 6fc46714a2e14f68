"""ragas_once's flags on ``ragsweep score``: the translation in-process, whole runs as subprocesses.

The judged runs talk to a stdlib HTTP server on 127.0.0.1 that answers ``/v1/chat/completions``
(the ``statement_relevance`` prompt of context_relevancy) and ``/v1/embeddings`` (a vector per
text from its hash, so equal texts get equal vectors) and records every Authorization header.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from ragsweep.harness.ragas_once import KEY_ENV, KEY_WARNING, quoted, translate
from ragsweep.metrics.aliases import METRIC_ALIASES, NO_EQUIVALENT, alias_note, canonical
from ragsweep.metrics.catalogue import catalogue
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.prompts import identify

SECRET = "sk-test-7f3a9c1e5b"  # a key that must reach the server and nothing else

# ragas_once's dataset: lists in a cell separated by ';'
ROWS = [("Who built the bridge?", "Ada built the bridge.", "Ada built the bridge in 1901.;The bridge is red.",
         "Ada built the bridge."),
        ("When was it built?", "In 1901.", "Ada built the bridge in 1901.", "The bridge was built in 1901.")]
STATEMENTS = [{"text": 1, "statement": "a", "reason": "r", "verdict": "yes"},
              {"text": 1, "statement": "b", "reason": "r", "verdict": "no"},
              {"text": 1, "statement": "c", "reason": "r", "verdict": "yes"},
              {"text": 1, "statement": "d", "reason": "r", "verdict": "no"}]  # context_relevancy = 2/4


def write_dataset(path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truths"])
        w.writerows(ROWS)
    return path


def vector(text: str) -> list[float]:
    return [b / 255 for b in hashlib.sha256(text.encode()).digest()[:8]]


def cosine(a: str, b: str) -> float:
    u, v = np.asarray(vector(a)), np.asarray(vector(b))
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


class FakeOpenAI:
    """Chat and embeddings on 127.0.0.1; ``auth`` holds ``(path, Authorization)`` of every request."""

    def __init__(self):
        self.auth: list[tuple[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.auth.append((self.path, self.headers.get("authorization", "")))
                if self.path.endswith("/embeddings"):
                    payload = server.embeddings(body)
                else:
                    assert identify(body["messages"]).name == "statement_relevance"
                    payload = {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                            "message": {"role": "assistant",
                                                        "content": json.dumps({"statements": STATEMENTS})}}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @staticmethod
    def embeddings(body: dict) -> dict:
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        data = []
        for i, text in enumerate(texts):
            vec = vector(text)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(np.asarray(vec, dtype=np.float32).tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": vec})
        return {"object": "list", "data": data, "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1}}


@pytest.fixture()
def fake_openai():
    server = FakeOpenAI()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture(scope="module")
def score(ragsweep):
    """``ragsweep score progress=false ARGS`` in ``cwd``, with no OpenAI key of the user's in its environment."""
    def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        unset: dict[str, str | None] = {"OPENAI_API_KEY": None, "RAGAS_ONCE_TEST_KEY": None}
        return ragsweep("score", "progress=false", *args, cwd=cwd, env={**unset, **(env or {})}, timeout=300)

    return run


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


# --- the translation ---------------------------------------------------------------------------

def test_both_flag_forms_and_old_spellings_translate_alike():
    new = translate(["--dataset", "qa.csv", "--model=gpt-4o", "--apibase", "http://h:8000/v1",
                     "--embeddings=bge", "--metrics", "faithfulness,context_recall"])
    old = translate(["--dataset=qa.csv", "--llm", "gpt-4o", "--api_base=http://h:8000/v1",
                     "--embedding", "bge", "--metrics=faithfulness, context_recall"])
    assert new.args == old.args == [
        "input='qa.csv'", "out='.'", "metrics=['faithfulness','context_recall']", "llm=openai",
        "llm.model='gpt-4o'", "llm.base_url='http://h:8000/v1'", "embedder=openai", "embedder.model='bge'",
        "embedder.base_url='http://h:8000/v1'"]
    assert new.environ == {}


def test_flags_mix_with_overrides_and_hydra_flags_keep_their_values():
    t = translate(["llm.temperature=0.5", "--cfg", "job", "--dataset", "qa.csv", "out=reports", "--verbose"])
    # Hydra's flags first, then one run of overrides (argparse reads them as one positional list)
    assert t.args == ["--cfg", "job", "--verbose", "llm.temperature=0.5", "out=reports", "input='qa.csv'"]
    assert t.notes == []  # out= given: no note that the files go to the current folder


def test_arguments_without_ragas_once_flags_come_back_unchanged():
    args = ["input=qa.csv", "--cfg", "job", "--unknown", "x=1"]
    assert translate(args).args == args


def test_metric_aliases_are_translated_with_a_note():
    t = translate(["--metrics", "answer_similarity,context_relevancy,ragas_score"])
    assert t.args == ["metrics=['answer_semantic_similarity','context_relevancy','summary_score']"]
    assert t.notes == ["ragsweep: note: answer_similarity is answer_semantic_similarity here",
                       "ragsweep: note: ragas_score is summary_score here"]


def test_apikey_goes_to_a_private_variable_never_an_argument():
    t = translate(["--apikey", SECRET])
    assert t.args == ["llm=openai", f"llm.api_key_env={KEY_ENV}"]
    assert t.environ == {KEY_ENV: SECRET}
    assert t.notes == [KEY_WARNING] and "env:NAME" in KEY_WARNING
    assert not any(SECRET in a for a in t.args + t.notes)
    # an openai embedder reads the same key through the same endpoint
    t = translate([f"--apikey={SECRET}", "--apibase", "http://h/v1", "embedder=openai"])
    assert t.args == ["embedder=openai", "llm=openai", "llm.base_url='http://h/v1'", f"llm.api_key_env={KEY_ENV}",
                      "embedder.base_url='http://h/v1'", f"embedder.api_key_env={KEY_ENV}"]


def test_apikey_env_name_reads_the_named_variable():
    t = translate(["--apikey", "env:MY_KEY", "--embeddings", "e"], environ={"MY_KEY": SECRET})
    assert t.args == ["llm=openai", "llm.api_key_env=MY_KEY", "embedder=openai", "embedder.model='e'",
                      "embedder.api_key_env=MY_KEY"]
    assert t.environ == {} and t.notes == []
    with pytest.raises(InputError, match="--apikey env:MY_KEY: the environment variable MY_KEY is not set"):
        translate(["--apikey", "env:MY_KEY"], environ={})
    with pytest.raises(InputError, match="MY_KEY is empty"):
        translate(["--apikey", "env:MY_KEY"], environ={"MY_KEY": ""})
    with pytest.raises(InputError, match="'MY-KEY' is not an environment variable name"):
        translate(["--apikey=env:MY-KEY"], environ={})


@pytest.mark.parametrize("args, message", [
    (["--dataset"], "--dataset needs a value"),
    (["--model", "--dataset", "x"], "--model needs a value"),
    (["--metrics="], "--metrics needs a value"),
    (["--metrics", " , "], "--metrics names no metric"),
    (["--metrics", "bleu_score"], "use bleu"),
    (["--model", "m", "llm=local"], "--model and llm=local both set llm; keep one"),
    (["--dataset", "a.csv", "input=b.csv"], "--dataset and input=b.csv both set input"),
])
def test_bad_flags_are_input_errors(args, message):
    with pytest.raises(InputError, match=message):
        translate(args)


def test_the_same_choice_twice_is_no_conflict():
    assert translate(["llm=openai", "--model", "m"]).args == ["llm=openai", "llm.model='m'"]


@pytest.mark.parametrize("value", ["plain", "a b,c.csv", "it's", "C:\\dir\\", "a\\'b", "x${y}z", "http://h:1/v1"])
def test_quoted_values_read_back_exactly(value):
    parsed = OverridesParser.create().parse_overrides([f"k={quoted(value)}"])[0].value()
    assert OmegaConf.create({"k": parsed}).k == value


# --- the alias table ---------------------------------------------------------------------------

def test_aliases_name_our_metrics_and_shadow_none():
    table = catalogue()
    assert all(target in table for target in METRIC_ALIASES.values())
    assert not set(METRIC_ALIASES) & set(table) and not set(NO_EQUIVALENT) & set(table)
    assert not set(METRIC_ALIASES) & set(NO_EQUIVALENT)
    # Ragas 0.0.x context_relevancy (share of context sentences relevant to the question) is ours
    assert canonical("context_relevancy") == "context_relevancy" and "context_relevancy" in table
    assert canonical("answer_similarity") == "answer_semantic_similarity"
    assert canonical("rouge_l") == "rouge_l" and alias_note("rouge_l") is None
    with pytest.raises(InputError, match="use rouge_l"):
        canonical("rouge_score")


# --- whole runs --------------------------------------------------------------------------------

def test_ragas_once_command_scores_against_the_endpoint_and_writes_the_key_nowhere(tmp_path, fake_openai, score):
    write_dataset(tmp_path / "qcag.csv")
    proc = score("--dataset", "qcag.csv", "--metrics", "answer_similarity,context_relevancy",
                 "--apibase", fake_openai.url, "--model", "judge-model", "--apikey", SECRET,
                 "--embeddings=embed-model", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert KEY_WARNING in proc.stderr
    assert "answer_similarity is answer_semantic_similarity here" in proc.stderr
    # ragas_once's files, in the current folder, naming the metrics our way
    result = read_csv(tmp_path / "result.csv")
    assert [float(r["answer_semantic_similarity"]) for r in result] == pytest.approx(
        [cosine(a, g) for _, a, _, g in ROWS], rel=1e-6)  # float32 vectors
    assert result[0]["answer_semantic_similarity"] == "1.0"  # answer == ground truth
    assert [r["context_relevancy"] for r in result] == ["0.5", "0.5"]
    summary = read_csv(tmp_path / "summary.csv")
    assert [r["metric"] for r in summary] == ["answer_semantic_similarity", "context_relevancy"]
    assert len((tmp_path / "explanations.jsonl").read_text().splitlines()) == 4
    # the key reached the server, on chat and embeddings calls alike ...
    paths = {p.rsplit("/", 1)[-1] for p, _ in fake_openai.auth}
    assert paths == {"completions", "embeddings"}
    assert {a for _, a in fake_openai.auth} == {f"Bearer {SECRET}"}
    # ... and nothing else: no output, no cache file, no stdout or stderr line
    config = (tmp_path / "config.yaml").read_text()
    assert f"api_key_env: {KEY_ENV}" in config and f"base_url: {fake_openai.url}" in config
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "llm.sqlite" for p in files)
    assert [p for p in files if SECRET.encode() in p.read_bytes()] == []
    assert SECRET not in proc.stdout + proc.stderr


def test_apikey_env_name_sends_that_variable_and_warns_not(tmp_path, fake_openai, score):
    write_dataset(tmp_path / "qcag.csv")
    proc = score("--dataset=qcag.csv", "--metrics=context_relevancy", f"--apibase={fake_openai.url}",
                 "--model=judge-model", "--apikey=env:RAGAS_ONCE_TEST_KEY", cwd=tmp_path,
                 env={"RAGAS_ONCE_TEST_KEY": SECRET})
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr
    assert {a for _, a in fake_openai.auth} == {f"Bearer {SECRET}"}
    assert "api_key_env: RAGAS_ONCE_TEST_KEY" in (tmp_path / "config.yaml").read_text()
    assert [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()] == []


def test_apikey_env_name_unset_exits_2(tmp_path, score):
    proc = score("--dataset", "qcag.csv", "--apikey", "env:RAGAS_ONCE_TEST_KEY", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("ragsweep: error: --apikey env:RAGAS_ONCE_TEST_KEY: "
                                   "the environment variable RAGAS_ONCE_TEST_KEY is not set")


def test_flags_without_a_judge_mix_with_overrides(tmp_path, score):
    write_dataset(tmp_path / "qcag.csv")
    proc = score("llm=none", "--dataset", "qcag.csv", "++thresholds.rouge_l=0.9", "--metrics=rouge_l,token_f1",
                 cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # the threshold override was applied, and fails
    assert "threshold failed: rouge_l" in proc.stdout
    assert [r["metric"] for r in read_csv(tmp_path / "summary.csv")] == ["rouge_l", "token_f1"]
    assert read_csv(tmp_path / "result.csv")[0]["rouge_l"] == "1.0"
