"""The evidence-support gate (``gen.supported``) on hand-read questions: its value for each question a read marked,
so that its threshold is fitted on read (tune) questions only (issue #34).

A read file (``benchmarks/results/*-read.md``) has a table with a ``#`` column (the n-th sample of its test set)
and a ``CR`` column (y / n: the reference is right); each ``--read READ.md TESTSET.jsonl FOLDER`` triple gives the
marks, the questions and the pages. The gate's value is the faithfulness metric's (the claim judge) on the reference
as the answer to the question, against the evidence led by its titles; a question out of the gate's scope (a code
answer) is listed as such.

    python benchmarks/support_gate.py --threads 1 \\
        --read benchmarks/results/2026-11-26-doc-heldout5-read.md /work/scratch/s36/heldout5.jsonl /work/scratch/s36/heldout5 \\
        --read benchmarks/results/2026-11-26-doc-heldout4-read.md /work/scratch/s36/heldout4.jsonl /work/scratch/s36/heldout4

It prints one row per question (set, #, style, CR, value, calls, tokens) and, per threshold, how many CR=n
questions it catches and CR=y questions it loses.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))


def read_marks(path: Path) -> dict[int, bool]:
    """sample number -> its CR mark, from the first Markdown table of ``path`` with '#' and 'CR' columns."""
    marks: dict[int, bool] = {}
    header: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            if marks:
                break
            header = None
            continue
        if header is None:
            header = cells
            continue
        if "#" in header and "CR" in header and cells[header.index("#")].isdigit():
            marks[int(cells[header.index("#")])] = cells[header.index("CR")].lower().startswith("y")
    return marks


async def score(llm: object, read: Path, testset: Path, folder: Path, form: str = "answer") -> list[dict]:
    from ragsweep.gen.documents import read_folder
    from ragsweep.gen.supported import evidence_support, headed_evidence, in_scope
    from ragsweep.gen.testset import read_testset

    corpus = read_folder(folder)
    marks = read_marks(read)
    rows = []
    for i, sample in enumerate(read_testset(testset), start=1):
        row = {"set": testset.stem, "n": i, "style": sample.provenance.get("style", "fact"), "cr": marks.get(i),
               "question": sample.question, "reference": sample.reference}
        if not in_scope(sample, corpus, "docs"):
            rows.append({**row, "p": None, "calls": 0, "tokens": 0, "scope": "out"})
            continue
        got = await evidence_support(llm, sample.question, sample.reference, headed_evidence(sample, corpus), form)
        parts = got.to_dict()["claims"]
        low = min(parts, key=lambda c: c["p"]) if parts else {}
        rows.append({**row, "p": got.value, "calls": got.calls, "scope": "in", "p_judge": low.get("p_judge"),
                     "p_offline": low.get("p_offline"), "p_blind": low.get("p_blind"),
                     "tokens": got.usage.prompt_tokens + got.usage.completion_tokens})
    return rows


def auc(rows: list[dict], key: str) -> float:
    """The share of (CR=y, CR=n) pairs in which the CR=y question has the higher ``key`` (ties count half)."""
    good = [r.get(key) or 0.0 for r in rows if r["cr"]]
    bad = [r.get(key) or 0.0 for r in rows if not r["cr"]]
    pairs = [(g > b) + 0.5 * (g == b) for g in good for b in bad]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--read", nargs=3, action="append", type=Path, required=True,
                        metavar=("READ_MD", "TESTSET", "FOLDER"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--form", default="answer", help="how question and reference are put (gen.supported.FORMS)")
    parser.add_argument("--cache-dir", default=None, help="the LLM cache folder (default: a fresh temporary one)")
    args = parser.parse_args(argv)
    import tempfile

    from ragsweep.metrics import local_llm

    with tempfile.TemporaryDirectory() as tmp:
        llm = local_llm(threads=args.threads, cache_dir=args.cache_dir or tmp)
        rows = [r for read, testset, folder in args.read for r in asyncio.run(score(llm, read, testset, folder, args.form))]
    print(f"form: {args.form}\n")
    print("| set | # | style | CR | support | P(yes) | offline | blind | calls | tokens | question -> reference |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        p = "out of scope" if r["p"] is None and r["scope"] == "out" else (
            "undefined" if r["p"] is None else f"{r['p']:.3f}")
        extra = " | ".join("" if r.get(k) is None else f"{r[k]:.3f}" for k in ("p_judge", "p_offline", "p_blind"))
        print(f"| {r['set']} | {r['n']} | {r['style']} | {'y' if r['cr'] else 'n'} | {p} | {extra} | {r['calls']} | "
              f"{r['tokens']} | {r['question'][:70]} -> {' '.join(r['reference'].split())[:60]} |")
    judged = [r for r in rows if r["scope"] == "in" and r["cr"] is not None]
    print("\n| threshold | CR=n caught | CR=y lost |\n| --- | --- | --- |")
    for t in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.92):
        caught = sum(1 for r in judged if not r["cr"] and (r["p"] is None or r["p"] < t))
        lost = sum(1 for r in judged if r["cr"] and (r["p"] is None or r["p"] < t))
        print(f"| {t} | {caught} of {sum(not r['cr'] for r in judged)} | {lost} of {sum(r['cr'] for r in judged)} |")
    for key in ("p", "p_judge", "p_offline"):
        print(f"ROC-AUC of {key} (CR=y above CR=n): {auc(judged, key):.2f}")
    calls = sum(r["calls"] for r in judged)
    tokens = sum(r["tokens"] for r in judged)
    print(f"\n{len(judged)} judged: {calls} calls, {tokens} tokens ({calls / max(len(judged), 1):.2f} calls, "
          f"{tokens / max(len(judged), 1):.0f} tokens a question)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
