"""``leaderboard.html``: one self-contained page (inline CSS, SVG and a few lines of JS; no CDN).

The page must open from a file on a machine without network, so every plot is inline SVG (drawn by
``harness/board/plots.py``) and nothing is loaded from anywhere. Sections: the table (marks, CIs, counts, costs), the CI and
difference-to-baseline plots of the ordering metric, the ordering metric against the context budget
(or top-K) with a line per job, against search latency with its Pareto front, per-metric plots
against top-K and chunk size (a heatmap when both vary), the cost per job, and the failed jobs.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from ragsweep.harness.board.compare import MARKS
from ragsweep.harness.board.model import (
    COSTS,
    Row,
    cost_columns,
    cost_note,
    higher_is_better,
    questions_cell,
    questions_note,
    shown,
    varying_params,
)
from ragsweep.harness.board.plots import (
    PALETTE,
    band_chart,
    esc,
    forest,
    front_scatter,
    heatmap,
    line_chart,
    svg,
    svg_text,
)

MAX_SERIES = 8      # lines per chart; more are unreadable (the best ones are kept)
MAX_FOREST = 60     # variants in a CI plot
MAX_HEATMAPS = 4    # heatmaps per metric (one per combination of the other parameters)
AXES = ("top_k", "chunker.size")
CUT_PARAMS = ("top_k", "budget", "budget_unit")  # what tells a job's variants apart
LATENCY = dict(COSTS)["latency_p50_ms"]
AGAINST_NOTE = {
    "budget": "A line per job (its parameters but the budget), the band its 95% CI. At one budget every variant "
              "passes on the same amount of text, so chunkers and chunk sizes are compared on what the LLM would read.",
    "top_k": "A line per job (its parameters but top-K), the band its 95% CI. At one top-K, bigger chunks pass on "
             "more text, so they win rank metrics partly by size: compare chunk sizes at an equal budget.",
}

CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:17px;
margin-top:28px}table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right;
white-space:nowrap}th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}td.l,th.l{text-align:left}
.plots{display:flex;flex-wrap:wrap;gap:12px}svg.plot{background:#fff;border:1px solid #e4e4e4}.note{color:#666}
.worse{color:#d1495b}.better{color:#2e933c}.tie{color:#777}.baseline{color:#1b6ca8;font-weight:600}"""

# Click a header to sort by it (numbers numerically); the only script on the page.
JS = """document.querySelectorAll('table.board th').forEach(function(th,i){th.addEventListener('click',function(){
var tb=th.closest('table').tBodies[0],rows=Array.prototype.slice.call(tb.rows),asc=th.dataset.asc!=='1';
th.dataset.asc=asc?'1':'0';rows.sort(function(a,b){var x=a.cells[i].dataset.v||a.cells[i].textContent,
y=b.cells[i].dataset.v||b.cells[i].textContent,nx=parseFloat(x),ny=parseFloat(y);
var c=(isNaN(nx)||isNaN(ny))?x.localeCompare(y):nx-ny;return asc?c:-c;});
rows.forEach(function(r){tb.appendChild(r);});});});"""


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "" if x is None else format(x, fmt)


def _natural(text: str) -> list[Any]:
    """Sort key that orders "top_k=3" before "top_k=10"."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text)]


def _label(r: Row, keys: Sequence[str]) -> str:
    """The row's values of ``keys``, leaving out the ones it does not have (``index`` of a BM25 job)."""
    return ", ".join(f"{k}={r.params[k]}" for k in keys if r.params.get(k) is not None) or r.variant


