"""What the default ``ragsweep score`` costs per sample, this tree beside another commit, in one run.

Each side scores the same rows with the shipped defaults (every metric the file's columns allow, the
packaged 1.5B judge) in a fresh process with an empty cache, so the seconds include the model load
and no call is replayed. The other commit runs from a temporary ``git worktree``; the sides run in
turn (``--rounds`` times, alternating which goes first) so that a busy neighbour slows both alike.

    python benchmarks/score_cost.py                      # this tree against main's first parent, 9 rows
    python benchmarks/score_cost.py --base 8ff0dcc --rows 4 --rounds 2 --out cost.md

It prints seconds per sample, judge calls, prompt and output tokens per sample (read from each side's
judge cache), and the ratio of this tree's seconds to the base's.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_INPUT = ROOT.parent / "shared" / "data" / "interop" / "arcadia_ragas.csv"


def _rows(src: Path, n: int, into: Path) -> Path:
    import pandas as pd

    out = into / "rows.csv"
    pd.read_csv(src).head(n).to_csv(out, index=False)
    return out


def _spent(cache_dir: Path) -> tuple[int, int, int]:
    """Calls, prompt tokens and output tokens recorded in a side's judge cache."""
    db = cache_dir / "llm.sqlite"
    if not db.exists():
        return 0, 0, 0
    with sqlite3.connect(db) as con:
        calls, prompt, output = con.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM completions"
        ).fetchone()
    return int(calls), int(prompt), int(output)


def _side(name: str, package_parent: Path, rows: Path, work: Path, extra: list[str]) -> dict[str, float]:
    cache = Path(tempfile.mkdtemp(prefix=f"cost-{name}-", dir=work))
    out = cache / "out"
    env = {**os.environ, "PYTHONPATH": str(package_parent), "RAGSWEEP_CACHE_DIR": str(cache)}
    cmd = [sys.executable, "-m", "ragsweep.harness.cli", "score", f"input={rows}", f"out={out}", "progress=false",
           *extra]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{name}: ragsweep score failed ({done.returncode}):\n{done.stderr[-2000:]}")
    calls, prompt, output = _spent(cache)
    return {"seconds": seconds, "calls": calls, "prompt": prompt, "output": output}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD~1", help="the commit to compare with (default: HEAD~1)")
    ap.add_argument("--input", default=str(DEFAULT_INPUT), help="a file ragsweep score reads")
    ap.add_argument("--rows", type=int, default=9, help="its first N rows")
    ap.add_argument("--rounds", type=int, default=1, help="runs per side, alternating which goes first")
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    ap.add_argument("extra", nargs="*", help="more overrides for both sides, e.g. llm=local_small")
    args = ap.parse_args(argv)
    source = Path(args.input)
    if not source.is_file() or source.stat().st_size == 0:
        ap.error(f"{source}: {'empty file' if source.is_file() else 'no such file'}")
    if args.rows < 1 or args.rounds < 1:
        ap.error("--rows and --rounds must be at least 1")
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="score-cost-") as tmp:
        work = Path(tmp)
        tree = work / "base" / "ragsweep"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            rows = _rows(Path(args.input), args.rows, work)
            sides = {"base": tree.parent, "this tree": ROOT.parent}
            got: dict[str, list[dict[str, float]]] = {k: [] for k in sides}
            for r in range(args.rounds):
                order = list(sides) if r % 2 == 0 else list(reversed(sides))
                for name in order:
                    got[name].append(_side(name.replace(" ", "-"), sides[name], rows, work, args.extra))
                    print(f"[round {r + 1}] {name}: {got[name][-1]['seconds']:.1f} s", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    n = args.rows
    lines = [f"`ragsweep score` defaults on the first {n} rows of {Path(args.input).name}, {args.rounds} round(s), "
             f"base {base}, this tree at {head}" + (" (uncommitted changes)" if _dirty() else ""), "",
             "| side | s / sample (median) | judge calls / sample | prompt tokens / sample | output tokens / sample |",
             "|---|---|---|---|---|"]
    med = {}
    for name, runs in got.items():
        med[name] = statistics.median(r["seconds"] for r in runs) / n
        last = runs[-1]
        lines.append(f"| {name} | {med[name]:.1f} | {last['calls'] / n:.1f} | {last['prompt'] / n:.0f} | "
                     f"{last['output'] / n:.0f} |")
    lines += ["", f"ratio of seconds (this tree / base): {med['this tree'] / med['base']:.2f}"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def _dirty() -> bool:
    return bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    raise SystemExit(main())
