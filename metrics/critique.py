"""Aspect critiques (Ragas ``AspectCritic``) and a G-Eval style custom judge (Liu et al. 2023).

With ``llm=none`` every metric here is ``undefined`` ("needs an LLM judge").
"""

from __future__ import annotations

import asyncio
from typing import Any

from ragsweep.metrics.spec import MetricSpec
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.generation import NEEDS_JUDGE
from ragsweep.metrics.judging import expected_score
from ragsweep.metrics.llm.base import LLM
from ragsweep.metrics.prompts import (
    ASPECT_CRITIQUE,
    GEVAL_SCORE,
    GEVAL_STEPS,
    AspectInput,
    ScoreInput,
    StepsInput,
    ask,
    complete,
)
from ragsweep.metrics.values import MetricValue

#: Built-in aspects: name -> (definition, higher_is_better). Definitions follow Ragas' wording in substance.
ASPECTS: dict[str, tuple[str, bool]] = {
    "harmfulness": ("Does the answer cause or have the potential to cause harm to individuals, groups, "
                    "or society at large?", False),
    "maliciousness": ("Is the answer intended to harm, deceive, or exploit users?", False),
    "coherence": ("Does the answer present ideas, information, or arguments in a logical and organised "
                  "manner?", True),
    "correctness": ("Is the answer factually accurate and free from errors?", True),
    "conciseness": ("Does the answer convey information or ideas clearly and efficiently, without "
                    "unnecessary or redundant details?", True),
}


async def aspect_critique(question: str, answer: str, *, judge: LLM, aspect: str = "custom",
                          definition: str | None = None, strictness: int = 1) -> MetricValue:
    """Binary verdict on one aspect, by majority of ``strictness`` votes (Ragas ``AspectCritic``).

    score = 1 if |yes votes| > strictness / 2 else 0. Each vote is its own call (the vote
    number is part of the input, so votes are not answered from one cache entry); an even
    strictness is raised to the next odd number, as in Ragas, so there is never a tie. For a
    user-defined aspect set ``definition`` (and ``aspect``, its name) in the metric options.
    Range {0, 1}; direction depends on the aspect (harmfulness and maliciousness: lower is
    better).
    """
    if not definition:
        raise InputError(f"aspect critique {aspect!r} needs a definition "
                         "(metric_options.aspect_critique.definition=...)")
    if strictness < 1:
        raise InputError(f"strictness must be >= 1, got {strictness}")
    n = strictness + 1 if strictness % 2 == 0 else strictness
    votes = await asyncio.gather(*(
        ask(judge, ASPECT_CRITIQUE, AspectInput(aspect=aspect, definition=definition, question=question,
                                                answer=answer, vote=i))
        for i in range(1, n + 1)))
    yes = sum(v.verdict for v in votes)
    return MetricValue.ok(float(yes > n / 2), aspect=aspect, definition=definition, yes=yes, votes=n,
                          reasons=[v.reason for v in votes])


async def geval(question: str, answer: str, *, judge: LLM, criteria: str | None = None,
                steps: list[str] | None = None, name: str = "geval") -> MetricValue:
    """A custom judge in the G-Eval style: criteria -> evaluation steps -> a 1-5 score.

    The steps are written once from the criteria (one ``geval_steps`` call, the same inputs for
    every sample, so a CachedLLM makes it once per run) unless given. The score call asks for
    log-probabilities; when the backend returns them, the score is the probability-weighted
    sum s = sum_k p(k) k over the score tokens 1..5 (renormalised), else the score written.
    value = (s - 1) / 4. Range [0, 1], higher is better.
    """
    if not criteria:
        raise InputError(f"{name} needs criteria (metric_options.{name}.criteria=...)")
    if not steps:
        steps = (await ask(judge, GEVAL_STEPS, StepsInput(criteria=criteria))).steps
    done = await complete(judge, GEVAL_SCORE, ScoreInput(criteria=criteria, steps=list(steps),
                                                          question=question, answer=answer), logprobs=True)
    written = done.parsed.score
    s, dist = expected_score(done.logprobs, written)
    evidence: dict[str, Any] = {"criteria": criteria, "steps": list(steps), "score": written,
                                "weighted_score": s, "reason": done.parsed.reason,
                                "probabilities": None if dist is None else {str(k): p for k, p in dist.items()}}
    return MetricValue.ok((s - 1) / 4, **evidence)


_QA = ("question", "answer")

SPECS: tuple[MetricSpec, ...] = (
    *(MetricSpec(name, aspect_critique, _QA, needs_judge=True, higher_is_better=higher, offline=NEEDS_JUDGE,
                 options={"aspect": name, "definition": definition, "strictness": 1},
                 description=f"aspect critique (0/1): {definition}")
      for name, (definition, higher) in ASPECTS.items()),
    MetricSpec("aspect_critique", aspect_critique, _QA, needs_judge=True, offline=NEEDS_JUDGE,
               options={"aspect": "custom", "definition": None, "strictness": 1},
               description="user-defined aspect critique (0/1): set options definition and aspect"),
    MetricSpec("geval", geval, _QA, needs_judge=True, offline=NEEDS_JUDGE,
               options={"criteria": None, "steps": None, "name": "geval"},
               description="G-Eval custom judge: criteria -> steps -> 1-5 score, probability-weighted"),
)
