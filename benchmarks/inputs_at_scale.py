"""Time of the paths that grow with input size, now and at an older revision, side by side.

    python benchmarks/inputs_at_scale.py                      # metrics at 80 KB and 1 MB, gen at 1 MB and 5 MB
    python benchmarks/inputs_at_scale.py --old-rev dc1ab42 --old-metric-kb 20 --old-gen-mb   # the old code less

- ``string_similarity``, ``non_llm_context_recall`` (one retrieved context, one reference context) and
  ``rouge_l`` (a word LCS) on answer/reference pairs of unrelated generated text (the exact distance's
  worst case), and on a near copy (the reference with 2% of its characters edited);
- ``ragsweep gen llm=none n=10`` on a folder holding one generated document.

Each measurement runs in its own process (``--old-rev``: a ``git archive`` of that revision, the code
before the budgeted edit distance and the windowed sentence pairing), and reports wall and CPU seconds
(of the metric call alone; of the whole command for gen, imports and model loading included): on a
shared machine the CPU time is the steadier figure. The old code runs only at the sizes given
(``--old-metric-kb``, default 20 and 80 KB, string_similarity on the unrelated pair; ``--old-gen-mb``,
default 1 MB): its edit distance takes minutes at 80 KB, and its costs grow with the square of the size.
Results are printed and written to ``benchmarks/results/<date>-inputs-at-scale.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
_WORDS = ["harbour", "ferry", "tide", "route", "bridge", "island", "market", "gauge", "crew", "cargo", "lantern", "festival", "museum", "station", "north", "south", "quay", "pier", "channel", "beacon", "storm", "survey", "council", "tender", "timber", "engine"]
_NAMES = ["Calder Ferries", "Ines Marrow", "Port Calder", "Hollin Island", "Saltgate Bridge", "Wrenmouth",
          "Teodora Vance", "Gannet Point"] + [f"Elm{i} Works" for i in range(200)]

# Runs inside the measured process, timing the metric call alone: {"wall": s, "cpu": s, "value": ..., ...}.
_METRIC_JOB = """
import json, sys, time
from ragsweep.metrics import lexical
a, b = open(sys.argv[2]).read(), open(sys.argv[3]).read()
start, cpu = time.perf_counter(), time.process_time()
if sys.argv[1] == "non_llm_context_recall":
    r = lexical.non_llm_context_recall([a], [b])
else:
    r = getattr(lexical, sys.argv[1])(a, b)
out = {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu, "value": r.value,
       "explanation": r.explanation}
