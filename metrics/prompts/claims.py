"""Claims and support: decomposition with verdicts, sentence support verdicts, graded correctness."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragsweep.metrics.prompts.core import Granularity, Prompt


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


# --- claim check: one statement against the sentences about it (support verdict or slot) ---------

#: Option letters of a slot check; the last option offered is always "not stated".
SLOT_LETTERS = ("A", "B", "C", "D", "E", "F", "G", "H")


class CheckInput(BaseModel):
    # Passages first: the checks of one statement (its verdict and its slots) share the prefix up
    # to the statement. ``options`` only for a slot check.
    passages: list[str]
    question: str | None = None
    statement: str
    options: str | None = None


class CheckAnswer(BaseModel):
    answer: Literal["yes", "no", "A", "B", "C", "D", "E", "F", "G", "H"]


#: Both tasks of the sentence judge in ONE prompt: the system message and examples are the same for
#: a statement's verdict and its slot checks, so llama.cpp keeps their evaluated prefix from one call
#: to the next instead of evaluating two prefixes in turn.
CLAIM_CHECK: Prompt[CheckInput, CheckAnswer] = Prompt(
    name="claim_check",
    instruction=(
        "You check one statement against the numbered passages, using only the passages and nothing "
        "else you know.\n"
        "Without options: answer 'yes' if the passages state the statement or directly imply it, and "
        "'no' if they contradict it, do not mention it, or it adds anything the passages do not say. A "
        "statement that ties a number, date or name to the wrong person, thing or event is 'no', even "
        "when every word of it appears somewhere in the passages. Read a short statement as the answer "
        "to the question.\n"
        "With options: the statement has one blank (___). Answer with the letter of the option that "
        "fills the blank so that the statement says what the passages say. Read carefully which person, "
        "thing or event each value in the passages belongs to. If the passages give no value for the "
        "blank, choose the 'not stated' option."
    ),
    input=CheckInput,
    output=CheckAnswer,
    examples=((
        CheckInput(passages=_PASSAGES, question="Where was Marie Curie born?",
                   statement="Marie Curie was born in Paris."),
        CheckAnswer(answer="no"),
    ), (
        CheckInput(passages=_PASSAGES, question="In which year did Curie win the physics prize?",
                   statement="1903"),
        CheckAnswer(answer="yes"),
    ), (
        CheckInput(passages=_PASSAGES, question="When did Curie win the physics prize?",
                   statement="Curie won the Nobel Prize in Physics in ___.",
                   options="A: 1867\nB: 1903\nC: not stated"),
        CheckAnswer(answer="B"),
    ), (
        CheckInput(passages=_PASSAGES, question="Where did Curie win the Nobel Prize?",
                   statement="Curie won the Nobel Prize in ___.",
                   options="A: Warsaw\nB: not stated"),
        CheckAnswer(answer="B"),
    )),
    max_tokens=12,
)
