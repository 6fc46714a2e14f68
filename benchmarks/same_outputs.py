"""Does a refactoring keep the default sweep's outputs? Runs ``ragsweep sweep`` on two commits and compares.

    python benchmarks/same_outputs.py                  # the merge base with main against the working tree
    python benchmarks/same_outputs.py --base abc123 -- max_queries=10

Each side is a copy of the package (``git archive`` for a commit, the working tree for ``WORKTREE``) run
as ``python -m ragsweep.harness.cli sweep progress=false`` in its own folder with its own empty cache, so
neither side reads what the other computed. Compared: ``leaderboard.csv`` and every job's ``runs.jsonl``
and ``scores.jsonl``, equal apart from measured times (:data:`MEASURED`) and the sweep folder's name.
Exit code 0 when equal, 1 when not (the first differences are printed).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
WORKTREE = "WORKTREE"
#: Fields that hold a measured time (they differ between any two runs of the same code).
MEASURED = frozenset({"seconds", "latency_p50_ms", "latency_p95_ms", "index_build_s", "latency_ms",
                      "elapsed_s", "started", "finished"})


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def checkout(rev: str, into: Path) -> Path:
    """A copy of the package at ``rev`` (or the working tree) as ``into/ragsweep``, for ``PYTHONPATH=into``."""
    pkg = into / "ragsweep"
    if rev == WORKTREE:
        shutil.copytree(REPO, pkg, ignore=shutil.ignore_patterns(".git", "outputs", "__pycache__", "*.pyc"))
        return pkg
    data = subprocess.run(["git", "archive", rev], cwd=REPO, check=True, capture_output=True).stdout
    pkg.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(pkg, filter="data")
    return pkg


def sweep(root: Path, overrides: list[str]) -> Path:
    """Runs the sweep with the package under ``root`` and returns its sweep folder."""
    run = root / "run"
    run.mkdir()
    env = {**os.environ, "PYTHONPATH": str(root), "RAGSWEEP_CACHE_DIR": str(root / "cache")}
    done = subprocess.run([sys.executable, "-m", "ragsweep.harness.cli", "sweep", "progress=false", *overrides],
                          cwd=run, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"sweep failed in {root}:\n{done.stderr[-3000:]}")
    (folder,) = (run / "outputs" / "sweeps").iterdir()
    return folder


def _clean(value: Any, folder: str) -> Any:
    """``value`` with measured times dropped and the sweep folder's name (a time stamp) replaced by a placeholder."""
    if isinstance(value, dict):
        return {k: _clean(v, folder) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [_clean(v, folder) for v in value]
    if isinstance(value, str):
        return value.replace(folder, "<sweep>")
    return value


def _board(folder: Path) -> list[dict[str, Any]]:
    with (folder / "leaderboard.csv").open(encoding="utf-8") as fh:
        return [_clean(row, folder.name) for row in csv.DictReader(fh)]


def _jsonl(path: Path, folder: Path) -> list[Any]:
    return [_clean(json.loads(line), folder.name) for line in path.open(encoding="utf-8") if line.strip()]


def compare(a: Path, b: Path) -> list[str]:
    """The differences between two sweep folders (empty: the same outputs)."""
    out = []
    left, right = _board(a), _board(b)
    if left != right:
        cols = sorted({k for x, y in zip(left, right) for k in x if x.get(k) != y.get(k)})
        out.append(f"leaderboard.csv differs ({len(left)} vs {len(right)} rows; columns: {', '.join(cols)})")
    files = sorted({p.relative_to(a) for p in a.rglob("*.jsonl") if p.name in ("runs.jsonl", "scores.jsonl")})
    other = sorted({p.relative_to(b) for p in b.rglob("*.jsonl") if p.name in ("runs.jsonl", "scores.jsonl")})
    if files != other:
        out.append(f"different files: {sorted(set(map(str, files)) ^ set(map(str, other)))}")
    for rel in files:
        if rel in other:
            left, right = _jsonl(a / rel, a), _jsonl(b / rel, b)
            if left != right:
                line = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
                out.append(f"{rel} differs (first at line {line + 1}; {len(left)} vs {len(right)} lines)")
    if not files:
        out.append("no runs.jsonl or scores.jsonl found")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=None, help="commit to compare against (default: merge base with main)")
    parser.add_argument("--head", default=WORKTREE, help=f"commit to compare (default: {WORKTREE})")
    parser.add_argument("--keep", type=Path, default=None, help="run in this folder and keep it (default: a temporary one)")
    parser.add_argument("overrides", nargs="*", help="sweep overrides, the same on both sides")
    args = parser.parse_args(argv)
    base = args.base or _git("merge-base", "HEAD", "main")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)
    with tempfile.TemporaryDirectory(prefix="same_outputs_") as scratch:
        tmp = args.keep or scratch
        folders = []
        for side, rev in (("base", base), ("head", args.head)):
            root = Path(tmp) / side
            checkout(rev, root)
            folders.append(sweep(root, args.overrides))
            n = len(list(folders[-1].rglob("scores.jsonl")))
            print(f"{side} {rev[:12]}: {n} jobs in {folders[-1].name}")
        diffs = compare(*folders)
    print("\n".join(diffs) if diffs else "same outputs: leaderboard.csv, every runs.jsonl and scores.jsonl "
          "(measured times aside)")
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
