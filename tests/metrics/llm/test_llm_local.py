"""LocalLLM on the real packaged 0.5B GGUF (about 5 s on 2 cores, once assembled)."""

import asyncio
import hashlib
import json
import threading
import time

import pydantic
import pytest

from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.llm import LocalLLM, models
from ragsweep.metrics.llm.base import CompactReply, without_layout

MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"


class Answer(pydantic.BaseModel):
    answer: str


@pytest.fixture(scope="module")
def llm():
    pytest.importorskip("xllamacpp", reason="xllamacpp is not installed")
    try:
        models.part_paths(MODEL)
    except InputError as err:
        pytest.skip(f"packaged model not installed: {err}")
    model = LocalLLM(MODEL, n_ctx=1024)  # assembled once into $RAGSWEEP_CACHE_DIR/models
    yield model
    model.close()


@pytest.mark.model
def test_real_completion_with_schema_and_logprobs(llm):
    messages = [
        {"role": "system", "content": "Reply with a JSON object with one key, answer."},
        {"role": "user", "content": "What is the capital of France?"},
    ]

    async def twice():
        first = await llm.complete(messages, Answer, logprobs=True, max_tokens=32)
        reused = dict(llm.last_timings)
        second = await llm.complete(messages, Answer, max_tokens=32)
        return first, reused, second

    first, _, second = asyncio.run(twice())
    assert isinstance(first.parsed, Answer) and "paris" in first.parsed.answer.lower()
    assert first.usage.prompt_tokens > 0 and 0 < first.usage.completion_tokens <= 32
    assert first.logprobs and all(
        isinstance(tok, str) and lp <= 0.0 for pos in first.logprobs for tok, lp in pos.items()
    )
    assert len(first.logprobs) == first.usage.completion_tokens
    # Greedy decoding repeats itself, and the shared prompt prefix comes from the KV cache.
    assert second.text == first.text and second.logprobs is None
    assert llm.last_timings.get("cache_n", 0) > 0
    assert llm.identity()["sha256"] == models.PACKAGED_MODELS[MODEL].sha256


@pytest.mark.model
def test_llama_cpp_errors_become_judge_errors(llm):
    too_long = [{"role": "user", "content": "word " * 3000}]  # more tokens than n_ctx=1024
    with pytest.raises(JudgeError, match="context"):
        asyncio.run(llm.complete(too_long, max_tokens=4))


def test_missing_model_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        LocalLLM(tmp_path / "nope.gguf").identity()


class _Server:
    """Stands in for xllamacpp's server: keeps each request and answers with a fixed reply."""

    def __init__(self, reply: str) -> None:
        self.reply, self.requests = reply, []

    def handle_chat_completions(self, request):
        self.requests.append(request)
        return {"choices": [{"message": {"content": self.reply}}], "usage": {"prompt_tokens": 5, "completion_tokens": 3},
                "timings": {"prompt_n": 2}}


class Compact(CompactReply):
    answer: str


