"""The lines reply layout (metrics.llm.lines): its grammar, how a reply is read, and the JSON kept for a backend
that does not hold replies to lines. Scripted model and a fake llama.cpp server, no weights."""

import asyncio

import pydantic
import pytest

from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import LocalLLM, ScriptedLLM, lines
from ragsweep.metrics.llm.base import parse_structured, supports_lines
from ragsweep.metrics.prompts.core import Prompt, lines_prompt, render
from tests.metrics.llm.test_llm_local import _Server


class QA(pydantic.BaseModel):
    question: str
    answer: str
    used: list[int]


QALines = lines.as_lines(QA)


def test_the_grammar_holds_each_field_to_one_line_in_order():
    assert lines.grammar(QALines.model_json_schema()) == (
        'root ::= "question: " text "\\n" "answer: " text "\\n" "used: " num (", " num)*\n'
        'text ::= [^\\n ] [^\\n]*\n'
        'num ::= [0-9]+\n')
    assert lines.is_lines(QALines.model_json_schema()) and not lines.is_lines(QA.model_json_schema())


def test_a_reply_is_read_whole_with_its_quotes_and_line_breaks():
    text = 'question: Who said "go west"?\nanswer: Horace Greeley,\nin "The Tribune"\nused: 1, 3'
    parsed = parse_structured(text, QALines)
    assert isinstance(parsed, QA)  # the lines model is a subclass: callers keep their type
    assert parsed == QALines(question='Who said "go west"?', answer='Horace Greeley, in "The Tribune"', used=[1, 3])
    # Chatter before the first label is left out; a label's case and spacing do not matter.
    assert parse_structured("Sure.\nQuestion : Why?\nANSWER: x\nused: 2", QALines).question == "Why?"
    # What render writes, parse reads back.
    values = {"question": "Is it 'a' or \"b\"?", "answer": "b: the second", "used": [2]}
    assert parse_structured(lines.render(values), QALines).model_dump() == values


def test_a_missing_line_is_a_reply_error_that_gets_one_repair():
    with pytest.raises(ValueError, match="no line starting 'used: '"):
        parse_structured("question: Why?\nanswer: x", QALines)
    llm = ScriptedLLM(["question: Why?\nanswer: x", "question: Why?\nanswer: x\nused: 1"], line_replies=True)
    done = asyncio.run(llm.complete([{"role": "user", "content": "Ask."}], QALines))
    assert done.parsed.used == [1]
    repair = llm.calls[1].messages[-1]["content"]
    assert "no line starting 'used: '" in repair and "'question: ...', 'answer: ...', 'used: ...'" in repair
    llm = ScriptedLLM(["question: Why?", "answer: x"], line_replies=True)
    with pytest.raises(JudgeError, match="after one repair"):
        asyncio.run(llm.complete([{"role": "user", "content": "Ask."}], QALines))


def test_only_one_line_values_have_a_lines_form():
    class Nested(pydantic.BaseModel):
        items: list[str]

    with pytest.raises(TypeError, match="Nested.items"):
        lines.as_lines(Nested)


def test_llama_cpp_gets_the_grammar_and_the_reply_is_parsed(tmp_path):
    llm = LocalLLM(tmp_path / "any.gguf")
    llm._server = _Server('question: Why "so"?\nanswer: because\nused: 1')  # no model is loaded
    done = asyncio.run(llm.complete([{"role": "user", "content": "Ask."}], QALines))
    (request,) = llm._server.requests
    assert request["grammar"] == lines.grammar(QALines.model_json_schema()) and "json_schema" not in request
    assert done.parsed == QALines(question='Why "so"?', answer="because", used=[1])
    assert supports_lines(llm) and not supports_lines(ScriptedLLM([]))


class In(pydantic.BaseModel):
    text: str


PROMPT = Prompt(name="t.ask", instruction="Ask one question.", input=In, output=QA,
                examples=((In(text="Paris is in France."), QA(question="Where is Paris?", answer="France", used=[1])),),
                layout="json")


def test_a_prompt_in_lines_shows_its_examples_as_lines_and_has_a_version_of_its_own():
    lined = lines_prompt(PROMPT)
    system = render(lined, In(text="x"))[0]["content"]
    assert "question: Where is Paris?\nanswer: France\nused: 1" in system and '"question"' not in system
    assert '{"question": "Where is Paris?", "answer": "France", "used": [1]}' in render(PROMPT, In(text="x"))[0]["content"]
    assert lined.version != PROMPT.version and lined.name == PROMPT.name
    with pytest.raises(ValueError, match="json-layout"):
        lines_prompt(Prompt(name="t.s", instruction="x", input=In, output=QA))
