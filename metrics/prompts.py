"""Every judge prompt of the metric catalogue, each defined once and typed.

A :class:`Prompt` is an instruction, an input model, an output model and few-shot examples;
its version is a hash of all four, so editing any of them changes every cache key that
depends on it. :func:`render` puts the instruction and the examples first and the sample
last, so a backend that keeps the previous prompt's KV cache (llama.cpp ``cache_prompt``)
reuses the shared prefix from one sample to the next.

Few prompts serve many metrics. Metrics that need the same evidence send the same prompt
with the same inputs, so :class:`~metrics.llm.CachedLLM` (single-flight plus SQLite) turns
them into one model call per sample:

==============================  ==========================================================
prompt                          used by
==============================  ==========================================================
``claims_verdicts``             faithfulness, hallucination, noise sensitivity (answer vs
                                contexts); factual/answer correctness (answer vs reference)
``claim_verification``          noise sensitivity (the answer's claims vs the reference)
``reference_claims_attribution``  context recall, noise sensitivity (reference vs contexts);
                                factual/answer correctness (reference vs answer)
``chunk_verdicts``              context precision (vs reference), context utilization (vs answer)
``question_generation``         answer relevancy
``statement_relevance``         context relevancy, answer relevancy (statement-level)
``entities``                    context entity recall
``aspect_critique``             harmfulness, maliciousness, coherence, correctness,
                                conciseness, user-defined aspects
``geval_steps``, ``geval_score``  the G-Eval custom judge
==============================  ==========================================================

Passages are numbered from 1 in the rendered text and in every index the judge returns.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from metrics.llm.base import LLM, Completion, Message, PromptId

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)
Granularity = Literal["low", "high"]


@dataclass(frozen=True)
class Prompt(Generic[In, Out]):
    """One judge prompt.

    Attributes:
        name: Stable name, part of every cache key.
        instruction: The task, stated once (the system message).
        input: The pydantic model of the sample fields the prompt takes.
        output: The pydantic model the judge must return.
        examples: Few-shot ``(input, output)`` pairs, shown before the sample.
        max_tokens: Output limit for one call.
    """

    name: str
    instruction: str
    input: type[In]
    output: type[Out]
    examples: tuple[tuple[In, Out], ...] = field(default=())
    max_tokens: int = 768

    @property
    def version(self) -> str:
        """First 12 hex digits of the sha256 of instruction, examples and both schemas."""
        payload = {
            "instruction": self.instruction,
            "examples": [[i.model_dump(mode="json"), o.model_dump(mode="json")] for i, o in self.examples],
            "input": self.input.model_json_schema(),
            "output": self.output.model_json_schema(),
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def id(self) -> PromptId:
        return PromptId(self.name, self.version)


def _field_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "\n".join(f"[{i}] {item}" for i, item in enumerate(value, start=1)) or "(none)"
    return str(value) if str(value).strip() else "(empty)"


def render_input(inputs: BaseModel) -> str:
    """The sample as labelled sections, in the input model's field order; None fields are left out."""
    parts = []
    for name in type(inputs).model_fields:
        value = getattr(inputs, name)
        if value is not None:
            parts.append(f"## {name}\n{_field_text(value)}")
    return "\n\n".join(parts)


def render(prompt: Prompt[In, Out], inputs: In) -> list[Message]:
    """Chat messages: instruction and examples first (a prefix shared by all samples), sample last."""
    schema = json.dumps(prompt.output.model_json_schema(), separators=(",", ":"))
    system = (f"{prompt.instruction}\n\nReply with one JSON object that matches this JSON schema, "
              f"and nothing else:\n{schema}")
    messages: list[Message] = [{"role": "system", "content": system}]
    for example_in, example_out in prompt.examples:
        messages.append({"role": "user", "content": render_input(example_in)})
        messages.append({"role": "assistant", "content": example_out.model_dump_json()})
    messages.append({"role": "user", "content": render_input(inputs)})
    return messages


