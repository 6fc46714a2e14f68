"""The exit-code contract of every command, a test per (command, code) row:
0 ok, 1 a threshold failed, 2 bad input or usage, 3 nothing measured (every job failed), 4 some jobs failed.

Everything runs offline and small: sweeps embed through a hashing server on 127.0.0.1
(``embedding_server.py``), judges that must fail point at a port where nothing listens.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from embedding_server import EmbeddingServer, dead_url

from ragsweep.harness.outputs import jobs_outcome
from ragsweep.harness.rescore import outcome
from ragsweep.metrics.errors import EXIT_NOT_SCORED, EXIT_SOME_FAILED

KEY = {"OPENAI_API_KEY": "sk-test-exit-codes-0000"}
SMALL_SWEEP = ("chunker.size=1024", "retriever.top_k=1", "retriever.latency_queries=0", "max_queries=4",
               "progress=false", "embedder=openai", "embedder.max_retries=0", "embedder.timeout_s=5")
DEAD_JUDGE = ("llm=openai", "llm.max_retries=0", "llm.timeout_s=5")
APP = '''
def answer(question, fail=False):
    if fail:
        raise RuntimeError("the application is down")
    return {"answer": "Paris", "contexts": ["Paris is the capital of France."]}
'''
RUN = ("target=python", "target.function=exit_app:answer", "call.retries=0", "metrics.generation=[token_f1]",
       "progress=false")


def write_scores_input(path: Path) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "contexts", "ground_truths"])
        w.writerow(["What is the capital of France?", "Paris", "Paris is the capital of France.", "Paris"])
        w.writerow(["Who wrote Hamlet?", "Marlowe", "Hamlet is a play by Shakespeare.", "Shakespeare"])
    return path


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory, ragsweep):
    """A two-job sweep (two chunk sizes) that finished: its folder, and the run's exit code."""
    cwd = tmp_path_factory.mktemp("sweep")
    with EmbeddingServer() as url:
        proc = ragsweep("sweep", *SMALL_SWEEP, "chunker.size=512,1024", f"embedder.base_url={url}",
                        f"hydra.sweep.dir={cwd / 'sw'}", cwd=cwd, env=KEY)
    return cwd / "sw", proc


def _copy_with_failed_job(src: Path, dst: Path, keep_ok: bool) -> Path:
    shutil.copytree(src, dst)
    for board in dst.glob("leaderboard.*"):
        board.unlink()
    for job in ("0", "1"):
        if not keep_ok or job == "1":
            shutil.rmtree(dst / job)
            (dst / job).mkdir()
            (dst / job / "error.json").write_text(json.dumps({"error": "OSError: read-only cache"}))
    return dst


# ------------------------------------------------------------------ score (and ragas_once's flags)

@pytest.mark.parametrize("threshold, code", [("0.4", 0), ("0.9", 1)])
def test_score_exits_0_when_thresholds_hold_and_1_when_one_fails(tmp_path, ragsweep, threshold, code):
    write_scores_input(tmp_path / "in.csv")
    proc = ragsweep("score", "input=in.csv", "llm=none", "metrics=[exact_match]", "out=out", "progress=false",
                    f"++thresholds.exact_match={threshold}", cwd=tmp_path)
    assert proc.returncode == code, proc.stderr[-2000:]


