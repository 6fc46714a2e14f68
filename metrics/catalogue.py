"""The metric catalogue: one explicit table from metric name to what it computes and needs.

Nothing registers itself on import. Each metric family module (``metrics/lexical.py``,
``metrics/generation.py``, ...) exposes a tuple ``SPECS`` of :class:`MetricSpec`, and
:func:`catalogue` joins those tuples; a name defined twice is an error.

A metric function takes the sample fields it names in ``inputs`` as keyword arguments, plus
``judge=`` (an :class:`metrics.llm.LLM`) when ``needs_judge``, ``embedder=`` when
``needs_embedder``, and any per-metric options from the config. It returns a
:class:`~metrics.values.MetricValue`, or an awaitable of one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragsweep.metrics.errors import InputError
from ragsweep.metrics.values import MetricValue

#: The fields a sample can carry (``ragsweep score`` maps the usual column names onto these).
FIELDS = ("question", "answer", "contexts", "reference", "reference_contexts")


@dataclass(frozen=True)
class RagSample:
    """One RAG interaction to score. Missing fields are None (not empty strings)."""

    id: str
    question: str | None = None
    answer: str | None = None
    contexts: tuple[str, ...] | None = None
    reference: str | None = None
    reference_contexts: tuple[str, ...] | None = None

    def get(self, name: str) -> Any:
        return getattr(self, name)


MetricFn = Callable[..., "MetricValue | Awaitable[MetricValue]"]


@dataclass(frozen=True)
class MetricSpec:
    """What a metric is: its function, the sample fields it reads, and what it needs to run.

    Attributes:
        name: The public name (``"faithfulness"``, ``"rouge_l"``).
        fn: The metric function (see the module docstring for the calling convention).
        inputs: Sample fields passed to ``fn`` by name; a sample lacking one is ``undefined``.
        optional: Sample fields passed by name when the sample has them and as None when not
            (faithfulness uses the question when there is one; QAGS summaries have none).
        needs_judge: Takes ``judge=`` (an LLM).
        needs_embedder: Takes ``embedder=``.
        higher_is_better: Direction, for leaderboards and thresholds.
        offline: What the metric does with ``llm=none`` ("" when it needs no LLM at all).
        offline_fn: The deterministic stand-in run when there is no judge (``metrics/offline.py``);
            None leaves the metric ``undefined`` without a judge. It takes the same inputs, an
            optional ``embedder=``, and those of the metric's options it names.
        description: One line for ``--help`` style listings and the README.
        options: Default keyword options (overridable from config ``metric_options.<name>``).
    """

    name: str
    fn: MetricFn
    inputs: tuple[str, ...]
    optional: tuple[str, ...] = ()
    needs_judge: bool = False
    needs_embedder: bool = False
    higher_is_better: bool = True
    offline: str = ""
    offline_fn: MetricFn | None = None
    description: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = (set(self.inputs) | set(self.optional)) - set(FIELDS)
        if unknown:
            raise ValueError(f"metric {self.name}: unknown inputs {sorted(unknown)}")


def _families() -> list[Sequence[MetricSpec]]:
    # Imported here, not at module level, so that importing the catalogue stays cheap and
    # every family is listed in exactly one place.
    from ragsweep.metrics import correctness, critique, generation, lexical

    return [lexical.SPECS, generation.SPECS, correctness.SPECS, critique.SPECS]


def catalogue() -> dict[str, MetricSpec]:
    """Every known metric by name."""
    out: dict[str, MetricSpec] = {}
    for family in _families():
        for spec in family:
            if spec.name in out:
                raise ValueError(f"metric {spec.name!r} is defined twice")
            out[spec.name] = spec
    return out


def resolve(names: Sequence[str]) -> list[MetricSpec]:
    """The specs for ``names``, in order; an unknown name is an :class:`InputError` listing the known ones."""
    table = catalogue()
    missing = [n for n in names if n not in table]
    if missing:
        raise InputError(f"unknown metric(s) {', '.join(missing)}; known: {', '.join(sorted(table))}")
    return [table[n] for n in names]
