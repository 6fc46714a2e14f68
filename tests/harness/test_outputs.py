"""Output folders (harness/outputs.py): each run its own, `out` checked before the work, nothing lost
at the end, a different sweep refused a named folder. The sweeps themselves: test_sweep_folders.py."""

from __future__ import annotations

import csv
import functools
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import CLI, run_cli
from omegaconf import OmegaConf

from ragsweep.harness.outputs import check_writable, claim_dir, refuse_other_sweep, save
from ragsweep.metrics.errors import InputError

score = functools.partial(run_cli, "score", "progress=false", "llm=none", timeout=300)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def write_rows(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["question", "answer", "ground_truth"])
        w.writerows(rows)
    return path


FOUR = [("Capital of France?", "Paris", "Paris"), ("Who wrote Hamlet?", "", "Shakespeare"),
        ("2+2?", "four", "four"), ("Largest ocean?", "   ", "Pacific")]


# ---------------------------------------------------------------- output folders

def test_claim_dir_adds_a_suffix_when_the_name_is_taken(tmp_path):
    base = tmp_path / "outputs" / "score" / "2025-01-01_00-00-00"
    assert [claim_dir(base).name for _ in range(3)] == [base.name, f"{base.name}-2", f"{base.name}-3"]


def test_two_runs_started_in_the_same_second_keep_both_results(tmp_path):
    write_rows(tmp_path / "in.csv", FOUR)
    # Both start before either is waited for; out is named by the clock (to the year: the same name
    # for both, whatever the timing), so the second to claim it gets the suffix -2.
    env = {"RAGSWEEP_CACHE_DIR": str(tmp_path / "cache"), "HYDRA_FULL_ERROR": "0"}
    args = [*CLI, "score", "progress=false", "llm=none", "input=in.csv", "metrics=[rouge_l]",
            "out=outputs/score/same-${now:%Y}"]
    procs = [subprocess.Popen(args, cwd=tmp_path, env={**os.environ, **env},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    year = time.strftime("%Y")
    folders = sorted(p.name for p in (tmp_path / "outputs" / "score").iterdir())
    assert folders == [f"same-{year}", f"same-{year}-2"]
    printed = sorted(line.split("scores: ")[1] for out, _ in outs for line in out.splitlines()
                     if line.startswith("scores: "))
    assert printed == [f"outputs/score/same-{year}", f"outputs/score/same-{year}-2"]
    for name in folders:
        folder = tmp_path / "outputs" / "score" / name
        assert len(read_csv(folder / "result.csv")) == 4
        assert f"out: outputs/score/{name}\n" in (folder / "config.yaml").read_text()  # the folder written


def test_the_default_out_is_unique_per_run(tmp_path):
    write_rows(tmp_path / "in.csv", FOUR)
    procs = [score("input=in.csv", "metrics=[rouge_l]", cwd=tmp_path) for _ in range(2)]
    assert [p.returncode for p in procs] == [0, 0]
    assert len(list((tmp_path / "outputs" / "score").iterdir())) == 2


@pytest.mark.parametrize("out, message", [
    ("taken.txt", "out=taken.txt: is a file, not a folder"),
    ("taken.txt/sub", "out=taken.txt/sub: taken.txt is a file, not a folder"),
])
def test_an_out_that_cannot_be_written_is_refused_before_any_work(tmp_path, out, message):
    write_rows(tmp_path / "in.csv", FOUR)
    (tmp_path / "taken.txt").write_text("keep me")
    proc = score("input=in.csv", f"out={out}", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and (tmp_path / "taken.txt").read_text() == "keep me"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
def test_an_unwritable_out_is_refused_even_for_root(tmp_path):
    write_rows(tmp_path / "in.csv", FOUR)
    proc = score("input=in.csv", "out=/proc/ragsweep-out", cwd=tmp_path)
    assert proc.returncode == 2 and "out=/proc/ragsweep-out: cannot write in /proc" in proc.stderr, proc.stderr


def test_check_writable_leaves_nothing_behind(tmp_path):
    check_writable(tmp_path / "a" / "b")
    check_writable(tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="is a file"):
        (tmp_path / "f").write_text("")
        check_writable(tmp_path / "f")


def test_results_that_cannot_be_written_go_to_a_fallback_folder(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    written = []

    def write(into: Path, folder: Path) -> None:
        if folder.name == "out":
            raise PermissionError(13, "Permission denied")
        (into / "result.csv").write_text("id\n")
        written.append(folder)

    folder, problem = save(tmp_path / "out", write, claim=False, command="score")
    assert folder.parent == tmp_path / "tmp" and folder.name.startswith("ragsweep-score-fallback-")
    assert (folder / "result.csv").is_file() and written == [folder]
    assert problem == f"could not write to {tmp_path / 'out'}: Permission denied" and problem.code == 2
    assert not (tmp_path / "out").exists()  # the folder save created for the failed write is gone again
    assert [p.name for p in folder.iterdir()] == ["result.csv"]  # no staging folder left behind


def _score_cfg(tmp_path: Path, *extra: str):
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        return compose("score", overrides=[f"input={tmp_path / 'in.csv'}", f"out={tmp_path / 'out'}", "llm=none",
                                           "metrics=[rouge_l]", "progress=false", *extra])


def test_score_run_keeps_its_results_when_out_fails_at_the_end(tmp_path, monkeypatch, capsys):
    """In-process: out passes the check, then writing fails (a full disk, a permission taken away)."""
    import ragsweep.harness.score as score_module

    write_rows(tmp_path / "in.csv", FOUR)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    real = score_module.write_outputs

    def failing(into, *args):
        if Path(into).parent == tmp_path / "out":  # the staging folder inside out
            raise OSError(28, "No space left on device")
        return real(into, *args)

    monkeypatch.setattr(score_module, "write_outputs", failing)
    code = score_module.run(_score_cfg(tmp_path, "++thresholds.rouge_l=0.9"))
    assert code == 4  # the work finished, writing it where asked did not: not a pass, not bad input
    fallback = next((tmp_path / "tmp").iterdir())
    assert len(read_csv(fallback / "result.csv")) == 4
    err = capsys.readouterr()
    assert (f"could not write to {tmp_path / 'out'}: No space left on device; {tmp_path / 'out'} is left as it "
            f"was; the results are in {fallback}") in err.err
    assert f"scores: {fallback}" in err.out


def test_a_full_disk_at_the_end_of_score_leaves_the_old_results_whole(tmp_path, monkeypatch, capsys):
    """The disk fills while explanations.jsonl is written, after result.csv: the previous run's three files
    stay together, none replaced; the new results are all in the fallback folder; the exit code is 4."""
    import errno

    import ragsweep.harness.score as score_module

    write_rows(tmp_path / "in.csv", FOUR)
    out = tmp_path / "out"
    out.mkdir()
    old = {"result.csv": "id,old\n", "explanations.jsonl": '{"old": 1}\n', "config.yaml": "old: true\n",
           "notes.txt": "the user's own file\n"}
    for name, text in old.items():
        (out / name).write_text(text)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    real = score_module.atomic_write

    def disk_full(path, write):
        if Path(path).name == "explanations.jsonl" and out in Path(path).parents:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, write)

    monkeypatch.setattr(score_module, "atomic_write", disk_full)
    code = score_module.run(_score_cfg(tmp_path))
    assert code == 4
    assert {p.name: p.read_text() for p in out.iterdir()} == old  # untouched, no staging folder left
    fallback = next((tmp_path / "tmp").iterdir())
    assert sorted(p.name for p in fallback.iterdir()) == ["config.yaml", "cost.json", "explanations.jsonl",
                                                         "result.csv", "summary.csv"]
    assert len(read_csv(fallback / "result.csv")) == 4
    assert f"out: {fallback}" in (fallback / "config.yaml").read_text()
    assert f"the results are in {fallback}" in capsys.readouterr().err


def test_a_score_into_an_existing_folder_replaces_its_files_and_keeps_the_others(tmp_path):
    write_rows(tmp_path / "in.csv", FOUR)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "result.csv").write_text("id,old\n")
    (tmp_path / "out" / "notes.txt").write_text("mine")
    proc = score("input=in.csv", "out=out", "metrics=[rouge_l]", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["config.yaml", "cost.json", "explanations.jsonl",
                                                                   "notes.txt", "result.csv", "summary.csv"]
    assert len(read_csv(tmp_path / "out" / "result.csv")) == 4
    assert "out: out\n" in (tmp_path / "out" / "config.yaml").read_text()


def test_a_sweep_folder_is_refused_to_a_sweep_with_other_overrides_or_config(tmp_path, capsys):
    (tmp_path / "multirun.yaml").write_text("hydra:\n  overrides:\n    task: [chunker.size=256]\n"
                                            "retriever:\n  top_k: [1, 5]\n")

    def cfg(task, top_k):
        return OmegaConf.create({"hydra": {"overrides": {"task": task}}, "retriever": {"top_k": top_k}})

    refuse_other_sweep(tmp_path, cfg(["chunker.size=256"], [1, 5]))  # the same sweep: a resume
    for task, top_k, message in [
        (["chunker.size=512"], [1, 5], "holds another sweep (overrides: chunker.size=256; now: chunker.size=512)"),
        (["chunker.size=256"], [1, 10], "its config differs at retriever.top_k: [1, 5] there, [1, 10] now"),
    ]:
        with pytest.raises(SystemExit) as stop:
            refuse_other_sweep(tmp_path, cfg(task, top_k))
        assert stop.value.code == 2 and message in capsys.readouterr().err



@pytest.mark.parametrize("path", ["outputs/sweeps/2026-01-01_10-00-00-2", "it's here/x y", "C:\\runs\\a", "ends\\",
                                  "a,b=c[d]"])
def test_a_claimed_folder_survives_the_override_grammar(path):
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from ragsweep.harness.outputs import _quoted

    override = OverridesParser.create().parse_overrides([f"hydra.sweep.dir={_quoted(path)}"])[0]
    assert override.value() == path
