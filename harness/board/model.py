"""The leaderboard's model: a row per variant with per-metric statistics, ranked and compared.

Built from the per-sample ``scores.jsonl`` of every job folder below a sweep folder, so it can be
rebuilt at any time and never depends on a job's own summary arithmetic. Renderers
(``harness/board/leaderboard.py`` for CSV and markdown, ``harness/board/html.py`` for the page) depend
on this module, never the other way round. A metric's direction and its column order come from the
metric table (``metrics.catalogue``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsweep.harness.board.compare import Comparison, compare
from ragsweep.metrics import InputError, family_order, summarise
from ragsweep.metrics import higher_is_better as _direction

log = logging.getLogger(__name__)


@dataclass
class Row:
    """One variant: its parameters, per-metric statistics and per-sample values, cost, and its job.

    ``cost`` is the job's cost (seconds, embedded texts, cache use: shared by the top-K variants of
    one job) updated with the variant's own (``llm_calls``, ``llm_cached_calls``, ``llm_*_tokens``).

    ``samples`` maps metric -> sample_id -> value (``None`` when not ok): what the paired
    comparisons need. ``comparison`` is this variant against the baseline on the ordering metric.
    """

    variant: str
    params: dict[str, Any]
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    cost: dict[str, Any] = field(default_factory=dict)
    job: str = ""
    error: str | None = None
    samples: dict[str, dict[str, float | None]] = field(default_factory=dict, repr=False)
    comparison: Comparison | None = None


def score_lines(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each line of a ``scores.jsonl`` with its row; a line that does not parse is an InputError naming it."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            try:
                yield line, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from exc


def _read_scores(path: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """variant -> metric -> score rows."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for _, row in score_lines(path):
        out.setdefault(row["variant"], {}).setdefault(row["metric"], []).append(row)
    return out


def _by_job_number(path: Path) -> list[tuple[int, int, str]]:
    """Job folders in launch order (2 before 10)."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in path.parts]


def collect(sweep_dir: str | Path, seed: int = 0) -> list[Row]:
    """Every variant of every job below ``sweep_dir`` (a sweep folder or a single job folder)."""
    root = Path(sweep_dir)
    if not root.is_dir():
        raise InputError(f"{root}: sweep folder not found")
    rows: list[Row] = []
    seen: dict[str, str] = {}
    for summary_file in sorted(root.rglob("summary.json"), key=_by_job_number):
        summary = json.loads(summary_file.read_text(encoding="utf-8"))
        scores = _read_scores(summary_file.parent / "scores.jsonl")
        for v in summary["variants"]:
            # One row per variant: an Optuna study may propose a variant twice, and a grid axis that does
            # not apply to it (index for bm25) repeats it; the first job's row stands for both.
            if v["variant"] in seen:
                log.info("%s: %s was also run by %s", summary_file.parent, v["variant"], seen[v["variant"]])
                continue
            seen[v["variant"]] = str(summary_file.parent)
            by_metric = scores.get(v["variant"], {})
            stats = {m: summarise(((x["status"], x["value"]) for x in r), seed) for m, r in by_metric.items()}
            samples = {m: {x["sample_id"]: (x["value"] if x["status"] == "ok" else None) for x in r}
                       for m, r in by_metric.items()}
            cost = {**summary.get("cost", {}), **v.get("cost", {}),
                    **({"context_chars": v["context_chars"]} if "context_chars" in v else {})}
            rows.append(Row(v["variant"], v["params"], stats, cost, str(summary_file.parent), samples=samples))
    for error_file in sorted(root.rglob("error.json")):
        err = json.loads(error_file.read_text(encoding="utf-8"))
        rows.append(Row(error_file.parent.name, {}, job=str(error_file.parent), error=err.get("error")))
    if not rows:
        raise InputError(f"{root}: no job results (summary.json) below this folder")
    # A default (context=chunks, query=plain, rerank=none) job leaves it out of its name.
    for group, default in (("query", "plain"), ("rerank", "none"), ("context", "chunks")):
        if any(group in r.params for r in rows):
            for r in rows:
                if r.error is None and group not in r.params:
                    r.params[group] = default
    return rows


def metric_names(rows: Sequence[Row]) -> list[str]:
    """The metrics of the board, family by family in the metric table's order (cutoffs ascending)."""
    found = {m for r in rows for m in r.stats}
    return sorted(found, key=lambda m: (*family_order(_table_name(m)), m))


