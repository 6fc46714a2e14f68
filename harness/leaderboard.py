"""The leaderboard: a row per variant, a mean with a 95% bootstrap CI and counts per metric, best first.

Built from the per-sample ``scores.jsonl`` of every job folder below a sweep folder, so it can be
rebuilt at any time (``ragsweep board DIR``) and never depends on a job's own summary arithmetic.
Failed jobs (``error.json``) are listed at the bottom with their error.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from harness.cache import atomic_write
from metrics.errors import InputError
from metrics.values import summarise

log = logging.getLogger(__name__)

# Column order of the metrics on the board; anything else found in the scores follows, sorted.
PREFERRED = ("ndcg@k", "recall@k", "mrr@k", "map@k", "hit@k", "precision@k",
             "span_recall@k", "span_precision@k", "span_iou@k")


@dataclass
class Row:
    """One variant: its parameters, per-metric statistics, cost, and the job it came from."""

    variant: str
    params: dict[str, Any]
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    cost: dict[str, Any] = field(default_factory=dict)
    job: str = ""
    error: str | None = None


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
            stats = {m: summarise(((x["status"], x["value"]) for x in r), seed) for m, r in scores.get(v["variant"], {}).items()}
            rows.append(Row(v["variant"], v["params"], stats, summary.get("cost", {}), str(summary_file.parent)))
    for error_file in sorted(root.rglob("error.json")):
        err = json.loads(error_file.read_text(encoding="utf-8"))
        rows.append(Row(error_file.parent.name, {}, job=str(error_file.parent), error=err.get("error")))
    if not rows:
        raise InputError(f"{root}: no job results (summary.json) below this folder")
    return rows


def metric_names(rows: Sequence[Row]) -> list[str]:
    found = {m for r in rows for m in r.stats}
    return [m for m in PREFERRED if m in found] + sorted(found - set(PREFERRED))


def rank(rows: list[Row], sort_by: str) -> list[Row]:
    """Best first by the mean of ``sort_by``; variants without a value and failed jobs last."""
    def key(r: Row) -> tuple[int, float, str]:
        mean = r.stats.get(sort_by, {}).get("mean")
        return (0, -mean, r.variant) if mean is not None else (1, 0.0, r.variant)

    return sorted(rows, key=key)


def varying_params(rows: Sequence[Row]) -> list[str]:
    """Parameters that differ between variants (all of them when there is one variant)."""
    keys: list[str] = []
    for r in rows:
        keys.extend(k for k in r.params if k not in keys)
    ok = [r for r in rows if r.error is None]
    if len(ok) <= 1:
        return keys
    return [k for k in keys if len({json.dumps(r.params.get(k)) for r in ok}) > 1]


def to_csv(rows: Sequence[Row], metrics: Sequence[str]) -> str:
    params = sorted({k for r in rows for k in r.params})
    buf = io.StringIO()
    w = csv.writer(buf)
    head = ["rank", "variant", *params]
    for m in metrics:
        head += [m, f"{m}_ci_low", f"{m}_ci_high", f"{m}_n_ok", f"{m}_n_undefined", f"{m}_n_error"]
    w.writerow(head + ["seconds", "embedded_texts", "error", "job"])
    for i, r in enumerate(rows, 1):
        line: list[Any] = [i, r.variant, *(r.params.get(p, "") for p in params)]
        for m in metrics:
            s = r.stats.get(m, {})
            line += [s.get("mean"), s.get("ci_low"), s.get("ci_high"), s.get("n_ok", 0),
                     s.get("n_undefined", 0), s.get("n_error", 0)]
        line += [round(r.cost.get("seconds", {}).get("total", 0.0), 3), r.cost.get("embedded_texts", ""),
                 r.error or "", r.job]
        w.writerow(["" if v is None else v for v in line])
    return buf.getvalue()


def _cell(s: dict[str, Any]) -> str:
    if not s or s.get("mean") is None:
        return "undefined" if s else ""
    text = f"{s['mean']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"
    bad = s.get("n_undefined", 0) + s.get("n_error", 0)
    return text + (f" (n={s['n_ok']}, {s['n_error']} err, {s['n_undefined']} undef)" if bad else "")


def to_markdown(rows: Sequence[Row], metrics: Sequence[str], sort_by: str) -> str:
    params = varying_params(rows)
    n = max((s.get("n_ok", 0) + s.get("n_undefined", 0) + s.get("n_error", 0)
             for r in rows for s in r.stats.values()), default=0)
    lines = [f"# Leaderboard ({len(rows)} variants, {n} samples each, sorted by {sort_by})", "",
             "Each cell: mean [95% bootstrap CI]. `@k` is at the variant's own top_k.", ""]
    lines.append("| # | " + " | ".join(params + list(metrics)) + " | seconds |")
    lines.append("|" + "---|" * (len(params) + len(metrics) + 2))
    for i, r in enumerate(rows, 1):
        if r.error:
            lines.append(f"| {i} | failed: {r.error} ({r.job}) |")
            continue
        cells = [str(r.params.get(p, "")) for p in params] + [_cell(r.stats.get(m, {})) for m in metrics]
        lines.append(f"| {i} | " + " | ".join(cells) + f" | {r.cost.get('seconds', {}).get('total', 0):.1f} |")
    return "\n".join(lines) + "\n"


def build(sweep_dir: str | Path, sort_by: str = "ndcg@k", seed: int = 0) -> dict[str, Path]:
    """Write ``leaderboard.csv`` and ``leaderboard.md`` into ``sweep_dir``; return their paths."""
    root = Path(sweep_dir)
    rows = collect(root, seed)
    metrics = metric_names(rows)
    if sort_by not in metrics:
        raise InputError(f"leaderboard.sort_by={sort_by!r} is not a metric of this sweep: {', '.join(metrics)}")
    rows = rank(rows, sort_by)
    out = {"csv": root / "leaderboard.csv", "md": root / "leaderboard.md"}
    atomic_write(out["csv"], lambda tmp: Path(tmp).write_text(to_csv(rows, metrics), encoding="utf-8"))
    atomic_write(out["md"], lambda tmp: Path(tmp).write_text(to_markdown(rows, metrics, sort_by), encoding="utf-8"))
    return out


class LeaderboardCallback(Callback):
    """Builds the leaderboard when a multirun ends (in the launching process, whatever the launcher)."""

    def __init__(self, sort_by: str = "ndcg@k", seed: int = 0) -> None:
        self.sort_by, self.seed = sort_by, seed

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            paths = build(config.hydra.sweep.dir, self.sort_by, self.seed)
        except InputError as exc:
            log.error("no leaderboard: %s", exc)
            return
        print(Path(paths["md"]).read_text(encoding="utf-8"))
        print(f"leaderboard: {paths['md']}\n             {paths['csv']}")