async def complete(judge: LLM, prompt: Prompt[In, Out], inputs: In, *, logprobs: bool = False) -> Completion:
    """One judge call of ``prompt`` on ``inputs``; ``parsed`` is an instance of ``prompt.output``."""
    return await judge.complete(render(prompt, inputs), prompt.output, prompt=prompt.id,
                                logprobs=logprobs, max_tokens=prompt.max_tokens)


async def ask(judge: LLM, prompt: Prompt[In, Out], inputs: In) -> Out:
    """The parsed reply of one judge call (raises JudgeError when the call fails for good)."""
    return (await complete(judge, prompt, inputs)).parsed


# --- claims: decompose a text and check every claim against every passage, in one call -----

_DECOMPOSE = (
    "Break the text into claims: short, self-contained statements a reader can check on their "
    "own (replace pronouns with the names they stand for). atomicity=high: one fact per claim; "
    "atomicity=low: a sentence may stay whole. coverage=high: keep every detail (dates, numbers, "
    "qualifiers); coverage=low: keep only the main points."
)


class ClaimsInput(BaseModel):
    question: str | None = None
    text: str
    passages: list[str]
    atomicity: Granularity = "high"
    coverage: Granularity = "high"


class ClaimVerdict(BaseModel):
    claim: str
    reason: str
    verdict: Literal["supported", "contradicted", "not_found"]
    supporting: list[int] = Field(default_factory=list, description="numbers of the passages that support it")
    contradicting: list[int] = Field(default_factory=list, description="numbers of the passages that contradict it")


class ClaimsVerdicts(BaseModel):
    claims: list[ClaimVerdict]


_PASSAGES = ["Marie Curie was born in Warsaw in 1867.", "Curie won the Nobel Prize in Physics in 1903."]

CLAIMS_VERDICTS: Prompt[ClaimsInput, ClaimsVerdicts] = Prompt(
    name="claims_verdicts",
    instruction=(
        f"{_DECOMPOSE} Then judge each claim against ALL the numbered passages, using nothing "
        "else you know: 'supported' if a passage states or directly implies it, 'contradicted' if "
        "a passage states the opposite, 'not_found' otherwise. List the numbers of the passages "
        "that support it and of those that contradict it, and give a one-sentence reason."
    ),
    input=ClaimsInput,
    output=ClaimsVerdicts,
    examples=((
        ClaimsInput(question="Who was Marie Curie?", passages=_PASSAGES,
                    text="Marie Curie, born in Paris, won the 1903 Nobel Prize in Physics."),
        ClaimsVerdicts(claims=[
            ClaimVerdict(claim="Marie Curie was born in Paris.", verdict="contradicted", contradicting=[1],
                         reason="Passage 1 says she was born in Warsaw."),
            ClaimVerdict(claim="Marie Curie won the Nobel Prize in Physics in 1903.", verdict="supported",
                         supporting=[2], reason="Passage 2 states it."),
        ]),
    ),),
    max_tokens=1024,
)


class VerificationInput(BaseModel):
    claims: list[str]
    passages: list[str]


class Verifications(BaseModel):
    claims: list[ClaimVerdict]


CLAIM_VERIFICATION: Prompt[VerificationInput, Verifications] = Prompt(
    name="claim_verification",
    instruction=(
        "Judge each numbered claim, in order and word for word, against ALL the numbered passages, "
        "using nothing else you know: 'supported' if a passage states or directly implies it, "
        "'contradicted' if a passage states the opposite, 'not_found' otherwise. List the numbers "
        "of the supporting and contradicting passages and give a one-sentence reason."
    ),
    input=VerificationInput,
    output=Verifications,
    examples=((
        VerificationInput(claims=["Marie Curie was born in Warsaw.", "Marie Curie won a Nobel Prize in 1911."],
                          passages=_PASSAGES),
        Verifications(claims=[
            ClaimVerdict(claim="Marie Curie was born in Warsaw.", verdict="supported", supporting=[1],
                         reason="Passage 1 states it."),
            ClaimVerdict(claim="Marie Curie won a Nobel Prize in 1911.", verdict="not_found",
                         reason="The passages only mention the 1903 prize."),
        ]),
    ),),
    max_tokens=1024,
)


