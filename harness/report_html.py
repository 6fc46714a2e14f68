"""``leaderboard.html``: one self-contained page (inline CSS, SVG and a few lines of JS; no CDN).

The page must open from a file on a machine without network, so every plot is drawn here as inline
SVG and nothing is loaded from anywhere. Sections: the table (marks, CIs, counts, costs), the CI and
difference-to-baseline plots of the ordering metric, the ordering metric against the context budget
(or top-K) with a line per job, against search latency with its Pareto front, per-metric plots
against top-K and chunk size (a heatmap when both vary), the cost per job, and the failed jobs.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from ragsweep.harness.compare import MARKS
from ragsweep.harness.board import COSTS, Row, cost_columns, cost_note, higher_is_better, shown, varying_params

PALETTE = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6346", "#555555")
VERDICT_COLOUR = {"baseline": "#1b6ca8", "worse": "#d1495b", "better": "#2e933c", "tie": "#777777", "n/a": "#bbbbbb"}
MAX_SERIES = 8      # lines per chart; more are unreadable (the best ones are kept)
MAX_FOREST = 60     # variants in a CI plot
MAX_HEATMAPS = 4    # heatmaps per metric (one per combination of the other parameters)
AXES = ("top_k", "chunker.size")
LOG_SPAN = 4.0      # a numeric axis whose values span more than this factor is drawn on a log scale
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


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _f(x: float | None, fmt: str = ".3f") -> str:
    return "" if x is None else format(x, fmt)


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg class="plot" role="img" aria-label="{_e(label)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
            f'<title>{_e(label)}</title>{"".join(body)}</svg>')


def _text(x: float, y: float, s: Any, anchor: str = "middle", size: int = 11, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {extra}>{_e(s)}</text>'


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def line_chart(title: str, xlabel: str, ylabel: str,
               series: Sequence[tuple[str, dict[Any, tuple[float, float, float]]]]) -> str:
    """Lines of mean with CI error bars; x is categorical (its values evenly spaced, sorted)."""
    xs = sorted({x for _, pts in series for x in pts})
    vals = [v for _, pts in series for p in pts.values() for v in p]
    w, h, left, right, top, bottom = 440, 300, 52, 140, 28, 40
    sx = (lambda x: left + (xs.index(x) + 0.5) * (w - left - right) / len(xs))
    y0, y1 = min(vals), max(vals)
    pad = (y1 - y0) * 0.05 or 0.05
    sy = _scale(y0 - pad, y1 + pad, h - bottom, top)
    body = [_text(w / 2, 16, title, size=13, extra='font-weight="600"'),
            f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="#999"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="#999"/>',
            _text((left + w - right) / 2, h - 6, xlabel), _text(12, (top + h - bottom) / 2, ylabel,
                                                                  extra=f'transform="rotate(-90 12 {(top + h - bottom) / 2})"')]
    for i in range(5):
        v = y0 - pad + i * (y1 - y0 + 2 * pad) / 4
        body.append(_text(left - 4, sy(v) + 4, f"{v:.2f}", anchor="end", size=10))
    for x in xs:
        body.append(_text(sx(x), h - bottom + 14, x, size=10))
    for n, (label, pts) in enumerate(series):
        colour = PALETTE[n % len(PALETTE)]
        ordered = [(x, pts[x]) for x in xs if x in pts]
        path = " ".join(f"{'M' if j == 0 else 'L'}{sx(x):.1f},{sy(m):.1f}" for j, (x, (m, _, _)) in enumerate(ordered))
        body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, (m, lo, hi) in ordered:
            body.append(f'<line x1="{sx(x):.1f}" y1="{sy(lo):.1f}" x2="{sx(x):.1f}" y2="{sy(hi):.1f}" '
                        f'stroke="{colour}" opacity="0.6"/>')
            body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(m):.1f}" r="3" fill="{colour}"><title>'
                        f'{_e(label)} {xlabel}={_e(x)}: {m:.3f} [{lo:.3f}, {hi:.3f}]</title></circle>')
        body.append(f'<rect x="{w - right + 10}" y="{top + n * 16}" width="10" height="10" fill="{colour}"/>')
        body.append(_text(w - right + 24, top + n * 16 + 9, label[:22], anchor="start", size=10))
    return _svg(w, h, body, title)


def heatmap(title: str, xlabel: str, ylabel: str, cells: dict[tuple[Any, Any], float]) -> str:
    """A grid of means (x across, y down) coloured from the lowest (white) to the highest (blue)."""
    xs, ys = sorted({x for x, _ in cells}), sorted({y for _, y in cells})
    cw, ch, left, top = 62, 30, 70, 40
    w, h = left + cw * len(xs) + 10, top + ch * len(ys) + 36
    lo, hi = min(cells.values()), max(cells.values())
    body = [_text(w / 2, 16, title, size=13, extra='font-weight="600"'),
            _text(left + cw * len(xs) / 2, h - 6, xlabel), _text(4, top - 8, ylabel, anchor="start", size=10)]
    for i, x in enumerate(xs):
        body.append(_text(left + (i + 0.5) * cw, top + ch * len(ys) + 14, x, size=10))
    for j, y in enumerate(ys):
        body.append(_text(left - 6, top + (j + 0.5) * ch + 4, y, anchor="end", size=10))
        for i, x in enumerate(xs):
            if (x, y) not in cells:
                continue
            v = cells[(x, y)]
            t = (v - lo) / ((hi - lo) or 1.0)
            fill = f"rgb({int(255 - 228 * t)},{int(255 - 147 * t)},{int(255 - 87 * t)})"
            body.append(f'<rect x="{left + i * cw}" y="{top + j * ch}" width="{cw - 2}" height="{ch - 2}" '
                        f'fill="{fill}"><title>{xlabel}={_e(x)}, {ylabel}={_e(y)}: {v:.3f}</title></rect>')
            body.append(_text(left + (i + 0.5) * cw, top + (j + 0.5) * ch + 4, f"{v:.3f}", size=10,
                              extra=f'fill="{"#fff" if t > 0.6 else "#222"}"'))
    return _svg(w, h, body, title)


def forest(title: str, items: Sequence[tuple[str, float, float, float, str]], zero: float | None = None) -> str:
    """Horizontal CI bars: (label, estimate, low, high, verdict) per row; ``zero`` draws a reference line."""
    vals = [v for _, m, lo, hi, _ in items for v in (m, lo, hi)] + ([zero] if zero is not None else [])
    w, left, right, top, rh = 640, 250, 20, 30, 16
    h = top + rh * len(items) + 30
    sx = _scale(min(vals), max(vals), left, w - right)
    body = [_text(w / 2, 16, title, size=13, extra='font-weight="600"')]
    if zero is not None:
        body.append(f'<line x1="{sx(zero):.1f}" y1="{top - 4}" x2="{sx(zero):.1f}" y2="{h - 26}" stroke="#999" '
                    f'stroke-dasharray="4 3"/>')
    for i, (label, m, lo, hi, verdict) in enumerate(items):
        y, colour = top + i * rh + rh / 2, VERDICT_COLOUR.get(verdict, "#777")
        body.append(_text(left - 6, y + 4, f"{MARKS.get(verdict, '')} {label[-38:]}", anchor="end", size=10))
        body.append(f'<line x1="{sx(lo):.1f}" y1="{y:.1f}" x2="{sx(hi):.1f}" y2="{y:.1f}" stroke="{colour}" '
                    f'stroke-width="2"/><circle cx="{sx(m):.1f}" cy="{y:.1f}" r="3.5" fill="{colour}">'
                    f'<title>{_e(label)}: {m:.3f} [{lo:.3f}, {hi:.3f}] {verdict}</title></circle>')
    for v in (min(vals), (min(vals) + max(vals)) / 2, max(vals)):
        body.append(_text(sx(v), h - 10, f"{v:.3f}", size=10))
    return _svg(w, h, body, title)


def _natural(text: str) -> list[Any]:
    """Sort key that orders "top_k=3" before "top_k=10"."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text)]