def _table(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, top: int | None) -> str:
    params = varying_params(rows)
    costs = cost_columns(rows)
    head = (["#", "", *params, f"{sort_by} [95% CI]", "vs baseline [CI]", "p (Holm)", "questions needed", "n_ok", "n_undef", "n_error"]
            + [m for m in metrics if m != sort_by] + [n for n, _ in costs])
    out = ['<table class="board"><thead><tr>'
           + "".join(f'<th class="{"l" if h in params else ""}">{esc(h)}</th>' for h in head) + "</tr></thead><tbody>"]
    for r in shown(rows, top):
        i = rows.index(r) + 1
        if r.error:
            out.append(f'<tr><td>{i}</td><td></td><td class="l" colspan="{len(head) - 2}">failed: {esc(r.error)}</td></tr>')
            continue
        s, c = r.stats.get(sort_by, {}), r.comparison
        verdict = c.verdict if c else "n/a"
        cells = [f"<td>{i}</td>", f'<td class="{verdict}" title="{verdict}">{MARKS.get(verdict, "")}</td>']
        cells += [f'<td class="l">{esc(r.params.get(p, ""))}</td>' for p in params]
        cells.append(f'<td data-v="{_f(s.get("mean"))}">{_f(s.get("mean"))} [{_f(s.get("ci_low"))}, '
                     f'{_f(s.get("ci_high"))}]</td>')
        if c is not None and c.diff is not None and verdict != "baseline":
            cells.append(f'<td class="{verdict}" data-v="{c.diff}">{c.diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}]</td>'
                         f'<td data-v="{c.p_holm}">{c.p_holm:.3g}</td>')
        else:
            cells.append(f'<td class="{verdict}">{"baseline" if verdict == "baseline" else ""}</td><td></td>')
        needed = c.questions_needed if c is not None and c.questions_status == "not_separated" else ""
        cells.append(f'<td data-v="{needed}">{esc(questions_cell(c))}</td>')
        cells += [f"<td>{s.get(k, 0)}</td>" for k in ("n_ok", "n_undefined", "n_error")]
        for m in metrics:
            if m != sort_by:
                ms = r.stats.get(m, {})
                cells.append(f'<td title="95% CI [{_f(ms.get("ci_low"))}, {_f(ms.get("ci_high"))}]">{_f(ms.get("mean"))}</td>')
        cells += [f"<td>{esc('' if (v := f(r.cost)) is None else v)}</td>" for _, f in costs]
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out) + "</tbody></table>"


def metric_plots(rows: Sequence[Row], metric: str) -> list[str]:
    """Score against top-K and against chunk size; a heatmap per group when both vary."""
    ok = [r for r in rows if r.error is None and r.stats.get(metric, {}).get("mean") is not None]
    varying = varying_params(ok)
    axes = [a for a in AXES if a in varying]
    others = [p for p in varying if p not in AXES]
    plots: list[str] = []
    for axis in axes:
        rest = [p for p in varying if p != axis]
        groups: dict[str, dict[Any, tuple[float, float, float]]] = {}
        for r in ok:
            if r.params.get(axis) is None:  # a budget variant beside top-K ones has no top-K to plot at
                continue
            s = r.stats[metric]
            groups.setdefault(_label(r, rest) if rest else "all", {})[r.params.get(axis)] = (
                s["mean"], s["ci_low"], s["ci_high"])
        if not groups:
            continue
        best = sorted(groups.items(), key=lambda kv: -max(m for m, _, _ in kv[1].values()))[:MAX_SERIES]
        # Drawn in natural label order, so a series keeps its colour from one metric to the next.
        plots.append(line_chart(f"{metric} vs {axis}", axis, metric, sorted(best, key=lambda kv: _natural(kv[0]))))
    if len(axes) == 2:
        grids: dict[str, dict[tuple[Any, Any], float]] = {}
        for r in ok:
            grids.setdefault(_label(r, others) if others else "", {})[
                (r.params.get("top_k"), r.params.get("chunker.size"))] = r.stats[metric]["mean"]
        for name, cells in sorted(grids.items(), key=lambda kv: -max(kv[1].values()))[:MAX_HEATMAPS]:
            plots.append(heatmap(f"{metric}{': ' + name if name else ''}", "top_k", "chunker.size", cells))
    return plots


def pareto_front(points: Sequence[tuple[float, float]], higher_is_better: bool = True) -> list[int]:
    """Indices of the points that no other point beats on both cost and quality.

    A point is beaten when another one costs as much or less and is at least as good, and is
    strictly better on one of the two. Equal points do not beat each other, so they all stay.

    Args:
        points: ``(cost, quality)`` per variant, e.g. search latency in ms and a metric's mean.
        higher_is_better: The quality's direction; a lower cost is always better.

    Returns:
        The indices on the front, cheapest first.
    """
    sign = 1.0 if higher_is_better else -1.0
    # Cheapest first and, at one cost, best first: a point is on the front when it is the best of its
    # cost and strictly better than everything cheaper.
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -sign * points[i][1], i))
    front: list[int] = []
    best = -math.inf
    for _, same_cost in itertools.groupby(order, key=lambda i: points[i][0]):
        group = list(same_cost)
        top = sign * points[group[0]][1]
        if top > best:
            front += [i for i in group if sign * points[i][1] == top]
            best = top
    return front


