"""Other tools' metric names, translated to ours.

Test sets and CI scripts written for Ragas (0.0.x, as the seed CLI ``ragas_once`` used it, and
later) name metrics their way. A name is aliased here only where our metric computes the same
quantity (read the target's docstring); a Ragas metric we do not compute is an error that names
the metrics to use instead, never a silent stand-in.

Names that are the same in both (``faithfulness``, ``answer_relevancy``, ``context_precision``,
``context_recall``, ``answer_correctness``, the aspect critiques, ``context_entity_recall``) need
no entry. Nor does ``context_relevancy``: Ragas 0.0.x defines it as the share of context
sentences relevant to the question, and ours is the share of context statements relevant to the
question (statements rather than sentences, one judge call).

A leaf module: :func:`metrics.catalogue.resolve` calls :func:`canonical`, so this imports no
catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from ragsweep.metrics.errors import InputError

V = TypeVar("V")

#: Another tool's metric name -> ours. Keys are never names of our own metrics.
METRIC_ALIASES: dict[str, str] = {
    # Ragas 0.0.x and 0.1 (ragas_once): cosine of answer and ground-truth embeddings.
    "answer_similarity": "answer_semantic_similarity",
    # Ragas 0.0.x: the harmonic mean of the run's metrics; ours combines those named in
    # metric_options.summary_score.metrics (faithfulness, answer relevancy, context precision, recall).
    "ragas_score": "summary_score",
    # Ragas 0.2 names
    "semantic_similarity": "answer_semantic_similarity",
    "llm_context_precision_with_reference": "context_precision",     # AP of contexts vs the reference
    "llm_context_precision_without_reference": "context_utilization",  # AP of contexts vs the answer
    "noise_sensitivity_relevant": "noise_sensitivity",  # wrong claims supported by relevant contexts
    "non_llm_string_similarity": "string_similarity",   # 1 - normalised Levenshtein distance
}

#: Another tool's metric name we do not compute -> what to use instead.
NO_EQUIVALENT: dict[str, str] = {
    "bleu_score": "bleu_score (Ragas, sacrebleu) is not computed here; use bleu: sentence BLEU-4 with "
                  "Chen & Cherry smoothing (NLTK's), whose values differ from sacrebleu's",
    "rouge_score": "rouge_score (Ragas: ROUGE-1 or ROUGE-L, precision, recall or F) is not computed here; "
                   "use rouge_l: ROUGE-L F1 on unstemmed words",
}


def canonical(name: str) -> str:
    """Our catalogue name for ``name``: the target of an alias, else ``name`` itself.

    Raises:
        InputError: ``name`` is another tool's metric that we do not compute; the message says
            which of ours to use.
    """
    if name in NO_EQUIVALENT:
        raise InputError(NO_EQUIVALENT[name])
    return METRIC_ALIASES.get(name, name)


def alias_note(name: str) -> str | None:
    """One line telling a user that an alias was translated, or None when ``name`` is not one."""
    target = METRIC_ALIASES.get(name)
    return None if target is None else f"{name} is {target} here"


def by_canonical(named: Mapping[str, V], what: str = "metric") -> dict[str, V]:
    """``named`` keyed by our catalogue names (``{"answer_similarity": 0.5}`` ->
    ``{"answer_semantic_similarity": 0.5}``), so that a threshold or an option keyed by another
    tool's name finds the metric it means.

    Raises:
        InputError: Two keys that name one metric (``answer_similarity`` and
            ``answer_semantic_similarity``), or a name from :data:`NO_EQUIVALENT`.
    """
    out: dict[str, V] = {}
    given: dict[str, str] = {}
    for name, value in named.items():
        ours = canonical(str(name))
        if ours in out:
            raise InputError(f"{what} {given[ours]} and {name} name the same metric ({ours}); keep one")
        out[ours], given[ours] = value, str(name)
    return out