def _label(r: Row, keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={r.params.get(k)}" for k in keys) or r.variant


def _table(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, top: int | None) -> str:
    params = varying_params(rows)
    costs = cost_columns(rows)
    head = (["#", "", *params, f"{sort_by} [95% CI]", "vs baseline [CI]", "p (Holm)", "n_ok", "n_undef", "n_error"]
            + [m for m in metrics if m != sort_by] + [n for n, _ in costs])
    out = ['<table class="board"><thead><tr>'
           + "".join(f'<th class="{"l" if h in params else ""}">{_e(h)}</th>' for h in head) + "</tr></thead><tbody>"]
    for r in shown(rows, top):
        i = rows.index(r) + 1
        if r.error:
            out.append(f'<tr><td>{i}</td><td></td><td class="l" colspan="{len(head) - 2}">failed: {_e(r.error)}</td></tr>')
            continue
        s, c = r.stats.get(sort_by, {}), r.comparison
        verdict = c.verdict if c else "n/a"
        cells = [f"<td>{i}</td>", f'<td class="{verdict}" title="{verdict}">{MARKS.get(verdict, "")}</td>']
        cells += [f'<td class="l">{_e(r.params.get(p, ""))}</td>' for p in params]
        cells.append(f'<td data-v="{_f(s.get("mean"))}">{_f(s.get("mean"))} [{_f(s.get("ci_low"))}, '
                     f'{_f(s.get("ci_high"))}]</td>')
        if c is not None and c.diff is not None and verdict != "baseline":
            cells.append(f'<td class="{verdict}" data-v="{c.diff}">{c.diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}]</td>'
                         f'<td data-v="{c.p_holm}">{c.p_holm:.3g}</td>')
        else:
            cells.append(f'<td class="{verdict}">{"baseline" if verdict == "baseline" else ""}</td><td></td>')
        cells += [f"<td>{s.get(k, 0)}</td>" for k in ("n_ok", "n_undefined", "n_error")]
        for m in metrics:
            if m != sort_by:
                ms = r.stats.get(m, {})
                cells.append(f'<td title="95% CI [{_f(ms.get("ci_low"))}, {_f(ms.get("ci_high"))}]">{_f(ms.get("mean"))}</td>')
        cells += [f"<td>{_e('' if (v := f(r.cost)) is None else v)}</td>" for _, f in costs]
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
            s = r.stats[metric]
            groups.setdefault(_label(r, rest) if rest else "all", {})[r.params.get(axis)] = (
                s["mean"], s["ci_low"], s["ci_high"])
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


def _num(v: float) -> str:
    return f"{v:g}"


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    """Round values inside [lo, hi]: 1-2-5 per decade on a log axis, four to six steps on a linear one."""
    if hi <= lo:
        return [lo]
    if log:
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        for steps in ((1, 2, 5), (1,)):
            ticks = [round(m * 10.0 ** e, 12) for e in decades for m in steps if lo <= m * 10.0 ** e <= hi]
            if len(ticks) <= 8:
                break
        return ticks if len(ticks) >= 3 else _ticks(lo, hi, False)
    raw = (hi - lo) / 6
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [round(k * step, 12) for k in range(math.ceil(lo / step), math.floor(hi / step) + 1)]


def _axis(values: Sequence[float], a: float, b: float,
          may_log: bool = True) -> tuple[Callable[[float], float], bool, list[float]]:
    """Data to pixels (``a`` at the low end) with a 5% margin, log10 when ``may_log`` and the values span
    more than LOG_SPAN; also whether it is log and round tick values."""
    lo, hi = min(values), max(values)
    log = may_log and lo > 0 and hi / lo > LOG_SPAN
    f: Callable[[float], float] = math.log10 if log else float
    margin = (f(hi) - f(lo)) * 0.05 or max(abs(f(lo)) * 0.1, 0.05)
    s = _scale(f(lo) - margin, f(hi) + margin, a, b)
    ends = [10.0 ** v if log else v for v in (f(lo) - margin, f(hi) + margin)]
    return (lambda v: s(f(v))), log, _ticks(*ends, log)


def _frame(box: tuple[int, int, int, int], title: str, xlabel: str, ylabel: str,
           sx: Callable[[float], float], xticks: Sequence[float],
           sy: Callable[[float], float], yticks: Sequence[float]) -> list[str]:
    """Title, axes, tick labels and light grid lines of a plot area (left, top, right, bottom)."""
    left, top, right, bottom = box
    mid = (top + bottom) / 2
    body = [_text((left + right) / 2, 18, title, size=13, extra='font-weight="600"'),
            f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#999"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#999"/>',
            _text((left + right) / 2, bottom + 32, xlabel),
            _text(14, mid, ylabel, extra=f'transform="rotate(-90 14 {mid})"')]
    for v in yticks:
        body.append(f'<line x1="{left}" y1="{sy(v):.1f}" x2="{right}" y2="{sy(v):.1f}" stroke="#eee"/>')
        body.append(_text(left - 4, sy(v) + 4, _num(v), anchor="end", size=10))
    for v in xticks:
        body.append(f'<line x1="{sx(v):.1f}" y1="{bottom}" x2="{sx(v):.1f}" y2="{bottom + 4}" stroke="#999"/>')
        body.append(_text(sx(v), bottom + 16, _num(v), size=10))
    return body


def _legend(r: Row, keys: Sequence[str]) -> str:
    """The row's values of ``keys``, leaving out the ones it does not have (``index`` of a BM25 job)."""
    return ", ".join(f"{k}={r.params[k]}" for k in keys if r.params.get(k) is not None)


def quality_against(rows: Sequence[Row], metric: str, axis: str) -> list[str]:
    """``metric`` against ``axis`` (``budget`` or ``top_k``) on a numeric axis: a line per job (the
    variants whose parameters but the axis are equal) with its 95% CI as a band, one chart per budget
    unit. Lines are named by the parameters that differ between them; none when the axis has one value."""
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
        series = sorted(((_legend(rs[0], keys) or "all", sorted(rs, key=lambda r: r.params[axis])) for rs in best),
                        key=lambda kv: _natural(kv[0]))
        w, box = 560, (56, 30, 540, 270)
        h = box[3] + 52 + 16 * len(series)
        sx, log, _ = _axis([r.params[axis] for r in sub], box[0] + 10, box[2] - 10)
        sy, _, yticks = _axis([r.stats[metric][k] for r in sub for k in ("mean", "ci_low", "ci_high")],
                          box[3], box[1], may_log=False)
        xs = sorted({r.params[axis] for r in sub})
        xlabel = f"{axis}{f' ({unit})' if unit else ''}{', log scale' if log else ''}"
        title = f"{metric} against {axis}"
        body = _frame(box, title, xlabel, metric, sx, xs if len(xs) <= 10 else _ticks(xs[0], xs[-1], log),
                      sy, yticks)
        for n, (label, rs) in enumerate(series):
            colour, pts = PALETTE[n % len(PALETTE)], [(sx(r.params[axis]), r.stats[metric]) for r in rs]
            if len(pts) > 1:
                band = [f"{x:.1f},{sy(s['ci_high']):.1f}" for x, s in pts] + [
                    f"{x:.1f},{sy(s['ci_low']):.1f}" for x, s in reversed(pts)]
                body.append(f'<polygon points="{" ".join(band)}" fill="{colour}" opacity="0.13"/>')
                path = " ".join(f"{'M' if j == 0 else 'L'}{x:.1f},{sy(s['mean']):.1f}" for j, (x, s) in enumerate(pts))
                body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for r, (x, s) in zip(rs, pts):
                if len(pts) == 1:
                    body.append(f'<line x1="{x:.1f}" y1="{sy(s["ci_low"]):.1f}" x2="{x:.1f}" '
                                f'y2="{sy(s["ci_high"]):.1f}" stroke="{colour}"/>')
                body.append(f'<circle cx="{x:.1f}" cy="{sy(s["mean"]):.1f}" r="3.5" fill="{colour}"><title>'
                            f'{_e(label)}, {axis}={_e(r.params[axis])}: {s["mean"]:.3f} '
                            f'[{s["ci_low"]:.3f}, {s["ci_high"]:.3f}]</title></circle>')
            y = box[3] + 44 + 16 * n
            body.append(f'<rect x="{box[0]}" y="{y}" width="10" height="10" fill="{colour}"/>')
            body.append(_text(box[0] + 16, y + 9, label[:80], anchor="start", size=11))
        charts.append(_svg(w, h, body, title))
    return charts


def latency_section(rows: Sequence[Row], metric: str) -> tuple[list[str], list[str]]:
    """``metric`` against search latency (p50), a point per variant, the Pareto front filled and joined
    by a step line, and the notes under it; and the front's variant names (empty without latencies)."""
    ok = [r for r in rows if r.error is None and r.stats.get(metric, {}).get("mean") is not None]
    timed = [(r, float(lat)) for r in ok if (lat := LATENCY(r.cost)) is not None]
    if not timed:
        return [], []
    front = pareto_front([(lat, r.stats[metric]["mean"]) for r, lat in timed], higher_is_better(metric))
    keys = varying_params([r for r, _ in timed])
    w, h, box = 560, 340, (56, 30, 540, 296)
    sx, log, xticks = _axis([lat for _, lat in timed], box[0] + 10, box[2] - 10)
    sy, _, yticks = _axis([r.stats[metric][k] for r, _ in timed for k in ("mean", "ci_low", "ci_high")],
                          box[3], box[1], may_log=False)
    title = f"{metric} against search latency"
    body = _frame(box, title, f"latency p50 per query (ms{', log scale' if log else ''})", metric,
                  sx, xticks, sy, yticks)
    steps = [(sx(timed[i][1]), sy(timed[i][0].stats[metric]["mean"])) for i in front]
    body.append(f'<path d="M{steps[0][0]:.1f},{steps[0][1]:.1f}'
                + "".join(f" H{x:.1f} V{y:.1f}" for x, y in steps[1:]) + '" fill="none" stroke="#d1495b"/>')
    rank = {i: n for n, i in enumerate(front, 1)}
    for i in sorted(range(len(timed)), key=lambda i: i in rank):  # the front drawn last, on top
        (r, lat), s = timed[i], timed[i][0].stats[metric]
        x, colour = sx(lat), "#d1495b" if i in rank else "#1b6ca8"
        p95 = (r.cost.get("latency") or {}).get("p95_ms")
        tip = (f"{_legend(r, keys) or r.variant}: {metric} {s['mean']:.3f} [{s['ci_low']:.3f}, {s['ci_high']:.3f}], "
               f"latency p50 {lat:g} ms{f', p95 {p95:g} ms' if p95 is not None else ''}"
               f"{f' (Pareto front {rank[i]})' if i in rank else ''}")
        body.append(f'<line x1="{x:.1f}" y1="{sy(s["ci_low"]):.1f}" x2="{x:.1f}" y2="{sy(s["ci_high"]):.1f}" '
                    f'stroke="{colour}" opacity="0.35"/>')
        body.append(f'<circle cx="{x:.1f}" cy="{sy(s["mean"]):.1f}" r="4.5" stroke="{colour}" stroke-width="1.5" '
                    f'fill="{colour if i in rank else "#fff"}"><title>{_e(tip)}</title></circle>')
        if i in rank:
            body.append(_text(x + 7, sy(s["mean"]) - 6, rank[i], anchor="start", size=10, extra='fill="#d1495b"'))
    listed = [f"{n}. {_e(_legend(timed[i][0], keys) or timed[i][0].variant)} — "
              f"{timed[i][0].stats[metric]['mean']:.3f} at {timed[i][1]:g} ms" for n, i in enumerate(front, 1)]
    parts = [_svg(w, h, body, title),
             f'<p class="note">● <b>Pareto front</b>: the variants that no other one beats on both {_e(metric)} '
             f'({"higher" if higher_is_better(metric) else "lower"} is better) and latency, the ones worth considering '
             f"at each latency: "
             + "; ".join(listed[:12]) + (f"; and {len(listed) - 12} more." if len(listed) > 12 else ".") + "</p>"]
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
    keys = [p for p in varying_params(list(jobs.values())) if p != "top_k"]
    w, left, top, rh = 640, 250, 30, 18
    h = top + rh * len(jobs) + 40
    longest = max(r.cost["seconds"].get("total", 0.0) for r in jobs.values()) or 1.0
    body = [_text(w / 2, 16, "seconds per job, by stage", size=13, extra='font-weight="600"')]
    for i, r in enumerate(jobs.values()):
        x, y = float(left), top + i * rh
        body.append(_text(left - 6, y + 12, _label(r, keys)[-38:], anchor="end", size=10))
        for n, st in enumerate(stages):
            width = r.cost["seconds"].get(st, 0.0) / longest * (w - left - 80)
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{rh - 4}" '
                        f'fill="{PALETTE[n % len(PALETTE)]}"><title>{_e(st)}: {r.cost["seconds"].get(st, 0.0):.2f} s</title></rect>')
            x += width
        body.append(_text(x + 4, y + 12, f"{r.cost['seconds'].get('total', 0.0):.1f} s", anchor="start", size=10))
    for n, st in enumerate(stages):
        body.append(f'<rect x="{left + n * 90}" y="{h - 22}" width="10" height="10" fill="{PALETTE[n % len(PALETTE)]}"/>')
        body.append(_text(left + n * 90 + 14, h - 13, st, anchor="start", size=10))
    return _svg(w, h, body, "seconds per job")


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
             f'<p class="note">{_e(title)} — {len(rows)} variants, {n} samples each, sorted by <b>{_e(sort_by)}</b>. '
             f"Baseline ★ <code>{_e(base)}</code>; paired bootstrap 95% CI of the difference, paired randomisation "
             f"test, Holm-corrected at alpha={alpha:g} (seed {seed}): ▼ significantly worse, ▲ better, ≈ tie. "
             f"{_e(cost_note(rows))}</p>",
             _table(rows, metrics, sort_by, top)]
    if top is not None and len(rows) > top:
        parts.append(f'<p class="note">{len(rows) - top} more rows in leaderboard.csv (shown: top {top}).</p>')
    if ci:
        parts += ["<h2>Confidence intervals</h2><div class=\"plots\">",
                  forest(f"{sort_by}: mean [95% CI]", ci),
                  forest(f"{sort_by}: difference to the baseline [paired 95% CI]", diffs, zero=0.0) if diffs else "",
                  "</div>"]
    for axis, name in (("budget", "budget"), ("top_k", "top-K")):
        if charts := quality_against(rows, sort_by, axis):
            parts += [f"<h2>Quality against {name}</h2>", f'<p class="note">{_e(AGAINST_NOTE[axis])}</p>',
                      '<div class="plots">', *charts, "</div>"]
    latency, front = latency_section(rows, sort_by)
    if latency:
        parts += ["<h2>Quality against latency</h2>", '<div class="plots">', latency[0], "</div>", *latency[1:]]
    for m in metrics:
        plots = metric_plots(rows, m)
        if plots:
            parts += [f"<h2>{_e(m)}</h2><div class=\"plots\">", *plots, "</div>"]
    cost = _cost_plot(rows)
    if cost:
        parts += ["<h2>Cost</h2><div class=\"plots\">", cost, "</div>"]
    failed = [r for r in rows if r.error]
    if failed:
        parts.append("<h2>Failed jobs</h2><ul>" + "".join(f"<li>{_e(r.job)}: {_e(r.error)}</li>" for r in failed) + "</ul>")
    # Machine-readable facts of the page; "</" escaped so the JSON cannot close the script element.
    data = json.dumps({"sort_by": sort_by, "baseline": base, "alpha": alpha, "seed": seed,
                       "pareto_front": front}).replace("</", "<\\/")
    parts.append(f'<script type="application/json" id="meta">{data}</script><script>{JS}</script></body></html>')
    return "\n".join(parts)
