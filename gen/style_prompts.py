"""The prompts of the documentation styles (:mod:`gen.styles`), one per style, each defined once and typed.

Each is a prompt of its own, so :data:`gen.prompts.WRITE_QUESTION` (and every cached call made with it) stays as
it was. The writer sees the section's place in the docs (page and heading titles) and its numbered text: the
cue (a sentence, list items, a code block) last, what leads into it before. The examples are of a made-up
product, so they teach the form and no fact of a real one.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ragsweep.gen.prompts import WriteOutput
from ragsweep.metrics import CompactReply, Prompt


class StyleInput(BaseModel):
    """What the writer sees for a documentation style: where the text stands and the text, numbered."""

    product: str | None = Field(default=None, description="the product the docs are of, when the docs say")
    section: str = Field(description="the page and the headings above the text, outermost first: the last one names "
                                     "what the text is about where the text does not name it")
    sentences: list[str] = Field(description="numbered text of the section: sentences, list items or a code block")
    persona: str | None = None


class CodeQuestion(CompactReply):
    """The question whose answer is the code block (the code itself is the reference)."""

    question: str


_RULES = (
    "The question stands on its own for someone who has not read the page: it names the product (the 'product' "
    "given, else take it from the section's titles) and never says 'the section', 'the page', 'the text', 'the example' or "
    "'the code below'. Write it as a user types it: plain words, no Markdown, no backticks, no links, no code "
    "blocks (a parameter or function name may stand as a plain word). The text is about what the section's last "
    "title names: where the text says 'it', 'this' or 'the ...' without a name, the question names that title's "
    "subject, not an outer title's. Follow the persona when given."
)
_ANSWER = (" The answer is short and uses the text's own words; it answers only what the question asks (one cause, "
           "one goal's steps; never two reasons joined) and does not repeat the question. Where the text only points "
           "elsewhere ('see ...', a link), the answer names where it points, never what that place may say. "
           "'used' lists the numbers of the text it needs.")

_HARBOUR = "Harbourline CLI > Tutorial > Scheduling departures"
#: The made-up product of the examples: a question that names it where the shown text does not copied the example.
EXAMPLE_PRODUCT = "Harbourline"


def _style_prompt(style: str, ask: str, example: tuple[StyleInput, BaseModel],
                  name: str | None = None) -> Prompt[StyleInput, Any]:
    """A style's prompt: what it asks for, the rules every style shares, one example; a code answer's writer
    writes the question only (its reference is the code)."""
    code = style == "code_answer"
    return Prompt(name=name or ("gen.write_code_question" if code else f"gen.write_{style}"),
                  instruction=ask + _RULES + ("" if code else _ANSWER), input=StyleInput,
                  output=CodeQuestion if code else WriteOutput, examples=(example,),
                  max_tokens=80 if code else 160, layout="json")  # a code answer's reply is one question


_ASKS_OF = "a user of a software product asks its documentation"

WRITE_HOW_TO = _style_prompt("how_to", (
    f"You write one question that {_ASKS_OF}, of the kind 'How do I "
    "...?' or 'How can I ...?', from numbered text of one section. Ask for the goal the text reaches, not for "
    "one of its steps. "),
    (StyleInput(product=EXAMPLE_PRODUCT, section=_HARBOUR, sentences=[
        "To run a departure every day, add a schedule to the route:",
        "- Open harbour.toml.",
        "- Add a [schedule] table with daily = true and the time as at = \"07:30\"."]),
     WriteOutput(question="How do I make a Harbourline route depart every day at the same time?",
                 answer="Add a [schedule] table to harbour.toml with daily = true and the time in at", used=[2, 3])))

WRITE_TROUBLESHOOTING = _style_prompt("troubleshooting", (
    f"You write one question that {_ASKS_OF} when something goes "
    "wrong: what an error means, why it happens or how to fix it ('Why does ... fail with ...?', 'What causes "
    "...Error when ...?', 'How do I fix ...?'), from numbered text of one section that gives the cause or the "
    "fix. The answer gives the cause or the fix, as the text states it. "),
    (StyleInput(product=EXAMPLE_PRODUCT, section=_HARBOUR, sentences=[
        "Each departure needs a berth.",
        "If two departures claim the same berth at the same time, harbour plan stops with a BerthConflictError "
        "naming both."]),
     WriteOutput(question="Why does harbour plan stop with a BerthConflictError in Harbourline?",
                 answer="Two departures claim the same berth at the same time", used=[2])))

#: A warning that gives no reason (it says what not to do): "why" has no answer in it (gen.grounding.unstated_ask),
#: so it is asked what to avoid, or what happens when the text says what follows.
WRITE_AVOID = _style_prompt("troubleshooting", (
    f"You write one question that {_ASKS_OF} to stay out of trouble, "
    "from numbered text of one section that warns against something: 'What should I avoid when ...?', or "
    "'What happens if ...?' only when the text says what happens. Never ask 'why': the text does not say why. "
    "The answer says what to avoid, or what happens, as the text states it. "),
    (StyleInput(product=EXAMPLE_PRODUCT, section=_HARBOUR, sentences=[
        "Do not edit harbour.lock by hand while harbour plan runs."]),
     WriteOutput(question="What should I avoid doing to harbour.lock while Harbourline's harbour plan runs?",
                 answer="Editing it by hand", used=[1])), name="gen.write_troubleshooting_avoid")

WRITE_OPTION = _style_prompt("option", (
    f"You write one question that {_ASKS_OF} about an option, a "
    "parameter or a setting: which one does something ('Which parameter ...?', 'How do I set ...?') or what "
    "one does or defaults to ('What does ... do?'), from numbered text of one section. "),
    (StyleInput(product=EXAMPLE_PRODUCT, section=_HARBOUR, sentences=[
        "Departures wait for late passengers.",
        "The grace_minutes setting says how long a departure waits; it defaults to 5."]),
     WriteOutput(question="Which Harbourline setting controls how long a departure waits for late passengers?",
                 answer="grace_minutes (5 minutes by default)", used=[2])))

WRITE_CODE_QUESTION = _style_prompt("code_answer", (
    f"You write one question that {_ASKS_OF} and whose answer is the "
    "last numbered item, a code block (a program, a command or a configuration): how to do what that code "
    "does, as the text before it and the section's titles say it ('How do I ... in ...?', 'What command "
    "...?'). Do not quote the code. "),
    (StyleInput(product=EXAMPLE_PRODUCT, section=_HARBOUR, sentences=[
        "You can check a schedule before you publish it:",
        "```console\n$ harbour plan --dry-run routes/ferry.toml\n```"]),
     CodeQuestion(question="How do I check a Harbourline schedule without publishing it?")))

#: style -> its prompt (:mod:`gen.styles`).
STYLE_PROMPTS = {"how_to": WRITE_HOW_TO, "troubleshooting": WRITE_TROUBLESHOOTING, "option": WRITE_OPTION,
                 "code_answer": WRITE_CODE_QUESTION}
