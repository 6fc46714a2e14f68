"""How big is ``explorer.html`` and how long does it take to open, as a sweep grows? (issue #33)

Writes synthetic sweep folders (``--questions`` x ``--jobs`` jobs x ``--cuts`` top-K variants each,
ten retrieved chunks of ~500 characters per question out of a pool of chunks, twelve retrieval and
generation metrics with explanations of the size real ones have, and two judged metrics with three
claims each), builds the board and the explorer, then opens the page in headless chromium: the time
until the list is drawn, and the time to open one question with every variant shown.

    python benchmarks/explorer_scale.py                          # 100, 1000 and 3000 questions x 20 variants
    python benchmarks/explorer_scale.py --questions 1000 --jobs 5 --cuts 4
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from ragsweep.harness.board.leaderboard import build  # noqa: E402
from ragsweep.harness.records import Retrieved, RunSample  # noqa: E402

WORDS = ("harbour tide ferry council bridge flood museum turbine regatta lighthouse district river quay "
         "festival engine survey treaty mayor island cliff petrel archive tower hall market").split()
METRICS = ["ndcg@10", "recall@10", "mrr@10", "map@10", "hit@10", "span_recall", "span_precision", "span_iou",
           "token_f1", "rouge_l", "non_llm_context_recall", "answer_semantic_similarity"]


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words)).capitalize() + "."


def write_sweep(root: Path, questions: int, jobs: int, cuts: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    pool = [(f"doc{d}.md", 600 * c, 600 * c + 500) for d in range(max(50, questions // 4)) for c in range(8)]
    texts = {span: _text(rng, 80)[:500].ljust(500) for span in pool}
    ks = [1, 3, 5, 10][:cuts] if cuts <= 4 else list(range(1, cuts + 1))
    for j in range(jobs):
        folder = root / str(j)
        folder.mkdir(parents=True)
        name = f"chunker=recursive,embedder=minilm,retrieval=dense,index=flat,chunker.size={256 * (j + 1)}"
        runs, scores = [], []
        for q in range(questions):
            ranked = rng.sample(pool, 10)
            evidence = (ranked[rng.randrange(10)][0], ranked[0][1] + 100, ranked[0][1] + 220)
            retrieved = tuple(Retrieved(f"{d}#{s}-{e}", d, s, e, round(1 - i / 20, 4), texts[(d, s, e)])
                              for i, (d, s, e) in enumerate(ranked))
            answers = {f"top_k={k}": _text(rng, 25) for k in ks}
            runs.append(RunSample(f"q{q:05d}", name, retrieved, answers, _text(rng, 14), _text(rng, 12),
                                  (evidence,), (_text(rng, 20),), None, 1, kind=rng.choice(("single_hop", "multi_hop"))))
            for k in ks:
                variant = f"{name},top_k={k}"
                for m in METRICS:
                    scores.append({"sample_id": f"q{q:05d}", "variant": variant, "metric": m,
                                   "value": round(rng.random(), 4), "status": "ok",
                                   "explanation": {"relevant_retrieved": [f"{evidence[0]}:{evidence[1]}-{evidence[2]}"],
                                                   "n_relevant": 1, "n_passed": k}})
                for m in ("faithfulness", "answer_correctness"):
                    claims = [{"claim": _text(rng, 12), "verdict": rng.choice(("supported", "not_supported")),
                               "p_supported": round(rng.random(), 3), "reason": _text(rng, 10)} for _ in range(3)]
                    scores.append({"sample_id": f"q{q:05d}", "variant": variant, "metric": m,
                                   "value": round(rng.random(), 4), "status": "ok", "explanation": {"claims": claims}})
        (folder / "runs.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in runs), encoding="utf-8")
        (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores), encoding="utf-8")
        summary = {"variants": [{"variant": f"{name},top_k={k}", "top_k": k,
                                 "params": {"chunker.size": 256 * (j + 1), "top_k": k}} for k in ks], "cost": {}}
        (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def open_in_browser(page: Path, profile: Path) -> dict[str, float]:
    from browser import CHROMIUM, Browser

    if CHROMIUM is None:
        return {}
    b = Browser(profile)
    try:
        b.call("Page.enable")
        b.call("Runtime.enable")
        start = time.perf_counter()
        b.call("Page.navigate", url=page.resolve().as_uri())
        b.wait_for("Page.loadEventFired", timeout=300)
        got = b.call("Runtime.evaluate", returnByValue=True, awaitPromise=True, expression="""(async () => {
            while (!document.body.dataset.ready) await new Promise(r => setTimeout(r, 10));
            const t = performance.now();
            document.querySelectorAll('#list tbody tr')[0].click();
            document.querySelectorAll('#detail .pick input').forEach(i => { if (!i.checked) i.click(); });
            return {open_ms: performance.now() - t,
                    sections: document.querySelectorAll('#detail section.variant').length};})()""")
        ready = time.perf_counter() - start
        value = got["result"]["value"]
        return {"ready_s": ready, "open_question_s": value["open_ms"] / 1000, "sections": value["sections"]}
    finally:
        b.close()


def measure(questions: int, jobs: int, cuts: int, tmp: Path) -> dict[str, float]:
    root = tmp / f"sweep-{questions}"
    write_sweep(root, questions, jobs, cuts)
    start = time.perf_counter()
    paths = build(root, "ndcg@10", n_resamples=200)
    built = time.perf_counter() - start
    page = paths["explorer"]
    runs_mb = sum(p.stat().st_size for p in root.rglob("*.jsonl")) / 1e6
    return {"questions": questions, "variants": jobs * cuts, "runs_and_scores_mb": runs_mb,
            "board_and_explorer_s": built, "page_mb": page.stat().st_size / 1e6,
            **open_in_browser(page, tmp / f"profile-{questions}")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, nargs="+", default=[100, 1000, 3000])
    ap.add_argument("--jobs", type=int, default=5)
    ap.add_argument("--cuts", type=int, default=4)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / f"{date.today()}-explorer-scale.md"))
    args = ap.parse_args(argv)
    lines = ["| questions | variants | runs + scores (MB) | board + explorer (s) | page (MB) | page ready (s) | "
             "open a question, all variants (s) |", "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.questions:
            r = measure(n, args.jobs, args.cuts, Path(tmp))
            lines.append(f"| {r['questions']} | {r['variants']} | {r['runs_and_scores_mb']:.1f} | "
                         f"{r['board_and_explorer_s']:.1f} | {r['page_mb']:.1f} | {r.get('ready_s', float('nan')):.2f} | "
                         f"{r.get('open_question_s', float('nan')):.2f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(f"# explorer.html at scale ({date.today()}, `python benchmarks/explorer_scale.py`)\n\n"
                              f"{text}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
