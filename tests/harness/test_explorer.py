"""explorer.html: the data it carries, worked out by hand, and the page in a real headless browser."""

from __future__ import annotations

import base64
import gzip
import json
import re
import time
from pathlib import Path

import pytest
from browser import ARTIFACTS, Browser, needs_chromium, problems
from ragsweep.harness.board import explorer
from ragsweep.harness.board.leaderboard import build, ranked
from ragsweep.harness.records import Retrieved, RunSample

DOC = "Alpha beta gamma. The tower is 300 metres tall. Delta epsilon zeta eta theta."
#             0         1         2         3         4         5         6         7
#             0123456789012345678901234567890123456789012345678901234567890123456789012345678


def _chunk(start: int, end: int, score: float) -> Retrieved:
    return Retrieved(f"d#{start}-{end}", "d", start, end, score, DOC[start:end])


def _job(folder: Path, variant: str, cuts: list[dict], answers: dict[str, str], values: dict[str, float]) -> None:
    folder.mkdir(parents=True)
    ranking = (_chunk(18, 48, 0.9), _chunk(0, 18, 0.5), _chunk(48, 79, 0.1))
    run = RunSample("q1", variant, ranking, answers, "How tall is the tower?", "300 metres.",
                    (("d", 22, 47),), (DOC[22:47],), None, 1, kind="single_hop")
    other = RunSample("q2", variant, ranking[::-1], {k: None for k in answers}, "What follows delta?", "Epsilon.",
                      (("d", 55, 62),), (DOC[55:62],), None, 1, kind="multi_hop")
    (folder / "runs.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in (run, other)))
    scores, summary = [], []
    for cut in cuts:
        label = "top_k=%d" % cut["top_k"] if "top_k" in cut else "budget=%d" % cut["budget"]
        name = f"{variant},{label}"
        summary.append({"variant": name, "params": {"chunker.size": 30, **cut}, "top_k": cut.get("top_k")})
        for sid, value in (("q1", values[label]), ("q2", 0.0)):
            scores.append({"sample_id": sid, "variant": name, "metric": "hit@10", "value": value, "status": "ok",
                           "explanation": {"n_passed": 1}})
        scores.append({"sample_id": "q1", "variant": name, "metric": "faithfulness", "value": None,
                       "status": "undefined", "explanation": {"reason": "no claims"}})
    (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    (folder / "summary.json").write_text(json.dumps({"variants": summary, "cost": {}}))


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    _job(tmp_path / "0", "job0", [{"top_k": 1}, {"top_k": 3}], {"top_k=1": "300 metres", "top_k=3": "Alpha"},
         {"top_k=1": 1.0, "top_k=3": 0.5})
    _job(tmp_path / "1", "job1", [{"budget": 40, "budget_unit": "chars"}], {"budget=40": "It is 300 metres."},
         {"budget=40": 0.25})
    return tmp_path


def test_data_mark_the_evidence_the_cut_and_keep_each_text_once(sweep):
    rows, metrics = ranked(sweep, "hit@10")
    data = explorer.collect(rows, metrics, "hit@10")
    assert [v["name"] for v in data["variants"]] == ["job0,top_k=1", "job0,top_k=3", "job1,budget=40"]
    assert [v["cut"] for v in data["variants"]] == ["top_k=1", "top_k=3", "budget=40"]
    assert [q["id"] for q in data["questions"]] == ["q1", "q2"]
    assert [q["kind"] for q in data["questions"]] == ["single_hop", "multi_hop"]
    # Three distinct chunks, however many jobs and questions retrieved them.
    assert len(data["chunks"]) == 3
    ranked_q1 = data["jobs"][0]["retrieved"]["q1"]
    first = data["chunks"][ranked_q1[0][0]]
    assert first[3] == DOC[18:48]
    # Evidence 22-47 inside chunk 18-48: offsets 4..29 of its text, which is the evidence itself.
    assert ranked_q1[0][2] == [[4, 29]]
    assert first[3][4:29] == DOC[22:47]
    assert ranked_q1[1][2] == [] and ranked_q1[2][2] == []
    cells = data["cells"]
    assert cells[0]["q1"]["n"] == 1 and cells[1]["q1"]["n"] == 3 and "kept" not in cells[1]["q1"]
    assert cells[0]["q1"]["answer"] == "300 metres" and cells[1]["q1"]["answer"] == "Alpha"
    # A 40-character budget passes the 30-character chunk whole and 10 characters of the next.
    assert cells[2]["q1"]["n"] == 2 and cells[2]["q1"]["kept"] == [0, 10]
    why = cells[0]["q1"]["scores"]["hit@10"]
    assert why[:2] == [1.0, "ok"] and data["whys"][why[2]] == {"n_passed": 1}
    # Explanations are stored once: every hit@10 row here has the same one.
    assert cells[1]["q1"]["scores"]["hit@10"][2] == why[2]
    assert cells[0]["q1"]["scores"]["faithfulness"][:2] == [None, "undefined"]


def test_page_embeds_gzip_data_and_fetches_nothing(sweep):
    paths = build(sweep, "hit@10")
    page = paths["explorer"].read_text(encoding="utf-8")
    blob = re.search(r'<script id="data" type="application/octet-stream">([^<]+)</script>', page).group(1)
    data = json.loads(gzip.decompress(base64.b64decode(blob)))
    assert data["sort_by"] == "hit@10" and len(data["variants"]) == 3
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert 'href="explorer.html"' in paths["html"].read_text(encoding="utf-8")
    # The same sweep gives the same bytes (no clock in the gzip header).
    again = build(sweep, "hit@10")["explorer"].read_text(encoding="utf-8")
    assert again == page


def test_untrusted_text_is_escaped(tmp_path):
    _job(tmp_path / "0", "job0", [{"top_k": 1}, {"top_k": 3}],
         {"top_k=1": "<img src=x onerror=alert(1)>", "top_k=3": "</script><script>alert(2)</script>"},
         {"top_k=1": 1.0, "top_k=3": 0.5})
    page = build(tmp_path, "hit@10")["explorer"].read_text(encoding="utf-8")
    # The answers travel inside the compressed blob, never as markup of the page.
    assert "<img src=x" not in page and "alert(2)" not in page


def _open_question(page: Path, tmp: Path, shot: Path, question: int = 0) -> dict:
    """Load the page, click a question of the list, show every variant; return what the browser rendered."""
    b = Browser(tmp / "profile")
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.call(f"{domain}.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=1500, height=1000, deviceScaleFactor=1, mobile=False)
        start = time.perf_counter()
        b.call("Page.navigate", url=page.resolve().as_uri())
        b.wait_for("Page.loadEventFired")
        seen = b.call("Runtime.evaluate", returnByValue=True, awaitPromise=True, expression="""(async () => {
            const t0 = performance.now();
            while (!document.body.dataset.ready) { await new Promise(r => setTimeout(r, 20));
              if (performance.now() - t0 > 60000) return {timeout: true}; }
            const ready = performance.now();
            document.querySelectorAll('#list tbody tr')[%d].click();
            document.querySelectorAll('#detail .pick input').forEach(i => { if (!i.checked) i.click(); });
            return {ready_ms: ready, rows: document.querySelectorAll('#list tbody tr').length,
              question: document.querySelector('#detail b').textContent,
              variants: [...document.querySelectorAll('#detail section.variant')].map(s => ({
                title: s.querySelector('h3').textContent, name: s.dataset.name,
                answer: s.querySelector('.answer').textContent,
                contexts: [...s.querySelectorAll('ol.ctx li:not(.cutline) .text')].map(t => t.textContent),
                passed: s.querySelectorAll('ol.ctx li.passed').length,
                cutline: (s.querySelector('ol.ctx li.cutline') || {}).textContent || null,
                marks: [...s.querySelectorAll('ol.ctx mark')].map(m => m.textContent),
                scores: [...s.querySelectorAll('table.scores tr')].map(tr => [...tr.cells].slice(0, 3)
                  .map(td => td.textContent))}))};})()""" % question)
        value = seen["result"]["value"]
        value["wall_s"] = time.perf_counter() - start
        b.call("Emulation.setDeviceMetricsOverride", width=1500, height=1600, deviceScaleFactor=1, mobile=False)
        png = base64.b64decode(b.call("Page.captureScreenshot", format="png")["data"])
        shot.parent.mkdir(parents=True, exist_ok=True)
        shot.write_bytes(png)
        b.call("Runtime.evaluate", expression="1")
        value["problems"] = problems(b.events)
        return value
    finally:
        b.close()


@needs_chromium
def test_browser_opens_a_question_and_shows_every_variant(sweep, tmp_path):
    page = build(sweep, "hit@10")["explorer"]
    seen = _open_question(page, tmp_path, ARTIFACTS / "explorer-hand.png")
    assert seen["problems"] == [] and seen["rows"] == 2
    assert seen["question"] == "How tall is the tower?"
    titles = [v["title"] for v in seen["variants"]]
    assert len(titles) == 3 and titles[0].startswith("#1")
    top1, top3, budget = seen["variants"]
    assert top1["answer"] == "300 metres" and budget["answer"] == "It is 300 metres."
    assert top1["passed"] == 1 and top3["passed"] == 3 and budget["passed"] == 2
    assert top1["cutline"] and "top_k=1" in top1["cutline"] and top3["cutline"] is None
    assert top1["marks"][0] == DOC[22:47]
    assert ["hit@10", "1.000", "ok"] in top1["scores"] and ["faithfulness", "", "undefined"] in top1["scores"]


@needs_chromium
@pytest.mark.slow
def test_a_real_sweep_writes_an_explorer_the_browser_opens(tmp_path, ragsweep):
    out = ragsweep("sweep", "progress=false", "chunker.size=256,1024", "retriever.top_k=[1,3]", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    folder = next((tmp_path / "outputs" / "sweeps").iterdir())
    page = folder / "explorer.html"
    assert page.is_file()
    seen = _open_question(page, tmp_path, ARTIFACTS / "explorer-shipped-corpus.png")
    assert seen["problems"] == [] and seen["rows"] >= 10
    assert len(seen["variants"]) == 4
    runs = {}
    for job in folder.iterdir():
        if (job / "runs.jsonl").is_file():
            for line in (job / "runs.jsonl").read_text().splitlines():
                row = json.loads(line)
                runs[(row["variant"], row["question"])] = row
    for v in seen["variants"]:
        assert v["contexts"] and v["scores"] and v["answer"]
        job_variant, cut = v["name"].rsplit(",", 1)
        record = runs[(job_variant, seen["question"])]
        assert v["answer"] == record["answers"][cut]
        assert v["contexts"][0].strip() == record["retrieved"][0]["text"].strip()


def test_a_broken_run_record_leaves_the_board_and_no_stale_explorer(sweep, caplog):
    build(sweep, "hit@10")
    with (sweep / "0" / "runs.jsonl").open("a") as fh:
        fh.write("{broken\n")
    paths = build(sweep, "hit@10")
    assert paths["csv"].is_file() and "explorer" not in paths
    assert not (sweep / explorer.FILE).exists()
    assert "runs.jsonl, line 3: not valid JSON" in caplog.text
