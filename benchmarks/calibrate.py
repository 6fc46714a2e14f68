"""Calibration benchmark: the judged metrics against human labels, one table per judge backend.

Runs faithfulness on HaluEval QA, QAGS and BEGIN and factual correctness on the RAGChecker
meta-evaluation (``benchmarks/calibration_sets.py`` loads them from ``../shared/data``), and prints the
agreement with people beside the cost: model calls, tokens and seconds per sample.

    python benchmarks/calibrate.py --llm none                       # seconds, no model
    python benchmarks/calibrate.py --readme --out calibration.md    # the README table (~45 min quiet)
    python benchmarks/calibrate.py --llm local --sets halueval --n 10 --split tune   # iterate
    python benchmarks/calibrate.py --fit --split tune --llm none local   # fit the calibration map

Figures for the README come from ``--split heldout`` (the default); tune prompts, thresholds and
the offline weights on ``--split tune`` only. Model calls are not cached here, so the seconds are
real; ``--cache DIR`` replays calls from ``DIR/llm.sqlite`` (seconds then mean nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration_sets import LOADERS, CalibrationSet, ragchecker_own_scores  # noqa: E402
from ragsweep.metrics.catalogue import catalogue  # noqa: E402
from ragsweep.metrics.errors import InputError  # noqa: E402
from ragsweep.metrics.llm import Meter  # noqa: E402
from ragsweep.metrics.scoring import score_samples  # noqa: E402

#: The 1.5B's speed on this 2-core machine when it is quiet (prompt / generated tokens per second),
#: for the "quiet s" column: the seconds the same tokens take without other jobs on the cores.
QUIET_TPS = {"local": (70.0, 25.0)}
MODELS = {"local": "qwen2.5-coder-1.5b-instruct-q4_k_m", "local_small": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
SETS = ("halueval", "qags", "begin", "ragchecker")
#: The row of RAGChecker's own published scores (its Llama-3-70B checker) on the same pairs.
OWN_SCORES = "RAGChecker's own scores (Llama-3-70B)"
#: Published anchors, shown beside our figures (sources in docs_calibration.md).
ANCHORS = {
    ("halueval", "pairwise_acc"): "Ragas 0.4.3 faithfulness, same 1.5B: 0.66; P(true) one call: 0.73",
    ("halueval", "roc_auc"): "Ragas 0.4.3, same 1.5B: 0.65; P(true) one call: 0.76",
    ("ragchecker", "correctness_pearson"): "RAGChecker (Llama-3-70B): 0.497; human-human 0.637",
    ("ragchecker", "completeness_pearson"): "RAGChecker (Llama-3-70B): 0.607; human-human 0.719",
}


#: The README's table: (backend, {set: rows}, metric options). RAGChecker's correctness runs with
#: the local judge as ``factual_correctness claims=graded`` (one short grading call per response,
#: blended with the sentence evidence), on every held-out pair, as F-0.5 (``beta=0.5``): its
#: annotators' "correctness" is mostly precision (RAGChecker scores it with claim precision), and
#: on ``tune`` F-0.5 ranked pairs better than F1 (evidence 0.575 vs 0.551, blend 0.603 vs 0.582;
#: F-0.35 0.604, F-1.5 0.565). Completeness is read from the recall, which beta does not touch.
#: ``cosine=True`` adds the MiniLM cosine to that evidence (``tune``: evidence 0.575 -> 0.595,
#: blend 0.603 -> 0.612; see ``metrics.offline.CORRECTNESS_WEIGHTS_COSINE``).
README_RUNS: list[tuple[str, dict[str, int], dict[str, dict[str, Any]]]] = [
    ("none", {"halueval": 40, "qags": 20, "begin": 20, "ragchecker": 1000},
     {"factual_correctness": {"beta": 0.5, "cosine": True}}),
    ("local", {"halueval": 40, "qags": 20, "begin": 20, "ragchecker": 1000},
     {"factual_correctness": {"claims": "graded", "beta": 0.5, "cosine": True}}),
    ("local_small", {"halueval": 40}, {}),
]


def build_judge(backend: str, cache: str | None) -> Any:
    if backend == "none":
        return None
    from ragsweep.metrics.llm import CachedLLM, LocalLLM

    # RAGSWEEP_THREADS: llama.cpp threads (default 2). On cores shared with other work, 1 thread
    # avoids the stalls of two threads waiting on each other.
    llm: Any = LocalLLM(MODELS.get(backend, backend), n_ctx=4096, n_threads=int(os.environ.get("RAGSWEEP_THREADS", 2)))
    if cache:
        llm = CachedLLM(llm, Path(cache) / "llm.sqlite")
    return llm


@dataclass
class Result:
    backend: str
    name: str
    stats: dict[str, float]
    samples: int
    calls: int = 0
    tokens: int = 0
    evaluated: int = 0
    seconds: float = 0.0
    errors: int = 0
    undefined: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _values(rows: list[Any], key: str | None = None, neutral: float = 0.5) -> dict[str, float]:
    """Scores by sample id; undefined/error count as the neutral score (so nothing is dropped)."""
    out = {}
    for r in rows:
        v = r.result.value
        if key is not None and v is not None:
            v = r.result.explanation.get(key)
        out[r.sample_id] = neutral if v is None else float(v)
    return out


def parse_options(pairs: list[str]) -> dict[str, dict[str, Any]]:
    """``["factual_correctness.claims=sentences"]`` -> ``{"factual_correctness": {"claims": "sentences"}}``."""
    out: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        metric, _, option = key.partition(".")
        if not (metric and option and value):
            raise SystemExit(f"--option {pair!r}: expected METRIC.KEY=VALUE")
        try:
            parsed: Any = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(metric, {})[option] = parsed
    return out


async def run_set(cs: CalibrationSet, backend: str, judge: Any, embedder: Any, concurrency: int,
                  dump: str | None = None, options: dict[str, dict[str, Any]] | None = None) -> Result:
    meter = Meter(judge) if judge is not None else None
    spec = catalogue()[cs.metric]
    options = {k: dict(v) for k, v in (options or {}).items()}
    if cs.metric == "factual_correctness":  # correctness is F1; completeness is read from its recall
        options.setdefault(cs.metric, {})["mode"] = "f1"
    start = time.perf_counter()
    rows = await score_samples(cs.samples, [spec], judge=meter, embedder=embedder, options=options,
                               concurrency=concurrency, progress=False)
    seconds = time.perf_counter() - start
    stats = cs.evaluate(_values(rows))
    if dump:
        with open(dump, "a", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({"backend": backend, "set": cs.name, **r.to_dict()}, default=str) + "\n")
    if cs.name == "ragchecker":  # completeness is judged by recall, from the same calls
        recall = cs.evaluate(_values(rows, "recall"))
        stats.update({k: v for k, v in recall.items() if k.startswith("completeness")})
    label = backend + "".join(f" ({k}={v})" for k, v in (options.get(cs.metric) or {}).items() if k != "mode")
    res = Result(label, cs.name, stats, len(cs.samples), seconds=seconds,
                 errors=sum(r.result.status == "error" for r in rows),
                 undefined=sum(r.result.status == "undefined" for r in rows))
    if meter is not None:
        res.calls, res.evaluated = meter.calls, meter.evaluated
        res.tokens = meter.usage.prompt_tokens + meter.usage.completion_tokens
        res.extra["completion_tokens"] = meter.usage.completion_tokens
    return res


def platt(x: list[float], y: list[bool], w: list[float], ridge: float = 1e-3) -> tuple[float, float]:
    """(a, b) minimising the weighted log loss of sigmoid(a x + b) against y (Newton's method, a tiny
    ridge on a and b so that separable data still gives finite weights)."""
    import numpy as np

    X, Y, W = np.asarray(x, float), np.asarray(y, float), np.asarray(w, float)
    theta = np.array([1.0, 0.0])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(theta[0] * X + theta[1])))
        grad = np.array([np.sum(W * (p - Y) * X), np.sum(W * (p - Y))]) + ridge * theta
        h = W * p * (1 - p)
        hess = np.array([[np.sum(h * X * X), np.sum(h * X)], [np.sum(h * X), np.sum(h)]]) + ridge * np.eye(2)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-9:
            break
    return float(theta[0]), float(theta[1])


async def claims_with_labels(cs: CalibrationSet, judge: Any) -> list[tuple[float, bool]]:
    """(blended P(supported), the text's human label) for every statement of a labelled set."""
    from ragsweep.metrics.support import is_removed

    rows = await score_samples(cs.samples, [catalogue()[cs.metric]], judge=judge, concurrency=1, progress=False)
    out = []
    for r in rows:
        if r.result.status != "ok" or r.sample_id not in cs.labels:
            continue
        for claim in r.result.explanation.get("claims", []):
            if not is_removed(claim["claim"]):
                out.append((float(claim.get("p_blend", claim["p_supported"])), bool(cs.labels[r.sample_id])))
    return out


#: The share of supported statements the calibrated probability assumes (``--prior``): 0.69, the
#: share of QAGS summary sentences its annotators judged supported -- the one labelled set here whose
#: statements are real systems' unfiltered output, sentence by sentence. HaluEval is 1:1 by
#: construction and BEGIN's dialogue responses are mostly chit-chat that is not meant to be
#: attributable (24% are), so neither says how often a RAG answer's statement is supported.
PRIOR = 0.69


def fit(backends: list[str], sizes: dict[str, int], split: str, seed: int, cache: str | None,
        prior: float = PRIOR) -> str:
    """Fit :data:`metrics.support.CALIBRATION` for each backend on ``split`` (``tune``); return the
    lines to paste, with the fit's effect on the same data.

    Platt scaling by weighted log loss: each set weighs the same, and within a set its supported
    and unsupported statements are weighted to the share ``prior`` and 1 - ``prior``, so the
    probabilities are read at that base rate rather than at each set's own (HaluEval's pairs are
    1:1 by construction). The slope is what the data decide; the prior sets where 0.5 falls.
    """
    from ragsweep.metrics import support

    lines = []
    for backend in backends:
        judge = build_judge(backend, cache)
        key, _ = support.calibration_for(judge)
        saved = support.CALIBRATION.pop(key, None)  # fit on the uncalibrated blend
        per_set = {}
        try:
            for name, n in sizes.items():
                cs = LOADERS[name](split=split, n=n, seed=seed)
                per_set[name] = asyncio.run(claims_with_labels(cs, judge))
        finally:
            if saved is not None:
                support.CALIBRATION[key] = saved
            if judge is not None and hasattr(judge, "close"):
                judge.close()
        xs, ys, ws = [], [], []
        for name, pairs in per_set.items():
            n_yes = sum(label for _, label in pairs)
            for p, label in pairs:
                xs.append(support.logit(p))
                ys.append(label)
                ws.append(prior / n_yes if label else (1 - prior) / (len(pairs) - n_yes))
        a, b = platt(xs, ys, ws)
        lines.append(f"{backend}: CALIBRATION[{key!r}] = ({a:.3f}, {b:.3f})   # prior {prior}; statements: "
                     + ", ".join(f"{k} {len(v)}" for k, v in per_set.items()))
        from ragsweep.metrics.agreement import expected_calibration_error as ece

        for name, pairs in per_set.items():
            raw = [p for p, _ in pairs]
            cal = [support.calibrate(p, (a, b)) for p in raw]
            labels = [y for _, y in pairs]
            lines.append(f"  {name} ({split}, statements): ECE {ece(raw, labels):.3f} -> {ece(cal, labels):.3f}")
    return "\n".join(lines)


def table(results: list[Result]) -> str:
    lines = ["| backend | set | statistic | value | samples | calls / sample | tokens / sample | "
             "s / sample | quiet s / sample | undefined / error | published anchor |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        per = max(r.samples, 1)
        tps = QUIET_TPS.get(r.backend.split(" ")[0])
        quiet = ("" if tps is None else
                 f"{(r.evaluated / tps[0] + r.extra.get('completion_tokens', 0) / tps[1]) / per:.2f}")
        if r.backend.startswith("none"):
            quiet = f"{r.seconds / per:.3f}"
        if r.backend == OWN_SCORES:
            for stat, value in r.stats.items():
                if not stat.startswith("n"):
                    lines.append(f"| {r.backend} | {r.name} | {stat} | {value:.3f} | {r.samples} | "
                                 f"| | | | | same pairs, same protocol (baseline_ragchecker.json) |")
            continue
        for stat, value in r.stats.items():
            if stat.startswith("n"):
                continue
            lines.append(f"| {r.backend} | {r.name} | {stat} | {value:.3f} | {r.samples} | {r.calls / per:.2f} | "
                         f"{r.tokens / per:.0f} | {r.seconds / per:.2f} | {quiet} | {r.undefined} / {r.errors} | "
                         f"{ANCHORS.get((r.name, stat), '')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", nargs="+", default=["none"], help="backends: none, local, local_small, or a .gguf")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated subset of " + ", ".join(SETS))
    ap.add_argument("--n", type=int, default=40, help="rows per set (HaluEval: question pairs; QAGS: summaries)")
    ap.add_argument("--n-qags", type=int, default=None, help="summaries for QAGS (default --n)")
    ap.add_argument("--n-begin", type=int, default=None, help="responses for BEGIN (default --n)")
    ap.add_argument("--n-ragchecker", type=int, default=None, help="response pairs for RAGChecker (default --n)")
    ap.add_argument("--option", action="append", default=[], metavar="METRIC.KEY=VALUE",
                    help="a metric option, e.g. factual_correctness.claims=sentences (repeatable)")
    ap.add_argument("--split", default="heldout", choices=["tune", "heldout", "all"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedder", action="store_true", help="give the none backend the MiniLM embedder")
    ap.add_argument("--cache", default=None, help="replay model calls from DIR/llm.sqlite")
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    ap.add_argument("--dump", default=None, help="append every score with its evidence to this JSONL file")
    ap.add_argument("--results", default=None, help="append each set's result (stats, cost) to this JSONL file")
    readme = "; ".join(f"{b} on " + ", ".join(f"{k}={v}" for k, v in z.items()) for b, z, _ in README_RUNS)
    ap.add_argument("--readme", action="store_true", help=f"run exactly the README's table: {readme}")
    ap.add_argument("--fit", action="store_true",
                    help="fit the calibration map (metrics.support.CALIBRATION) of each --llm backend on "
                         "--split (use tune) over HaluEval, QAGS and BEGIN, and print it")
    ap.add_argument("--prior", type=float, default=PRIOR,
                    help=f"--fit: the share of supported statements the probabilities assume (default {PRIOR})")
    ap.add_argument("--table-from", nargs="+", default=None, metavar="JSONL",
                    help="print the table of results saved with --results (no scoring)")
    args = ap.parse_args(argv)
    if args.table_from:
        saved = [Result(**json.loads(line)) for f in args.table_from
                 for line in Path(f).read_text(encoding="utf-8").splitlines() if line.strip()]
        text = table(saved) + "\n"
        print(text)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        return 0
    os.environ.setdefault("RAGSWEEP_CACHE_DIR", str(Path.home() / ".cache" / "ragsweep"))
    if args.fit:
        if args.split != "tune":
            ap.error("--fit is for the tune half: pass --split tune")
        sizes = {"halueval": args.n, "qags": args.n_qags or args.n, "begin": args.n_begin or args.n}
        print(fit(args.llm, sizes, args.split, args.seed, args.cache, args.prior))
        return 0
    options = parse_options(args.option)
    if args.readme:
        runs = README_RUNS
    else:
        sets = [s.strip() for s in args.sets.split(",") if s.strip()]
        unknown = [s for s in sets if s not in LOADERS]
        if unknown:
            ap.error(f"unknown set(s) {unknown}")
        given = {"qags": args.n_qags, "begin": args.n_begin, "ragchecker": args.n_ragchecker}
        runs = [(backend, {name: given.get(name) or args.n for name in sets}, options) for backend in args.llm]
    embedder = None
    if args.embedder:
        from ragsweep.metrics.embedding import OnnxMiniLM

        embedder = OnnxMiniLM()
    results = []
    for backend, sizes, opts in runs:
        judge = build_judge(backend, args.cache)
        for name, n in sizes.items():
            cs = LOADERS[name](split=args.split, n=n, seed=args.seed)
            res = asyncio.run(run_set(cs, backend, judge, embedder, concurrency=1, dump=args.dump, options=opts))
            results.append(res)
            if args.results:
                with open(args.results, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(asdict(res)) + "\n")
            print(f"[{res.backend}] {name}: {res.stats}  {res.seconds:.1f}s", file=sys.stderr, flush=True)
        if judge is not None and hasattr(judge, "close"):
            judge.close()
    rc_sizes = [sizes["ragchecker"] for _, sizes, _ in runs if "ragchecker" in sizes]
    own = None
    if rc_sizes:  # the anchor measured on the same pairs, the same way; a bad file must not lose the runs
        try:
            own = ragchecker_own_scores(split=args.split, n=max(rc_sizes), seed=args.seed)
        except InputError as exc:
            print(f"RAGChecker's own scores left out: {exc}", file=sys.stderr)
    if own is not None:
        results.append(Result(OWN_SCORES, "ragchecker", own, samples=2 * int(own["n_pairs"])))
        if args.results:
            with open(args.results, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(asdict(results[-1])) + "\n")
    header = f"split={args.split} seed={args.seed}; " + "; ".join(
        f"{backend}: " + ", ".join(f"{k}={v}" for k, v in sizes.items()) for backend, sizes, _ in runs)
    text = f"{header}\n\n{table(results)}\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
