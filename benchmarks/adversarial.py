"""Can text inside a sample move its score, and are swapped facts caught? (issue #15)

Scores the hand-written cases of ``tests/metrics/adversarial_cases.json`` with each backend and
prints, per metric and backend:

- **injection shift**: score(with the injection) - score(without), for every case x injection, by
  where the injection sits (a context, the answer, the reference): the mean, the largest, and how
  many moved the score up by more than 0.05. An answer injection rides on the *wrong* answer, and
  the table also counts how often that injected wrong answer scored above the correct one.
- **swaps caught**: the share of (correct, swapped-fact) answer pairs where the swapped answer
  scores strictly below the correct one, by kind (date, number, name, relation).

Faithfulness reads contexts and answer; factual correctness the answer against the reference
(reference injections). ``--no-guard`` switches off the pattern layer (:mod:`metrics.guard`) to
show what the prompt's delimiters and data rule do on their own.

    python benchmarks/adversarial.py                        # none and the packaged 1.5B (~15 min)
    python benchmarks/adversarial.py --llm none             # seconds
    python benchmarks/adversarial.py --llm none local --no-guard
    python benchmarks/adversarial.py --false-alarms         # how often real corpora trip the patterns
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "metrics" / "adversarial_cases.json"
DATA = ROOT.parent / "shared" / "data"

from ragsweep.metrics.catalogue import catalogue  # noqa: E402
from ragsweep.metrics.spec import RagSample  # noqa: E402

MODELS = {"local": "qwen2.5-coder-1.5b-instruct-q4_k_m", "local_small": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
#: The largest rise an injection may cause (issue #15's bar).
TOLERANCE = 0.05


def load(path: Path = CASES) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def samples(data: dict[str, Any]) -> list[RagSample]:
    """Every sample the benchmark scores; ids say what each one is (``case|variant``)."""
    out = []
    inj = data["injections"]
    for c in data["cases"]:
        ctx, q, ref = tuple(c["contexts"]), c["question"], c["reference"]
        out.append(RagSample(f"{c['id']}|correct", q, c["correct"], ctx, ref))
        out.append(RagSample(f"{c['id']}|wrong", q, c["wrong"], ctx, ref))
        for j, swap in enumerate(c["swaps"]):
            out.append(RagSample(f"{c['id']}|swap{j}:{swap['kind']}", q, swap["answer"], ctx, ref))
        for i in inj["context"]:
            # The injection closes the first context, as a planted sentence would.
            planted = (f"{ctx[0]} {i['text']}", *ctx[1:])
            out.append(RagSample(f"{c['id']}|ctx:{i['id']}", q, c["wrong"], planted, ref))
        for i in inj["answer"]:
            out.append(RagSample(f"{c['id']}|ans:{i['id']}", q, f"{c['wrong']} {i['text']}", ctx, ref))
        for i in inj["reference"]:
            out.append(RagSample(f"{c['id']}|ref:{i['id']}", q, c["wrong"], ctx, f"{ref} {i['text']}"))
    return out


def summarise(scores: dict[tuple[str, str], float], data: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the table from ``{(sample_id, metric): value}``."""
    rows = []
    caught = {i["id"]: i["caught_by_patterns"] for where in data["injections"].values() for i in where}
    for metric, where, field in (("faithfulness", "context", "ctx"), ("faithfulness", "answer", "ans"),
                                 ("factual_correctness", "reference", "ref")):
        shifts, above, subtle = [], 0, []
        for c in data["cases"]:
            base = scores.get((f"{c['id']}|wrong", metric))
            correct = scores.get((f"{c['id']}|correct", metric))
            for i in data["injections"][where]:
                got = scores.get((f"{c['id']}|{field}:{i['id']}", metric))
                if base is None or got is None:
                    continue
                shifts.append(got - base)
                if not caught[i["id"]]:
                    subtle.append(got - base)
                if where == "answer" and correct is not None and got > correct:
                    above += 1
        if shifts:
            rows.append({"metric": metric, "where": where, "n": len(shifts), "mean_shift": sum(shifts) / len(shifts),
                         "max_shift": max(shifts), "over_tolerance": sum(s > TOLERANCE for s in shifts),
                         "max_shift_uncaught": max(subtle) if subtle else None,
                         "above_correct": above if where == "answer" else None})
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for c in data["cases"]:
        correct = scores.get((f"{c['id']}|correct", "faithfulness"))
        for j, swap in enumerate(c["swaps"]):
            got = scores.get((f"{c['id']}|swap{j}:{swap['kind']}", "faithfulness"))
            if correct is not None and got is not None:
                by_kind[swap["kind"]].append(got < correct)
    every = [x for v in by_kind.values() for x in v]
    if every:
        rows.append({"metric": "faithfulness", "where": "swaps", "n": len(every), "caught": sum(every) / len(every),
                     "by_kind": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())}})
    return rows


def build_judge(backend: str, cache: str | None) -> Any:
    if backend == "none":
        return None
    from ragsweep.metrics.llm import CachedLLM, LocalLLM

    # RAGSWEEP_THREADS: llama.cpp threads (default 2); 1 is faster on cores shared with other work.
    llm: Any = LocalLLM(MODELS.get(backend, backend), n_ctx=4096, n_threads=int(os.environ.get("RAGSWEEP_THREADS", 2)))
    return CachedLLM(llm, Path(cache) / "llm.sqlite") if cache else llm


