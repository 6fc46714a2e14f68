"""The leaderboard: a row per variant, a mean with a 95% bootstrap CI and counts per metric, best first.

Built from the per-sample ``scores.jsonl`` of every job folder below a sweep folder, so it can be
rebuilt at any time (``ragsweep board DIR``) and never depends on a job's own summary arithmetic.
Every variant is compared with a baseline (default: the best mean) on the ordering metric, paired by
sample (:mod:`harness.compare`); the table marks what is significantly worse and what ties.
Failed jobs (``error.json``) are listed at the bottom with their error.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from ragsweep.harness.cache import atomic_write
from ragsweep.harness.compare import Comparison, compare
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.values import summarise

log = logging.getLogger(__name__)

# Column order of the metrics on the board; anything else found in the scores follows, sorted.
PREFERRED = ("ndcg@k", "recall@k", "mrr@k", "map@k", "hit@k", "precision@k",
             "span_recall@k", "span_precision@k", "span_iou@k")


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


def _read_scores(path: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """variant -> metric -> score rows."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from exc
            out.setdefault(row["variant"], {}).setdefault(row["metric"], []).append(row)
    return out


def collect(sweep_dir: str | Path, seed: int = 0) -> list[Row]:
    """Every variant of every job below ``sweep_dir`` (a sweep folder or a single job folder)."""
    root = Path(sweep_dir)
    if not root.is_dir():
        raise InputError(f"{root}: sweep folder not found")
    rows: list[Row] = []
    for summary_file in sorted(root.rglob("summary.json")):
        summary = json.loads(summary_file.read_text(encoding="utf-8"))
        scores = _read_scores(summary_file.parent / "scores.jsonl")
        for v in summary["variants"]:
            by_metric = scores.get(v["variant"], {})
            stats = {m: summarise(((x["status"], x["value"]) for x in r), seed) for m, r in by_metric.items()}
            samples = {m: {x["sample_id"]: (x["value"] if x["status"] == "ok" else None) for x in r}
                       for m, r in by_metric.items()}
            cost = {**summary.get("cost", {}), **v.get("cost", {})}
            rows.append(Row(v["variant"], v["params"], stats, cost, str(summary_file.parent), samples=samples))
    for error_file in sorted(root.rglob("error.json")):
        err = json.loads(error_file.read_text(encoding="utf-8"))
        rows.append(Row(error_file.parent.name, {}, job=str(error_file.parent), error=err.get("error")))
    if not rows:
        raise InputError(f"{root}: no job results (summary.json) below this folder")
    return rows


def metric_names(rows: Sequence[Row]) -> list[str]:
    found = {m for r in rows for m in r.stats}
    return [m for m in PREFERRED if m in found] + sorted(found - set(PREFERRED))


def higher_is_better(metric: str) -> bool:
    """Direction from the metric catalogue; the retrieval metrics (``*@k``) are all higher-better."""
    from ragsweep.metrics.catalogue import catalogue

    spec = catalogue().get(metric)
    return True if spec is None else bool(spec.higher_is_better)


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
COSTS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("seconds", lambda c: round(c["seconds"]["total"], 3) if "total" in c.get("seconds", {}) else None),
    ("embedded_texts", lambda c: c.get("embedded_texts")),
    ("llm_calls", lambda c: c.get("llm_calls")),
    ("llm_cached_calls", lambda c: c.get("llm_cached_calls")),
    ("llm_prompt_tokens", lambda c: c.get("llm_prompt_tokens")),
    ("llm_completion_tokens", lambda c: c.get("llm_completion_tokens")),
)


def cost_columns(rows: Sequence[Row]) -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """The cost columns some row has a value for (``seconds`` and ``embedded_texts`` always)."""
    return [(n, f) for n, f in COSTS
            if n in ("seconds", "embedded_texts") or any(f(r.cost) is not None for r in rows)]


def cost_note(rows: Sequence[Row]) -> str:
    """What the cost columns count, for the markdown and HTML pages."""
    note = "Seconds and embedded texts are per job: the top-K variants of one job share one search."
    if any(n == "llm_calls" for n, _ in cost_columns(rows)):
        note += (" LLM calls and tokens are the variant's own; cached calls were answered from the LLM "
                 "cache and count the tokens they took when first made.")
    return note


def to_csv(rows: Sequence[Row], metrics: Sequence[str]) -> str:
    params = sorted({k for r in rows for k in r.params})
    costs = cost_columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf)
    head = ["rank", "variant", *params]
    for m in metrics:
        head += [m, f"{m}_ci_low", f"{m}_ci_high", f"{m}_n_ok", f"{m}_n_undefined", f"{m}_n_error"]
    head += ["baseline", "diff", "diff_ci_low", "diff_ci_high", "n_pairs", "p", "p_holm", "verdict"]
    w.writerow(head + [n for n, _ in costs] + ["error", "job"])
    for i, r in enumerate(rows, 1):
        line: list[Any] = [i, r.variant, *(r.params.get(p, "") for p in params)]
        for m in metrics:
            s = r.stats.get(m, {})
            line += [s.get("mean"), s.get("ci_low"), s.get("ci_high"), s.get("n_ok", 0),
                     s.get("n_undefined", 0), s.get("n_error", 0)]
        c = r.comparison
        line += ([c.baseline, c.diff, c.ci_low, c.ci_high, c.n_pairs, c.p, c.p_holm, c.verdict]
                 if c else [""] * 8)
        line += [f(r.cost) for _, f in costs] + [r.error or "", r.job]
        w.writerow(["" if v is None else v for v in line])
    return buf.getvalue()