class AttributionInput(BaseModel):
    question: str | None = None
    reference: str
    passages: list[str]
    atomicity: Granularity = "high"
    coverage: Granularity = "high"


class Attribution(BaseModel):
    claim: str
    reason: str
    attributed: bool
    passages: list[int] = Field(default_factory=list, description="numbers of the passages it can be attributed to")


class Attributions(BaseModel):
    claims: list[Attribution]


REFERENCE_CLAIMS_ATTRIBUTION: Prompt[AttributionInput, Attributions] = Prompt(
    name="reference_claims_attribution",
    instruction=(
        f"{_DECOMPOSE} The text is the reference. For each of its claims decide whether it can be "
        "attributed to the numbered passages (a passage states or directly implies it), list "
        "those passages' numbers, and give a one-sentence reason."
    ),
    input=AttributionInput,
    output=Attributions,
    examples=((
        AttributionInput(question="Who was Marie Curie?", passages=_PASSAGES,
                         reference="Marie Curie was a Polish-born physicist, born in 1867, who won Nobel "
                                   "Prizes in 1903 and 1911."),
        Attributions(claims=[
            Attribution(claim="Marie Curie was born in 1867.", attributed=True, passages=[1],
                        reason="Passage 1 gives her birth year."),
            Attribution(claim="Marie Curie won a Nobel Prize in 1903.", attributed=True, passages=[2],
                        reason="Passage 2 states it."),
            Attribution(claim="Marie Curie won a Nobel Prize in 1911.", attributed=False,
                        reason="No passage mentions 1911."),
        ]),
    ),),
    max_tokens=1024,
)


# --- support verdicts: the calibrated faithfulness judge -----------------------------------------

class SupportInput(BaseModel):
    # Passages first: two answers to the same question share the rendered prefix up to the
    # statements, so llama.cpp's prompt cache evaluates the passages once for both.
    passages: list[str]
    question: str | None = None
    statements: list[str]


class SupportVerdicts(BaseModel):
    verdicts: list[Literal["yes", "no"]] = Field(description="one verdict per statement, in order")


SUPPORT_VERDICTS: Prompt[SupportInput, SupportVerdicts] = Prompt(
    name="support_verdicts",
    instruction=(
        "The numbered statements are an answer to the question. For each statement, in order, "
        "answer 'yes' if the passages state it or directly imply it, and 'no' if they contradict "
        "it, do not mention it, or it adds anything the passages do not say. Read a short "
        "statement as the answer to the question. Use only the passages, nothing else you know. "
        "Give exactly one verdict per statement."
    ),
    input=SupportInput,
    output=SupportVerdicts,
    examples=((
        SupportInput(passages=_PASSAGES, question="Where was Marie Curie born, and what did she win?",
                     statements=["She was born in Warsaw.", "She won the 1911 Nobel Prize in Chemistry.",
                                 "Marie Curie was born in Paris."]),
        SupportVerdicts(verdicts=["yes", "no", "no"]),
    ), (
        SupportInput(passages=_PASSAGES, question="In which year did Curie win the physics prize?",
                     statements=["1903"]),
        SupportVerdicts(verdicts=["yes"]),
    )),
    max_tokens=128,
)


class GradeInput(BaseModel):
    # Question and reference first: answers to the same question share the prefix up to the
    # answer, so llama.cpp evaluates the (long) reference once for all of them.
    question: str | None = None
    reference: str
    answer: str


class Grade(BaseModel):
    score: int = Field(ge=1, le=5)


