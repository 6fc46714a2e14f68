"""Test-set generation benchmark, and the specificity check of a generated test set.

1. Throughput per backend: accepted pairs per minute and LLM tokens (prompt + completion)
   per accepted pair, each backend on a fresh LLM cache (so nothing is replayed):

    python benchmarks/gen.py                               # none (n=20) and local (n=10)
    python benchmarks/gen.py --backends none local_small --n-local 5
    python benchmarks/gen.py --backends local --gen gates.roundtrip=false llm.parallel=2   # any gen override
    python benchmarks/gen.py --backends local --n-local 20 --seed 0 1 2   # three candidate streams, pooled
    python benchmarks/gen.py --backends local --corpus DOCS_FOLDER --gen 'styles=[docs]' --out docs.jsonl

   Each backend runs as ``ragsweep gen`` does (round trip and kind check on unless overridden); the
   table also gives the prompt tokens llama.cpp evaluated per accepted pair (tok/acc counts the prompt
   prefix its cache replays too), LLM calls per accepted pair and the round trips' agreement; under it, the
   accepted questions' styles and where the time went (model minutes and calls per prompt, and the rest).

2. Cold: the real ``ragsweep gen`` command timed from process start to exit (imports, corpus, model load
   and all), each run in a fresh process on a fresh LLM cache, with where its time went (from the run's
   report: seconds per stage, model load, calls and tokens per prompt, the calls spent on each rejection
   reason). ``--trees`` runs the same command from other source trees (each a folder holding a ``ragsweep``
   package), taking turns, so two versions are compared in one session on the same machine state:

    python benchmarks/gen.py cold --n-local 10 --seed 0 1                  # this tree, seeds 0 and 1
    python benchmarks/gen.py cold --trees /src/before /src/after --seed 0 1 --threads 1
    python benchmarks/gen.py cold --corpus ../shared/data/docs-fastapi --gen 'styles=[docs]'
    python benchmarks/gen.py cold --trees /src/before /src/after --seed 0 1 --together   # both at once

   Wall time moves with whatever else the cores run; the CPU minutes of the process (user + system)
   move less, so both are printed.

3. Specificity: the share of a test set's questions whose source document the all-MiniLM-L6-v2
   Flat retriever (whole documents, no chunking) finds in its top 10:

    python benchmarks/gen.py specificity TESTSET.jsonl --beir ../shared/data/scifact --split dev
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class _Timed:
    """An LLM that adds up the seconds and calls of each prompt (by name): where a run's model time goes."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def complete(self, messages, schema=None, *, prompt=None, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return await self.inner.complete(messages, schema, prompt=prompt, **kwargs)  # type: ignore[attr-defined]
        finally:
            name = prompt.name if prompt is not None else "(unnamed)"
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            self.calls[name] = self.calls.get(name, 0) + 1


