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
``claim_check``                 faithfulness (default) and sentence correctness: one statement
                                against the sentences about it (a yes/no verdict, or which value
                                the passages give for one of its numbers or names)
``correctness_grade``           factual correctness with ``claims="graded"`` (1-5 grade)
``claims_verdicts``             faithfulness/hallucination with ``claims="judge"``, noise
                                sensitivity (answer vs contexts); factual/answer correctness
                                with ``claims="judge"`` (answer vs reference)
``claim_verification``          noise sensitivity (the answer's claims vs the reference)
``reference_claims_attribution``  context recall, noise sensitivity (reference vs contexts);
                                factual/answer correctness (reference vs answer)
``chunk_verdicts``              context precision (vs reference), context utilization (vs answer)
``answer_relevance``            answer relevancy (default): does the reply respond to the question, one token
``question_generation``         answer relevancy with ``method="questions"`` (Ragas' recipe)
``statement_relevance``         context relevancy, answer relevancy (statement-level)
``entities``                    context entity recall
``aspect_critique``             harmfulness, maliciousness, coherence, correctness,
                                conciseness, user-defined aspects
``geval_steps``, ``geval_score``  the G-Eval custom judge
==============================  ==========================================================

The prompts live by family in ``claims``, ``context`` and ``critique``; ``core`` holds
:class:`Prompt`, :func:`render` and the call helpers. Everything is re-exported here.

Passages are numbered from 1 in the rendered text and in every index the judge returns.
"""

from __future__ import annotations

from typing import Any

from ragsweep.metrics.llm.base import Message
from ragsweep.metrics.prompts.claims import (
    CLAIM_VERIFICATION,
    CLAIMS_VERDICTS,
    CORRECTNESS_GRADE,
    REFERENCE_CLAIMS_ATTRIBUTION,
    CLAIM_CHECK,
    SLOT_LETTERS,
    Attribution,
    AttributionInput,
    Attributions,
    ClaimsInput,
    ClaimsVerdicts,
    ClaimVerdict,
    Grade,
    GradeInput,
    CheckAnswer,
    CheckInput,
    VerificationInput,
    Verifications,
)
from ragsweep.metrics.prompts.context import (
    ANSWER_RELEVANCE,
    CHUNK_VERDICTS,
    ENTITIES,
    QUESTION_GENERATION,
    STATEMENT_RELEVANCE,
    ChunkInput,
    ChunkVerdict,
    ChunkVerdicts,
    Entities,
    EntitiesInput,
    GeneratedQuestions,
    QuestionInput,
    ReplyInput,
    ReplyVerdict,
    StatementInput,
    StatementVerdict,
    StatementVerdicts,
)
from ragsweep.metrics.prompts.core import Granularity, Prompt, ask, complete, render, render_input
from ragsweep.metrics.prompts.critique import (
    ASPECT_CRITIQUE,
    GEVAL_SCORE,
    GEVAL_STEPS,
    AspectInput,
    AspectVerdict,
    Score,
    ScoreInput,
    Steps,
    StepsInput,
)

PROMPTS: tuple[Prompt[Any, Any], ...] = (
    CLAIM_CHECK, CORRECTNESS_GRADE, CLAIMS_VERDICTS, CLAIM_VERIFICATION, REFERENCE_CLAIMS_ATTRIBUTION, CHUNK_VERDICTS,
    QUESTION_GENERATION, ANSWER_RELEVANCE, STATEMENT_RELEVANCE, ENTITIES, ASPECT_CRITIQUE, GEVAL_STEPS, GEVAL_SCORE,
)
"""Every prompt, for listings, tests and the dry run."""


def identify(messages: list[Message]) -> Prompt[Any, Any] | None:
    """The prompt that rendered ``messages`` (by its instruction), or None; for fakes and reports."""
    system = messages[0]["content"] if messages else ""
    return next((p for p in PROMPTS if system.startswith(p.instruction + "\n")), None)
