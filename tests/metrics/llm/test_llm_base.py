"""Structured-output parsing and the one repair attempt, through the scripted fake."""

import asyncio

import pydantic
import pytest

from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import LLM, CachedLLM, LocalLLM, OpenAICompatLLM, PromptId, ScriptedLLM, ScriptExhausted, parse_structured

USER = [{"role": "user", "content": "Is the sky blue? Reply as JSON."}]


class Verdict(pydantic.BaseModel):
    verdict: bool
    reason: str


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"verdict": true, "reason": "r"}', "r"),
        ('```json\n{"verdict": true, "reason": "r"}\n```', "r"),
        ('```\n{"verdict": true, "reason": "r"}\n```', "r"),
        ('Sure! Here it is: {"verdict": true, "reason": "a {b}"} Hope it helps.', "a {b}"),
        ('Text {not json} then {"verdict": true, "reason": "r"}', "r"),
    ],
)
def test_parse_accepts_bare_fenced_and_embedded_json(text, reason):
    assert parse_structured(text, Verdict) == Verdict(verdict=True, reason=reason)


def test_parse_reports_what_is_wrong():
    with pytest.raises(ValueError, match="reason"):
        parse_structured('{"verdict": true}', Verdict)
    with pytest.raises(ValueError, match="no JSON object"):
        parse_structured("I cannot answer that.", Verdict)


def test_dict_schema_checks_types_required_and_enum():
    schema = {
        "type": "object",
        "properties": {"label": {"enum": ["yes", "no"]}, "n": {"type": "integer"}},
        "required": ["label"],
    }
    assert parse_structured('{"label": "yes", "n": 2}', schema) == {"label": "yes", "n": 2}
    for bad, why in [('{"n": 2}', "missing"), ('{"label": "maybe"}', "not one of"), ('{"label": "no", "n": true}', "integer")]:
        with pytest.raises(ValueError, match=why):
            parse_structured(bad, schema)


def test_fenced_reply_parses_without_repair():
    llm = ScriptedLLM(['```json\n{"verdict": false, "reason": "night"}\n```'])
    out = run(llm.complete(USER, Verdict))
    assert out.parsed == Verdict(verdict=False, reason="night")
    assert len(llm.calls) == 1


def test_broken_then_fixed_on_repair():
    llm = ScriptedLLM(['{"verdict": true, "reason": ', {"verdict": True, "reason": "daytime"}])
    out = run(llm.complete(USER, Verdict, prompt=PromptId("judge", "1")))
    assert out.parsed == Verdict(verdict=True, reason="daytime")
    assert len(llm.calls) == 2
    repair = llm.calls[1].messages
    # The repair shows the model its own bad output and the error, after the original chat.
    assert repair[: len(USER)] == USER
    assert repair[-2] == {"role": "assistant", "content": '{"verdict": true, "reason": '}
    assert "not valid" in repair[-1]["content"] and "verdict" in repair[-1]["content"]
    assert llm.calls[1].prompt == PromptId("judge", "1")
    # Usage counts both calls.
    assert out.usage.completion_tokens == 3 + 4


def test_broken_twice_raises_judge_error_with_raw_text():
    llm = ScriptedLLM(["not json at all", '{"verdict": "perhaps"}'])
    with pytest.raises(JudgeError) as info:
        run(llm.complete(USER, Verdict))
    assert info.value.raw == '{"verdict": "perhaps"}'
    assert "Verdict" in str(info.value)
    assert len(llm.calls) == 2


def test_free_text_is_not_parsed():
    llm = ScriptedLLM(["The sky is blue."])
    out = run(llm.complete(USER))
    assert (out.text, out.parsed, out.cached) == ("The sky is blue.", None, False)


def test_logprobs_only_when_asked():
    lps = [{"yes": -0.1, "no": -2.3}]
    llm = ScriptedLLM(["yes", "yes"], logprobs=lps)
    assert run(llm.complete(USER, logprobs=True)).logprobs == lps
    assert run(llm.complete(USER)).logprobs is None


def test_callable_script_sees_messages_and_schema():
    seen = []

    def respond(messages, schema):
        seen.append((messages[-1]["content"], schema))
        return {"verdict": True, "reason": "ok"}

    llm = ScriptedLLM(respond)
    out = run(llm.complete(USER, Verdict, max_tokens=9))
    assert out.parsed.verdict is True
    assert seen == [(USER[0]["content"], Verdict)]
    assert llm.calls[0].max_tokens == 9


def test_scripted_failures_raise_and_exhaustion_is_loud():
    llm = ScriptedLLM([JudgeError("backend down")])
    with pytest.raises(JudgeError, match="backend down"):
        run(llm.complete(USER))
    with pytest.raises(ScriptExhausted):
        run(llm.complete(USER))


def test_every_backend_satisfies_the_protocol(tmp_path):
    scripted = ScriptedLLM([])
    backends = [
        scripted,
        CachedLLM(scripted, tmp_path / "c.sqlite"),
        OpenAICompatLLM("m", "http://127.0.0.1:9/v1"),
        LocalLLM(tmp_path / "model.gguf"),  # loads nothing until the first call
    ]
    assert all(isinstance(b, LLM) for b in backends)