def throughput(backend: str, n: int, seed: int, overrides: list[str] = (), corpus_path: str | None = None,
               out: str | None = None, cache: str | None = None) -> dict[str, float | int | str]:
    """Run one backend on the shipped corpus (or the folder ``corpus_path``) with a fresh cache; return its figures.
    ``out``: also write the accepted samples there (JSONL), to read them. ``cache``: keep the LLM calls in this
    folder instead, so a stopped run resumes (its replayed calls then cost nothing in the figures)."""
    from hydra import compose, initialize_config_module
    from omegaconf import open_dict
    from ragsweep.gen.app import writing_parts
    from ragsweep.gen.docs_defaults import for_corpus
    from ragsweep.gen.documents import read_folder, read_shipped
    from ragsweep.gen.testset import write_testset
    from ragsweep.gen.generate import generate
    from ragsweep.gen.parts import build
    from ragsweep.metrics.embedding import OnnxMiniLM

    with tempfile.TemporaryDirectory() as scratch:
        tmp = cache or scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        models = Path(os.environ.get("RAGSWEEP_CACHE_DIR", "~/.cache/ragsweep")).expanduser() / "models"
        if models.is_dir() and not (Path(tmp) / "models").exists():  # reuse the assembled GGUF
            (Path(tmp) / "models").symlink_to(models)
        os.environ["RAGSWEEP_CACHE_DIR"] = tmp
        with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
            cfg = compose(config_name="gen", overrides=[f"llm={backend}", f"n={n}", f"seed={seed}", *overrides])
        with open_dict(cfg):
            cfg.cache.dir = tmp
            cfg.llm.cache_dir = tmp if "cache_dir" in cfg.llm else None
        inner = build(cfg.llm, "llm")
        llm = _Timed(inner) if inner is not None else None  # llm=none: the rule writer, no model
        corpus = read_shipped() if corpus_path is None else read_folder(corpus_path)
        cfg, _ = for_corpus(cfg, corpus, llm is not None)  # styles: auto, as `ragsweep gen` resolves it
        writer, gcfg, _ = writing_parts(cfg, llm)
        embed = OnnxMiniLM().embed  # always on, whatever gates.embed says: the figures include its gate
        embed(["warm up"])
        started = time.perf_counter()
        calls_before, evaluated_before = _calls(llm), _evaluated(llm)
        result = generate(corpus, writer, gcfg, embed=embed, judge=llm)
        minutes = (time.perf_counter() - started) / 60
        calls, evaluated = _calls(llm) - calls_before, _evaluated(llm) - evaluated_before
        if models.is_dir():
            os.environ["RAGSWEEP_CACHE_DIR"] = str(models.parent)
    if out is not None:
        write_testset(result.samples, out, corpus)
    accepted = len(result.samples)
    tokens = result.usage.prompt_tokens + result.usage.completion_tokens
    seconds, calls_of = (llm.seconds, llm.calls) if llm is not None else ({}, {})
    llm_seconds = sum(seconds.values())
    rt = result.report.roundtrip
    return {"backend": backend, "model": writer.model_id, "accepted": accepted,
            "rejected": result.report.n_rejected, "minutes": round(minutes, 3),
            "calls_per_accepted": round(calls / accepted, 2) if accepted else float("nan"),
            "evaluated_per_accepted": round(evaluated / accepted, 1) if accepted else float("nan"),
            "roundtrip": f"{rt.get('agreed', 0)}/{rt['checked']}" if rt.get("checked") else "-",
            "rejected_by_reason": {k: v for k, v in result.report.rejected.items() if v},
            "accepted_per_minute": round(accepted / minutes, 2) if minutes else float("inf"),
            "tokens_per_accepted": round(tokens / accepted, 1) if accepted else float("nan"),
            "completion_tokens_per_accepted": round(result.usage.completion_tokens / accepted, 1) if accepted else float("nan"),
            "accepted_by_style": result.report.accepted_by_style,
            "time": "; ".join([*(f"{k} {v / 60:.1f} min ({calls_of[k]} calls)"
                                 for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])),
                               f"outside the model {max(0.0, minutes - llm_seconds / 60):.1f} min"])}


def _calls(llm: object) -> int:
    """Model calls made so far (the cache's misses: every call reaches the model on a fresh cache)."""
    return int(getattr(llm, "misses", 0) or 0)


def _evaluated(llm: object) -> int:
    """Prompt tokens llama.cpp evaluated so far (0 for other backends): the rest came from its prompt cache."""
    while not hasattr(llm, "prompt_evaluated") and hasattr(llm, "inner"):  # through the timing and cache wrappers
        llm = llm.inner  # type: ignore[attr-defined]
    return int(getattr(llm, "prompt_evaluated", 0) or 0)


