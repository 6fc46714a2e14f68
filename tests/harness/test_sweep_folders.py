"""Every sweep writes into its own folder: clock-named folders are claimed (also with the joblib
launcher, whose jobs run in other processes), and a different sweep is refused a named one."""

from __future__ import annotations

import csv
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CLI, run_cli

pytestmark = pytest.mark.slow  # a few small sweeps (BM25, one chunking, no answers): ~20 s in all

SMALL = ["retrieval=bm25", "chunker.size=512", "retriever.top_k=[1]", "retriever.latency_queries=0",
         "answerer=none", "metrics.generation=[]", "progress=false"]


def _board(folder: Path) -> list[dict[str, str]]:
    with (folder / "leaderboard.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_two_sweeps_started_at_once_keep_both_results(tmp_path):
    env = {**os.environ, "RAGSWEEP_CACHE_DIR": str(tmp_path / "cache"), "HYDRA_FULL_ERROR": "0"}
    procs = [subprocess.Popen([*CLI, "sweep", *SMALL], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    folders = sorted((tmp_path / "outputs" / "sweeps").iterdir())
    assert len(folders) == 2  # the same second or not, two folders
    for folder in folders:
        assert len(_board(folder)) == 1 and (folder / "0" / "runs.jsonl").is_file()


def test_a_taken_clock_name_gets_a_suffix_and_joblib_jobs_all_write_there(tmp_path):
    year = time.strftime("%Y")
    taken = tmp_path / "outputs" / "sweeps" / f"grid-{year}"
    taken.mkdir(parents=True)
    args = [*SMALL, "chunker.size=300,600", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
            "embedder.threads=1", "hydra.sweep.dir=outputs/sweeps/grid-${now:%Y}"]
    out = run_cli("sweep", *args, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    claimed = taken.with_name(f"grid-{year}-2")
    assert list(taken.iterdir()) == []  # the other run's folder is untouched
    assert sorted(p.name for p in claimed.iterdir() if p.is_dir()) == ["0", "1"]
    assert sorted(r["chunker.size"] for r in _board(claimed)) == ["300", "600"]
    assert f"outputs/sweeps/grid-{year}-2/leaderboard.csv" in out.stdout


def test_a_different_sweep_is_refused_a_named_folder_and_the_same_one_resumes(tmp_path):
    first = run_cli("sweep", *SMALL, "hydra.sweep.dir=mine", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    before = (tmp_path / "mine" / "leaderboard.csv").read_text()
    other = run_cli("sweep", *SMALL, "retriever.top_k=[1,3]", "hydra.sweep.dir=mine", cwd=tmp_path)
    assert other.returncode == 2, other.stderr[-3000:]
    assert "hydra.sweep.dir=mine holds another sweep" in other.stderr and "Traceback" not in other.stderr
    assert (tmp_path / "mine" / "leaderboard.csv").read_text() == before
    again = run_cli("sweep", *SMALL, "hydra.sweep.dir=mine", cwd=tmp_path)  # the same sweep: a resume
    assert again.returncode == 0, again.stderr[-3000:]
    assert [r["variant"] for r in _board(tmp_path / "mine")] == [r["variant"] for r in csv.DictReader(
        before.splitlines())]


def test_two_different_sweeps_started_together_in_one_named_folder_do_not_mix(tmp_path):
    env = {**os.environ, "RAGSWEEP_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.Popen([*CLI, "sweep", *SMALL, f"retriever.top_k=[{k}]", "hydra.sweep.dir=shared"],
                             cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for k in (1, 3)]
    outs = [(p.wait(timeout=600), p.stderr.read()) for p in runs]
    codes = sorted(code for code, _ in outs)
    assert codes == [0, 2], [err[-2000:] for _, err in outs]
    loser = next(err for code, err in outs if code == 2)
    assert "hydra.sweep.dir=shared holds another sweep" in loser and "Traceback" not in loser
    winner_k = 1 if outs[0][0] == 0 else 3
    assert {r["top_k"] for r in _board(tmp_path / "shared")} == {str(winner_k)}
