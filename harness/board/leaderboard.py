"""The leaderboard files: a row per variant, a mean with a 95% bootstrap CI and counts per metric, best first.

The rows come from :mod:`ragsweep.harness.board.model` (rebuilt from the per-sample scores at any time,
``ragsweep board DIR``). Every variant is compared with a baseline (default: the best mean) on the
ordering metric, paired by sample (:mod:`harness.compare`); the table marks what is significantly
worse and what ties. Failed jobs (``error.json``) are listed at the bottom with their error.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from ragsweep.harness.board import explorer
from ragsweep.harness.board.compare import Comparison
from ragsweep.harness.board.html import render
from ragsweep.harness.board.model import (
    Row,
    attach_comparisons,
    collect,
    cost_columns,
    cost_note,
    metric_names,
    questions_cell,
    questions_note,
    rank,
    shown,
    varying_params,
)
from ragsweep.harness.board.study import study_report
from ragsweep.harness.board.study import to_markdown as study_markdown
from ragsweep.metrics import InputError, staged

log = logging.getLogger(__name__)


def to_csv(rows: Sequence[Row], metrics: Sequence[str]) -> str:
    params = sorted({k for r in rows for k in r.params})
    costs = cost_columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf)
    head = ["rank", "variant", *params]
    for m in metrics:
        head += [m, f"{m}_ci_low", f"{m}_ci_high", f"{m}_n_ok", f"{m}_n_undefined", f"{m}_n_error"]
    head += ["baseline", "diff", "diff_ci_low", "diff_ci_high", "n_pairs", "p", "p_holm", "verdict",
             "questions_needed", "questions_status"]
    w.writerow(head + [n for n, _ in costs] + ["error", "job"])
    for i, r in enumerate(rows, 1):
        line: list[Any] = [i, r.variant, *(r.params.get(p, "") for p in params)]
        for m in metrics:
            s = r.stats.get(m, {})
            line += [s.get("mean"), s.get("ci_low"), s.get("ci_high"), s.get("n_ok", 0),
                     s.get("n_undefined", 0), s.get("n_error", 0)]
        c = r.comparison
        line += ([c.baseline, c.diff, c.ci_low, c.ci_high, c.n_pairs, c.p, c.p_holm, c.verdict,
                  c.questions_needed, c.questions_status] if c else [""] * 10)
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


def to_markdown(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, top: int | None = None,
                alpha: float = 0.05) -> str:
    params = varying_params(rows)
    n = max((s.get("n_ok", 0) + s.get("n_undefined", 0) + s.get("n_error", 0)
             for r in rows for s in r.stats.values()), default=0)
    base = next((r.variant for r in rows if r.comparison and r.comparison.verdict == "baseline"), None)
    costs = [name for name, _ in cost_columns(rows)]
    lines = [f"# Leaderboard ({len(rows)} variants, {n} samples each, sorted by {sort_by})", "",
             f"Each cell: mean [95% bootstrap CI]. {cost_note(rows)}", ""]
    if base:
        lines += [f"`vs baseline`: {sort_by} difference to the baseline ★ [paired bootstrap 95% CI], "
                  f"Holm-adjusted paired randomisation p; ▼ significantly worse, ▲ better, ≈ tie "
                  f"(alpha={alpha:g}). Baseline: `{base}`.", "", questions_note(alpha), ""]
    lines.append("| # | " + " | ".join(params + list(metrics) + ["vs baseline", "questions needed"] + costs) + " |")
    lines.append("|" + "---|" * (len(params) + len(metrics) + len(costs) + 3))
    for r in shown(rows, top):
        i = rows.index(r) + 1
        if r.error:
            lines.append(f"| {i} | failed: {r.error} ({r.job}) |")
            continue
        cells = [str(r.params.get(p, "")) for p in params] + [_cell(r.stats.get(m, {})) for m in metrics]
        cells += [_vs(r.comparison), questions_cell(r.comparison)] + ["" if (v := f(r.cost)) is None else str(v) for _, f in cost_columns(rows)]
        lines.append(f"| {i} | " + " | ".join(cells) + " |")
    if top is not None and len(rows) > top:
        lines += ["", f"{len(rows) - top} more rows in leaderboard.csv (shown: top {top})."]
    return "\n".join(lines) + "\n"


#: The metrics the terminal board shows beside the ordering one, in order of preference (three at most).
KEY_METRICS = ("recall@10", "mrr@10", "span_iou", "token_f1", "faithfulness", "answer_correctness",
               "answer_relevancy", "hit@10")
#: The width the terminal board fits.
WIDTH = 120


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def to_terminal(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, paths: dict[str, Path], *,
                width: int = WIDTH, top: int | None = 20) -> str:
    """The board as a sweep prints it: a row per variant with the ordering metric's mean and CI, up to
    three key metrics and the mark against the baseline, in ``width`` columns; then where the full
    board and the question explorer are. The markdown and CSV boards keep every metric and cost."""
    keys = [m for m in KEY_METRICS if m in metrics and m != sort_by][:3]
    params = varying_params(rows)
    n = max((s.get("n_ok", 0) + s.get("n_undefined", 0) + s.get("n_error", 0)
             for r in rows for s in r.stats.values()), default=0)
    head_cols = [f"{sort_by} [95% CI]".ljust(22)] + [k[:10].rjust(10) for k in keys] + ["vs ★".ljust(16)]
    fixed = 4 + sum(len(c) + 2 for c in head_cols)
    label_width = max(16, width - fixed)

    def label(r: Row) -> str:
        return ", ".join(f"{k}={r.params[k]}" for k in params if r.params.get(k) is not None) or r.variant

    def mean(r: Row, m: str) -> str:
        got = r.stats.get(m, {}).get("mean")
        return "–" if got is None else f"{got:.3f}"

    lines = [_fit(f"Leaderboard: {len(rows)} variants, {n} questions, by {sort_by}. vs ★ baseline: ▼ worse, "
                  "▲ better, ≈ tie (paired, Holm)", width), "",
             _fit(f"{'#':>3} {'variant'.ljust(label_width)}  " + "  ".join(head_cols), width).rstrip()]
    for r in shown(rows, top):
        i = rows.index(r) + 1
        if r.error:
            lines.append(_fit(f"{i:>3} failed: {r.error} ({r.job})", width))
            continue
        s = r.stats.get(sort_by, {})
        ci = "–" if s.get("mean") is None else f"{s['mean']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}]"
        c = r.comparison
        vs = ("" if c is None else "★" if c.verdict == "baseline" else c.mark if c.diff is None
              else f"{c.diff:+.3f} {c.mark}")
        cells = [ci.ljust(22)] + [mean(r, k).rjust(10) for k in keys] + [vs.ljust(16)]
        lines.append(_fit(f"{i:>3} {_fit(label(r), label_width).ljust(label_width)}  " + "  ".join(cells), width)
                     .rstrip())
    if top is not None and len(rows) > top:
        lines.append(f"    … {len(rows) - top} more rows in {paths['md'].name}")
    lines += ["", f"full board (all {len(metrics)} metrics, CIs, costs): {paths['md']}",
              f"                                   also {paths['csv'].name}"
              + (f", {paths['html'].name}" if "html" in paths else "")]
    if "explorer" in paths:
        lines.append(f"every question, variant by variant: {paths['explorer']}")
    return "\n".join(lines)


def build(sweep_dir: str | Path, sort_by: str = "ndcg@10", seed: int = 0, *, baseline: str | None = None,
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
    return rebuild(sweep_dir, sort_by, seed, baseline=baseline, alpha=alpha, n_resamples=n_resamples, top=top,
                   html=html)[2]


def rebuild(sweep_dir: str | Path, sort_by: str = "ndcg@10", seed: int = 0, *, baseline: str | None = None,
            alpha: float = 0.05, n_resamples: int = 10000, top: int | None = None,
            html: bool = True) -> tuple[list[Row], list[str], dict[str, Path]]:
    """:func:`build`, returning the ranked rows and metric columns with the paths (``ragsweep board`` and
    ``ragsweep.board`` both call it)."""
    root = Path(sweep_dir)
    rows, metrics = ranked(root, sort_by, seed, baseline=baseline, alpha=alpha, n_resamples=n_resamples)
    return rows, metrics, write(root, rows, metrics, sort_by, top=top, alpha=alpha, seed=seed, html=html)


def ranked(sweep_dir: str | Path, sort_by: str = "ndcg@10", seed: int = 0, *, baseline: str | None = None,
           alpha: float = 0.05, n_resamples: int = 10000) -> tuple[list[Row], list[str]]:
    """The board's rows, best first by ``sort_by`` (its direction from the metric table), each
    compared with the baseline; and its metric columns."""
    rows = collect(Path(sweep_dir), seed)
    metrics = metric_names(rows)
    if sort_by not in metrics:
        raise InputError(f"leaderboard.sort_by={sort_by!r} is not a metric of this sweep: {', '.join(metrics)}")
    rows = rank(rows, sort_by)
    attach_comparisons(rows, sort_by, baseline=baseline, alpha=alpha, n_resamples=n_resamples, seed=seed)
    return rows, metrics


def write(root: Path, rows: list[Row], metrics: list[str], sort_by: str, *, top: int | None = None,
          alpha: float = 0.05, seed: int = 0, html: bool = True) -> dict[str, Path]:
    """Write ``leaderboard.{csv,md,html}`` of ranked rows into ``root``; return their paths.

    After an Optuna study (``hydra/sweeper=optuna``) also ``search.json``: the study's best trial and
    its mark on this board, which ``leaderboard.md`` ends with (:mod:`harness.search`).
    """
    out = {"csv": root / "leaderboard.csv", "md": root / "leaderboard.md"}
    study = study_report(root, rows, sort_by)
    texts = {"csv": to_csv(rows, metrics),
             "md": to_markdown(rows, metrics, sort_by, top, alpha) + (study_markdown(study) if study else "")}
    if html:
        out["html"] = root / "leaderboard.html"
        texts["html"] = render(rows, metrics, sort_by, title=str(root), top=top, alpha=alpha, seed=seed)
    if html:
        try:
            texts["explorer"] = explorer.page(rows, metrics, sort_by, title=str(root))
            out["explorer"] = root / explorer.FILE
        except InputError as exc:  # the board stands without it; say why the page is missing
            log.warning("no question explorer: %s", exc)
            (root / explorer.FILE).unlink(missing_ok=True)  # an older page would not match the new board
    with staged(root) as into:  # the files together: never a new csv beside an old html
        for kind, path in out.items():
            (into / path.name).write_text(texts[kind], encoding="utf-8")
    if study is not None:
        out["search"] = root / "search.json"
    return out


class LeaderboardCallback(Callback):
    """Builds the leaderboard when a multirun ends (in the launching process, whatever the launcher)."""

    def __init__(self, sort_by: str = "ndcg@10", seed: int = 0, baseline: str | None = None,
                 alpha: float = 0.05, top: int | None = None) -> None:
        self.sort_by, self.seed, self.baseline, self.alpha, self.top = sort_by, seed, baseline, alpha, top

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        root = Path(config.hydra.sweep.dir)
        try:
            rows, metrics = ranked(root, self.sort_by, self.seed, baseline=self.baseline, alpha=self.alpha)
            paths = write(root, rows, metrics, self.sort_by, top=self.top, alpha=self.alpha, seed=self.seed)
        except InputError as exc:
            log.error("no leaderboard: %s", exc)
            return
        print(to_terminal(rows, metrics, self.sort_by, paths))
        print("leaderboard: " + "\n             ".join(str(p) for p in paths.values()))
