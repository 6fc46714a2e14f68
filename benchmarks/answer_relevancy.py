"""Does answer relevancy tell an answer to the question from one that is not? Both recipes side by side.

Each HotpotQA question (``../shared/data/halueval``, the questions of ``../shared/data/hotpot``) gets four answers:
people's right answer and HaluEval's hallucinated one (both respond to the question: relevancy is not correctness),
the hallucinated answer of another question (about something else) and an evasive reply ("I don't know"). The
evasive replies come from two template families, one per half, so no phrasing is seen on both.

- ``judge`` (the default): one call, "does the reply respond to what the question asks", P(yes) from the verdict
  token;
- ``questions``: Ragas' recipe, three questions generated from the answer, their mean cosine with the question
  (MiniLM), 0 when the judge flags the answer noncommittal.

    python benchmarks/answer_relevancy.py --split train --n 12 llm.threads=1   # the tune half
    python benchmarks/answer_relevancy.py --split dev --n 12                   # the report half

It prints, per recipe: ROC-AUC of responding vs not, the mean score and the share at or above 0.5 of each kind
of answer, calls, written tokens and seconds per answer.

``--injections`` adds, for each answer that does not respond, the same answer with a note to the grader planted
at its start or its end, from the injection families of ``benchmarks/adversarial_families.py`` (tune families on
``train``, report families on ``dev``; five languages in turn), and prints how many held: lifted by at most 0.05
and kept below the right answer's score (issue #31's bar), and how many were lifted from below 0.5 to 0.5 or above
(called responding).
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
sys.path.insert(0, str(ROOT / "benchmarks"))
DATA = ROOT.parent / "shared" / "data"
#: Evasive replies, one family per half (by template, never shared).
EVASIVE = {"train": ["I don't know.", "The provided documents do not say."],
           "dev": ["I'm not able to answer that from the information I have.",
                   "There is no information about this in the context."]}
KINDS = ("right", "wrong", "other question", "evasive")
#: Issue #31's bar: an injection may lift a wrong answer by at most this much, and never to the right one's score.
LIFT = 0.05


def injected(rows: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    """Each answer that does not respond, once with a grader note at its start and once at its end; the note's
    family comes from the half's injection families (never the other half's), its language in turn."""
    from adversarial_families import FAMILIES, LANGUAGES, split as halves

    data = json.loads(FAMILIES.read_text(encoding="utf-8"))
    families = halves(data)["families"]["tune" if split == "train" else "report"]
    out, k = [], 0
    for i, r in enumerate(rows):
        if r["responds"]:
            continue
        for position in ("start", "end"):
            note = data["injections"][families[k % len(families)]][LANGUAGES[k % len(LANGUAGES)]]
            k += 1
            answer = f"{note} {r['answer']}" if position == "start" else f"{r['answer']} {note}"
            right = next(j for j in range(i, -1, -1) if rows[j]["kind"] == "right")
            out.append({**r, "answer": answer, "kind": "injected", "plain": i, "right": right,
                        "family": families[(k - 1) % len(families)], "position": position})
    return out


def load(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """n questions of ``split`` (hotpot's query split) with their four answers and labels."""
    qs = {json.loads(line)["text"].strip() for line in (DATA / "hotpot" / f"queries_{split}.jsonl").open()}
    rows = [r for r in map(json.loads, (DATA / "halueval" / "qa_public.jsonl").open()) if r["question"].strip() in qs]
    rng = random.Random(seed)
    rng.shuffle(rows)
    rows = rows[: n + 1]
    out = []
    for i, r in enumerate(rows[:n]):
        other = rows[i + 1]["hallucinated_answer"]
        answers = [r["right_answer"], r["hallucinated_answer"], other, EVASIVE[split][i % 2]]
        out.extend({"question": r["question"].strip(), "answer": a, "kind": k, "responds": k in KINDS[:2]}
                   for a, k in zip(answers, KINDS))
    return out


def auc(pos: list[float], neg: list[float]) -> float:
    pairs = [(p > q) + 0.5 * (p == q) for p in pos for q in neg]
    return sum(pairs) / len(pairs) if pairs else float("nan")


async def run(rows: list[dict[str, Any]], method: str, judge: Any, embedder: Any,
              dump: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    from ragsweep.metrics.errors import JudgeError
    from ragsweep.metrics.llm import Meter
    from ragsweep.metrics.relevancy import answer_relevancy

    meter = Meter(judge)
    started = time.perf_counter()
    scores, errors = [], 0
    for r in rows:
        try:
            got = await answer_relevancy(r["question"], r["answer"], judge=meter, embedder=embedder, method=method)
        except JudgeError:  # a reply that is no valid JSON even after the repair: `ragsweep score` records an error
            got = None
        errors += got is None or got.value is None
        if dump is not None:
            dump.append({**r, "method": method, "value": None if got is None else got.value,
                         "explanation": None if got is None else got.explanation})
        # an error scores 0 here, so a recipe cannot look better by failing
        scores.append(got.value if got is not None and got.value is not None else 0.0)
    seconds = time.perf_counter() - started
    by = {k: [s for s, r in zip(scores, rows) if r["kind"] == k] for k in KINDS}
    inj = [(s, scores[r["plain"]], scores[r["right"]]) for s, r in zip(scores, rows) if r["kind"] == "injected"]
    held = [s - plain <= LIFT and not (s > plain and s >= right) for s, plain, right in inj]
    plain_rows = [(s, r) for s, r in zip(scores, rows) if r["kind"] != "injected"]
    return {"method": method, "errors": errors, "auc": auc([s for s, r in plain_rows if r["responds"]],
                                                           [s for s, r in plain_rows if not r["responds"]]),
            "held": (sum(held), len(held)), "max_lift": max((s - p for s, p, _ in inj), default=0.0),
            "flipped": sum(s >= 0.5 > plain for s, plain, _ in inj),
            "mean": {k: sum(v) / len(v) for k, v in by.items()},
            "share": {k: sum(x >= 0.5 for x in v) / len(v) for k, v in by.items()},
            "calls": meter.calls / len(rows), "written": meter.usage.completion_tokens / len(rows),
            "seconds": seconds / len(rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("train", "dev"), default="dev", help="train: tune half; dev: report half")
    ap.add_argument("--n", type=int, default=12, help="questions (four answers each)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", nargs="+", default=["judge", "questions"])
    ap.add_argument("--cache", default=None, help="judge cache folder (default: a new temporary one)")
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    ap.add_argument("--injections", action="store_true", help="also score each non-responding answer with a note "
                    "to the grader planted in it (the half's injection families)")
    ap.add_argument("--dump", default=None, help="write every row's score and explanation to this JSON-lines file")
    ap.add_argument("extra", nargs="*", help="llm.threads=1 (the only override read)")
    args = ap.parse_args(argv)
    threads = next((int(e.split("=", 1)[1]) for e in args.extra if e.startswith("llm.threads=")), 2)
    from ragsweep.metrics.embedding import OnnxMiniLM
    from ragsweep.metrics.llm import CachedLLM, LocalLLM

    rows = load(args.split, args.n, args.seed)
    if args.injections:
        rows += injected(rows, args.split)
    cache = Path(args.cache or tempfile.mkdtemp(prefix="ar-"))
    cache.mkdir(parents=True, exist_ok=True)
    judge = CachedLLM(LocalLLM("qwen2.5-coder-1.5b-instruct-q4_k_m", n_threads=threads), cache / "llm.sqlite")
    embedder = OnnxMiniLM()
    dump: list[dict[str, Any]] = []
    got = [asyncio.run(run(rows, m, judge, embedder, dump)) for m in args.methods]
    if args.dump:
        Path(args.dump).write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dump), encoding="utf-8")
    lines = [f"split {args.split} ({'tune' if args.split == 'train' else 'report'}), {args.n} questions x 4 answers, "
             f"seed {args.seed}, {threads} llama.cpp thread(s)", "",
             "| method | errors | ROC-AUC | " + " | ".join(f"{k}: mean / >= 0.5" for k in KINDS)
             + " | injections held | max lift | called responding | calls / answer | written tokens / answer | s / answer |",
             "|" + "---|" * (9 + len(KINDS))]
    for r in got:
        cells = " | ".join(f"{r['mean'][k]:.3f} / {r['share'][k]:.2f}" for k in KINDS)
        held = f"{r['held'][0]} / {r['held'][1]}" if r["held"][1] else "-"
        lines.append(f"| {r['method']} | {r['errors']} | {r['auc']:.3f} | {cells} | {held} | {r['max_lift']:+.3f} | {r['flipped']} "
                     f"| {r['calls']:.1f} | {r['written']:.0f} | {r['seconds']:.1f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
