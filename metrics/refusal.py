"""Refusal: does the application decline a question whose answer is not in its knowledge base?

``ragsweep gen`` writes ``unanswerable`` questions (plausible questions on the corpus's topics that
no document answers) with the reference :data:`UNANSWERABLE` and no evidence. On such a sample the
only right behaviour is to say so; any answer that states a fact is made up.

:func:`refusal` scores exactly that, without a model::

    refusal = 1  if the reference is UNANSWERABLE and the answer declines (:func:`declines`)
              0  if the reference is UNANSWERABLE and the answer states something instead
              undefined  otherwise (an answerable question; refusal does not apply)

Range {0, 1}, higher is better; the mean over a set is the share of unanswerable questions refused.
A refusal followed by a guess ("The context does not say; probably 1850") still counts as a
refusal here; faithfulness scores the guess.

Every other metric that compares with the reference (``factual_correctness``, ``rouge_l``,
``context_recall``, ...) is ``undefined`` on these samples: there is no answer to compare with
(:func:`metrics.scoring` applies the rule for every spec without ``scores_unanswerable``).
"""

from __future__ import annotations

import re

from ragsweep.metrics.offline import ABSTAIN, sentences
from ragsweep.metrics.spec import MetricSpec
from ragsweep.metrics.values import MetricValue

#: The reference answer of every unanswerable question, exactly (compared after :func:`_plain`).
UNANSWERABLE = "not in the knowledge base"

#: Why a reference-based metric is undefined on an unanswerable sample.
UNANSWERABLE_REASON = (f"unanswerable question (reference {UNANSWERABLE!r}): no answer to compare with; "
                       "the refusal metric scores it")

# Refusals that metrics.offline.ABSTAIN (written for "the context does not mention ...") leaves out.
_DECLINE = re.compile(
    r"(?i)\b(?:not|n't|isn't) (?:in|part of|covered by|found in) (?:the|my|your|this) (?:\w+ )?(?:knowledge base|"
    r"documents?|sources?|context|data)\b"
    r"|\bI (?:do not|don't|did not|didn't) (?:have|find|see) (?:\w+ ){0,2}(?:information|data|details|answer|mention)"
    r"|\bI (?:could not|couldn't|can ?not|can't|was unable to) (?:find|locate|answer|determine|tell|say)"
    r"|\b(?:there is|there's|there was) no (?:\w+ )?(?:information|mention|answer|data)\b"
    r"|\b(?:no|not enough|insufficient) (?:\w+ )?(?:information|data|details) (?:is |are )?(?:available|given|provided)"
    r"|\bcan(?:not|'t) (?:be )?(?:answered|determined)\b")
_BARE = re.compile(r"(?i)^\W*(?:unknown|n/?a|no answer|not (?:known|available|stated|mentioned)|"
                   r"(?:i )?(?:do not|don't) know|unanswerable)\W*$")


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def is_unanswerable(reference: str | None) -> bool:
    """Whether ``reference`` is the unanswerable marker (case, spaces and punctuation ignored)."""
    return reference is not None and _plain(reference) == _plain(UNANSWERABLE)


def declines(answer: str) -> str | None:
    """The sentence of ``answer`` that declines to answer, or None when none does.

    A sentence declines when it says the sources do not give the answer (:data:`metrics.offline.ABSTAIN`:
    "The context does not mention ...", "I don't know"), says it is not in the knowledge base or the
    documents, that no information is available, or that the writer could not find it; or when the
    whole answer is a bare "Unknown", "N/A", "not stated" or the marker itself.
    """
    if _BARE.match(answer or "") or is_unanswerable(answer):
        return (answer or "").strip()
    for sentence in sentences(answer or ""):
        if ABSTAIN.search(sentence) or _DECLINE.search(sentence):
            return sentence
    return None


def refusal(answer: str, reference: str) -> MetricValue:
    """1 if an unanswerable question's answer declines, 0 if it answers; undefined on answerable ones.

    Range {0, 1}, higher is better. No model: :func:`declines` reads the answer.
    """
    if not is_unanswerable(reference):
        return MetricValue.undefined("the question has a reference answer: refusal scores unanswerable "
                                     f"questions only (reference {UNANSWERABLE!r})")
    sentence = declines(answer)
    if sentence is not None:
        return MetricValue.ok(1.0, declines=sentence)
    return MetricValue.ok(0.0, reason="states an answer to a question the knowledge base does not answer")


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("refusal", refusal, ("answer", "reference"), scores_unanswerable=True, family="refusal",
               description=f"1 if the answer declines a question whose reference is {UNANSWERABLE!r} "
                           "(answer absent from the corpus), else 0; undefined on answerable questions"),
)
