"""Aspect critiques and the G-Eval custom judge."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragsweep.metrics.prompts.core import Prompt


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
