"""LocalLLM on the real packaged 0.5B GGUF (about 5 s on 2 cores, once assembled)."""

import asyncio

import pydantic
import pytest

from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.llm import LocalLLM, models

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
