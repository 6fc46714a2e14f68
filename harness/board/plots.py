"""Inline SVG plots for the leaderboard page: the drawing primitives, numeric axes and three charts.

Everything is drawn as text (no plotting library, nothing loaded at view time), so the page stays one
self-contained file. The charts take plain numbers and labels; what to plot is decided by
``harness/board/html.py``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

from ragsweep.harness.board.compare import MARKS

PALETTE = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6346", "#555555")
VERDICT_COLOUR = {"baseline": "#1b6ca8", "worse": "#d1495b", "better": "#2e933c", "tie": "#777777", "n/a": "#bbbbbb"}
LOG_SPAN = 4.0      # a numeric axis whose values span more than this factor is drawn on a log scale


def esc(x: Any) -> str:
    """``x`` as text safe inside an element or an attribute."""
    return html.escape(str(x), quote=True)


def svg(width: int, height: int, body: list[str], label: str) -> str:
    """One plot: an ``<svg>`` element with ``body`` and ``label`` as its accessible name and tooltip."""
    return (f'<svg class="plot" role="img" aria-label="{esc(label)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
            f'<title>{esc(label)}</title>{"".join(body)}</svg>')


def svg_text(x: float, y: float, s: Any, anchor: str = "middle", size: int = 11, extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" {extra}>{esc(s)}</text>'


def linear(lo: float, hi: float, a: float, b: float) -> Callable[[float], float]:
    """The linear map of [lo, hi] onto [a, b] (a span of zero counts as one)."""
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
    sy = linear(y0 - pad, y1 + pad, h - bottom, top)
    body = [svg_text(w / 2, 16, title, size=13, extra='font-weight="600"'),
            f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="#999"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="#999"/>',
            svg_text((left + w - right) / 2, h - 6, xlabel), svg_text(12, (top + h - bottom) / 2, ylabel,
                                                                  extra=f'transform="rotate(-90 12 {(top + h - bottom) / 2})"')]
    for i in range(5):
        v = y0 - pad + i * (y1 - y0 + 2 * pad) / 4
        body.append(svg_text(left - 4, sy(v) + 4, f"{v:.2f}", anchor="end", size=10))
    for x in xs:
        body.append(svg_text(sx(x), h - bottom + 14, x, size=10))
    for n, (label, pts) in enumerate(series):
        colour = PALETTE[n % len(PALETTE)]
        ordered = [(x, pts[x]) for x in xs if x in pts]
        path = " ".join(f"{'M' if j == 0 else 'L'}{sx(x):.1f},{sy(m):.1f}" for j, (x, (m, _, _)) in enumerate(ordered))
        body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, (m, lo, hi) in ordered:
            body.append(f'<line x1="{sx(x):.1f}" y1="{sy(lo):.1f}" x2="{sx(x):.1f}" y2="{sy(hi):.1f}" '
                        f'stroke="{colour}" opacity="0.6"/>')
            body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(m):.1f}" r="3" fill="{colour}"><title>'
                        f'{esc(label)} {xlabel}={esc(x)}: {m:.3f} [{lo:.3f}, {hi:.3f}]</title></circle>')
        body.append(f'<rect x="{w - right + 10}" y="{top + n * 16}" width="10" height="10" fill="{colour}"/>')
        body.append(svg_text(w - right + 24, top + n * 16 + 9, label[:22], anchor="start", size=10))
    return svg(w, h, body, title)


def heatmap(title: str, xlabel: str, ylabel: str, cells: dict[tuple[Any, Any], float]) -> str:
    """A grid of means (x across, y down) coloured from the lowest (white) to the highest (blue)."""
    xs, ys = sorted({x for x, _ in cells}), sorted({y for _, y in cells})
    cw, ch, left, top = 62, 30, 70, 40
    w, h = left + cw * len(xs) + 10, top + ch * len(ys) + 36
    lo, hi = min(cells.values()), max(cells.values())
    body = [svg_text(w / 2, 16, title, size=13, extra='font-weight="600"'),
            svg_text(left + cw * len(xs) / 2, h - 6, xlabel), svg_text(4, top - 8, ylabel, anchor="start", size=10)]
    for i, x in enumerate(xs):
        body.append(svg_text(left + (i + 0.5) * cw, top + ch * len(ys) + 14, x, size=10))
    for j, y in enumerate(ys):
        body.append(svg_text(left - 6, top + (j + 0.5) * ch + 4, y, anchor="end", size=10))
        for i, x in enumerate(xs):
            if (x, y) not in cells:
                continue
            v = cells[(x, y)]
            t = (v - lo) / ((hi - lo) or 1.0)
            fill = f"rgb({int(255 - 228 * t)},{int(255 - 147 * t)},{int(255 - 87 * t)})"
            body.append(f'<rect x="{left + i * cw}" y="{top + j * ch}" width="{cw - 2}" height="{ch - 2}" '
                        f'fill="{fill}"><title>{xlabel}={esc(x)}, {ylabel}={esc(y)}: {v:.3f}</title></rect>')
            body.append(svg_text(left + (i + 0.5) * cw, top + (j + 0.5) * ch + 4, f"{v:.3f}", size=10,
                              extra=f'fill="{"#fff" if t > 0.6 else "#222"}"'))
    return svg(w, h, body, title)


def forest(title: str, items: Sequence[tuple[str, float, float, float, str]], zero: float | None = None) -> str:
    """Horizontal CI bars: (label, estimate, low, high, verdict) per row; ``zero`` draws a reference line."""
    vals = [v for _, m, lo, hi, _ in items for v in (m, lo, hi)] + ([zero] if zero is not None else [])
    w, left, right, top, rh = 640, 250, 20, 30, 16
    h = top + rh * len(items) + 30
    sx = linear(min(vals), max(vals), left, w - right)
    body = [svg_text(w / 2, 16, title, size=13, extra='font-weight="600"')]
    if zero is not None:
        body.append(f'<line x1="{sx(zero):.1f}" y1="{top - 4}" x2="{sx(zero):.1f}" y2="{h - 26}" stroke="#999" '
                    f'stroke-dasharray="4 3"/>')
    for i, (label, m, lo, hi, verdict) in enumerate(items):
        y, colour = top + i * rh + rh / 2, VERDICT_COLOUR.get(verdict, "#777")
        body.append(svg_text(left - 6, y + 4, f"{MARKS.get(verdict, '')} {label[-38:]}", anchor="end", size=10))
        body.append(f'<line x1="{sx(lo):.1f}" y1="{y:.1f}" x2="{sx(hi):.1f}" y2="{y:.1f}" stroke="{colour}" '
                    f'stroke-width="2"/><circle cx="{sx(m):.1f}" cy="{y:.1f}" r="3.5" fill="{colour}">'
                    f'<title>{esc(label)}: {m:.3f} [{lo:.3f}, {hi:.3f}] {verdict}</title></circle>')
    for v in (min(vals), (min(vals) + max(vals)) / 2, max(vals)):
        body.append(svg_text(sx(v), h - 10, f"{v:.3f}", size=10))
    return svg(w, h, body, title)


def num(v: float) -> str:
    """A tick label: as short as the value allows (0.2, 1000, 1e-05)."""
    return f"{v:g}"


def tick_values(lo: float, hi: float, log: bool) -> list[float]:
    """Round values inside [lo, hi]: 1-2-5 per decade on a log axis, four to six steps on a linear one."""
    if hi <= lo:
        return [lo]
    if log:
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        for steps in ((1, 2, 5), (1,)):
            ticks = [round(m * 10.0 ** e, 12) for e in decades for m in steps if lo <= m * 10.0 ** e <= hi]
            if len(ticks) <= 8:
                break
        return ticks if len(ticks) >= 3 else tick_values(lo, hi, False)
    raw = (hi - lo) / 6
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [round(k * step, 12) for k in range(math.ceil(lo / step), math.floor(hi / step) + 1)]


def numeric_axis(values: Sequence[float], a: float, b: float,
                 may_log: bool = True) -> tuple[Callable[[float], float], bool, list[float]]:
    """Data to pixels (``a`` at the low end) with a 5% margin, log10 when ``may_log`` and the values span
    more than LOG_SPAN; also whether it is log and round tick values."""
    lo, hi = min(values), max(values)
    log = may_log and lo > 0 and hi / lo > LOG_SPAN
    f: Callable[[float], float] = math.log10 if log else float
    margin = (f(hi) - f(lo)) * 0.05 or max(abs(f(lo)) * 0.1, 0.05)
    s = linear(f(lo) - margin, f(hi) + margin, a, b)
    ends = [10.0 ** v if log else v for v in (f(lo) - margin, f(hi) + margin)]
    return (lambda v: s(f(v))), log, tick_values(*ends, log)


def plot_frame(box: tuple[int, int, int, int], title: str, xlabel: str, ylabel: str,
               sx: Callable[[float], float], xticks: Sequence[float],
               sy: Callable[[float], float], yticks: Sequence[float]) -> list[str]:
    """Title, axes, tick labels and light grid lines of a plot area (left, top, right, bottom)."""
    left, top, right, bottom = box
    mid = (top + bottom) / 2
    body = [svg_text((left + right) / 2, 18, title, size=13, extra='font-weight="600"'),
            f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#999"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#999"/>',
            svg_text((left + right) / 2, bottom + 32, xlabel),
            svg_text(14, mid, ylabel, extra=f'transform="rotate(-90 14 {mid})"')]
    for v in yticks:
        body.append(f'<line x1="{left}" y1="{sy(v):.1f}" x2="{right}" y2="{sy(v):.1f}" stroke="#eee"/>')
        body.append(svg_text(left - 4, sy(v) + 4, num(v), anchor="end", size=10))
    for v in xticks:
        body.append(f'<line x1="{sx(v):.1f}" y1="{bottom}" x2="{sx(v):.1f}" y2="{bottom + 4}" stroke="#999"/>')
        body.append(svg_text(sx(v), bottom + 16, num(v), size=10))
    return body


def band_chart(title: str, xlabel: str, ylabel: str,
               series: Sequence[tuple[str, Sequence[tuple[float, float, float, float]]]]) -> str:
    """Lines on a numeric x (log when it spans more than LOG_SPAN), each with its CI as a band.

    Args:
        series: ``(label, points)`` per line, points ``(x, mean, ci_low, ci_high)`` sorted by x; a
            line of one point gets an error bar instead of a band. The legend is under the plot.
    """
    xs = sorted({p[0] for _, pts in series for p in pts})
    box = (56, 30, 540, 270)
    w, h = 560, box[3] + 52 + 16 * len(series)
    sx, log, xticks = numeric_axis(xs, box[0] + 10, box[2] - 10)
    sy, _, yticks = numeric_axis([v for _, pts in series for p in pts for v in p[1:]], box[3], box[1], may_log=False)
    body = plot_frame(box, title, xlabel + (", log scale" if log else ""), ylabel,
                      sx, xs if len(xs) <= 10 else xticks, sy, yticks)
    for n, (label, pts) in enumerate(series):
        colour = PALETTE[n % len(PALETTE)]
        if len(pts) > 1:
            band = [(x, hi) for x, _, _, hi in pts] + [(x, lo) for x, _, lo, _ in reversed(pts)]
            body.append(f'<polygon points="{" ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in band)}" '
                        f'fill="{colour}" opacity="0.13"/>')
            path = " ".join(f"{'L' if j else 'M'}{sx(x):.1f},{sy(m):.1f}" for j, (x, m, _, _) in enumerate(pts))
            body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, m, lo, hi in pts:
            if len(pts) == 1:
                body.append(f'<line x1="{sx(x):.1f}" y1="{sy(lo):.1f}" x2="{sx(x):.1f}" y2="{sy(hi):.1f}" '
                            f'stroke="{colour}"/>')
            body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(m):.1f}" r="3.5" fill="{colour}"><title>{esc(label)}, '
                        f'{esc(xlabel)} {num(x)}: {m:.3f} [{lo:.3f}, {hi:.3f}]</title></circle>')
        y = box[3] + 44 + 16 * n
        body.append(f'<rect x="{box[0]}" y="{y}" width="10" height="10" fill="{colour}"/>')
        body.append(svg_text(box[0] + 16, y + 9, label[:80], anchor="start", size=11))
    return svg(w, h, body, title)


def front_scatter(title: str, xlabel: str, ylabel: str,
                  points: Sequence[tuple[float, float, float, float, str]], front: Sequence[int]) -> str:
    """A point per ``(x, mean, ci_low, ci_high, tooltip)`` with its CI as a faint bar; the points of
    ``front`` (indices, cheapest first) filled, numbered and joined by a step line. Lower x is better."""
    box = (56, 30, 540, 296)
    sx, log, xticks = numeric_axis([p[0] for p in points], box[0] + 10, box[2] - 10)
    sy, _, yticks = numeric_axis([v for p in points for v in p[1:4]], box[3], box[1], may_log=False)
    body = plot_frame(box, title, xlabel + (", log scale" if log else ""), ylabel, sx, xticks, sy, yticks)
    steps = [(sx(points[i][0]), sy(points[i][1])) for i in front]
    if steps:  # the best quality reachable at each x: flat until the next point of the front
        path = f"M{steps[0][0]:.1f},{steps[0][1]:.1f}" + "".join(f" H{x:.1f} V{y:.1f}" for x, y in steps[1:])
        body.append(f'<path d="{path}" fill="none" stroke="#d1495b"/>')
    rank = {i: n for n, i in enumerate(front, 1)}
    for i in sorted(range(len(points)), key=lambda i: i in rank):  # the front drawn last, on top
        x, m, lo, hi, tip = points[i]
        colour = "#d1495b" if i in rank else "#1b6ca8"
        body.append(f'<line x1="{sx(x):.1f}" y1="{sy(lo):.1f}" x2="{sx(x):.1f}" y2="{sy(hi):.1f}" stroke="{colour}" '
                    f'opacity="0.35"/>')
        body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(m):.1f}" r="4.5" stroke="{colour}" stroke-width="1.5" '
                    f'fill="{colour if i in rank else "#fff"}"><title>{esc(tip)}'
                    f'{f" (Pareto front {rank[i]})" if i in rank else ""}</title></circle>')
        if i in rank:
            body.append(svg_text(sx(x) + 7, sy(m) - 6, rank[i], anchor="start", size=10, extra='fill="#d1495b"'))
    return svg(560, 340, body, title)
