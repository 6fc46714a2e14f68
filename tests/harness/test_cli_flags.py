"""The command line's flags and overrides: what they mean, and the bad ones refused before any work."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragsweep.harness.ragas_once import translate
from ragsweep.metrics.errors import InputError

GUARD = Path(__file__).with_name("socket_guard.py")


def write_rows(path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truths"])
        w.writerow(["Who built the bridge?", "Ada built it.", "Ada built the bridge in 1901.", "Ada built the bridge."])
        w.writerow(["When?", "In 1901.", "Ada built the bridge in 1901.", "In 1901."])
    return path


def guarded(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``ragsweep ARGS`` with every network connection refused; returns the run and the attempts."""
    log = cwd / "sockets.log"
    env = {**os.environ, "RAGSWEEP_CACHE_DIR": str(cwd / "cache"), "OPENAI_API_KEY": "sk-test-not-a-real-key-123",
           "HYDRA_FULL_ERROR": "0"}
    proc = subprocess.run([sys.executable, str(GUARD), str(log), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    return proc, log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("flag", [["--llm", "none"], ["--model=none"], ["--llm", "None"]])
def test_ragas_once_llm_none_means_no_judge_and_opens_no_socket(tmp_path, flag):
    write_rows(tmp_path / "data.csv")
    proc, attempts = guarded("score", "--dataset", "data.csv", *flag, "progress=false", "out=out", cwd=tmp_path)
    assert attempts == [], attempts
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = (tmp_path / "out" / "summary.csv").read_text()
    assert "rouge_l" in summary and "faithfulness" not in summary  # no judged metric without a judge
    assert "llm: none" in (tmp_path / "out" / "config.yaml").read_text() or \
        "_target_: ragsweep.metrics.llm.factory.none" in (tmp_path / "out" / "config.yaml").read_text()


def test_llm_none_translates_to_the_none_group():
    assert translate(["--dataset", "d.csv", "--llm", "none"]).args[-1] == "llm=none"
    args = translate(["--llm", "none", "--embeddings", "text-embedding-3-small", "--apibase", "http://h/v1"]).args
    assert "llm=none" in args and "embedder.base_url='http://h/v1'" in args
    assert not any(a.startswith("llm.") for a in args)


@pytest.mark.parametrize("args", [["--llm", "none", "--apibase", "http://h/v1"], ["--model", "none", "--apikey", "env:HOME"]])
def test_llm_none_with_judge_settings_is_refused(args):
    with pytest.raises(InputError, match="none means no judge"):
        translate(args)


def test_threshold_keyed_by_a_seed_alias_gates_the_metric_it_names(tmp_path, ragsweep):
    write_rows(tmp_path / "data.csv")
    proc = ragsweep("score", "input=data.csv", "llm=none", "progress=false", "out=out", "metrics=[answer_similarity]",
                    "++thresholds.answer_similarity=0.99999", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]  # the gate ran (and failed), not refused as unknown
    assert "threshold failed: answer_semantic_similarity" in proc.stdout


def test_thresholds_and_options_resolve_aliases_and_refuse_two_names_for_one_metric():
    from ragsweep.metrics.catalogue import resolve
    from ragsweep.metrics.scoring import check_thresholds, metric_kwargs

    specs = resolve(["answer_similarity", "ndcg@10"])
    assert check_thresholds({"answer_similarity": 0.5, "ndcg@10": 0.1}, specs) == {
        "answer_semantic_similarity": 0.5, "ndcg@10": 0.1}
    with pytest.raises(InputError, match="name the same metric"):
        check_thresholds({"answer_similarity": 0.5, "answer_semantic_similarity": 0.6}, specs)
    with pytest.raises(InputError, match="not among the metrics scored"):
        check_thresholds({"rouge_l": 0.5}, specs)
    spec = resolve(["non_llm_string_similarity"])[0]
    assert spec.name == "string_similarity"
    with pytest.raises(InputError, match="has no option bogus"):  # an option under the alias is read, not dropped
        metric_kwargs(spec, {"non_llm_string_similarity": {"bogus": 1}})
