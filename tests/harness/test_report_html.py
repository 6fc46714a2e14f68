"""leaderboard.html: its Pareto front and charts as text, and the page in a real headless browser.

The first tests need nothing: the Pareto front on hand cases, and the page built from hand-made rows.
The browser tests use Debian chromium, driven over the DevTools protocol. The page is loaded from a
file with the network of the browser unused: every request that is not ``file:`` or ``data:`` fails
the test, as does any console error, warning or uncaught exception. The full-page screenshot is kept
in ``outputs/test-artifacts/`` (git-ignored). CI needs ``apt-get install -y chromium``; without it
the browser tests skip and say so.
"""

from __future__ import annotations

import base64
import itertools
import json
import random
import re
import time
from pathlib import Path

import pytest
from browser import ARTIFACTS, Browser, assert_not_blank, needs_chromium, problems
from ragsweep.harness.board.html import pareto_front
from ragsweep.harness.board.html import render as render_page
from ragsweep.harness.board.leaderboard import build
from ragsweep.harness.board.model import Row
from test_compare import BASE, fake_sweep

EXTERNAL = re.compile(r"""(src|href)=["']?(https?:)?//""")

# (points as (cost, quality), higher_is_better, the front cheapest first), worked out by hand
PARETO_CASES = [
    ([], True, []),
    ([(5.0, 0.5)], True, [0]),
    ([(1.0, 0.5), (2.0, 0.7), (3.0, 0.6), (0.5, 0.2)], True, [3, 0, 1]),  # 2 is slower and worse than 1
    ([(1.0, 0.5), (2.0, 0.7), (3.0, 0.6), (0.5, 0.2)], False, [3]),  # cheapest and lowest beats them all
    ([(1.0, 0.9), (2.0, 0.5), (3.0, 0.7), (4.0, 0.1)], False, [0, 1, 3]),
    ([(1.0, 0.5), (1.0, 0.5)], True, [0, 1]),  # equal points: neither beats the other
    ([(1.0, 0.5), (2.0, 0.5)], True, [0]),  # as good and cheaper
    ([(1.0, 0.4), (1.0, 0.5)], True, [1]),  # as cheap and better
    ([(1.0, 0.4), (1.0, 0.5)], False, [0]),
    ([(2.0, 0.8), (1.0, 0.5), (2.0, 0.8), (3.0, 0.8)], True, [1, 0, 2]),
]


@pytest.mark.parametrize(("points", "higher", "front"), PARETO_CASES)
def test_pareto_front_hand_cases(points, higher, front):
    assert pareto_front(points, higher) == front


def test_pareto_front_is_the_points_nothing_beats():
    """Against the definition, on integer grids full of ties."""
    rng = random.Random(0)

    def beats(a, b, sign):
        return a[0] <= b[0] and sign * a[1] >= sign * b[1] and (a[0] < b[0] or sign * a[1] > sign * b[1])

    for _, higher in itertools.product(range(200), (True, False)):
        pts = [(float(rng.randint(0, 5)), float(rng.randint(0, 5))) for _ in range(rng.randint(1, 12))]
        sign = 1 if higher else -1
        expected = {i for i, p in enumerate(pts) if not any(beats(q, p, sign) for q in pts)}
        got = pareto_front(pts, higher)
        assert set(got) == expected and len(got) == len(expected)
        assert [pts[i][0] for i in got] == sorted(pts[i][0] for i in got)


def hand_row(params: dict, mean: float, latency_ms: float | None = None, metric: str = "ndcg@10") -> Row:
    name = ",".join(f"{k}={v}" for k, v in params.items())
    stats = {metric: {"mean": mean, "ci_low": mean - 0.05, "ci_high": mean + 0.05,
                      "n_ok": 20, "n_undefined": 0, "n_error": 0}}
    cost = {} if latency_ms is None else {"latency": {"p50_ms": latency_ms, "p95_ms": 2 * latency_ms}}
    return Row(name, params, stats, cost, job=name)