def quality_against(rows: Sequence[Row], metric: str, axis: str) -> list[str]:
    """``metric`` against ``axis`` (``budget`` or ``top_k``): a line per job, the variants whose
    parameters but the axis are equal, named by the parameters that differ between the lines; one chart
    per budget unit, none when the axis has a single value."""
    unit_key, sign = f"{axis}_unit", 1.0 if higher_is_better(metric) else -1.0
    ok = [r for r in rows if r.error is None and isinstance(r.params.get(axis), (int, float))
          and r.stats.get(metric, {}).get("mean") is not None]
    charts = []
    for unit in sorted({str(r.params.get(unit_key, "")) for r in ok}):
        sub = [r for r in ok if str(r.params.get(unit_key, "")) == unit]
        if len({r.params[axis] for r in sub}) < 2:
            continue
        keys = [k for k in varying_params(sub) if k not in (axis, unit_key)]
        jobs: dict[str, list[Row]] = {}
        for r in sub:
            job = {k: v for k, v in r.params.items() if k not in (axis, unit_key)}
            jobs.setdefault(json.dumps(job, sort_keys=True, default=str), []).append(r)
        best = sorted(jobs.values(), key=lambda rs: -max(sign * r.stats[metric]["mean"] for r in rs))[:MAX_SERIES]
        series = [(_label(rs[0], keys) if keys else "all",
                   sorted((r.params[axis], *(r.stats[metric][k] for k in ("mean", "ci_low", "ci_high"))) for r in rs))
                  for rs in best]
        xlabel = f"{axis} ({unit})" if unit else axis
        charts.append(band_chart(f"{metric} against {axis}", xlabel, metric,
                                 sorted(series, key=lambda kv: _natural(kv[0]))))
    return charts


def latency_section(rows: Sequence[Row], metric: str) -> tuple[list[str], list[str]]:
    """``metric`` against search latency (p50), a point per variant with its Pareto front, and the
    notes under it; and the front's variant names. Nothing when no variant has a latency."""
    ok = [r for r in rows if r.error is None and r.stats.get(metric, {}).get("mean") is not None]
    timed = [(r, float(lat)) for r in ok if (lat := LATENCY(r.cost)) is not None]
    if not timed:
        return [], []
    higher = higher_is_better(metric)
    front = pareto_front([(lat, r.stats[metric]["mean"]) for r, lat in timed], higher)
    keys = varying_params([r for r, _ in timed])
    points = []
    for r, lat in timed:
        s, p95 = r.stats[metric], (r.cost.get("latency") or {}).get("p95_ms")
        tip = (f"{_label(r, keys)}: {metric} {s['mean']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}], "
               f"latency p50 {lat:g} ms" + (f", p95 {p95:g} ms" if p95 is not None else ""))
        points.append((lat, s["mean"], s["ci_low"], s["ci_high"], tip))
    listed = [f"{n}. {esc(_label(timed[i][0], keys))} — "
              f"{points[i][1]:.3f} at {points[i][0]:g} ms" for n, i in enumerate(front, 1)]
    more = f"; and {len(listed) - 12} more." if len(listed) > 12 else "."
    parts = [front_scatter(f"{metric} against search latency", "latency p50 per query (ms)", metric, points, front),
             f'<p class="note">● <b>Pareto front</b>: the variants that no other one beats on both {esc(metric)} '
             f'({"higher" if higher else "lower"} is better) and latency, the ones worth considering at each '
             f"latency: {'; '.join(listed[:12])}{more}</p>"]
    if len(timed) < len(ok):
        parts.append(f'<p class="note">{len(ok) - len(timed)} of {len(ok)} variants have no latency figure and are '
                     f"left out of this chart.</p>")
    return parts, [timed[i][0].variant for i in front]


def _cost_plot(rows: Sequence[Row]) -> str:
    """Seconds per stage of every job (stacked), the real cost of a variant's job."""
    jobs = {r.job: r for r in rows if r.error is None and r.cost.get("seconds")}
    if not jobs:
        return ""
    stages = sorted({k for r in jobs.values() for k in r.cost["seconds"] if k != "total"})
    keys = [p for p in varying_params(list(jobs.values())) if p not in CUT_PARAMS]
    w, left, top, rh = 640, 250, 30, 18
    h = top + rh * len(jobs) + 40
    longest = max(r.cost["seconds"].get("total", 0.0) for r in jobs.values()) or 1.0
    body = [svg_text(w / 2, 16, "seconds per job, by stage", size=13, extra='font-weight="600"')]
    for i, r in enumerate(jobs.values()):
        x, y = float(left), top + i * rh
        body.append(svg_text(left - 6, y + 12, _label(r, keys)[-38:], anchor="end", size=10))
        for n, st in enumerate(stages):
            width = r.cost["seconds"].get(st, 0.0) / longest * (w - left - 80)
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{rh - 4}" '
                        f'fill="{PALETTE[n % len(PALETTE)]}"><title>{esc(st)}: {r.cost["seconds"].get(st, 0.0):.2f} s</title></rect>')
            x += width
        body.append(svg_text(x + 4, y + 12, f"{r.cost['seconds'].get('total', 0.0):.1f} s", anchor="start", size=10))
    for n, st in enumerate(stages):
        body.append(f'<rect x="{left + n * 90}" y="{h - 22}" width="10" height="10" fill="{PALETTE[n % len(PALETTE)]}"/>')
        body.append(svg_text(left + n * 90 + 14, h - 13, st, anchor="start", size=10))
    return svg(w, h, body, "seconds per job")