print(json.dumps(out, default=str))
"""


def document(size: int, seed: int) -> str:
    """Sentences of random words around entities, years and quantities, a paragraph break now and then."""
    rng = random.Random(seed)
    out, total = [], 0
    while total < size:
        s = (f"{rng.choice(_NAMES)} {rng.choice(['was', 'is', 'opened', 'built'])} "
             + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14)))
             + f" in {rng.randint(1800, 2024)} with {rng.randint(2, 900)} {rng.choice(['tonnes', 'ships', 'metres'])}"
             + f" near {rng.choice(_NAMES)} on the {rng.choice(_WORDS)} quay.")
        if rng.random() < 0.2:
            s = "It " + s.split(" ", 2)[2]
        out.append(s + ("\n\n" if rng.random() < 0.1 else " "))
        total += len(out[-1])
    return "".join(out)[:size]


def near_copy(text: str, rate: float, seed: int) -> str:
    """``text`` with a share ``rate`` of its characters substituted, deleted or followed by an insertion."""
    rng = random.Random(seed)
    chars = list(text)
    for _ in range(int(len(chars) * rate)):
        k = rng.randrange(len(chars))
        op = rng.randrange(3)
        chars[k] = rng.choice("xyz") if op == 0 else "" if op == 1 else chars[k] + rng.choice("xyz")
    return "".join(chars)


def run(cmd: list[str], tree: Path, timeout: float) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process importing ragsweep from ``tree``, and its output."""
    env = {**os.environ, "PYTHONPATH": str(tree.parent), "RAGSWEEP_CACHE_DIR": str(tree.parent / "cache")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return float("inf"), float("inf"), "timed out"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode != 0:
        return wall, cpu, "failed: " + done.stderr.strip().splitlines()[-1]
    return wall, cpu, done.stdout


def export(rev: str, into: Path) -> Path:
    """A copy of revision ``rev`` of this repository as ``into/ragsweep`` (importable as ``ragsweep``)."""
    tree = into / "ragsweep"
    tree.mkdir(parents=True)
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(tree, filter="data")
    return tree


def metric_rows(tree: Path, label: str, sizes_kb: list[int], tmp: Path, timeout: float,
                every: bool = True) -> list[dict]:
    """The three metrics on both pairs at each size; ``every=False``: string_similarity on the unrelated pair only
    (the old code's one edit distance serves both metrics, and takes as long on either pair)."""
    rows = []
    for kb in sizes_kb:
        a = document(kb * 1000, seed=1)
        pairs = [("unrelated", document(kb * 1000, seed=2)), ("near copy", near_copy(a, 0.02, seed=3))]
        for pair, b in pairs if every else pairs[:1]:
            fa, fb = tmp / f"a{kb}.txt", tmp / f"b{kb}-{pair[0]}.txt"
            fa.write_text(a)
            fb.write_text(b)
            metrics = ("string_similarity", "non_llm_context_recall", "rouge_l") if every else ("string_similarity",)
            for metric in metrics:
                wall, cpu, out = run([sys.executable, "-c", _METRIC_JOB, metric, str(fa), str(fb)], tree, timeout)
                got = json.loads(out) if out.startswith("{") else {"value": out.strip()}
                rows.append({"code": label, "what": f"{metric} ({pair})", "size": f"{kb} KB",
                             "wall": got.get("wall", wall), "cpu": got.get("cpu", cpu), "result": _summary(got)})
                print(_line(rows[-1]), flush=True)
    return rows


def _summary(got: dict) -> str:
    """The value, and for the recall the similarity behind it; with the bounds when they are approximate."""
    value, e = got.get("value"), got.get("explanation") or {}
    if not isinstance(value, float):
        return str(value)
    prefix = ""
    if "reference_contexts" in e:
        e = e["reference_contexts"][0]
        prefix, value = f"{got['value']:.4f}, similarity ", e["similarity"]
    if e.get("approximate"):
        high = (e["similarity_bounds"][1] if "similarity_bounds" in e else e["f_bounds"][1] if "f_bounds" in e
                else e["similarity_upper"])
        return f"{prefix}{value:.4f} (approximate: the exact value is in [{value:.4f}, {high:.4f}])"
    return f"{prefix}{value:.4f} (exact)"


def gen_rows(tree: Path, label: str, sizes_mb: list[int], tmp: Path, timeout: float) -> list[dict]:
    rows = []
    for mb in sizes_mb:
        folder = tmp / f"doc{mb}"
        if not folder.is_dir():
            folder.mkdir()
            (folder / "big.txt").write_text(document(mb * 1_000_000, seed=4))
        cmd = [sys.executable, "-c", "from ragsweep.harness.cli import main; main()", "gen", "llm=none", "n=10",
               "corpus=folder", f"corpus.path={folder}", f"hydra.run.dir={tmp / f'out-{label}-{mb}'}"]
        wall, cpu, out = run(cmd, tree, timeout)
        accepted = next((ln for ln in out.splitlines() if ln.startswith("accepted")), out.strip()[-80:])
        rows.append({"code": label, "what": "ragsweep gen llm=none n=10", "size": f"{mb} MB", "wall": wall,
                     "cpu": cpu, "result": accepted})
        print(_line(rows[-1]), flush=True)
    return rows


def _line(r: dict) -> str:
    return f"| {r['code']} | {r['what']} | {r['size']} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['result']} |"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--metric-kb", type=int, nargs="*", default=[80, 1000])
    p.add_argument("--gen-mb", type=int, nargs="*", default=[1, 5])
    p.add_argument("--old-rev", default="dc1ab42", help="the revision to compare with (before issue #30's fixes)")
    p.add_argument("--old-metric-kb", type=int, nargs="*", default=[20, 80])
    p.add_argument("--old-gen-mb", type=int, nargs="*", default=[1])
    p.add_argument("--timeout", type=float, default=900, help="seconds one measurement may take")
    args = p.parse_args(argv)
    header = "| code | what | size | wall s | CPU s | result |\n|---|---|---|---|---|---|"
    print(header)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        old = export(args.old_rev, tmp / "old") if args.old_metric_kb or args.old_gen_mb else None
        now = tmp / "now" / "ragsweep"  # importable as ragsweep whatever the checkout's folder is called
        now.parent.mkdir()
        now.symlink_to(ROOT, target_is_directory=True)
        rows = metric_rows(now, "now", args.metric_kb, tmp, args.timeout)
        rows += metric_rows(old, args.old_rev, args.old_metric_kb, tmp, args.timeout, every=False) if old else []
        rows += gen_rows(now, "now", args.gen_mb, tmp, args.timeout)
        rows += gen_rows(old, args.old_rev, args.old_gen_mb, tmp, args.timeout) if old else []
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{dt.date.today().isoformat()}-inputs-at-scale.md"
    out.write_text(f"# Inputs at scale ({dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, now = {head})\n\n"
                   f"Generated by `python benchmarks/inputs_at_scale.py {' '.join(argv or sys.argv[1:])}`"
                   " (see its docstring).\n\n" + header + "\n" + "\n".join(_line(r) for r in rows) + "\n")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