def budget_rows() -> list[Row]:
    """Two chunk sizes at three character budgets (a job's variants share its latency), and one job
    written before latency was measured."""
    quality = {(256, 300): 0.50, (256, 1000): 0.60, (256, 3000): 0.62,
               (1024, 300): 0.30, (1024, 1000): 0.65, (1024, 3000): 0.80}
    rows = [hand_row({"chunker.size": size, "budget": b, "budget_unit": "chars"}, q, 2.0 if size == 256 else 8.0)
            for (size, b), q in quality.items()]
    return rows + [hand_row({"chunker.size": 512, "budget": 1000, "budget_unit": "chars"}, 0.9)]


def section(page: str, heading: str) -> str:
    start = page.index(f"<h2>{heading}</h2>")
    return page[start:page.index("<h2>", start + 4)]


def test_page_shows_quality_against_budget_and_against_latency():
    page = render_page(budget_rows(), ["ndcg@10"], "ndcg@10", title="t")
    budget = section(page, "Quality against budget")
    assert budget.count("<svg") == 1 and "budget (chars), log scale" in budget  # 300 to 3000 spans 10x
    assert budget.count("<polygon") == 2  # a CI band per job with more than one budget
    for label in ("chunker.size=256", "chunker.size=512", "chunker.size=1024"):
        assert f">{label}</text>" in budget  # the legend names lines by what differs between them
    assert "Quality against top-K" not in page
    latency = section(page, "Quality against latency")
    assert latency.count("<svg") == 1 and latency.count("<circle") == 6 and "log scale" not in latency
    # the front: 256 @ 2 ms is best at 0.62 until 1024 @ 8 ms reaches 0.80; 512 has no latency
    meta = json.loads(re.search(r'<script type="application/json" id="meta">(.*?)</script>', page).group(1))
    assert meta["pareto_front"] == ["chunker.size=256,budget=3000,budget_unit=chars",
                                    "chunker.size=1024,budget=3000,budget_unit=chars"]
    note = page[page.index("<b>Pareto front</b>"):]
    assert ("1. chunker.size=256, budget=3000 — 0.620 at 2 ms; "
            "2. chunker.size=1024, budget=3000 — 0.800 at 8 ms.") in note
    assert "1 of 7 variants have no latency figure and are left out of this chart." in note
    assert not EXTERNAL.search(page)


def test_lower_is_better_front_and_top_k_chart_and_no_latency_chart_without_latencies():
    rows = [hand_row({"chunker.size": s, "top_k": k}, 0.1 * k + s / 1000) for s in (256, 512) for k in (1, 3)]
    page = render_page(rows, ["ndcg@10"], "ndcg@10", title="t")
    top_k = section(page, "Quality against top-K")
    assert "top_k</text>" in top_k and "log scale" not in top_k  # 1 to 3: a linear axis
    assert "Quality against budget" not in page and "Quality against latency" not in page
    # hallucination: lower is better, so dense (lower, slower) joins bm25 on the front; hybrid does not
    rows = [hand_row({"retrieval": r}, m, lat, metric="hallucination") for r, m, lat in
            (("bm25", 0.3, 1.0), ("dense", 0.2, 10.0), ("hybrid", 0.25, 12.0))]
    page = render_page(rows, ["hallucination"], "hallucination", title="t")
    assert "(lower is better)" in page and "10 of" not in page
    assert "1. retrieval=bm25 — 0.300 at 1 ms; 2. retrieval=dense — 0.200 at 10 ms." in page
    assert "latency p50 per query (ms), log scale" in page  # 1 to 12 ms spans more than 4x