def cold(tree: Path, n: int, seed: int, overrides: list[str] = (), corpus_path: str | None = None,
         threads: int | None = None, keep: str | None = None) -> dict:
    """One cold ``ragsweep gen`` in a fresh process, run from ``tree`` (a folder holding the ``ragsweep`` package),
    on a fresh LLM cache (the assembled model is kept). Returns wall and CPU seconds, and the run's report.
    ``keep``: copy the test set and its report into this folder as ``<tree's name>-s<seed>.*``, to read them."""
    import json
    import shutil
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "testset.jsonl"
        corpus = ["corpus=folder", f"corpus.path={Path(corpus_path).resolve()}"] if corpus_path else []
        cmd = [sys.executable, "-m", "ragsweep.harness.cli", "gen", f"n={n}", f"seed={seed}", f"cache.dir={tmp}",
               f"out={out}", "progress=false", *([f"llm.threads={threads}"] if threads else []), *corpus, *overrides]
        env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
        started, load = time.perf_counter(), os.getloadavg()[0]
        with open(Path(tmp) / "stderr.txt", "w+") as err:
            proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU time, whatever else runs beside it
            proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - started
            if proc.returncode not in (0, 3):
                err.seek(0)
                raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.read()[-2000:]}")
        report = json.loads(out.with_name(out.stem + ".report.json").read_text())
        if keep is not None:
            Path(keep).mkdir(parents=True, exist_ok=True)
            name = f"{Path(tree).resolve().name}-s{seed}"
            shutil.copy(out, Path(keep) / f"{name}.jsonl")
            shutil.copy(out.with_name(out.stem + ".report.json"), Path(keep) / f"{name}.report.json")
    # The cores are shared: the 1-minute load average at its start and end says how busy they were.
    return {"tree": str(tree), "seed": seed, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "report": report,
            "load": (load, os.getloadavg()[0])}


def cold_lines(r: dict) -> list[str]:
    """A cold run's line and, when its report has them, where its time went."""
    rep = r["report"]
    accepted, wall, cpu = rep["accepted"], r["wall"], r["cpu"]
    tokens = rep.get("llm_tokens") or {}
    lines = [f"{Path(r['tree']).name or r['tree']:14s} s{r['seed']}  accepted {accepted:3d}  rejected "
             f"{rep['rejected_total']:3d}  wall {wall:7.1f} s  {accepted / wall * 60 if wall else 0:5.2f}/min  cpu "
             f"{cpu:7.1f} s  {accepted / cpu * 60 if cpu else 0:5.2f}/cpu-min  generated tokens "
             f"{tokens.get('completion', 0)}"
             + (f"  load {r['load'][0]:.1f} -> {r['load'][1]:.1f}" if r.get("load") else "")]
    lines.append("    rejected: " + (", ".join(f"{k}={v}" for k, v in rep["rejected"].items() if v) or "none"))
    if rep.get("accepted_by_style"):
        lines.append("    by style: " + ", ".join(f"{k}={v}" for k, v in sorted(rep["accepted_by_style"].items())))
    if rep.get("accepted_by_kind"):
        lines.append("    by kind: " + ", ".join(f"{k}={v}" for k, v in sorted(rep["accepted_by_kind"].items())))
    stages = rep.get("stage_seconds")
    if stages:
        model = rep.get("model_time") or {}
        lines.append("    stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items())
                     + f"; model file {model.get('resolve_seconds', 0):.1f}, load {model.get('load_seconds', 0):.1f}"
                     + " (inside the first write); outside generation "
                     + f"{wall - rep.get('seconds', 0):.1f} (start-up, imports, corpus, writing the files)")
        for name, t in (model.get("prompts") or {}).items():
            calls = int(t["calls"]) or 1
            lines.append(f"    {name:28s} {int(t['calls']):3d} calls {t['seconds']:7.1f} s  per call: prompt "
                         f"{t['prompt_tokens'] / calls:5.0f} tokens, evaluated {t['evaluated'] / calls:5.0f} "
                         f"(the rest from llama.cpp's prompt cache), generated {t['completion_tokens'] / calls:4.0f}")
        prompts = (model.get("prompts") or {}).values()
        if accepted and prompts:
            per = {k: sum(t[k] for t in prompts) / accepted for k in ("calls", "prompt_tokens", "evaluated",
                                                                       "completion_tokens")}
            lines.append(f"    per accepted question: {per['calls']:.2f} calls, prompt {per['prompt_tokens']:.0f} tokens "
                         f"(evaluated {per['evaluated']:.0f}), generated {per['completion_tokens']:.0f}")
        spent = rep.get("spent") or {}
        calls = sum(v["calls"] for v in spent.values())
        if calls and accepted:
            lines.append(f"    calls per accepted question {calls / accepted:.2f}; spent on rejected candidates: "
                         + ", ".join(f"{k} {v['calls']} calls/{v['generated_tokens']} tok"
                                     for k, v in sorted(spent.items(), key=lambda kv: -kv[1]['calls'])
                                     if k != "accepted"))
    return lines