def _cell(s: dict[str, Any]) -> str:
    if not s or s.get("mean") is None:
        return "undefined" if s else ""
    text = f"{s['mean']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"
    bad = s.get("n_undefined", 0) + s.get("n_error", 0)
    return text + (f" (n={s['n_ok']}, {s['n_error']} err, {s['n_undefined']} undef)" if bad else "")


def _vs(c: Comparison | None) -> str:
    if c is None or c.verdict in ("n/a", "baseline"):
        return "baseline ★" if c is not None and c.verdict == "baseline" else ""
    return f"{c.diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}] p={c.p_holm:.3g} {c.mark} {c.verdict}"


def shown(rows: Sequence[Row], top: int | None) -> list[Row]:
    """The first ``top`` rows, plus the baseline when it is further down (``None``: all)."""
    if top is None or top >= len(rows):
        return list(rows)
    head = list(rows[:top])
    head += [r for r in rows[top:] if r.comparison is not None and r.comparison.verdict == "baseline"]
    return head


def to_markdown(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, top: int | None = None,
                alpha: float = 0.05) -> str:
    params = varying_params(rows)
    n = max((s.get("n_ok", 0) + s.get("n_undefined", 0) + s.get("n_error", 0)
             for r in rows for s in r.stats.values()), default=0)
    base = next((r.variant for r in rows if r.comparison and r.comparison.verdict == "baseline"), None)
    costs = [name for name, _ in cost_columns(rows)]
    lines = [f"# Leaderboard ({len(rows)} variants, {n} samples each, sorted by {sort_by})", "",
             f"Each cell: mean [95% bootstrap CI]. `@k` is at the variant's own top_k. {cost_note(rows)}", ""]
    if base:
        lines += [f"`vs baseline`: {sort_by} difference to the baseline ★ [paired bootstrap 95% CI], "
                  f"Holm-adjusted paired randomisation p; ▼ significantly worse, ▲ better, ≈ tie "
                  f"(alpha={alpha:g}). Baseline: `{base}`.", ""]
    lines.append("| # | " + " | ".join(params + list(metrics) + ["vs baseline"] + costs) + " |")
    lines.append("|" + "---|" * (len(params) + len(metrics) + len(costs) + 2))
    for r in shown(rows, top):
        i = rows.index(r) + 1
        if r.error:
            lines.append(f"| {i} | failed: {r.error} ({r.job}) |")
            continue
        cells = [str(r.params.get(p, "")) for p in params] + [_cell(r.stats.get(m, {})) for m in metrics]
        cells += [_vs(r.comparison)] + ["" if (v := f(r.cost)) is None else str(v) for _, f in cost_columns(rows)]
        lines.append(f"| {i} | " + " | ".join(cells) + " |")
    if top is not None and len(rows) > top:
        lines += ["", f"{len(rows) - top} more rows in leaderboard.csv (shown: top {top})."]
    return "\n".join(lines) + "\n"


def build(sweep_dir: str | Path, sort_by: str = "ndcg@k", seed: int = 0, *, baseline: str | None = None,
          alpha: float = 0.05, n_resamples: int = 10000, top: int | None = None,
          html: bool = True) -> dict[str, Path]:
    """Write ``leaderboard.{csv,md,html}`` into ``sweep_dir``; return their paths.

    Args:
        sweep_dir: A sweep folder (or one job folder).
        sort_by: The metric that orders the rows and that the comparisons are made on.
        seed: Seed of every bootstrap and randomisation test.
        baseline: The variant compared with; ``None``: the best mean of ``sort_by``.
        alpha: Family-wise error rate of the Holm-corrected tests.
        n_resamples: Resamples of the paired bootstrap and the randomisation test.
        top: Show only the best ``top`` rows in the markdown and HTML tables (the CSV keeps all).
        html: Also write the self-contained HTML page.
    """
    root = Path(sweep_dir)
    rows = collect(root, seed)
    metrics = metric_names(rows)
    if sort_by not in metrics:
        raise InputError(f"leaderboard.sort_by={sort_by!r} is not a metric of this sweep: {', '.join(metrics)}")
    rows = rank(rows, sort_by)
    attach_comparisons(rows, sort_by, baseline=baseline, alpha=alpha, n_resamples=n_resamples, seed=seed)
    out = {"csv": root / "leaderboard.csv", "md": root / "leaderboard.md"}
    texts = {"csv": to_csv(rows, metrics), "md": to_markdown(rows, metrics, sort_by, top, alpha)}
    if html:
        from ragsweep.harness.report_html import render

        out["html"] = root / "leaderboard.html"
        texts["html"] = render(rows, metrics, sort_by, title=str(root), top=top, alpha=alpha, seed=seed)
    for kind, path in out.items():
        atomic_write(path, lambda tmp, text=texts[kind]: Path(tmp).write_text(text, encoding="utf-8"))
    return out


class LeaderboardCallback(Callback):
    """Builds the leaderboard when a multirun ends (in the launching process, whatever the launcher)."""

    def __init__(self, sort_by: str = "ndcg@k", seed: int = 0, baseline: str | None = None,
                 alpha: float = 0.05, top: int | None = None) -> None:
        self.sort_by, self.seed, self.baseline, self.alpha, self.top = sort_by, seed, baseline, alpha, top

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            paths = build(config.hydra.sweep.dir, self.sort_by, self.seed, baseline=self.baseline,
                          alpha=self.alpha, top=self.top)
        except InputError as exc:
            log.error("no leaderboard: %s", exc)
            return
        print(Path(paths["md"]).read_text(encoding="utf-8"))
        print("leaderboard: " + "\n             ".join(str(p) for p in paths.values()))