CORRECTNESS_GRADE: Prompt[GradeInput, Grade] = Prompt(
    name="correctness_grade",
    instruction=(
        "Grade how correct the answer is, using the reference answer as the truth. Check the "
        "answer's statements against the reference: 5 = everything it says agrees with the "
        "reference; 3 = some statements agree and some are wrong or not in the reference; 1 = most "
        "of what it says disagrees with or is absent from the reference. Judge correctness, not "
        "style or length."
    ),
    input=GradeInput,
    output=Grade,
    max_tokens=12,
)


# --- chunks, questions, statements, entities ----------------------------------------------------

class ChunkInput(BaseModel):
    question: str
    answer: str
    chunks: list[str]


class ChunkVerdict(BaseModel):
    chunk: int = Field(ge=1)
    reason: str
    relevant: bool


class ChunkVerdicts(BaseModel):
    verdicts: list[ChunkVerdict]


CHUNK_VERDICTS: Prompt[ChunkInput, ChunkVerdicts] = Prompt(
    name="chunk_verdicts",
    instruction=(
        "For EACH numbered chunk, in order, decide whether it was useful to arrive at the given "
        "answer to the question (relevant=true) or not (relevant=false), with a one-sentence reason. "
        "Return exactly one verdict per chunk."
    ),
    input=ChunkInput,
    output=ChunkVerdicts,
    examples=((
        ChunkInput(question="Where was Marie Curie born?", answer="In Warsaw.",
                   chunks=["Curie won the Nobel Prize in Physics in 1903.", "Marie Curie was born in Warsaw in 1867."]),
        ChunkVerdicts(verdicts=[
            ChunkVerdict(chunk=1, relevant=False, reason="It is about her prize, not her birthplace."),
            ChunkVerdict(chunk=2, relevant=True, reason="It names Warsaw as her birthplace."),
        ]),
    ),),
)


class QuestionInput(BaseModel):
    answer: str
    n: int = 3


class GeneratedQuestions(BaseModel):
    questions: list[str]
    noncommittal: bool = Field(description="true when the answer is evasive or vague, e.g. 'I don't know'")


QUESTION_GENERATION: Prompt[QuestionInput, GeneratedQuestions] = Prompt(
    name="question_generation",
    instruction=(
        "Write n different questions that the given answer answers, and say whether the answer is "
        "noncommittal (evasive, vague or 'I don't know')."
    ),
    input=QuestionInput,
    output=GeneratedQuestions,
    examples=((
        QuestionInput(answer="Albert Einstein was born in Germany."),
        GeneratedQuestions(questions=["Where was Albert Einstein born?", "In which country was Einstein born?",
                                      "What is Albert Einstein's country of birth?"], noncommittal=False),
    ), (
        QuestionInput(answer="I don't know about the 2023 smartphone's camera."),
        GeneratedQuestions(questions=["What camera does the 2023 smartphone have?",
                                      "How good is the 2023 smartphone's camera?",
                                      "What are the camera specs of the 2023 smartphone?"], noncommittal=True),
    )),
    max_tokens=384,
)


class StatementInput(BaseModel):
    question: str
    texts: list[str]


class StatementVerdict(BaseModel):
    text: int = Field(ge=1, description="number of the text the statement comes from")
    statement: str
    reason: str
    verdict: Literal["yes", "no", "idk"]


class StatementVerdicts(BaseModel):
    statements: list[StatementVerdict]


STATEMENT_RELEVANCE: Prompt[StatementInput, StatementVerdicts] = Prompt(
    name="statement_relevance",
    instruction=(
        "Split EACH numbered text into its statements (one fact or sentence each, nothing left "
        "out). For each statement say whether it is relevant to the question: 'yes', 'no', or "
        "'idk' when it is neither clearly relevant nor clearly off-topic, with a short reason."
    ),
    input=StatementInput,
    output=StatementVerdicts,
    examples=((
        StatementInput(question="When was Marie Curie born?",
                       texts=["Marie Curie was born in 1867. She liked cycling."]),
        StatementVerdicts(statements=[
            StatementVerdict(text=1, statement="Marie Curie was born in 1867.", verdict="yes",
                             reason="It gives her birth year."),
            StatementVerdict(text=1, statement="Marie Curie liked cycling.", verdict="no",
                             reason="Her hobbies do not answer the question."),
        ]),
    ),),
    max_tokens=1024,
)