def cold_table(runs: list[dict]) -> list[str]:
    """Per tree: accepted questions a minute over all its runs (wall and CPU), and each tree's ratio to the first."""
    out, first = [], None
    for tree in dict.fromkeys(r["tree"] for r in runs):
        mine = [r for r in runs if r["tree"] == tree]
        acc = sum(r["report"]["accepted"] for r in mine)
        wall, cpu = sum(r["wall"] for r in mine), sum(r["cpu"] for r in mine)
        rate, cpu_rate = acc / wall * 60, acc / cpu * 60
        first = first or (rate, cpu_rate)
        out.append(f"{tree}: {acc} accepted in {wall / 60:.2f} min = {rate:.2f}/min (per run: "
                   + ", ".join(f"{r['report']['accepted'] / r['wall'] * 60:.2f}" for r in mine)
                   + f"); {cpu_rate:.2f} per CPU minute; x{rate / first[0]:.2f} wall, x{cpu_rate / first[1]:.2f} CPU")
    return out


def specificity(testset: str, beir: str, split: str, k: int = 10) -> None:
    """Print the share of questions whose source document is in the retriever's top k."""
    from ragsweep.gen.chunking import WholeDocument
    from ragsweep.gen.documents import read_beir
    from ragsweep.gen.testset import check_against, read_testset
    from ragsweep.harness.cache import Cache
    from ragsweep.harness.pipeline.index import IndexSpec
    from ragsweep.harness.pipeline.pipeline import Pipeline
    from ragsweep.metrics.embedding import OnnxMiniLM

    corpus = read_beir(beir, split)
    samples = read_testset(testset)
    check_against(samples, corpus, testset)
    cache = Cache(os.environ.get("RAGSWEEP_CACHE_DIR", "~/.cache/ragsweep"))
    found = Pipeline(corpus, WholeDocument(), OnnxMiniLM(), IndexSpec(), cache).search([s.question for s in samples], k)
    by_kind: dict[str, list[int]] = {}
    for s, got in zip(samples, found):
        sources = {span.doc_id for span in s.evidence}
        hit = int(bool(sources & {r.doc_id for r in got[:k]}))
        by_kind.setdefault(s.kind, []).append(hit)
    hits = [h for v in by_kind.values() for h in v]
    print(f"{testset}: source document in top {k} for {sum(hits)}/{len(hits)} questions "
          f"= {sum(hits) / len(hits):.1%} (all-MiniLM-L6-v2, Flat, whole documents, {len(corpus.documents)} docs)")
    for kind, v in sorted(by_kind.items()):
        print(f"  {kind:12s} {sum(v)}/{len(v)} = {sum(v) / len(v):.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="throughput", choices=["throughput", "cold", "specificity"])
    parser.add_argument("testset", nargs="?", help="specificity: the test set to check")
    parser.add_argument("--backends", nargs="+", default=["none", "local"])
    parser.add_argument("--n", type=int, default=20, help="samples for llm=none")
    parser.add_argument("--n-local", type=int, default=10, help="samples for LLM backends (slow on CPU)")
    parser.add_argument("--seed", type=int, nargs="+", default=[0],
                        help="one run per seed (each a different document order, so other candidates); with several "
                             "seeds a pooled line per backend adds up accepted questions, minutes, calls and tokens")
    parser.add_argument("--gen", nargs="*", default=[], metavar="KEY=VALUE",
                        help="ragsweep gen overrides for every backend, e.g. gates.roundtrip=false llm.parallel=2")
    parser.add_argument("--corpus", help="throughput: a folder (corpus=folder) instead of the shipped corpus")
    parser.add_argument("--out", help="throughput: write the last run's accepted samples here (JSONL), to read them")
    parser.add_argument("--cache", help="throughput: keep the LLM calls in this folder (default: a fresh one per run), "
                                         "so a stopped run resumes; replayed calls cost nothing in the figures")
    parser.add_argument("--trees", nargs="+", default=[str(ROOT.parent)],
                        help="cold: source trees to run ragsweep gen from (each holds a ragsweep package), in turn")
    parser.add_argument("--threads", type=int, help="cold: llm.threads (default: the config's)")
    parser.add_argument("--keep", help="cold: copy each run's test set and report into this folder, to read them")
    parser.add_argument("--together", action="store_true",
                        help="cold: run each seed's trees at the same time (on cores other work keeps busy, both "
                             "then meet the same load) instead of in turn")
    parser.add_argument("--beir", default=str(ROOT.parent / "shared" / "data" / "scifact"))
    parser.add_argument("--split", default="dev")
    args = parser.parse_args()
    if args.command == "specificity":
        if not args.testset:
            parser.error("specificity needs a test-set path")
        specificity(args.testset, args.beir, args.split)
        return
    if args.command == "cold":
        runs = []
        for seed in args.seed:
            if args.together:  # each seed's trees at the same time: the same machine state for each
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(len(args.trees)) as pool:
                    done = list(pool.map(lambda t: cold(Path(t), args.n_local, seed, args.gen, args.corpus,
                                                        args.threads, args.keep), args.trees))
            else:
                done = [cold(Path(t), args.n_local, seed, args.gen, args.corpus, args.threads, args.keep)
                        for t in args.trees]
            for r in done:
                runs.append(r)
                print("\n".join(cold_lines(r)), flush=True)
        print("\n".join(cold_table(runs)))
        return
    if args.gen:
        print("overrides: " + " ".join(args.gen))
    print(f"{'backend':12s} {'model':36s} {'accepted':>8s} {'rejected':>8s} {'minutes':>8s} "
          f"{'acc/min':>8s} {'tok/acc':>8s} {'eval-tok/acc':>12s} {'out-tok/acc':>11s} {'calls/acc':>9s} "
          f"{'round trip':>10s}")
    for backend in args.backends:
        runs = []
        for seed in args.seed:
            r = throughput(backend, args.n if backend == "none" else args.n_local, seed, args.gen, args.corpus,
                           args.out, args.cache)
            runs.append(r)
            label = r["backend"] if len(args.seed) == 1 else f"{r['backend']} s{seed}"
            print(f"{label:12s} {r['model']:36s} {r['accepted']:8d} {r['rejected']:8d} {r['minutes']:8.2f} "
                  f"{r['accepted_per_minute']:8.1f} {r['tokens_per_accepted']:8.1f} "
                  f"{r['evaluated_per_accepted']:12.1f} {r['completion_tokens_per_accepted']:11.1f} "
                  f"{r['calls_per_accepted']:9.2f} {r['roundtrip']:>10s}", flush=True)
            print(f"{'':12s} rejected: " + (", ".join(f"{k}={v}" for k, v in r["rejected_by_reason"].items())
                                            or "none"), flush=True)
            print(f"{'':12s} by style: " + ", ".join(f"{k}={v}" for k, v in sorted(r["accepted_by_style"].items())),
                  flush=True)
            print(f"{'':12s} time: {r['time']}", flush=True)
        if len(runs) > 1:
            print(pooled(runs), flush=True)


def pooled(runs: list[dict]) -> str:
    """One line for several runs of a backend: their sums, so a run's luck with its candidates weighs as its
    share of the minutes (the mean of per-run rates would let a short run count as much as a long one)."""
    accepted = sum(int(r["accepted"]) for r in runs)
    minutes = sum(float(r["minutes"]) for r in runs)
    rates = [float(r["accepted_per_minute"]) for r in runs]

    def per(key: str) -> float:
        return sum(float(r[key]) * int(r["accepted"]) for r in runs) / accepted if accepted else float("nan")

    return (f"{runs[0]['backend'] + ' all':12s} {runs[0]['model']:36s} {accepted:8d} "
            f"{sum(int(r['rejected']) for r in runs):8d} {minutes:8.2f} {accepted / minutes if minutes else 0:8.1f} "
            f"{per('tokens_per_accepted'):8.1f} {per('evaluated_per_accepted'):12.1f} "
            f"{per('completion_tokens_per_accepted'):11.1f} {per('calls_per_accepted'):9.2f} "
            f"{'':>10s}\n{'':12s} per run: {min(rates):.1f} to {max(rates):.1f} accepted a minute over {len(runs)} seeds")


if __name__ == "__main__":
    main()
