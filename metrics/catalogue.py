"""The metric catalogue: one explicit table from metric name to what it computes and needs.

Nothing registers itself on import. Each metric family module (``metrics/retrieval.py``,
``metrics/lexical.py``, ``metrics/generation.py``, ...) exposes a tuple ``SPECS`` of
:class:`~ragsweep.metrics.spec.MetricSpec`, and :func:`catalogue` joins those tuples; a name
defined twice is an error. The composite ``summary_score`` is defined here because it reads the
table itself.

Names may carry their parameter (``ndcg@10``): :func:`spec_of` parses the name, looks up the base
(``ndcg``) and binds the parameter, so direction, inputs and defaults come from this one table for
every cutoff. Names other tools use (``answer_similarity``, Ragas 0.0.x) resolve through
:mod:`ragsweep.metrics.aliases`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from ragsweep.metrics import attribution, correctness, critique, generation, lexical, refusal, retrieval
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.generation import NEEDS_JUDGE
from ragsweep.metrics.llm.base import LLM
from ragsweep.metrics.spec import FIELDS, MetricFn, MetricSpec, RagSample, parse_name
from ragsweep.metrics.values import MetricValue

__all__ = ["FIELDS", "MetricFn", "MetricSpec", "RagSample", "catalogue", "resolve", "spec_of",
           "higher_is_better", "summary_score"]


DEFAULT_SUMMARY = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


async def summary_score(question: str, answer: str, contexts: Sequence[str], reference: str, *,
                        judge: LLM, embedder: Any, metrics: Sequence[str] = DEFAULT_SUMMARY,
                        options: Mapping[str, Mapping[str, Any]] | None = None) -> MetricValue:
    """Harmonic mean of the selected metrics (the original Ragas score).

    summary = k / sum_i (1 / m_i) over the k selected metrics. Any component error -> error;
    any undefined -> undefined (naming it); any component <= 0 -> 0. Only higher-is-better
    metrics can be combined. Range [0, 1], higher is better. Each component runs with its
    default options (or ``options[name]``); its judge calls are the same calls the component
    makes on its own, so scoring it next to them costs no extra call through a CachedLLM.
    """
    table = catalogue()
    unknown = [m for m in metrics if m not in table]
    if unknown or not metrics:
        raise InputError(f"summary_score: unknown metric(s) {unknown or 'none given'}")
    lower = [m for m in metrics if not table[m].higher_is_better or m == "summary_score"]
    if lower:
        raise InputError(f"summary_score cannot combine {', '.join(lower)}")
    fields = {"question": question, "answer": answer, "contexts": contexts, "reference": reference}

    async def run(name: str) -> MetricValue:
        spec = table[name]
        missing = [f for f in spec.inputs if f not in fields]
        if missing:
            return MetricValue.undefined(f"{name} needs {', '.join(missing)}")
        call = ({f: fields[f] for f in (*spec.inputs, *spec.optional)} | dict(spec.options)
                | dict((options or {}).get(name) or {}))
        if spec.needs_judge:
            call["judge"] = judge
        if spec.needs_embedder:
            call["embedder"] = embedder
        out = spec.fn(**call)
        return await out if inspect.isawaitable(out) else out

    parts = dict(zip(metrics, await asyncio.gather(*(run(m) for m in metrics))))
    components = {m: {"value": v.value, "status": v.status, "explanation": v.explanation} for m, v in parts.items()}
    for status in ("error", "undefined"):
        bad = [m for m, v in parts.items() if v.status == status]
        if bad:
            return MetricValue(None, status, {"reason": f"{status}: {', '.join(bad)}", "components": components})
    values = [v.value for v in parts.values()]
    score = 0.0 if min(values) <= 0 else len(values) / sum(1 / v for v in values)
    return MetricValue.ok(score, metrics=list(metrics), components=components)


def _summary_embeds(options: Mapping[str, Any]) -> bool:
    """Whether a summary with ``options`` embeds: when one of its components does, with its own options."""
    table, nested = catalogue(), options.get("options") or {}
    return any(table[m].uses_embedder(nested.get(m)) for m in options.get("metrics") or () if m in table)


SUMMARY = MetricSpec(
    "summary_score", summary_score, ("question", "answer", "contexts", "reference"),
    needs_judge=True, needs_embedder=True, offline=NEEDS_JUDGE, family="composite", embeds=_summary_embeds,
    options={"metrics": DEFAULT_SUMMARY, "options": None},
    description="harmonic mean of faithfulness, answer relevancy, context precision and recall")

#: The families, in the order their metrics are listed (and shown as leaderboard columns).
FAMILIES: tuple[tuple[str, Sequence[MetricSpec]], ...] = (
    ("retrieval", retrieval.SPECS), ("lexical", lexical.SPECS), ("generation", generation.SPECS),
    ("correctness", correctness.SPECS), ("citation", attribution.SPECS), ("refusal", refusal.SPECS),
    ("critique", critique.SPECS),
    ("composite", (SUMMARY,)),
)


@lru_cache(maxsize=1)
def _table() -> dict[str, MetricSpec]:
    out: dict[str, MetricSpec] = {}
    for family, specs in FAMILIES:
        for spec in specs:
            if spec.name in out:
                raise ValueError(f"metric {spec.name!r} is defined twice")
            out[spec.name] = spec if spec.family else _with_family(spec, family)
    return out


def _with_family(spec: MetricSpec, family: str) -> MetricSpec:
    return replace(spec, family=family)


def catalogue() -> dict[str, MetricSpec]:
    """Every known metric by its base name (a copy: callers may not change the table)."""
    return dict(_table())


def spec_of(name: str) -> MetricSpec:
    """The spec a public name means: aliases resolved, ``@`` parameters bound (``ndcg@10``).

    Raises:
        InputError: An unknown name (listing the known ones), a parameter on a metric that takes
            none, or a metric that needs one given without it (``ndcg`` rather than ``ndcg@10``).
    """
    from ragsweep.metrics.aliases import canonical

    base, param = parse_name(canonical(name))
    table = _table()
    spec = table.get(base)
    if spec is None:
        known = ", ".join(f"{n}@k" if s.param else n for n, s in table.items())
        raise InputError(f"unknown metric {name}; known: {known}")
    if param is None:
        if spec.param is not None:
            raise InputError(f"metric {base} needs its {spec.param}: write {base}@10 (or another {spec.param})")
        return spec
    return spec.bind(param)


def resolve(names: Sequence[str]) -> list[MetricSpec]:
    """The specs for ``names``, in order, each bound to its parameter; duplicates are an InputError."""
    bad = []
    specs = []
    for n in names:
        try:
            specs.append(spec_of(n))
        except InputError as exc:
            bad.append(str(exc))
    if bad:
        raise InputError("; ".join(bad))
    seen: set[str] = set()
    for s in specs:
        if s.name in seen:
            raise InputError(f"metric {s.name} is asked for twice")
        seen.add(s.name)
    return specs


def higher_is_better(name: str) -> bool:
    """A metric's direction, from the table (``ndcg@10`` reads ``ndcg``; ``@k`` of old sweep folders too)."""
    base, _ = parse_name(name)
    spec = _table().get(base)
    if spec is None:
        from ragsweep.metrics.aliases import canonical

        spec = _table().get(parse_name(canonical(name))[0])
    if spec is None:
        raise InputError(f"unknown metric {name}: no direction to rank or compare it by")
    return spec.higher_is_better


def family_order(name: str) -> tuple[int, str]:
    """Sort key that lists metrics family by family, in table order (for leaderboard columns)."""
    base, param = parse_name(name)
    names = list(_table())
    i = names.index(base) if base in names else len(names)
    return i, f"{int(param):08d}" if param and param.isdigit() else (param or "")
