"""Scoring run records: the one path every metric of a sweep (or of a rescore) goes through.

A job's variants are its top-K values: variant ``name,top_k=K`` passes on the first K items of each
run record and its answer at K. :func:`score_variants` turns each (run, K) into a
:class:`~ragsweep.metrics.spec.RagSample` and runs the metric table over them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragsweep.gen import build
from ragsweep.harness.cache import atomic_write
from ragsweep.harness.records import Cut, RunSample
from ragsweep.metrics import MetricSpec, MetricValue, ScoredSample, metric_kwargs, score_samples, scrub_all, summarise


def applicable(specs: Sequence[MetricSpec], runs: Sequence[RunSample]) -> list[MetricSpec]:
    """Drop span metrics when the runs are judged by document qrels (they have no evidence spans), and
    citation metrics when no answer was read for citations (an answerer or application that does not
    cite: a column of "no citations" would say nothing)."""
    span_mode = any(r.evidence is not None for r in runs)
    cites = any(r.citations for r in runs)
    return [s for s in specs if (span_mode or "evidence" not in s.inputs) and (cites or "citations" not in s.inputs)]


def score_variant(runs: Sequence[RunSample], name: str, cut: Cut, specs: Sequence[MetricSpec], *,
                  judge: Any = None, embedder: Any = None, options: Mapping[str, Any] | None = None,
                  concurrency: int = 4) -> list[ScoredSample]:
    """Every metric of ``specs`` on every run, as the variant that passes on what ``cut`` keeps.

    A run whose application call failed (``status="error"``, from ``ragsweep run``) is not scored:
    each of its metrics is ``error`` with the call's error as the reason, in its place in the order.
    """
    ok = [r for r in runs if r.status != "error"]
    samples = [r.rag_sample(cut) for r in ok]
    if embedder is not None and hasattr(embedder, "prime") and uses_embedder(specs, options):
        embedder.prime([t for s in samples for t in (s.answer, s.reference) if t])
    scored = asyncio.run(score_samples(samples, list(specs), judge=judge, embedder=embedder, options=options,
                                       variant=name, concurrency=concurrency, progress=False))
    if len(ok) == len(runs):
        return scored
    rows, done = [], iter(scored)
    for r in runs:
        if r.status == "error":
            failed = MetricValue.error(f"the application call failed: {r.error}")
            rows.extend(ScoredSample(r.sample_id, name, s.name, failed) for s in specs)
        else:
            rows.extend(next(done) for _ in specs)
    return rows


def aggregate(rows: Sequence[ScoredSample], seed: int) -> dict[str, dict[str, Any]]:
    """Per metric: mean, 95% bootstrap CI and counts."""
    by_metric: dict[str, list[MetricValue]] = {}
    for r in rows:
        by_metric.setdefault(r.metric, []).append(r.result)
    return {m: summarise(((r.status, r.value) for r in results), seed) for m, results in by_metric.items()}


def write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Rows as JSON lines, every string scrubbed of credentials (an application or judge may echo one)."""
    clean = scrub_all(list(rows))  # one pass: the secrets to look for are gathered once

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in clean:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    atomic_write(path, write)


def uses_embedder(specs: Sequence[MetricSpec], options: Mapping[str, Any] | None = None) -> bool:
    """Whether any of ``specs`` embeds with the user's ``options`` (``metric_options``): answer relevancy embeds
    only with ``method=questions``, so the default judge method loads no embedder."""
    return any(s.uses_embedder(metric_kwargs(s, options or {})) for s in specs)


def embedder_for(specs: Sequence[MetricSpec], config: Any, options: Mapping[str, Any] | None = None) -> Any:
    """The embedder the metrics need with ``options``, built from its config node (or a function that returns
    it, composed only when needed); None when no metric embeds."""
    if not uses_embedder(specs, options):
        return None
    return build(config() if callable(config) else config, "embedder")
