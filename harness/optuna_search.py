"""Search instead of grid: Hydra's Optuna sweeper picks the jobs, the leaderboard confirms its choice.

``ragsweep sweep hydra/sweeper=optuna`` (or ``+experiment=search``) runs a seeded TPE study over the
sweep axes given as choices. Each trial is one ordinary job (``harness/sweep.py``), and:

- its **objective** is the job's best mean of the board's sort metric
  (``hydra.callbacks.leaderboard.sort_by``) over its top-K (or budget) variants, in that metric's
  direction from the metric table. Every K comes from one search, so a job scores all of them and K
  needs no trial of its own; the variant that gave the value is recorded (``objective.json``);
- the study's **direction** is that same direction, and its sampler's seed is the sweep's ``seed``:
  :func:`sweeper_overrides` adds both on the command line unless they are given there;
- a job that fails writes ``error.json`` (as in a grid) and returns NaN: the study records a FAIL
  trial and goes on (``max_failure_rate=1.0``).

When the study ends, the leaderboard is built over the trials that ran, as for a grid, and
:func:`ragsweep.harness.board.study.study_report` names the study's best trial (Optuna's ``optimization_results.yaml``), its
variant and the mark the paired tests give it on the board (``search.json``, ``leaderboard.md``). A
study is an optimiser over noisy means: whether its pick is really better than the others it tried
is the board's call (★ best mean, ≈ not distinguishable from it after Holm), not the study's.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragsweep.harness.board.model import higher_is_better
from ragsweep.harness.board.study import OBJECTIVE, direction
from ragsweep.harness.cache import write_json
from ragsweep.metrics import InputError

log = logging.getLogger(__name__)

OPTUNA = "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper"
"""``_target_`` of the plugin's sweeper: what ``hydra/sweeper=optuna`` selects."""
def objective(summary: Mapping[str, Any], sort_by: str) -> tuple[float, str | None]:
    """A job's objective for the study: its best mean of ``sort_by`` over its variants, and that variant.

    Ties go to the first variant (the smallest K or budget). NaN (and no variant) when no variant has
    a mean (every sample undefined): the study records the trial as failed.

    Raises:
        InputError: No variant of the job scored ``sort_by`` (a metric the sweep does not compute).
    """
    variants = summary.get("variants", [])
    scored = [v for v in variants if sort_by in v.get("metrics", {})]
    if not scored:
        names = sorted({m for v in variants for m in v.get("metrics", {})})
        raise InputError(f"hydra.callbacks.leaderboard.sort_by={sort_by!r} is the study's objective but this sweep "
                         f"does not score it; choose one of: {', '.join(names)}")
    means = [(float(v["metrics"][sort_by]["mean"]), v["variant"]) for v in scored
             if v["metrics"][sort_by].get("mean") is not None]
    if not means:
        return math.nan, None
    sign = 1.0 if higher_is_better(sort_by) else -1.0
    best = max(means, key=lambda mv: sign * mv[0])  # max keeps the first of equal values
    return best


def record(summary: Mapping[str, Any] | None, job_dir: Path, sort_by: str) -> float:
    """The value a job returns to the Optuna sweeper; written with its variant to ``objective.json``.

    ``summary`` None (the job failed and wrote ``error.json``) gives NaN: a FAIL trial.
    """
    if summary is None:
        return math.nan
    value, variant = objective(summary, sort_by)
    write_json(job_dir / OBJECTIVE, {"metric": sort_by, "direction": direction(sort_by),
                                     "value": None if math.isnan(value) else value, "variant": variant})
    return value


def plugin_installed() -> bool:
    """Whether Hydra's Optuna sweeper plugin (the ``search`` extra) is importable."""
    import importlib.util

    return importlib.util.find_spec("hydra_plugins.hydra_optuna_sweeper") is not None


def sweeper_overrides(overrides: Sequence[str]) -> list[str]:
    """What ``ragsweep sweep`` adds when the composed sweeper is Optuna's: the direction of the sort
    metric and the sweep's seed for the sampler, each unless the command sets it, and
    ``max_failure_rate=1.0`` (a failed job is a failed trial, not the end of the study).

    The config is composed here with the command's non-sweep overrides; any error is left to Hydra,
    which reports it when it composes the same config.
    """
    if not any("sweeper" in o or "experiment" in o for o in overrides):  # the grid: no composing
        return []
    from hydra import compose, initialize_config_module
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
        fixed = [o.input_line for o in parsed if not o.is_sweep_override()]
        with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
            cfg = compose(config_name="sweep", overrides=fixed, return_hydra_config=True)
        sweeper = cfg.hydra.sweeper
        if sweeper.get("_target_") != OPTUNA:
            return []
        sort_by = str(cfg.hydra.callbacks.leaderboard.sort_by)
        sampler_seeded = "seed" in (sweeper.get("sampler") or {})
    except Exception as exc:  # noqa: BLE001 - Hydra reports a bad command itself, with its own message
        if "optuna" in str(exc).lower() and not plugin_installed():
            raise InputError("hydra/sweeper=optuna (and +experiment=search) needs Hydra's Optuna sweeper: "
                             "pip install 'ragsweep[search]'") from None
        return []
    given = {o.get_key_element().lstrip("+~") for o in parsed}
    out = []
    if "hydra.sweeper.direction" not in given:
        out.append(f"hydra.sweeper.direction={direction(sort_by)}")
    if sampler_seeded and "hydra.sweeper.sampler.seed" not in given:
        out.append("hydra.sweeper.sampler.seed=${seed}")
    if "hydra.sweeper.max_failure_rate" not in given:
        out.append("hydra.sweeper.max_failure_rate=1.0")
    return out


def conditional_space(cfg: Any, trial: Any) -> None:
    """Optuna's ``custom_search_space``: suggest the parameters that apply to some trials only.

    Reads ``search.conditional`` of the sweep config, rules applied in order after the sweeper's
    ``params`` were suggested; a rule's ``if`` maps parameters to a value or a list of values (all
    must hold, on what this trial suggested so far) and its ``params`` maps each parameter to its
    choices::

        search:
          conditional:
            - {if: {retrieval: hybrid}, params: {retrieval.fusion: [rrf, convex]}}
            - {if: {retrieval.fusion: convex}, params: {retrieval.alpha: [0.25, 0.5, 0.75]}}

    A parameter asked only where it applies keeps two trials that differ in nothing that matters
    (an index for BM25, a fusion weight for dense) from being counted as two variants.
    """
    from omegaconf import OmegaConf

    rules = OmegaConf.to_container(cfg.get("search", {}).get("conditional") or [], resolve=True)
    assert isinstance(rules, list)
    for rule in rules:
        conditions = rule.get("if") or {}
        if all(_holds(trial.params.get(k), want) for k, want in conditions.items()):
            for name, choices in (rule.get("params") or {}).items():
                trial.suggest_categorical(str(name), list(choices))


def _holds(value: Any, want: Any) -> bool:
    return value is not None and (value in want if isinstance(want, list) else value == want)
