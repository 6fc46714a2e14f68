"""Does context precision tell a question's own passage from its nearest distractors? Both recipes side by side.

Each sample is a HotpotQA question (``../shared/data/hotpot``), people's answer as the reference (HaluEval's
``right_answer``), and three ranked contexts: the question's own passage (relevant) and the two passages BM25 ranks
highest among the others (hard distractors: they share the question's words), in a seeded order. A chunk verdict is
right when it calls the own passage useful and the distractors not. Both recipes run on the same samples with the
same packaged judge and one cache:

- ``judge``: Ragas' recipe, every chunk judged in one ``chunk_verdicts`` call that writes a reason per chunk;
- ``sentences`` (the default): each chunk judged alone on the reference's sentences by the claim judge of
  faithfulness, one-token replies;
- ``none``: the same per chunk with no judge (``llm=none``: number, name and word checks, MiniLM).

    python benchmarks/context_precision.py --split dev --n 20          # the report half (HotpotQA dev questions)
    python benchmarks/context_precision.py --split train --n 20 llm.threads=1

``--split train`` is the tune half, ``dev`` the report half (HotpotQA's own split of its questions). It prints, per
recipe: the share of own passages called useful, of distractors called not useful, balanced accuracy, the mean AP
against the true AP, calls, written and evaluated prompt tokens and seconds per sample.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))
DATA = ROOT.parent / "shared" / "data"


def load(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """n samples of ``split``: question, reference, contexts (own passage and two BM25 distractors), gold flags."""
    import bm25s

    hot = DATA / "hotpot"
    corpus = [json.loads(line) for line in (hot / "corpus.jsonl").open(encoding="utf-8")]
    text = {d["_id"]: d["text"] for d in corpus}
    ids = [d["_id"] for d in corpus]
    queries = [json.loads(line) for line in (hot / f"queries_{split}.jsonl").open(encoding="utf-8")]
    own = {}
    for line in (hot / f"qrels_{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, _ = line.split("\t")
        own[qid] = did
    answers = {}
    for line in (DATA / "halueval" / "qa_public.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        answers[row["question"].strip()] = row["right_answer"]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([text[i] for i in ids], stopwords="en", show_progress=False), show_progress=False)
    rng = random.Random(seed)
    picked = [q for q in queries if q["_id"] in own and q["text"].strip() in answers]
    rng.shuffle(picked)
    out = []
    for q in picked[:n]:
        hits, _ = retriever.retrieve(bm25s.tokenize([q["text"]], stopwords="en", show_progress=False), k=5,
                                     show_progress=False)
        negatives = [ids[int(h)] for h in hits[0] if ids[int(h)] != own[q["_id"]]][:2]
        chunks = [(own[q["_id"]], True)] + [(d, False) for d in negatives]
        rng.shuffle(chunks)
        out.append({"id": q["_id"], "question": q["text"].strip(), "reference": answers[q["text"].strip()],
                    "contexts": [text[d] for d, _ in chunks], "gold": [g for _, g in chunks]})
    return out


def wilson(k: int, n: int, z: float = 1.96) -> str:
    """The 95% Wilson interval of k successes in n, as "[lo, hi]"."""
    if not n:
        return "[-]"
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return f"[{mid - half:.2f}, {mid + half:.2f}]"


async def run(samples: list[dict[str, Any]], recipe: str, judge: Any, embedder: Any = None) -> dict[str, Any]:
    from ragsweep.metrics.generation import average_precision, context_precision, offline_context_precision
    from ragsweep.metrics.llm import Meter

    meter = Meter(judge)
    tp = fn = tn = fp = errors = 0
    gaps = []
    aps = []
    started = time.perf_counter()
    for s in samples:
        if recipe == "none":
            got = offline_context_precision(s["question"], s["contexts"], s["reference"], embedder=embedder)
        else:
            got = await context_precision(s["question"], s["contexts"], s["reference"], judge=meter, claims=recipe)
        if got.status != "ok":
            errors += 1
            continue
        flags = [bool(v["relevant"]) for v in got.explanation["verdicts"]]
        for said, gold in zip(flags, s["gold"]):
            tp += said and gold
            fn += (not said) and gold
            fp += said and not gold
            tn += (not said) and not gold
        aps.append(got.value)
        gaps.append(abs(got.value - average_precision(s["gold"])))
    seconds = time.perf_counter() - started
    n = len(samples)
    own = tp / (tp + fn) if tp + fn else float("nan")
    others = tn / (tn + fp) if tn + fp else float("nan")
    return {"recipe": recipe, "n": n, "errors": errors, "own_useful": own, "distractors_not": others,
            "own_ci": wilson(tp, tp + fn), "others_ci": wilson(tn, tn + fp),
            "balanced": (own + others) / 2, "mean_ap": sum(aps) / len(aps) if aps else float("nan"),
            "ap_gap": sum(gaps) / len(gaps) if gaps else float("nan"), "calls": meter.calls / n,
            "written": meter.usage.completion_tokens / n, "evaluated": meter.evaluated / n, "seconds": seconds / n}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("train", "dev"), default="dev", help="train: tune half; dev: report half")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--recipes", nargs="+", default=["judge", "sentences", "none"])
    ap.add_argument("--cache", default=None, help="judge cache folder (default: a new temporary one)")
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    ap.add_argument("extra", nargs="*", help="llm.threads=1 (the only override read)")
    args = ap.parse_args(argv)
    threads = next((int(e.split("=", 1)[1]) for e in args.extra if e.startswith("llm.threads=")), 2)
    from ragsweep.metrics.llm import CachedLLM, LocalLLM

    samples = load(args.split, args.n, args.seed)
    cache = Path(args.cache or tempfile.mkdtemp(prefix="cp-"))
    cache.mkdir(parents=True, exist_ok=True)
    judge = CachedLLM(LocalLLM("qwen2.5-coder-1.5b-instruct-q4_k_m", n_threads=threads), cache / "llm.sqlite")
    from ragsweep.metrics.embedding import OnnxMiniLM

    rows = [asyncio.run(run(samples, r, judge, OnnxMiniLM() if r == "none" else None)) for r in args.recipes]
    head = ("| recipe | n | errors | own passage useful | distractors not | balanced acc. | mean AP | |AP - true AP| "
            "| calls / sample | written tokens / sample | evaluated prompt tokens / sample | s / sample |")
    lines = [f"split {args.split} ({'tune' if args.split == 'train' else 'report'}), seed {args.seed}, "
             f"{threads} llama.cpp thread(s); the true mean AP is "
             f"{sum(1.0 / (s['gold'].index(True) + 1) for s in samples) / len(samples):.3f}", "", head,
             "|" + "---|" * 12]
    for r in rows:
        lines.append(f"| {r['recipe']} | {r['n']} | {r['errors']} | {r['own_useful']:.3f} {r['own_ci']} "
                     f"| {r['distractors_not']:.3f} {r['others_ci']} "
                     f"| {r['balanced']:.3f} | {r['mean_ap']:.3f} | {r['ap_gap']:.3f} | {r['calls']:.1f} "
                     f"| {r['written']:.0f} | {r['evaluated']:.0f} | {r['seconds']:.1f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
