"""The Optuna study's report on the board: its best trial, that trial's variant and the board's verdict on it.

A study is an optimiser over noisy means: whether its pick is really better than the others it tried is the
board's call (★ best mean, ≈ not distinguishable from it after Holm), not the study's. The trials themselves
are run by :mod:`ragsweep.harness.optuna_search`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragsweep.harness.board.model import Row, higher_is_better
from ragsweep.harness.cache import write_json

log = logging.getLogger(__name__)

OBJECTIVE = "objective.json"
"""A trial's objective, written into its job folder: metric, direction, value, the variant that gave it."""

RESULTS = "optimization_results.yaml"
"""What the Optuna sweeper writes into the sweep folder when the study ends (best params and value)."""


def direction(metric: str) -> str:
    """``maximize`` or ``minimize``: the metric's direction in the metric table (InputError if unknown)."""
    return "maximize" if higher_is_better(metric) else "minimize"


def _job_overrides(job_dir: Path) -> list[str]:
    path = job_dir / ".hydra" / "overrides.yaml"
    if not path.is_file():
        return []
    from omegaconf import OmegaConf

    return [str(x) for x in OmegaConf.load(path)]


def _job_number(job_dir: Path) -> tuple[int, str]:
    return (int(job_dir.name), "") if job_dir.name.isdigit() else (1 << 30, job_dir.name)


def study_report(root: Path, rows: Sequence[Row], sort_by: str) -> dict[str, Any] | None:
    """The study's best trial on the board, or None when ``root`` holds no finished Optuna study.

    The best trial is the first job (by number) whose overrides hold every one of the study's best
    parameters; its recorded variant is looked up on the board for its mark.
    """
    results = root / RESULTS
    if not results.is_file():
        return None
    from omegaconf import OmegaConf

    best = OmegaConf.to_container(OmegaConf.load(results), resolve=False)
    assert isinstance(best, dict)
    if "best_params" not in best:  # a multi-objective study has a Pareto front, not one best
        return None
    params = {str(k): v for k, v in (best.get("best_params") or {}).items()}
    wanted = {f"{k}={v}" for k, v in params.items()}
    jobs = sorted({p.parent for p in root.rglob(OBJECTIVE)} | {p.parent for p in root.rglob("error.json")},
                  key=_job_number)
    report: dict[str, Any] = {"metric": sort_by, "direction": direction(sort_by), "trials": len(jobs),
                              "failed": sum((j / "error.json").is_file() for j in jobs),
                              "variants_on_board": sum(r.error is None for r in rows),
                              "best_params": params, "best_value": best.get("best_value")}
    for job in jobs:
        if (job / OBJECTIVE).is_file() and wanted <= set(_job_overrides(job)):
            chosen = json.loads((job / OBJECTIVE).read_text(encoding="utf-8"))
            row = next((r for r in rows if r.variant == chosen["variant"] and r.error is None), None)
            c = row.comparison if row is not None else None
            report.update({"best_trial": job.name, "best_variant": chosen["variant"],
                           "board_rank": rows.index(row) + 1 if row is not None else None,
                           "board_verdict": c.verdict if c is not None else None,
                           "board_mark": c.mark if c is not None else None})
            break
    else:
        log.warning("%s: no job folder holds the study's best parameters %s", root, params)
    write_json(root / "search.json", report)
    return report


def to_markdown(report: Mapping[str, Any]) -> str:
    """The study's section of ``leaderboard.md``."""
    lines = ["", "## Search", "",
             f"An Optuna study ran {report['trials']} trials ({report['failed']} failed) for "
             f"{report['direction']} {report['metric']} (each trial: its best K); "
             f"{report['variants_on_board']} variants are on the board above."]
    if report.get("best_variant"):
        verdict = report.get("board_verdict")
        meaning = {"baseline": "the best mean on this board",
                   "tie": "not distinguishable from the best after Holm (nor from the other tied variants: "
                          "the study's pick is one of them)",
                   "worse": "significantly worse than the best on this board: the board's ★ is the better choice"}
        value = report.get("best_value")
        lines.append(f"Study's best: trial {report['best_trial']}, `{report['best_variant']}` "
                     f"({report['metric']}={value if value is None else round(float(value), 4)}); on the board: rank {report['board_rank']} "
                     f"{report.get('board_mark') or ''} {meaning.get(verdict or '', verdict or '')}.")
    return "\n".join(lines) + "\n"
