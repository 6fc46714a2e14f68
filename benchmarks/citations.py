"""Citation metrics against people: per-sentence support by the cited passages (ALCE citation recall) and
per-citation relevance (ALCE citation precision), on the hand-labelled set ``citation_labels.json``.

No public set of human citation judgements is reachable here (``../shared/data`` holds none; ALCE's
human evaluation and TREC RAG's support assessments are downloads), so the set is 134 answer sentences
written over HotpotQA dev questions of ``../shared/data/hotpot`` and labelled by hand before any scoring
(see the file's ``about``). It is split by question into ``tune`` and ``report`` halves; figures for the
docs come from ``report``.

    python benchmarks/citations.py --llm none                    # seconds
    RAGSWEEP_CACHE_DIR=/tmp/cache-cite python benchmarks/citations.py --llm none local --threads 1

Agreement: accuracy and Cohen's kappa of the metric's verdicts with the labels, with 95% intervals from
a bootstrap over questions (a question's sentences are resampled together: they share contexts).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))

from ragsweep.metrics.attribution import citation_rows  # noqa: E402
from ragsweep.metrics.citations import parse_answer  # noqa: E402

LABELS = Path(__file__).with_name("citation_labels.json")
DATA = ROOT.parent / "shared" / "data" / "hotpot"
MODELS = {"local": "qwen2.5-coder-1.5b-instruct-q4_k_m", "local_small": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
#: How far on the distractor context is taken from (context [3]: the first paragraph of that item's knowledge).
DISTRACTOR_OFFSET = 7


def load() -> list[dict[str, Any]]:
    """The labelled items with their question, contexts and parsed citations."""
    spec = json.loads(LABELS.read_text(encoding="utf-8"))
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "corpus.jsonl").open(encoding="utf-8"))}
    queries = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "queries_dev.jsonl").open(encoding="utf-8"))}
    qrels = dict(line.split()[:2] for line in (DATA / "qrels_dev.tsv").read_text().splitlines()[1:])
    items = spec["items"]
    paragraphs = []
    for item in items:
        text = corpus[qrels[item["id"]]]
        cut = text.index(item["second_starts"])
        paragraphs.append((text[:cut].strip(), text[cut:].strip()))
    out = []
    for i, (item, (first, second)) in enumerate(zip(items, paragraphs)):
        distractor = paragraphs[(i + DISTRACTOR_OFFSET) % len(items)][0]
        contexts = [first, second, distractor]
        answer = " ".join(s["text"] for s in item["sentences"])
        parsed = parse_answer(answer, len(contexts))
        if len(parsed.sentences) != len(item["sentences"]):
            raise ValueError(f"{item['id']}: {len(parsed.sentences)} sentences parsed, "
                             f"{len(item['sentences'])} labelled")
        out.append({**item, "question": queries[item["id"]].strip(), "contexts": contexts,
                    "citations": [c.to_dict() for c in parsed.sentences]})
    return out


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two binary label vectors (0 when both are constant and equal: no information)."""
    po = float(np.mean(a == b))
    pe = float(np.mean(a) * np.mean(b) + (1 - np.mean(a)) * (1 - np.mean(b)))
    return 0.0 if pe == 1 else (po - pe) / (1 - pe)