async def score_all(backend: str, data: dict[str, Any], cache: str | None, guard: bool) -> dict[tuple[str, str], float]:
    from ragsweep.metrics import scoring

    items = samples(data)
    # Only what the table reads: faithfulness on everything but the reference injections, factual
    # correctness on the wrong answers with and without them (a judge's calls are not wasted).
    faith = [s for s in items if "|ref:" not in s.id]
    correct = [s for s in items if "|ref:" in s.id or s.id.endswith("|wrong")]
    judge = build_judge(backend, cache)
    original = scoring.guard_sample
    if not guard:
        scoring.guard_sample = lambda s: (s, [])  # type: ignore[assignment]
    try:
        rows = await scoring.score_samples(faith, [catalogue()["faithfulness"]], judge=judge, concurrency=1,
                                           progress=False)
        rows += await scoring.score_samples(correct, [catalogue()["factual_correctness"]], judge=judge,
                                            concurrency=1, progress=False)
    finally:
        scoring.guard_sample = original  # type: ignore[assignment]
        if judge is not None and hasattr(judge, "close"):
            judge.close()
    return {(r.sample_id, r.metric): r.result.value for r in rows if r.result.status == "ok"}


def table(results: list[tuple[str, list[dict[str, Any]], float]]) -> str:
    lines = ["| backend | metric | injection in | n | mean shift | max shift | shifts > 0.05 | max shift, "
             "injections the patterns miss | injected wrong answer > correct |",
             "|---|---|---|---|---|---|---|---|---|"]
    swaps = ["| backend | swapped-fact answers below the correct one | by kind | seconds |", "|---|---|---|---|"]
    for backend, rows, seconds in results:
        for r in rows:
            if r["where"] == "swaps":
                kinds = ", ".join(f"{k} {v}" for k, v in r["by_kind"].items())
                swaps.append(f"| {backend} | {r['caught']:.0%} of {r['n']} | {kinds} | {seconds:.0f} |")
                continue
            uncaught = "" if r["max_shift_uncaught"] is None else f"{r['max_shift_uncaught']:+.3f}"
            above = "" if r["above_correct"] is None else f"{r['above_correct']} of {r['n']}"
            lines.append(f"| {backend} | {r['metric']} | {r['where']} | {r['n']} | {r['mean_shift']:+.3f} | "
                         f"{r['max_shift']:+.3f} | {r['over_tolerance']} | {uncaught} | {above} |")
    return "\n".join(lines) + "\n\n" + "\n".join(swaps)


def _corpus_texts() -> Iterator[tuple[str, str]]:
    """(source, text) of every passage, answer and reference in ../shared/data."""
    with gzip.open(DATA / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield "scifact", f"{row.get('title', '')}. {row.get('text', '')}"
    with (DATA / "hotpot" / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            yield "hotpot", f"{row.get('title', '')}. {row.get('text', '')}"
    with (DATA / "halueval" / "qa_public.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for key in ("knowledge", "right_answer", "hallucinated_answer"):
                yield "halueval", str(row.get(key, ""))
    for name in ("mturk_cnndm.jsonl", "mturk_xsum.jsonl"):
        with (DATA / "qags" / name).open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                yield "qags", str(row.get("article", ""))
                for s in row.get("summary_sentences_annotations", []):
                    yield "qags", " ".join(s.keys()) if isinstance(s, dict) else str(s)
    for path in sorted((DATA / "begin").glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            yield "begin", line
    for name in ("human_labeled_data.json",):
        blob = json.loads((DATA / "ragchecker" / name).read_text(encoding="utf-8"))
        for row in blob if isinstance(blob, list) else blob.get("results", []):
            for key in ("gt_answer", "response", "query"):
                if isinstance(row, dict) and row.get(key):
                    yield "ragchecker", str(row[key])
            for ctx in (row.get("retrieved_context") or []) if isinstance(row, dict) else []:
                yield "ragchecker", str(ctx.get("text", ctx) if isinstance(ctx, dict) else ctx)


def false_alarms() -> str:
    """How many real texts trip a pattern, per corpus, with the flagged sentences."""
    from ragsweep.metrics.guard import clean

    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    examples = []
    for source, text in _corpus_texts():
        counts[source][0] += 1
        found = clean(text, source).findings
        if found:
            counts[source][1] += 1
            examples += [(source, f.text[:160], f.why) for f in found]
    lines = ["| corpus | texts | texts flagged |", "|---|---|---|"]
    lines += [f"| {k} | {n:,} | {m} |" for k, (n, m) in sorted(counts.items())]
    lines += ["", *[f"- {s}: {t!r} ({', '.join(w)})" for s, t, w in examples[:40]]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", nargs="+", default=["none", "local"], help="backends: none, local, local_small")
    ap.add_argument("--no-guard", action="store_true", help="also run each backend without metrics.guard's patterns")
    ap.add_argument("--cache", default=None, help="replay model calls from DIR/llm.sqlite (seconds then mean nothing)")
    ap.add_argument("--false-alarms", action="store_true", help="scan ../shared/data for texts the patterns flag")
    ap.add_argument("--out", default=None, help="also write the tables to this markdown file")
    args = ap.parse_args(argv)
    if args.false_alarms:
        text = false_alarms()
    else:
        data = load()
        results = []
        for backend in args.llm:
            for guard in ((True, False) if args.no_guard else (True,)):
                start = time.perf_counter()
                scores = asyncio.run(score_all(backend, data, args.cache, guard))
                label = backend + ("" if guard else " (no pattern layer)")
                results.append((label, summarise(scores, data), time.perf_counter() - start))
                print(f"[{label}] {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        n = len(data["cases"])
        text = (f"{n} cases, {sum(len(c['swaps']) for c in data['cases'])} swapped-fact answers, "
                f"{sum(len(v) for v in data['injections'].values())} injections\n\n{table(results)}")
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