def test_score_exits_2_on_bad_input_before_any_work(tmp_path, ragsweep):
    write_scores_input(tmp_path / "in.csv")
    proc = ragsweep("score", "input=in.csv", "llm=none", "metrics=[context_recall_nope]", "out=out", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown metric context_recall_nope" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_score_exits_3_when_every_judged_score_is_an_error(tmp_path, ragsweep):
    write_scores_input(tmp_path / "in.csv")
    proc = ragsweep("score", "input=in.csv", *DEAD_JUDGE, f"llm.base_url={dead_url()}", "metrics=[faithfulness]",
                    "out=out", "progress=false", cwd=tmp_path, env=KEY)
    assert proc.returncode == EXIT_NOT_SCORED, proc.stderr[-2000:]
    assert "could not score: every judged score is an error" in proc.stderr


@pytest.mark.parametrize("flags, code", [
    (["--metrics", "exact_match", "--llm", "none"], 0),
    (["--metrics", "exact_match", "--llm", "none", "++thresholds.exact_match=0.9"], 1),
    (["--metrics", "exact_match", "--apikey", "env:RAGSWEEP_UNSET_VARIABLE"], 2),
    (["--metrics", "faithfulness", "--model", "m", "--apibase", "DEAD", "--apikey", "env:OPENAI_API_KEY",
      "llm.max_retries=0"], 3),
])
def test_ragas_once_flags_share_the_contract(tmp_path, ragsweep, flags, code):
    write_scores_input(tmp_path / "in.csv")
    flags = [dead_url() if f == "DEAD" else f for f in flags]
    proc = ragsweep("score", "--dataset", "in.csv", *flags, "out=out", "progress=false", cwd=tmp_path, env=KEY)
    assert proc.returncode == code, proc.stderr[-2000:]


# ------------------------------------------------------------------ sweep

def test_sweep_exits_0_when_every_job_finished(finished_sweep):
    folder, proc = finished_sweep
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (folder / "leaderboard.csv").is_file()


def test_sweep_exits_2_on_a_bad_value_before_its_folder_is_claimed(tmp_path, ragsweep):
    proc = ragsweep("sweep", "chunker.size=512,-1", "progress=false", f"hydra.sweep.dir={tmp_path / 'sw'}",
                    cwd=tmp_path)
    assert proc.returncode == 2 and "chunker.size must be positive, got -1" in proc.stderr
    assert not (tmp_path / "sw").exists()


def test_sweep_exits_3_when_every_job_failed(tmp_path, ragsweep):
    proc = ragsweep("sweep", *SMALL_SWEEP, f"embedder.base_url={dead_url()}", f"hydra.sweep.dir={tmp_path / 'sw'}",
                    cwd=tmp_path, env=KEY)
    assert proc.returncode == EXIT_NOT_SCORED, proc.stderr[-2000:]
    assert "every job failed (1 of 1), nothing was measured" in proc.stderr


def test_a_single_job_sweep_in_run_mode_exits_3_when_it_failed(tmp_path, ragsweep):
    proc = ragsweep("sweep", "hydra.mode=RUN", *SMALL_SWEEP, f"embedder.base_url={dead_url()}",
                    f"hydra.run.dir={tmp_path / 'job'}", cwd=tmp_path, env=KEY)
    assert proc.returncode == EXIT_NOT_SCORED, proc.stderr[-2000:]
    assert "the job failed, nothing was measured" in proc.stderr


def test_sweep_exits_4_when_some_jobs_failed_and_ranks_the_others(tmp_path, ragsweep):
    with EmbeddingServer() as url:
        proc = ragsweep("sweep", *SMALL_SWEEP, f"embedder.base_url={url},{dead_url()}",
                        f"hydra.sweep.dir={tmp_path / 'sw'}", cwd=tmp_path, env=KEY)
    assert proc.returncode == EXIT_SOME_FAILED, proc.stderr[-2000:]
    assert "1 of 2 jobs failed (1); the leaderboard ranks the others" in proc.stderr
    with (tmp_path / "sw" / "leaderboard.csv").open() as fh:
        assert [bool(r["error"]) for r in csv.DictReader(fh)] == [False, True]


def test_the_python_api_returns_a_partly_failed_board_and_raises_when_nothing_was_measured(tmp_path, monkeypatch):
    import ragsweep

    monkeypatch.chdir(tmp_path)
    for k, v in KEY.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    with EmbeddingServer() as url:
        board = ragsweep.sweep(*SMALL_SWEEP, f"embedder.base_url={url},{dead_url()}", dir=tmp_path / "some")
    assert len(board.rows) == 2 and [r.job.rsplit("/", 1)[-1] for r in board.failed] == ["1"]
    with pytest.raises(RuntimeError, match=r"exit 3\): every job failed"):
        ragsweep.sweep(*SMALL_SWEEP, f"embedder.base_url={dead_url()}", dir=tmp_path / "none")


def _job(root: Path, name: str, error: str | None = None, **summary: object) -> None:
    (root / name).mkdir(parents=True)
    if error is not None:
        (root / name / "error.json").write_text(json.dumps({"error": error}))
    else:
        (root / name / "summary.json").write_text(json.dumps(summary))


def test_jobs_outcome_counts_failed_and_empty_jobs(tmp_path):
    assert jobs_outcome(tmp_path / "none") == (0, "")
    _job(tmp_path, "0", variants=[{"n_samples": 3, "cost": {"app_errors": 1}}])
    (tmp_path / ".hydra").mkdir()  # not a job
    assert jobs_outcome(tmp_path) == (0, "")
    _job(tmp_path, "1", variants=[{"n_samples": 3, "cost": {"app_errors": 3}}])  # every call failed
    code, message = jobs_outcome(tmp_path)
    assert code == 4 and "1 of 2 jobs failed (1)" in message and "every call to the application failed" in message
    (tmp_path / "0" / "summary.json").unlink()
    (tmp_path / "0" / "error.json").write_text(json.dumps({"error": "OSError: read-only cache"}))
    code, message = jobs_outcome(tmp_path)
    assert code == 3 and "every job failed (2 of 2)" in message and "read-only cache" in message


# ------------------------------------------------------------------ board

def test_board_exits_0_and_2(finished_sweep, tmp_path, ragsweep):
    folder, _ = finished_sweep
    assert ragsweep("board", str(folder), cwd=tmp_path).returncode == 0
    missing = ragsweep("board", str(tmp_path / "no_such_sweep"), cwd=tmp_path)
    assert missing.returncode == 2 and "not found" in missing.stderr


@pytest.mark.parametrize("keep_ok, code", [(False, EXIT_NOT_SCORED), (True, EXIT_SOME_FAILED)])
def test_board_exits_3_or_4_on_a_sweep_with_failed_jobs(finished_sweep, tmp_path, ragsweep, keep_ok, code):
    folder = _copy_with_failed_job(finished_sweep[0], tmp_path / "sw", keep_ok)
    proc = ragsweep("board", str(folder), cwd=tmp_path)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert (folder / "leaderboard.csv").is_file() == keep_ok


# ------------------------------------------------------------------ rescore

def test_rescore_exits_0_2_and_3(finished_sweep, tmp_path, ragsweep):
    folder = shutil.copytree(finished_sweep[0], tmp_path / "sw")
    ok = ragsweep("rescore", str(folder), "metrics=[rouge_l]", "llm=none", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-2000:]
    # the compact board, as `sweep` and `board` print it, not the markdown file's every column
    assert ok.stdout.startswith("Leaderboard: ") and "full board (all" in ok.stdout and "\n| # |" not in ok.stdout
    bad = ragsweep("rescore", str(folder), "metrics=[rogue_l]", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown metric rogue_l" in bad.stderr
    down = ragsweep("rescore", str(folder), "metrics=[faithfulness]", *DEAD_JUDGE, f"llm.base_url={dead_url()}",
                    cwd=tmp_path, env=KEY)
    assert down.returncode == EXIT_NOT_SCORED, down.stderr[-2000:]
    assert "every score asked for is an error in every job (2)" in down.stderr


def test_rescore_outcome_is_4_when_some_jobs_scored_nothing(tmp_path):
    for job, statuses in (("0", ["ok", "undefined"]), ("1", ["error", "error", "undefined"])):
        (tmp_path / job).mkdir()
        rows = [{"metric": "faithfulness", "status": s} for s in statuses] + [{"metric": "rouge_l", "status": "ok"}]
        (tmp_path / job / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, message = outcome([tmp_path / "0", tmp_path / "1"], ["faithfulness"])
    assert code == EXIT_SOME_FAILED and "in 1 of 2 jobs" in message
    assert outcome([tmp_path / "1"], ["faithfulness"])[0] == EXIT_NOT_SCORED
    assert outcome([tmp_path / "0", tmp_path / "1"], ["rouge_l"]) == (0, "")


# ------------------------------------------------------------------ run

@pytest.mark.parametrize("fail, code", [("false", 0), ("true", EXIT_NOT_SCORED), ("false,true", EXIT_SOME_FAILED)])
def test_run_exits_0_3_or_4_by_how_many_versions_measured_nothing(tmp_path, ragsweep, fail, code):
    (tmp_path / "exit_app.py").write_text(APP)
    proc = ragsweep("run", *RUN, f"target.params.fail={fail}", "out=runs", cwd=tmp_path)
    assert proc.returncode == code, proc.stderr[-2000:]
    if code != EXIT_NOT_SCORED:  # the versions that answered are ranked
        assert (tmp_path / "runs" / "leaderboard.csv").is_file()


def test_run_exits_2_on_bad_input(tmp_path, ragsweep):
    proc = ragsweep("run", *RUN, "target.function=no_such_module:answer", "out=runs", cwd=tmp_path)
    assert proc.returncode == 2 and "no_such_module" in proc.stderr


# ------------------------------------------------------------------ gen and convert

@pytest.mark.parametrize("args, code", [
    (["n=1"], 0),
    (["n=0"], 2),
    (["n=2", "max_attempts=3", "gates.min_question_words=1000"], EXIT_NOT_SCORED),  # nothing accepted
])
def test_gen_exit_codes(tmp_path, ragsweep, args, code):
    proc = ragsweep("gen", "llm=none", "progress=false", "gates.embed=false", *args, "out=ts.jsonl", cwd=tmp_path)
    assert proc.returncode == code, proc.stderr[-2000:]


def test_convert_exits_0_and_2(tmp_path, ragsweep):
    made = ragsweep("gen", "llm=none", "progress=false", "gates.embed=false", "n=1", "out=ts.jsonl", cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
    ok = ragsweep("convert", "input=ts.jsonl", "out=ragas.csv", "format=ragas", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = ragsweep("convert", "input=missing.jsonl", "out=x.jsonl", cwd=tmp_path)
    assert bad.returncode == 2 and "missing.jsonl" in bad.stderr