def test_a_compact_reply_goes_to_the_grammar_engine_with_its_layout(tmp_path):
    llm = LocalLLM(tmp_path / "any.gguf")
    llm._server = _Server('{"answer": "Paris"}')  # no model is loaded
    messages = [{"role": "user", "content": "Capital of France?"}]
    done = asyncio.run(llm.complete(messages, Compact))
    free = asyncio.run(llm.complete(messages, Answer))
    compact, plain = llm._server.requests
    assert done.parsed == Compact(answer="Paris") and free.parsed == Answer(answer="Paris")
    # llama.cpp's json_schema field drops LLGuidance's options: the layout goes in a grammar of its own.
    assert "json_schema" not in compact and compact["grammar"].startswith("%llguidance {}\nstart: %json {")
    sent = json.loads(compact["grammar"].split("%json ", 1)[1])
    assert sent["x-guidance"] == {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
    assert sent["required"] == ["answer"]
    assert "grammar" not in plain and "x-guidance" not in plain["json_schema"]
    assert without_layout(Compact.model_json_schema()) == Answer.model_json_schema() | {"title": "Compact"}
    assert llm.prompt_evaluated == 4


def test_preload_loads_in_the_background_and_leaves_a_failure_to_the_first_call(tmp_path):
    llm = LocalLLM(tmp_path / "nope.gguf")
    llm.preload()
    for _ in range(200):  # the thread finishes at once: the file is missing
        if not any(t.name == "llama-load" for t in threading.enumerate()):
            break
        time.sleep(0.01)
    assert llm._server is None
    with pytest.raises(InputError, match="not found"):  # the first call says why, as without a preload
        asyncio.run(llm.complete([{"role": "user", "content": "Hi"}]))


def test_identity_does_not_wait_for_the_model_to_load(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    llm = LocalLLM(model)
    with llm._load_lock:  # as while a preload holds it
        assert llm.identity()["sha256"] == hashlib.sha256(b"GGUF").hexdigest()


class _StreamingServer:
    """Stands in for xllamacpp's server when a reply is streamed: one chunk per token, as llama.cpp sends them,
    until the callback returns True (llama.cpp then stops generating)."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.requests, self.sent = tokens, [], 0

    def handle_chat_completions(self, request, callback=None):
        self.requests.append(request)
        assert request["stream"] and callback is not None
        if callback({"choices": [{"delta": {"role": "assistant", "content": None}}]}):
            return None
        for token in self.tokens:
            self.sent += 1
            if callback({"choices": [{"delta": {"content": token}}], "timings": {"cache_n": 7, "prompt_n": 3}}):
                return None
        callback({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": len(self.tokens)},
                  "timings": {"cache_n": 7, "prompt_n": 3}})
        return None


class _StopAtAnswer:
    name = "test:stop-at-answer"

    def __call__(self, text: str) -> bool:
        return '"answer"' in text


def test_a_stop_rule_ends_a_streamed_reply_and_a_finished_one_is_parsed(tmp_path):
    tokens = ['{"', 'question', '": "', 'Why', '?"', ', "', 'answer', '": "', 'x', '"}']
    llm = LocalLLM(tmp_path / "any.gguf")
    llm._server = _StreamingServer(tokens)

    class QA(pydantic.BaseModel):
        question: str
        answer: str

    messages = [{"role": "user", "content": "Ask."}]
    done = asyncio.run(llm.complete(messages, QA, stop=_StopAtAnswer()))
    assert done.stopped and done.parsed is None and done.text == '{"question": "Why?", "answer": "'
    assert llm._server.sent == 8  # no token after the one the rule stopped on was asked for
    # Its usage: the tokens received, and the prompt its timings counted (cached and evaluated).
    assert done.usage.completion_tokens == 8 and done.usage.prompt_tokens == 10 and llm.prompt_evaluated == 3
    # A rule that never fires: the whole reply, parsed, with llama.cpp's own usage.
    whole = asyncio.run(llm.complete(messages, QA, stop=lambda_rule(lambda text: False)))
    assert not whole.stopped and whole.parsed == QA(question="Why?", answer="x") and whole.usage.completion_tokens == 10


def lambda_rule(test):
    rule = type("Rule", (), {"name": "test:never", "__call__": lambda self, text: test(text)})
    return rule()


@pytest.mark.model
def test_a_stop_rule_ends_the_real_model_early(llm):
    messages = [{"role": "user", "content": "Count from 1 to 30, separated by spaces."}]
    whole = asyncio.run(llm.complete(messages, max_tokens=60))
    stopped = asyncio.run(llm.complete(messages, max_tokens=60, stop=lambda_rule(lambda text: "3" in text)))
    assert stopped.stopped and "3" in stopped.text and whole.text.startswith(stopped.text)
    assert stopped.usage.completion_tokens < whole.usage.completion_tokens
