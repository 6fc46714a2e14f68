"""MLflow logging: every variant a child run with its parameters and metrics; off by default."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from ragsweep.harness.board.mlflow import MLflowCallback, log_sweep, metric_key
from test_compare import BASE, fake_sweep


def test_metric_names_are_made_mlflow_legal():
    assert metric_key("ndcg@10") == "ndcg_at_10"
    assert metric_key("span_iou") == "span_iou"
    assert metric_key("a(b)") == "a_b_"


def test_disabled_callback_touches_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # importing mlflow would fail
    cb = MLflowCallback(enabled=False, tracking_uri=f"sqlite:///{tmp_path}/m.db")
    cfg = OmegaConf.create({"hydra": {"sweep": {"dir": str(tmp_path)}}})
    cb.on_multirun_start(cfg)
    cb.on_multirun_end(cfg)
    assert list(tmp_path.iterdir()) == []


def test_enabled_without_mlflow_stops_before_the_jobs_with_exit_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(SystemExit) as exc:
        MLflowCallback(enabled=True).on_multirun_start(OmegaConf.create({}))
    assert exc.value.code == 2 and "pip install 'ragsweep[mlflow]'" in capsys.readouterr().err


def _runs(uri: str, experiment: str = "ragsweep"):
    mlflow = pytest.importorskip("mlflow")
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    return client.search_runs([exp.experiment_id])


def test_each_variant_becomes_a_run_with_params_and_metrics(tmp_path):
    pytest.importorskip("mlflow")
    sweep = fake_sweep(tmp_path / "sweep", {
        "a": ({"chunker.size": 256, "top_k": 1}, {"ndcg@10": BASE, "recall@10": BASE}),
        "b": ({"chunker.size": 512, "top_k": 1}, {"ndcg@10": [v - 0.1 for v in BASE], "recall@10": BASE}),
    })
    (sweep / "leaderboard.csv").write_text("rank\n")
    uri = f"file:{tmp_path / 'mlruns'}"  # the quick local store; the default (sqlite) is tested end to end
    parent = log_sweep(sweep, tracking_uri=uri, experiment="ragsweep")
    runs = {r.info.run_name: r for r in _runs(uri)}
    assert set(runs) == {"a", "b", "sweep"} and runs["sweep"].info.run_id == parent
    a, b = runs["a"].data, runs["b"].data
    assert a.params == {"chunker.size": "256", "top_k": "1"}
    assert a.metrics["ndcg_at_10"] == pytest.approx(sum(BASE) / len(BASE))
    assert {"ndcg_at_10_ci_low", "ndcg_at_10_ci_high", "ndcg_at_10_n_ok", "recall_at_10", "cost_seconds",
            "cost_embedded_texts", "cost_seconds_embed", "rank"} <= a.metrics.keys()
    assert b.metrics["diff_vs_baseline"] == pytest.approx(-0.1) and b.tags["ragsweep.verdict"] == "worse"
    assert a.tags["ragsweep.verdict"] == "baseline" and a.tags["mlflow.parentRunId"] == parent
    assert runs["sweep"].data.params["baseline"] == "a"


@pytest.mark.slow
def test_one_override_logs_a_real_sweep_to_sqlite(tmp_path, ragsweep):
    pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy", reason="the sqlite store needs the mlflow extra (sqlalchemy, alembic)")
    out = ragsweep("sweep", "progress=false", "mlflow.enabled=true", "chunker.size=512", "retriever.top_k=[1,5]",
                   cwd=tmp_path, env={"MLFLOW_TRACKING_URI": None})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "mlflow: run" in out.stdout and (tmp_path / "mlflow.db").is_file()
    runs = _runs(f"sqlite:///{tmp_path / 'mlflow.db'}")
    variants = [r for r in runs if r.data.tags.get("ragsweep.kind") == "variant"]
    assert sorted(r.data.params["top_k"] for r in variants) == ["1", "5"]
    assert all(r.data.params["chunker.size"] == "512" and "ndcg_at_10" in r.data.metrics for r in variants)
    parent = next(r for r in runs if r.data.tags.get("ragsweep.kind") == "sweep")
    artifacts = Path(parent.info.artifact_uri.removeprefix("file://"))
    assert (artifacts / "leaderboard.html").is_file()  # the leaderboard was written before logging
