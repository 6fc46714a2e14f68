"""``ragsweep rescore DIR metrics=[...]``: more metrics on a finished sweep, without retrieving again.

Every job folder below DIR keeps its run records (``runs.jsonl``: the ground truth, the ranked
retrieval and the answer at every K). Rescoring reads them, scores the asked metrics for every
variant through the same path the sweep used (:func:`ragsweep.harness.runs.score_variant`),
replaces those metrics' rows in ``scores.jsonl`` (other metrics are kept as they were), updates each
variant's statistics and LLM cost in ``summary.json``, and rebuilds the leaderboard.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.gen import build
from ragsweep.harness.cache import write_json
from ragsweep.harness.outputs import write_failed
from ragsweep.harness.records import Cut, read_runs
from ragsweep.harness.runs import aggregate, applicable, embedder_for, score_variant, write_jsonl
from ragsweep.metrics import EXIT_NOT_SCORED, EXIT_SOME_FAILED, InputError, Meter, fail, resolve, staged

log = logging.getLogger("ragsweep")


def _read_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    if path.is_file():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}, line {n}: not valid JSON ({exc.msg})") from exc
    return rows


def _add_cost(old: Mapping[str, Any], new: Mapping[str, int]) -> dict[str, Any]:
    return {**old, **{k: int(old.get(k, 0) or 0) + v for k, v in new.items()}}


def rescore(sweep_dir: str | Path, metrics: Sequence[str], *, judge: Any = None, embedder: Any = None,
            options: Mapping[str, Any] | None = None, seed: int = 0, concurrency: int | None = None) -> list[Path]:
    """Score ``metrics`` on every variant of every job below ``sweep_dir``; return the jobs rescored.

    Args:
        sweep_dir: A sweep folder (or one job folder) written by ``ragsweep sweep``.
        metrics: Metric names (``faithfulness``, ``ndcg@5``, ...); each replaces its earlier rows.
        judge: The LLM for judged metrics (None: their ``llm=none`` stand-ins, or ``undefined``).
        embedder: For metrics that embed (answer semantic similarity).
        options: Per-metric options, ``{metric: {option: value}}``.
        seed: Bootstrap seed of the updated statistics.
        concurrency: Metric calls in flight (None: what the judge serves at once).

    Raises:
        InputError: No job below ``sweep_dir``, a job without run records, an unknown metric.
    """
    root = Path(sweep_dir)
    if not root.is_dir():
        raise InputError(f"{root}: sweep folder not found")
    specs = resolve(list(metrics))
    if not specs:
        raise InputError("rescore needs at least one metric: metrics=[faithfulness,...]")
    jobs = sorted(p.parent for p in root.rglob("summary.json"))
    if not jobs:
        raise InputError(f"{root}: no finished job (summary.json) below this folder")
    # Read and check every job before scoring any, so bad input loses no work.
    loaded = [(job, json.loads((job / "summary.json").read_text(encoding="utf-8")), read_runs(job / "runs.jsonl"))
              for job in jobs]
    meter = Meter(judge) if judge is not None else None
    if concurrency is None:
        from ragsweep.metrics import concurrency_of

        concurrency = concurrency_of(judge) if judge is not None else 4
    for job, summary, runs in loaded:
        job_specs = applicable(specs, runs)
        names = {s.name for s in job_specs}
        kept = [r for r in _read_rows(job / "scores.jsonl") if r.get("metric") not in names]
        new_rows = []
        for variant in summary["variants"]:
            before = meter.snapshot() if meter is not None else None
            rows = score_variant(runs, variant["variant"], Cut.of(variant), job_specs, judge=meter, embedder=embedder,
                                 options=options, concurrency=int(concurrency))
            new_rows.extend(r.to_dict() for r in rows)
            variant["metrics"] = {**variant.get("metrics", {}), **aggregate(rows, seed)}
            if meter is not None and before is not None:
                variant["cost"] = _add_cost(variant.get("cost", {}), (meter.snapshot() - before).to_dict())
        summary.setdefault("rescored", []).append(
            {"metrics": sorted(names), "llm": getattr(judge, "model_id", None) if judge is not None else None})
        with staged(job) as into:  # scores and summary together, or neither
            write_jsonl(into / "scores.jsonl", kept + new_rows)
            write_json(into / "summary.json", summary)
        log.info("rescored %s: %s", job, ", ".join(sorted(names)))
    return jobs


def outcome(jobs: Sequence[Path], metrics: Sequence[str]) -> tuple[int, str]:
    """The exit code of a rescore and the line that explains a non-zero one: a job failed when every
    score it was asked for (leaving out the undefined) is an ``error`` (a judge down or misconfigured).
    Every job failed: 3; some: 4; else 0."""
    names = {s.name for s in resolve(list(metrics))}
    failed = []
    for job in jobs:
        asked = [r.get("status") for r in _read_rows(job / "scores.jsonl")
                 if r.get("metric") in names and r.get("status") != "undefined"]
        if asked and all(status == "error" for status in asked):
            failed.append(job)
    if not failed:
        return 0, ""
    where = f"reasons in {failed[0] / 'scores.jsonl'}"
    if len(failed) == len(jobs):
        return EXIT_NOT_SCORED, (f"every score asked for is an error in every job ({len(jobs)}), nothing was "
                                 f"measured; {where}")
    return EXIT_SOME_FAILED, f"every score asked for is an error in {len(failed)} of {len(jobs)} jobs; {where}"


def _names(value: Any) -> list[str]:
    if value is None:
        raise InputError("which metrics? ragsweep rescore DIR 'metrics=[faithfulness,ndcg@5]'")
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else [str(n) for n in value]
    return [n for n in names if n]


def run(cfg: DictConfig) -> tuple[str, dict[str, Path], int, str]:
    """Rescore ``cfg.dir`` and rebuild its leaderboard; return the board as the terminal shows it, the board's
    paths and :func:`outcome`."""
    from ragsweep.harness.board.leaderboard import rebuild, to_terminal

    if not cfg.dir:
        raise InputError("which sweep folder? ragsweep rescore outputs/sweeps/<stamp> 'metrics=[...]'")
    names = _names(cfg.metrics)
    resolve(names)  # an unknown metric exits 2 before any model is loaded
    judge = build(cfg.llm, "llm") if cfg.llm is not None else None
    try:
        specs = resolve(names)
        embedder = embedder_for(specs, cfg.embedder, OmegaConf.to_container(cfg.metric_options))
        if judge is not None and any(s.needs_judge for s in specs):
            judge.identity()  # fail fast (exit 2) when the model is missing
        jobs = rescore(cfg.dir, names, judge=judge, embedder=embedder,
                options=OmegaConf.to_container(cfg.metric_options), seed=int(cfg.seed),
                concurrency=None if cfg.concurrency is None else int(cfg.concurrency))
    finally:
        for part in (judge, getattr(judge, "inner", None)):
            if callable(getattr(part, "close", None)):
                part.close()
    rows, metrics, paths = rebuild(cfg.dir, cfg.sort_by, int(cfg.seed), baseline=cfg.baseline, alpha=cfg.alpha,
                                   top=cfg.top, html=cfg.html)
    return (to_terminal(rows, metrics, cfg.sort_by, paths), paths, *outcome(jobs, names))


def rescore_app(cfg: DictConfig) -> None:
    try:
        board, paths, code, message = run(cfg)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:  # a job's scores or the board; the jobs logged as rescored keep their new files
        write_failed(exc, cfg.dir, kept="the jobs logged as rescored before it keep their new scores")
    # the compact board, as `sweep` and `board` print it; every metric and CI is in the files named under it
    print(board)
    print("leaderboard: " + "\n             ".join(str(p) for p in paths.values()))
    if code:
        fail(message, code, warning=code != EXIT_NOT_SCORED)