def render(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, *, title: str,
           top: int | None = None, alpha: float = 0.05, seed: int = 0) -> str:
    """The whole page as one string (rows already ranked, comparisons attached)."""
    ok = [r for r in rows if r.error is None and r.stats.get(sort_by, {}).get("mean") is not None]
    base = next((r.comparison.baseline for r in ok if r.comparison), None)
    n = max((s.get("n_ok", 0) + s.get("n_undefined", 0) + s.get("n_error", 0)
             for r in rows for s in r.stats.values()), default=0)
    keys = varying_params(ok)
    ci = [(_label(r, keys), r.stats[sort_by]["mean"], r.stats[sort_by]["ci_low"], r.stats[sort_by]["ci_high"],
           r.comparison.verdict if r.comparison else "n/a") for r in ok[:MAX_FOREST]]
    diffs = [(_label(r, keys), r.comparison.diff, r.comparison.ci_low, r.comparison.ci_high, r.comparison.verdict)
             for r in ok[:MAX_FOREST] if r.comparison and r.comparison.diff is not None]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ragsweep leaderboard</title>"
             f"<style>{CSS}</style></head><body><h1>ragsweep leaderboard</h1>",
             f'<p class="note">{esc(title)} — {len(rows)} variants, {n} samples each, sorted by <b>{esc(sort_by)}</b>. '
             f"Baseline ★ <code>{esc(base)}</code>; paired bootstrap 95% CI of the difference, paired randomisation "
             f"test, Holm-corrected at alpha={alpha:g} (seed {seed}): ▼ significantly worse, ▲ better, ≈ tie. "
             f"{esc(cost_note(rows))}</p>",
             '<p><a href="explorer.html">Open every question</a>: what each variant retrieved, where the evidence '
             "was, what it answered and why each metric scored it so.</p>",
             _table(rows, metrics, sort_by, top), f'<p class="note">{esc(questions_note(alpha))}</p>']
    if top is not None and len(rows) > top:
        parts.append(f'<p class="note">{len(rows) - top} more rows in leaderboard.csv (shown: top {top}).</p>')
    if ci:
        parts += ["<h2>Confidence intervals</h2><div class=\"plots\">",
                  forest(f"{sort_by}: mean [95% CI]", ci),
                  forest(f"{sort_by}: difference to the baseline [paired 95% CI]", diffs, zero=0.0) if diffs else "",
                  "</div>"]
    for axis, name in (("budget", "budget"), ("top_k", "top-K")):
        if charts := quality_against(rows, sort_by, axis):
            parts += [f"<h2>Quality against {name}</h2>", f'<p class="note">{esc(AGAINST_NOTE[axis])}</p>',
                      '<div class="plots">', *charts, "</div>"]
    latency, front = latency_section(rows, sort_by)
    if latency:
        parts += ["<h2>Quality against latency</h2>", '<div class="plots">', latency[0], "</div>", *latency[1:]]
    for m in metrics:
        plots = metric_plots(rows, m)
        if plots:
            parts += [f"<h2>{esc(m)}</h2><div class=\"plots\">", *plots, "</div>"]
    cost = _cost_plot(rows)
    if cost:
        parts += ["<h2>Cost</h2><div class=\"plots\">", cost, "</div>"]
    failed = [r for r in rows if r.error]
    if failed:
        parts.append("<h2>Failed jobs</h2><ul>" + "".join(f"<li>{esc(r.job)}: {esc(r.error)}</li>" for r in failed) + "</ul>")
    # Machine-readable facts of the page; "</" escaped so the JSON cannot close the script element.
    data = json.dumps({"sort_by": sort_by, "baseline": base, "alpha": alpha, "seed": seed,
                       "pareto_front": front}).replace("</", "<\\/")
    parts.append(f'<script type="application/json" id="meta">{data}</script><script>{JS}</script></body></html>')
    return "\n".join(parts)