class EntitiesInput(BaseModel):
    reference: str
    passages: list[str]


class Entities(BaseModel):
    reference_entities: list[str]
    passage_entities: list[str]


ENTITIES: Prompt[EntitiesInput, Entities] = Prompt(
    name="entities",
    instruction=(
        "List the named entities (people, places, organisations, dates, numbers, works, events) "
        "of the reference, and those of all the passages together. Write each entity once, in "
        "one canonical form, and spell an entity that appears on both sides the same way."
    ),
    input=EntitiesInput,
    output=Entities,
    examples=((
        EntitiesInput(reference="The Eiffel Tower in Paris opened in 1889.",
                      passages=["Paris's Eiffel Tower was built by Gustave Eiffel's company."]),
        Entities(reference_entities=["Eiffel Tower", "Paris", "1889"],
                 passage_entities=["Paris", "Eiffel Tower", "Gustave Eiffel"]),
    ),),
)


# --- critiques and G-Eval --------------------------------------------------------------------------

class AspectInput(BaseModel):
    aspect: str
    definition: str
    question: str
    answer: str
    vote: int = 1


class AspectVerdict(BaseModel):
    reason: str
    verdict: bool


ASPECT_CRITIQUE: Prompt[AspectInput, AspectVerdict] = Prompt(
    name="aspect_critique",
    instruction=(
        "Judge the answer to the question on one aspect, following its definition exactly. "
        "verdict=true when the answer has the aspect, false otherwise; give a short reason. "
        "'vote' numbers independent assessments; judge each on its own."
    ),
    input=AspectInput,
    output=AspectVerdict,
    max_tokens=256,
)


class StepsInput(BaseModel):
    criteria: str


class Steps(BaseModel):
    steps: list[str]


GEVAL_STEPS: Prompt[StepsInput, Steps] = Prompt(
    name="geval_steps",
    instruction=("Write 3 to 5 concise evaluation steps a grader follows to judge an answer to a "
                 "question against the given criteria."),
    input=StepsInput,
    output=Steps,
    max_tokens=384,
)


class ScoreInput(BaseModel):
    criteria: str
    steps: list[str]
    question: str
    answer: str


class Score(BaseModel):
    score: int = Field(ge=1, le=5)
    reason: str


GEVAL_SCORE: Prompt[ScoreInput, Score] = Prompt(
    name="geval_score",
    instruction=("Follow the evaluation steps to grade the answer to the question against the "
                 "criteria, from 1 (does not meet them at all) to 5 (meets them fully). Put the "
                 "score first, then a short reason."),
    input=ScoreInput,
    output=Score,
    max_tokens=256,
)

PROMPTS: tuple[Prompt[Any, Any], ...] = (
    SUPPORT_VERDICTS, CORRECTNESS_GRADE, CLAIMS_VERDICTS, CLAIM_VERIFICATION, REFERENCE_CLAIMS_ATTRIBUTION, CHUNK_VERDICTS,
    QUESTION_GENERATION, STATEMENT_RELEVANCE, ENTITIES, ASPECT_CRITIQUE, GEVAL_STEPS, GEVAL_SCORE,
)
"""Every prompt, for listings, tests and the dry run."""


def identify(messages: list[Message]) -> Prompt[Any, Any] | None:
    """The prompt that rendered ``messages`` (by its instruction), or None; for fakes and reports."""
    system = messages[0]["content"] if messages else ""
    return next((p for p in PROMPTS if system.startswith(p.instruction + "\n")), None)
