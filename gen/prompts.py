"""The question-writing prompt, defined once and typed as a :class:`~metrics.prompts.core.Prompt`.

It uses the ``json`` layout (the input as one JSON object, the examples inside the system message):
the fixed part comes first and the per-call input last, so llama.cpp's prompt cache evaluates the
shared prefix once per run. Its version is a hash of instruction, schemas and examples, so changing
a word or an example changes every cache key that depends on it and nothing else.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ragsweep.metrics import CompactReply, Prompt

Kind = Literal["single_hop", "multi_hop", "comparative", "conditional"]


# --- question writing -------------------------------------------------------------------------


class WriteInput(BaseModel):
    """What the writer sees: the kind, numbered evidence sentences and optional variation."""

    kind: Kind
    sentences: list[str] = Field(description="numbered evidence sentences, [1] first")
    topics: list[str] = Field(description="title or subject of each sentence's source document")
    persona: str | None = None
    style: str | None = None


class WriteOutput(CompactReply):
    """One question, its reference answer and the sentence numbers it relies on."""

    question: str
    answer: str
    used: list[int] = Field(description="numbers of the sentences the answer needs")


KIND_RULES = {
    "single_hop": "a factual question answered by one fact in the sentences",
    "multi_hop": "a question that needs a fact from EACH sentence to answer (a bridge between them)",
    "comparative": "a question that compares the two sentences (which is earlier, larger, longer, ...)",
    "conditional": "a question with a condition ('If ...', 'When ...', 'Under what condition ...') "
                   "that the sentences settle",
}

WRITE_QUESTION: Prompt[WriteInput, WriteOutput] = Prompt(
    name="gen.write_question",
    instruction=(
        "You write one exam question for a search engine test set, from numbered sentences.\n"
        "Kinds: " + "; ".join(f"{k}: {v}" for k, v in KIND_RULES.items()) + ".\n"
        "Rules: the question must be answerable from the sentences alone; it must stand on its own "
        "for a reader who has never seen them, so name the specific subject (person, place, "
        "organisation, drug, gene, event, year) and never say 'the passage', 'the text', 'this "
        "study' or 'the sentence'; do not copy a sentence word for word; the answer is short and "
        "uses the sentences' own words; 'used' lists the sentence numbers the answer needs. "
        "Follow the persona and style when given."
    ),
    input=WriteInput,
    output=WriteOutput,
    examples=(
        (WriteInput(kind="single_hop",
                    sentences=["The Forth Bridge, opened in 1890, carries the railway across the Firth of Forth."],
                    topics=["Forth Bridge"]),
         WriteOutput(question="In which year did the Forth Bridge across the Firth of Forth open?",
                     answer="1890", used=[1])),
        (WriteInput(kind="multi_hop",
                    sentences=["Marie Curie was born in Warsaw in 1867.", "Warsaw is the capital of Poland."],
                    topics=["Marie Curie", "Warsaw"]),
         WriteOutput(question="Marie Curie was born in the capital of which country?",
                     answer="Poland", used=[1, 2])),
        (WriteInput(kind="comparative",
                    sentences=["The Eiffel Tower is 330 metres tall.", "The Chrysler Building is 319 metres tall."],
                    topics=["Eiffel Tower", "Chrysler Building"]),
         WriteOutput(question="Which is taller, the Eiffel Tower or the Chrysler Building?",
                     answer="The Eiffel Tower, at 330 metres", used=[1, 2])),
        (WriteInput(kind="conditional",
                    sentences=["Aspirin is not advised for children under 16 because of the risk of Reye's syndrome."],
                    topics=["Aspirin"]),
         WriteOutput(question="If a patient is a child under 16, why is aspirin not advised?",
                     answer="Because of the risk of Reye's syndrome", used=[1])),
    ),
    max_tokens=160,  # the reply is ~40-80 tokens
    layout="json",
)

# --- unanswerable questions ------------------------------------------------------------------------
# A prompt of its own, so that WRITE_QUESTION (and every cached call made with it) stays as it was.


class UnanswerableInput(BaseModel):
    """What the writer sees for an unanswerable question: sentences that set the topic."""

    sentences: list[str] = Field(description="numbered sentences of one document: the topic, not the answer")
    topics: list[str] = Field(description="title or subject of each sentence's source document")
    persona: str | None = None
    style: str | None = None


class UnanswerableOutput(CompactReply):
    """A question the sentences do not answer, and what it asks that they leave out."""

    question: str
    missing: str = Field(description="the fact the question asks for, which the sentences never state")


WRITE_UNANSWERABLE: Prompt[UnanswerableInput, UnanswerableOutput] = Prompt(
    name="gen.write_unanswerable",
    instruction=(
        "You write one question for a test of whether a search assistant admits what its documents do "
        "not say. You see numbered sentences from one document. Ask a natural, specific question about "
        "the same subject that a reader might expect the document to answer but that the sentences do "
        "NOT answer: a figure, date, person, place or reason they never state (another year, another "
        "quantity, a detail next to the ones given). Do not ask about anything the sentences state, even "
        "in other words, and do not ask for opinions or predictions. The question must stand on its own: "
        "name the subject, never say 'the passage', 'the text' or 'the document'. 'missing' names the "
        "fact the question asks for. Follow the persona and style when given."
    ),
    input=UnanswerableInput,
    output=UnanswerableOutput,
    examples=(
        (UnanswerableInput(sentences=[("The Forth Bridge, opened in 1890, carries the railway across the Firth "
                                       "of Forth."), "It was designed by John Fowler and Benjamin Baker."],
                           topics=["Forth Bridge", "Forth Bridge"]),
         UnanswerableOutput(question="How many workers were employed building the Forth Bridge?",
                            missing="the size of the workforce")),
        (UnanswerableInput(sentences=[("Aspirin is not advised for children under 16 because of the risk of "
                                       "Reye's syndrome.")], topics=["Aspirin"]),
         UnanswerableOutput(question="In which year was aspirin first advised against for children under 16?",
                            missing="the year of the advice")),
    ),
    max_tokens=120,  # the reply is ~30-50 tokens
    layout="json",
)

# --- round trip: answer a written question from its evidence alone ---------------------------------
# The check of Alberti et al. (2019, "Synthetic QA corpora generation with roundtrip consistency"):
# a question whose evidence, read afresh, gives another answer than its reference is dropped.


class RoundTripInput(BaseModel):
    """A written question and the evidence sentences its reference was taken from."""

    question: str
    sentences: list[str] = Field(description="numbered evidence sentences, [1] first")
    # A documentation section's "the route will always return 202" is about the route its heading names: the
    # answerer reads the headings as the writer did, or it answers of a subject the text never names.
    section: str | None = Field(default=None, description="the page and headings over the sentences, outermost "
                                "first; the last names what the sentences are about where they do not name it")


class RoundTripOutput(CompactReply):
    """The shortest answer the sentences give."""

    answer: str


#: What the round-trip answer says when the sentences do not answer the question.
NOT_STATED = "not stated"

ANSWER_FROM_EVIDENCE: Prompt[RoundTripInput, RoundTripOutput] = Prompt(
    name="gen.answer_from_evidence",
    instruction=(
        "Answer the question from the numbered sentences alone, not from memory. Give the shortest "
        "complete answer (a name, number, date or short phrase) in the sentences' own words. If the "
        f"sentences do not answer the question, the answer is \"{NOT_STATED}\". A 'section', when given, names "
        "what the sentences are about: they answer only a question about that subject."
    ),
    input=RoundTripInput,
    output=RoundTripOutput,
    examples=(
        (RoundTripInput(question="Marie Curie was born in the capital of which country?",
                        sentences=["Marie Curie was born in Warsaw in 1867.", "Warsaw is the capital of Poland."]),
         RoundTripOutput(answer="Poland")),
        (RoundTripInput(question="Which is taller, the Eiffel Tower or the Chrysler Building?",
                        sentences=["The Eiffel Tower is 330 metres tall.", "The Chrysler Building is 319 metres tall."]),
         RoundTripOutput(answer="The Eiffel Tower")),
        (RoundTripInput(question="Who designed the Forth Bridge?",
                        sentences=["The Forth Bridge, opened in 1890, carries the railway across the Firth of Forth."]),
         RoundTripOutput(answer=NOT_STATED)),
    ),
    max_tokens=48,  # the reply is ~10-25 tokens
    layout="json",
)

PROMPTS = {p.name: p for p in (WRITE_QUESTION, WRITE_UNANSWERABLE, ANSWER_FROM_EVIDENCE)}