def render(page: Path, tmp: Path, shot: Path) -> dict:
    """Load ``page``; return what the browser saw and write a full-page screenshot to ``shot``."""
    b = Browser(tmp / "profile")
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.call(f"{domain}.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=1400, height=900, deviceScaleFactor=1, mobile=False)
        b.call("Page.navigate", url=page.resolve().as_uri())
        b.wait_for("Page.loadEventFired")
        seen = b.call("Runtime.evaluate", returnByValue=True, expression="""(() => {
            const plots = [...document.querySelectorAll('svg.plot')];
            const th = document.querySelector('table.board th'); th.click();  // the sort script runs (ascending by rank: the order it had)
            return {plots: plots.length, drawn: plots.filter(s => {const r = s.getBoundingClientRect();
                      return r.width > 100 && r.height > 100 && s.querySelectorAll('circle,rect,path').length > 2;}).length,
                    rows: document.querySelectorAll('table.board tbody tr').length,
                    worse: document.querySelectorAll('tbody tr td:nth-child(2).worse').length,
                    ties: document.querySelectorAll('tbody tr td:nth-child(2).tie').length,
                    height: document.documentElement.scrollHeight, text: document.body.innerText.slice(0, 300)};})()""")
        value = seen["result"]["value"]
        b.call("Emulation.setDeviceMetricsOverride", width=1400, height=min(value["height"], 6000),
               deviceScaleFactor=1, mobile=False)
        png = base64.b64decode(b.call("Page.captureScreenshot", format="png")["data"])
        shot.parent.mkdir(parents=True, exist_ok=True)
        shot.write_bytes(png)
        time.sleep(0.2)
        b.call("Runtime.evaluate", expression="1")  # drain events that arrived meanwhile
        value["problems"] = problems(b.events)
        return value
    finally:
        b.close()


@needs_chromium
def test_leaderboard_page_renders_offline_with_plots_and_no_console_errors(tmp_path):
    worse = [v - 0.2 for v in BASE]
    sweep = fake_sweep(tmp_path / "sweep", {
        f"s{s}-k{k}": ({"chunker": "recursive", "chunker.size": s, "top_k": k},
                       {"ndcg@10": worse if s == 256 else BASE, "recall@10": [min(1.0, v + k / 20) for v in BASE]})
        for s in (256, 512) for k in (1, 5)})
    page = build(sweep, "ndcg@10", n_resamples=1000)["html"]
    seen = render(page, tmp_path, ARTIFACTS / "leaderboard-constructed.png")
    assert seen["problems"] == []
    assert seen["rows"] == 4 and seen["worse"] == 2 and seen["ties"] == 1
    # CI + difference forests, quality against top-K, per metric (2): vs top_k, vs chunk size, one
    # heatmap; and the cost plot
    assert seen["plots"] == seen["drawn"] == 2 + 1 + 2 * 3 + 1
    assert_not_blank((ARTIFACTS / "leaderboard-constructed.png").read_bytes())


@needs_chromium
def test_a_budget_board_with_latencies_renders_both_tradeoff_charts(tmp_path):
    sweep = fake_sweep(tmp_path / "sweep", {
        f"s{s}-b{b}": ({"chunker.size": s, "budget": b, "budget_unit": "chars"},
                       {"ndcg@10": [max(0.0, v - (0.3 if b == 300 else 0.0) - s / 5000) for v in BASE]})
        for s in (256, 1024) for b in (300, 1000, 3000)})
    for n, job in enumerate(sorted((sweep).iterdir())):  # a latency per job folder, as a real sweep writes
        summary = json.loads((job / "summary.json").read_text())
        summary["cost"]["latency"] = {"p50_ms": 1.0 + n, "p95_ms": 2.0 + n}
        (job / "summary.json").write_text(json.dumps(summary))
    page = build(sweep, "ndcg@10", n_resamples=1000)["html"]
    assert not EXTERNAL.search(page.read_text())
    seen = render(page, tmp_path, ARTIFACTS / "leaderboard-budget.png")
    assert seen["problems"] == [] and seen["rows"] == 6
    # forests (2), quality against budget and against latency, ndcg@10 vs chunk size, the cost plot
    assert seen["plots"] == seen["drawn"] == 2 + 2 + 1 + 1
    assert_not_blank((ARTIFACTS / "leaderboard-budget.png").read_bytes())


@needs_chromium
@pytest.mark.slow
def test_a_real_sweep_writes_a_page_chromium_renders(tmp_path, ragsweep):
    out = ragsweep("sweep", "progress=false", "chunker.size=256,1024", "retriever.top_k=[1,3,10]", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    page = next((tmp_path / "outputs" / "sweeps").iterdir()) / "leaderboard.html"
    assert "leaderboard.html" in out.stdout and page.is_file()
    assert not EXTERNAL.search(page.read_text())  # nothing to fetch
    seen = render(page, tmp_path, ARTIFACTS / "leaderboard-shipped-corpus.png")
    assert seen["problems"] == [] and seen["rows"] == 6
    assert seen["plots"] == seen["drawn"] >= 2 + 9 * 3
    assert seen["worse"] >= 1 and "ragsweep leaderboard" in seen["text"]
    assert_not_blank((ARTIFACTS / "leaderboard-shipped-corpus.png").read_bytes())