def agreement(pairs: list[tuple[int, bool, bool]], n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Accuracy and kappa of (question, human, metric) pairs, with question-level bootstrap intervals."""
    groups = sorted({g for g, _, _ in pairs})
    by_group = {g: [(h, m) for gg, h, m in pairs if gg == g] for g in groups}
    human = np.array([h for _, h, _ in pairs], dtype=float)
    metric = np.array([m for _, _, m in pairs], dtype=float)
    rng = np.random.default_rng(seed)
    accs, kappas = [], []
    for _ in range(n_resamples):
        picked = [x for g in rng.choice(groups, size=len(groups)) for x in by_group[g]]
        h = np.array([p[0] for p in picked], dtype=float)
        m = np.array([p[1] for p in picked], dtype=float)
        accs.append(float(np.mean(h == m)))
        kappas.append(kappa(h, m))
    return {"n": len(pairs), "questions": len(groups), "human_positive": float(np.mean(human)),
            "metric_positive": float(np.mean(metric)), "accuracy": float(np.mean(human == metric)),
            "accuracy_ci": [float(np.percentile(accs, 2.5)), float(np.percentile(accs, 97.5))],
            "kappa": kappa(human, metric),
            "kappa_ci": [float(np.percentile(kappas, 2.5)), float(np.percentile(kappas, 97.5))]}


def build_judge(backend: str, threads: int) -> Any:
    if backend == "none":
        return None
    from ragsweep.metrics.llm import CachedLLM, LocalLLM, Meter

    llm: Any = LocalLLM(MODELS.get(backend, backend), n_ctx=4096, n_threads=threads)
    cache = os.environ.get("RAGSWEEP_CACHE_DIR")
    if cache:
        Path(cache).mkdir(parents=True, exist_ok=True)
        llm = CachedLLM(llm, Path(cache) / "llm.sqlite")
    return Meter(llm)


async def score(items: list[dict[str, Any]], judge: Any) -> list[dict[str, Any]]:
    out = []
    for item in items:
        rows, counts = await citation_rows(item["citations"], item["contexts"], item["question"], judge=judge)
        out.append({"id": item["id"], "rows": rows, **counts})
    return out


def compare(items: list[dict[str, Any]], scored: list[dict[str, Any]], split: str) -> dict[str, Any]:
    sentences, citations, mistakes = [], [], []
    for g, (item, got) in enumerate(zip(items, scored)):
        if item["split"] != split:
            continue
        for label, row in zip(item["sentences"], got["rows"]):
            sentences.append((g, bool(label["supported"]), bool(row["supported"])))
            if bool(label["supported"]) != bool(row["supported"]):
                mistakes.append(f"{item['id']}: {label['text']} (human {label['supported']}, "
                                f"metric p={row['p_supported']})")
            valid = [c for c in row.get("citations", []) if c["why"] != "names no context"]
            for human, c in zip(label["relevant"], valid):
                citations.append((g, bool(human), bool(c["relevant"])))
    return {"recall_verdicts": agreement(sentences), "precision_verdicts": agreement(citations),
            "disagreements": mistakes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", nargs="+", default=["none"], help="none, local (the 1.5B), local_small (the 0.5B)")
    parser.add_argument("--split", default="report", choices=("tune", "report"))
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    items = load()
    report: dict[str, Any] = {"split": args.split, "backends": {}}
    for backend in args.llm:
        judge = build_judge(backend, args.threads)
        chosen = [i for i in items if i["split"] == args.split]
        started = time.perf_counter()
        scored = asyncio.run(score(chosen, judge))
        seconds = time.perf_counter() - started
        figures = compare(chosen, scored, args.split)
        cost = judge.snapshot().to_dict() if judge is not None else {}
        figures.update(seconds=round(seconds, 1), checks=sum(s["checks"] for s in scored),
                       reused=sum(s["reused"] for s in scored), llm=cost)
        report["backends"][backend] = figures
        for kind in ("recall_verdicts", "precision_verdicts"):
            f = figures[kind]
            print(f"{backend:12s} {args.split:6s} {kind:18s} n={f['n']:3d} acc={f['accuracy']:.3f} "
                  f"[{f['accuracy_ci'][0]:.3f}, {f['accuracy_ci'][1]:.3f}] kappa={f['kappa']:.3f} "
                  f"[{f['kappa_ci'][0]:.3f}, {f['kappa_ci'][1]:.3f}] human+={f['human_positive']:.2f} "
                  f"metric+={f['metric_positive']:.2f}")
        print(f"{backend:12s} checks={figures['checks']} reused={figures['reused']} seconds={figures['seconds']} "
              f"llm={cost}")
        for line in figures["disagreements"]:
            print("   ", line)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