def _table_name(metric: str) -> str:
    # Sweep folders written before metric names carried their parameter used a literal "@k".
    return metric[:-2] if metric.endswith("@k") else metric


def higher_is_better(metric: str) -> bool:
    """Direction from the metric table; a metric the table does not know is an InputError."""
    return _direction(_table_name(metric))


def rank(rows: list[Row], sort_by: str) -> list[Row]:
    """Best first by the mean of ``sort_by``; variants without a value and failed jobs last."""
    sign = -1.0 if higher_is_better(sort_by) else 1.0

    def key(r: Row) -> tuple[int, float, str]:
        mean = r.stats.get(sort_by, {}).get("mean")
        return (0, sign * mean, r.variant) if mean is not None else (1, 0.0, r.variant)

    return sorted(rows, key=key)


def attach_comparisons(rows: Sequence[Row], metric: str, *, baseline: str | None = None,
                       alpha: float = 0.05, n_resamples: int = 10000, seed: int = 0) -> str | None:
    """Compare every successful variant with ``baseline`` on ``metric``; return the baseline's name."""
    ok = {r.variant: r.samples[metric] for r in rows if r.error is None and metric in r.samples}
    result = compare(ok, metric, baseline=baseline, higher_is_better=higher_is_better(metric),
                     alpha=alpha, n_resamples=n_resamples, seed=seed)
    for r in rows:
        r.comparison = result.get(r.variant)
    return next((c.baseline for c in result.values()), None)


def varying_params(rows: Sequence[Row]) -> list[str]:
    """Parameters that differ between variants (all of them when there is one variant)."""
    keys: list[str] = []
    for r in rows:
        keys.extend(k for k in r.params if k not in keys)
    ok = [r for r in rows if r.error is None]
    if len(ok) <= 1:
        return keys
    return [k for k in keys if len({json.dumps(r.params.get(k)) for r in ok}) > 1]


# Cost columns: (name, getter). Seconds and embedded texts are per job: the top-K variants of one job
# share them, because the job searches once at the largest K. The LLM columns are the variant's own
# (its answers and judged metrics) and appear only when a job ran with an LLM.
def _round(value: Any, digits: int) -> Any:
    return None if value is None else round(float(value), digits)


def _index_sum(cost: dict[str, Any], key: str) -> float | None:
    """The job's indexes summed (a hybrid has a FAISS and a BM25 index); None when any is unknown."""
    values = [i.get(key) for i in cost.get("indexes", {}).values()]
    return None if not values or any(v is None for v in values) else float(sum(values))


def _per_query(cost: dict[str, Any], stage: str, key: str) -> Any:
    return cost.get(stage, {}).get("per_query", {}).get(key)


COSTS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("seconds", lambda c: round(c["seconds"]["total"], 3) if "total" in c.get("seconds", {}) else None),
    ("embedded_texts", lambda c: c.get("embedded_texts")),
    ("latency_p50_ms", lambda c: _round(c.get("latency", {}).get("p50_ms"), 2)),
    ("latency_p95_ms", lambda c: _round(c.get("latency", {}).get("p95_ms"), 2)),
    ("index_build_s", lambda c: _round(_index_sum(c, "build_seconds"), 3)),
    ("index_mb", lambda c: _round(None if (b := _index_sum(c, "bytes")) is None else b / 2**20, 2)),
    ("llm_calls", lambda c: c.get("llm_calls")),
    ("llm_cached_calls", lambda c: c.get("llm_cached_calls")),
    ("llm_prompt_tokens", lambda c: c.get("llm_prompt_tokens")),
    ("llm_completion_tokens", lambda c: c.get("llm_completion_tokens")),
    # An application's own (`ragsweep run`): its calls (retries included) and failed calls, per-call
    # latency, the tokens it reported, and the contexts it returned that were not found in the corpus.
    ("app_calls", lambda c: c.get("app_calls")),
    ("app_errors", lambda c: c.get("app_errors")),
    ("app_latency_p50_ms", lambda c: c.get("app_latency_p50_ms")),
    ("app_latency_p95_ms", lambda c: c.get("app_latency_p95_ms")),
    ("app_prompt_tokens", lambda c: c.get("app_prompt_tokens")),
    ("app_completion_tokens", lambda c: c.get("app_completion_tokens")),
    ("contexts_returned", lambda c: c.get("contexts_returned")),
    ("contexts_unlocated", lambda c: c.get("contexts_unlocated")),
    # What query rewriting (query=multi_query|hyde) and reranking (rerank=llm|cross_encoder) spent per query
    # of the job: LLM calls, tokens (prompt + completion) and seconds.
    ("rewrite_llm_calls_per_q", lambda c: _per_query(c, "query_rewrite", "llm_calls")),
    ("rewrite_llm_tokens_per_q", lambda c: _per_query(c, "query_rewrite", "llm_tokens")),
    ("rewrite_s_per_q", lambda c: _per_query(c, "query_rewrite", "seconds")),
    ("rerank_llm_calls_per_q", lambda c: _per_query(c, "rerank", "llm_calls")),
    ("rerank_llm_tokens_per_q", lambda c: _per_query(c, "rerank", "llm_tokens")),
    ("rerank_s_per_q", lambda c: _per_query(c, "rerank", "seconds")),
    # Mean characters passed on per question: shown when the board compares context options
    # (context=chunks|window|parent), whose cost is the text they add to a prompt.
    ("context_chars", lambda c: c.get("context_chars")),
)


