"""Search instead of grid (``hydra/sweeper=optuna``): the objective and its direction, the conditional
space, and a study with half the grid's jobs whose pick the grid's board confirms."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from ragsweep.harness.optuna_search import conditional_space, direction, objective, sweeper_overrides
from ragsweep.metrics.errors import InputError


def summary(means: dict[str, float | None], metric: str = "ndcg@10") -> dict:
    return {"variants": [{"variant": name, "metrics": {metric: {"mean": m}, "recall@10": {"mean": 0.5}}}
                         for name, m in means.items()]}


def test_direction_comes_from_the_metric_table():
    assert direction("ndcg@10") == "maximize"
    assert direction("span_iou") == "maximize"
    assert direction("hallucination") == "minimize"
    with pytest.raises(InputError):
        direction("no_such_metric")


def test_objective_is_the_best_variant_of_the_job_in_the_metric_direction():
    assert objective(summary({"k=1": 0.4, "k=5": 0.7, "k=10": 0.6}), "ndcg@10") == (0.7, "k=5")
    assert objective(summary({"k=1": 0.4, "k=5": 0.2, "k=10": 0.3}, "hallucination"), "hallucination") == (0.2, "k=5")
    # ties go to the first variant (the smallest K), and a variant without a mean is passed over
    assert objective(summary({"k=1": None, "k=5": 0.7, "k=10": 0.7}), "ndcg@10") == (0.7, "k=5")


def test_objective_of_a_job_with_no_mean_is_nan_and_of_an_unscored_metric_an_input_error():
    value, variant = objective(summary({"k=1": None}), "ndcg@10")
    assert math.isnan(value) and variant is None
    with pytest.raises(InputError, match="mrr@10"):
        objective(summary({"k=1": 0.3}), "mrr@10")


@pytest.fixture
def optuna_plugin():
    return pytest.importorskip("hydra_plugins.hydra_optuna_sweeper", reason="pip install 'ragsweep[search]'")


def test_the_command_sets_direction_seed_and_failure_rate_for_optuna_only(optuna_plugin):
    assert sweeper_overrides(["chunker.size=256,512"]) == []
    assert sweeper_overrides(["hydra/sweeper=optuna", "chunker.size=256,512"]) == [
        "hydra.sweeper.direction=maximize", "hydra.sweeper.sampler.seed=${seed}", "hydra.sweeper.max_failure_rate=1.0"]
    assert "hydra.sweeper.direction=minimize" in sweeper_overrides(
        ["hydra/sweeper=optuna", "hydra.callbacks.leaderboard.sort_by=hallucination"])
    given = sweeper_overrides(["+experiment=search", "hydra.sweeper.direction=minimize",
                               "hydra.sweeper.sampler.seed=3"])
    assert given == ["hydra.sweeper.max_failure_rate=1.0"]  # what the command gives is left alone


def test_conditional_parameters_are_asked_only_where_they_apply(optuna_plugin):
    import optuna

    cfg = OmegaConf.load(Path(__file__).resolve().parents[2] / "conf" / "experiment" / "search.yaml")
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    seen = []
    for _ in range(40):
        trial = study.ask()
        trial.suggest_categorical("chunker", ["recursive", "sentence"])
        trial.suggest_categorical("retrieval", ["dense", "bm25", "hybrid"])
        conditional_space(cfg, trial)
        study.tell(trial, 0.0)
        seen.append(dict(trial.params))
    for p in seen:
        assert ("chunker.overlap" in p) == (p["chunker"] == "recursive")
        assert ("index" in p) == (p["retrieval"] != "bm25")
        assert ("retrieval.fusion" in p) == (p["retrieval"] == "hybrid")
        assert ("retrieval.alpha" in p) == (p.get("retrieval.fusion") == "convex")
    assert any("retrieval.alpha" in p for p in seen)


def _board(sweep: Path) -> dict[str, dict[str, str]]:
    with (sweep / "leaderboard.csv").open(encoding="utf-8") as fh:
        return {r["variant"]: r for r in csv.DictReader(fh)}


@pytest.mark.slow
def test_a_study_with_half_the_jobs_picks_a_variant_the_grid_board_confirms(optuna_plugin, ragsweep, tmp_path):
    axes = ["chunker=recursive,sentence", "chunker.size=256,512,1024", "retrieval=dense,bm25",
            "retriever.top_k=10", "retriever.latency_queries=0", "progress=false"]
    cache = tmp_path / "cache"
    grid = ragsweep("sweep", *axes, "hydra.sweep.dir=grid", cwd=tmp_path, cache=cache, timeout=1800)
    assert grid.returncode == 0, grid.stderr[-3000:]
    # TPE samples at random for its first n_startup_trials (10 by default): a 6-trial study with the
    # default is a random search (seed 0 then never tries size 1024, the grid's four best, and its pick
    # is ▼ on the grid's board). 3 random trials, then TPE, in batches of 2 (the plugin's n_jobs).
    study = ragsweep("sweep", *axes, "hydra/sweeper=optuna", "hydra.sweeper.n_trials=6",
                     "hydra.sweeper.sampler.n_startup_trials=3", "seed=0", "hydra.sweep.dir=study",
                     cwd=tmp_path, cache=cache, timeout=1800)
    assert study.returncode == 0, study.stderr[-3000:]

    grid_board = _board(tmp_path / "grid")
    assert len(grid_board) == 12
    jobs = [p for p in (tmp_path / "study").iterdir() if p.is_dir() and p.name.isdigit()]
    assert len(jobs) == 6  # half the grid's 12 jobs
    report = json.loads((tmp_path / "study" / "search.json").read_text(encoding="utf-8"))
    assert report["direction"] == "maximize" and report["trials"] == 6 and report["failed"] == 0
    best = report["best_variant"]
    assert best in _board(tmp_path / "study")  # the study's board has it, and says what it makes of it
    assert "Study's best" in (tmp_path / "study" / "leaderboard.md").read_text(encoding="utf-8")
    # the value the study optimised is the grid's own measurement of that variant
    assert float(grid_board[best]["ndcg@10"]) == pytest.approx(report["best_value"], abs=1e-9)
    # the grid's paired tests: the study's pick is the grid's best or not distinguishable from it
    assert grid_board[best]["verdict"] in ("baseline", "tie"), (best, grid_board[best]["verdict"])
