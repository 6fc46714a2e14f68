"""Test-set queries in the form the application's users write them: questions, or claims to check.

A retrieval test set measures a retriever on queries, and the queries' form moves the ranking as their wording
does: a fact-checking application is searched with statements ("Vitamin B12 deficiency raises homocysteine."),
not with questions, and a dense embedder trained on question-passage pairs favours a question more than a claim
(docs/trust/generated-test-sets.md, SciFact). ``form: claim`` makes the set's queries claims by construction:
after a question has passed every gate and its round trip, the writer's model states the question and its
checked answer as one sentence, which becomes the sample's ``question`` (the question stays in
``provenance["form"]["from"]``; the reference and the evidence are unchanged, so a claim is one its evidence
supports). With the reword pass on (``reword.bias``), the claim is written under the same bias, kept off the
evidence's words that the question copied; the answer's own words stay free, since the claim has to state it.

A claim is kept only when it is a statement, not a question, and holds every name and number of the question
and of the answer; otherwise the question stays and the provenance says why. Only the kinds the reword pass
rewords are stated (an unanswerable question has no answer to state; a follow-up leans on its first turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel

from ragsweep.gen.drafts import Gating, Passed
from ragsweep.gen.reword import REWORDED_KINDS, evidence_bias, names_and_numbers
from ragsweep.gen.testset import TestSample
from ragsweep.gen.wording import evidence_documents
from ragsweep.metrics import LLM, JudgeError, Prompt, Usage, complete, content_words, supports_bias

#: The query forms a test set can be written in (``form`` in conf/gen.yaml).
FORMS = ("question", "claim")


class ClaimInput(BaseModel):
    question: str
    answer: str


class ClaimOutput(BaseModel):
    claim: str


STATE_CLAIM: Prompt[ClaimInput, ClaimOutput] = Prompt(
    name="gen.state_claim",
    instruction=(
        "Write the question and its answer as one plain statement of fact, the way someone checking that fact "
        "would write it. Keep every name and number of both. Do not ask anything. Reply with the statement only."
    ),
    input=ClaimInput,
    output=ClaimOutput,
    examples=(
        (ClaimInput(question="In which year did the Forth Bridge open?", answer="1890"),
         ClaimOutput(claim="The Forth Bridge opened in 1890.")),
        (ClaimInput(question="Does metformin lower the chance that obese adults get type 2 diabetes?", answer="Yes"),
         ClaimOutput(claim="Metformin reduces the risk of type 2 diabetes in adults with obesity.")),
    ),
    max_tokens=90,
    layout="json",
)


def _bare(words: set[str]) -> set[str]:
    """Names without a possessive ending: a claim may say "KLF2 contributes" where the question said "KLF2's"."""
    return {w[:-2] if w.endswith(("'s", "’s")) else w for w in words}


def claim_problem(claim: str, question: str, answer: str) -> str | None:
    """Why ``claim`` cannot stand for ``question`` and its ``answer``, or None: it asks something, or it lost a
    name or number of either (a claim without the answer's value states nothing the evidence was checked for)."""
    if not claim or claim.rstrip().endswith("?"):
        return "not a statement"
    said = _bare(names_and_numbers(claim) | {w.lower().strip(".,;:") for w in claim.split()})
    # An answer is no sentence: its first word is a name when capitalised ("Zarel-4"); a yes or no is stated by
    # the claim's verb, not by the word.
    answered = set() if answer.strip(" .!").lower() in ("yes", "no") else names_and_numbers("- " + answer)
    lost = _bare(names_and_numbers(question) | answered) - said
    return f"lost {', '.join(sorted(lost))}" if lost else None


async def as_claim(llm: LLM, sample: TestSample, documents: Sequence[str],
                   bias_value: float | None) -> tuple[TestSample, Usage, int]:
    """``sample`` with its question stated as a claim (see the module docstring), or as it was with the reason
    in ``provenance["form"]``; what the call used, and the calls made (0 or 1)."""
    if sample.kind not in REWORDED_KINDS or not sample.reference:
        return sample, Usage(), 0
    bias = None
    if bias_value is not None and supports_bias(llm):
        answer_keys = set(content_words(sample.reference))
        # The answer's words stay free: the claim must state them.
        bias = {form: v for form, v in evidence_bias(sample.question, documents, bias_value).items()
                if not set(content_words(form.strip())) & answer_keys} or None
    try:
        done = await complete(llm, STATE_CLAIM, ClaimInput(question=sample.question, answer=sample.reference),
                              bias=bias)
    except JudgeError as exc:
        kept = f"kept the question: failed: {str(exc)[:120]}"
        return replace(sample, provenance={**sample.provenance, "form": kept}), Usage(), 1
    claim = " ".join(done.parsed.claim.split())
    if why := claim_problem(claim, sample.question, sample.reference):
        return replace(sample, provenance={**sample.provenance, "form": f"kept the question: {why}"}), done.usage, 1
    return replace(sample, question=claim,
                   provenance={**sample.provenance, "form": {"claim": True, "from": sample.question}}), done.usage, 1


async def claim_passed(llm: LLM | None, passed: Passed, gating: Gating, bias_value: float | None) -> Passed:
    """A sample through every gate and its round trip, its question stated as a claim (:func:`as_claim`); the
    report counts claims written and questions kept (``form``). Unchanged when it was rejected or has no model."""
    if llm is None or passed.reason is not None:
        return passed
    docs = evidence_documents(passed.sample, gating.corpus)
    sample, usage, calls = await as_claim(llm, passed.sample, docs, bias_value)
    outcome = sample.provenance.get("form")
    if outcome is None:
        return passed
    key = "claims" if isinstance(outcome, dict) else "kept_question"
    gating.report.forms[key] = gating.report.forms.get(key, 0) + 1
    return replace(passed, sample=sample, usage=passed.usage + usage, calls=passed.calls + calls,
                   example={**passed.example, "question": sample.question})