def cost_columns(rows: Sequence[Row]) -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """The cost columns some row has a value for (``seconds`` and ``embedded_texts`` always)."""
    contexts = any("context" in r.params for r in rows)
    return [(n, f) for n, f in COSTS
            if n in ("seconds", "embedded_texts")
            or (any(f(r.cost) is not None for r in rows) and (n != "context_chars" or contexts))]


def cost_note(rows: Sequence[Row]) -> str:
    """What the cost columns count, for the markdown and HTML pages."""
    note = "Seconds and embedded texts are per job: the top-K variants of one job share one search."
    if any(n == "latency_p50_ms" for n, _ in cost_columns(rows)):
        note += (" Latency is per query, sent one at a time (encoding and search, uncached); index build "
                 "seconds are from when the index was built (a cached index keeps them), index MB its size.")
    if any(n == "app_calls" for n, _ in cost_columns(rows)):
        note += (" For an application run (`ragsweep run`): app calls count the attempts behind its recorded "
                 "answers (retries included), latency is per "
                 "answered call (under the run's concurrency), tokens are those the application reported, "
                 "and contexts_unlocated counts the returned contexts not found in the corpus.")
    if any(n == "context_chars" for n, _ in cost_columns(rows)):
        note += (" Context chars: mean characters passed on per question (a window or parent passes on more "
                 "text per hit; at an equal budget all pass on the same).")
    if any(n in ("rewrite_s_per_q", "rerank_s_per_q") for n, _ in cost_columns(rows)):
        note += (" Rewrite and rerank columns are per query, shared by a job's variants: the LLM calls and tokens "
                 "(prompt + completion; a cached call counts the tokens it first took) that query rewriting "
                 "and reranking spent, and their seconds (this run's: near 0 when answered from the cache).")
    if any(n == "llm_calls" for n, _ in cost_columns(rows)):
        note += (" LLM calls and tokens are the variant's own; cached calls were answered from the LLM "
                 "cache and count the tokens they took when first made.")
    return note


def questions_cell(c: Comparison | None) -> str:
    """The "questions needed" cell of the markdown and HTML tables (see :attr:`Comparison.questions_status`)."""
    if c is None:
        return ""
    status = c.questions_status
    if status == "baseline":
        return "—"
    if status == "separated":
        return f"already separated (n={c.n_pairs})"
    if status == "no_difference":
        return "— no difference observed"
    if status == "not_separated":
        return f"{c.questions_needed} (have {c.n_pairs})"
    return ""


def questions_note(alpha: float) -> str:
    """How to read the questions-needed column."""
    return (f"Questions needed: paired questions a test would need to separate the variant from the baseline "
            f"with power 0.8 if the true difference were the one observed, at alpha={alpha:g} split over the "
            f"variants compared (Bonferroni, enough for the Holm test above); normal approximation with "
            f"Guenther's t correction, from the mean and SD of the paired differences. "
            f"\"N (have n)\" on a tie: about N - n more questions would be needed (then test once on the "
            f"larger set, not after every addition); \"already separated\": the test separates it at the n it "
            f"has. A planning figure from an observed difference: treat it as an order of magnitude.")


def shown(rows: Sequence[Row], top: int | None) -> list[Row]:
    """The first ``top`` rows, plus the baseline when it is further down (``None``: all)."""
    if top is None or top >= len(rows):
        return list(rows)
    head = list(rows[:top])
    head += [r for r in rows[top:] if r.comparison is not None and r.comparison.verdict == "baseline"]
    return head
