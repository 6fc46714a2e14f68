"""Optional MLflow logging of a sweep: a parent run per sweep, a child run per variant.

Off by default; ``ragsweep sweep mlflow.enabled=true`` turns it on (``pip install 'ragsweep[mlflow]'``).
Logging happens once, when the multirun ends, in the launching process: the jobs themselves (which
may run on Ray workers) never talk to the tracking store, and the runs are rebuilt from the same
per-sample scores as the leaderboard, so MLflow and ``leaderboard.csv`` cannot disagree.

Each child run carries the variant's parameters (``chunker.size``, ``top_k``, ...), every metric's
mean, CI bounds and counts (``ndcg@10`` is logged as ``ndcg_at_10``: MLflow names allow no ``@``), the
comparison with the baseline, and the job's cost. The parent run holds the leaderboard files.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from ragsweep.harness.board.model import COSTS, attach_comparisons, collect, metric_names, rank
from ragsweep.metrics import InputError, fail

log = logging.getLogger(__name__)


def metric_key(name: str) -> str:
    """An MLflow-legal metric name: ``ndcg@10`` -> ``ndcg_at_10``; other odd characters -> ``_``."""
    return re.sub(r"[^0-9A-Za-z_\-. :/]", "_", name.replace("@", "_at_"))


def _import_mlflow() -> Any:
    try:
        import mlflow
    except ImportError:
        fail("mlflow.enabled=true needs MLflow: pip install 'ragsweep[mlflow]'")
    return mlflow


def _experiment_id(mlflow: Any, tracking_uri: str, name: str) -> str:
    """The experiment's id, created on first use; a sqlite store keeps its artifacts beside the file."""
    found = mlflow.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    location = None
    if tracking_uri.startswith("sqlite:///"):
        # Without this MLflow puts artifacts in ./mlruns of whatever folder the sweep ran from.
        location = (Path(tracking_uri[len("sqlite:///"):]).resolve().parent / "mlartifacts").as_uri()
    return mlflow.create_experiment(name, artifact_location=location)


def variant_metrics(row: Any) -> dict[str, float]:
    """Mean, CI and counts per metric; the baseline comparison; the job's cost (numbers only)."""
    out: dict[str, float] = {}
    for m, s in row.stats.items():
        key = metric_key(m)
        for stat, suffix in (("mean", ""), ("ci_low", "_ci_low"), ("ci_high", "_ci_high"), ("n_ok", "_n_ok"),
                             ("n_undefined", "_n_undefined"), ("n_error", "_n_error")):
            if s.get(stat) is not None:
                out[key + suffix] = float(s[stat])
    c = row.comparison
    if c is not None and c.diff is not None:
        out.update(diff_vs_baseline=c.diff, diff_ci_low=c.ci_low, diff_ci_high=c.ci_high, p_holm=c.p_holm)
    for name, get in COSTS:
        value = get(row.cost)
        if value is not None:
            out[f"cost_{name}"] = float(value)
    for stage, seconds in row.cost.get("seconds", {}).items():
        out[f"cost_seconds_{metric_key(stage)}"] = float(seconds)
    return out


def log_sweep(sweep_dir: str | Path, *, tracking_uri: str, experiment: str = "ragsweep", sort_by: str = "ndcg@10",
              seed: int = 0, baseline: str | None = None, alpha: float = 0.05) -> str:
    """Log every variant below ``sweep_dir`` to MLflow; return the parent run's id.

    Args:
        sweep_dir: The sweep folder (``outputs/sweeps/<stamp>``).
        tracking_uri: ``sqlite:///path/mlflow.db``, ``file:/path/mlruns`` or a tracking server URL.
        experiment: MLflow experiment name (created when missing).
        sort_by: The metric the comparison with the baseline is made on.
        seed: Seed of the bootstrap and randomisation tests.
        baseline: Variant compared with; ``None``: the best mean.
        alpha: Family-wise error rate of the Holm-corrected tests.

    Raises:
        InputError: If the sweep folder holds no job result or ``sort_by`` is not one of its metrics.
    """
    root = Path(sweep_dir)
    rows = collect(root, seed)
    if sort_by not in metric_names(rows):
        raise InputError(f"sort_by={sort_by!r} is not a metric of this sweep")
    rows = rank(rows, sort_by)
    attach_comparisons(rows, sort_by, baseline=baseline, alpha=alpha, seed=seed)
    if tracking_uri.startswith("file:") or "://" not in tracking_uri:
        # MLflow 3 refuses its file store unless told otherwise; the user asked for it by name.
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow = _import_mlflow()
    mlflow.set_tracking_uri(tracking_uri)
    exp_id = _experiment_id(mlflow, tracking_uri, experiment)
    with mlflow.start_run(experiment_id=exp_id, run_name=root.name,
                          tags={"ragsweep.sweep_dir": str(root.resolve()), "ragsweep.kind": "sweep"}) as parent:
        mlflow.log_params({"sort_by": sort_by, "seed": seed, "alpha": alpha, "n_variants": len(rows),
                           "baseline": rows[0].comparison.baseline if rows[0].comparison else ""})
        for i, row in enumerate(rows, 1):
            tags = {"ragsweep.kind": "variant", "ragsweep.variant": row.variant, "ragsweep.job": row.job,
                    "ragsweep.verdict": row.comparison.verdict if row.comparison else "n/a"}
            if row.error:
                tags["ragsweep.error"] = row.error[:5000]
            with mlflow.start_run(experiment_id=exp_id, run_name=row.variant[:250], nested=True, tags=tags) as child:
                mlflow.log_params({k: str(v) for k, v in row.params.items()})
                mlflow.log_metrics({**variant_metrics(row), "rank": float(i)})
            if row.error:  # after the with: ending it inside would leave the parent to be ended twice
                mlflow.MlflowClient().set_terminated(child.info.run_id, status="FAILED")
        for name in ("leaderboard.html", "leaderboard.csv", "leaderboard.md", "multirun.yaml"):
            if (root / name).is_file():
                mlflow.log_artifact(str(root / name))
        return parent.info.run_id


class MLflowCallback(Callback):
    """Logs the sweep to MLflow when the multirun ends (after the leaderboard callback)."""

    def __init__(self, enabled: bool = False, tracking_uri: str = "sqlite:///mlflow.db", experiment: str = "ragsweep",
                 sort_by: str = "ndcg@10", seed: int = 0, baseline: str | None = None, alpha: float = 0.05) -> None:
        self.enabled = enabled
        self.options = dict(tracking_uri=tracking_uri, experiment=experiment, sort_by=sort_by, seed=seed,
                            baseline=baseline, alpha=alpha)

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        if self.enabled:
            _import_mlflow()  # fail before the jobs run, not after

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if not self.enabled:
            return
        try:
            run_id = log_sweep(config.hydra.sweep.dir, **self.options)
        except InputError as exc:
            log.error("nothing logged to MLflow: %s", exc)
            return
        print(f"mlflow: run {run_id} in experiment {self.options['experiment']!r} at {self.options['tracking_uri']}")
