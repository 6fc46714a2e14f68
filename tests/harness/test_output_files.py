"""Commands' output files written all or nothing (metrics/staging.py used by the board, rescore and the Python
API), and the exit a command takes when its folder cannot be written (harness/outputs.write_failed)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir()}


def test_a_board_that_fails_half_way_keeps_the_old_three_files(tmp_path, monkeypatch):
    from ragsweep.harness.board.leaderboard import build
    from test_compare import BASE, fake_sweep

    sweep = fake_sweep(tmp_path, {"a": ({"top_k": 1}, {"ndcg@10": BASE}), "b": ({"top_k": 5}, {"ndcg@10": BASE})})
    old = {f"leaderboard.{ext}": f"old {ext}" for ext in ("csv", "md", "html")}
    for name, text in old.items():
        (sweep / name).write_text(text)
    real = Path.write_text

    def disk_full(self, text, *args, **kwargs):
        if self.name == "leaderboard.html":  # written last of the three
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full)
    with pytest.raises(OSError, match="No space left"):
        build(sweep, "ndcg@10", n_resamples=100)
    monkeypatch.undo()
    assert {name: (sweep / name).read_text() for name in old} == old
    assert not [p for p in sweep.iterdir() if p.name.startswith(".ragsweep")]


@pytest.mark.parametrize("exc, code", [(OSError(errno.ENOSPC, "No space left on device"), 4),
                                       (PermissionError(errno.EACCES, "Permission denied"), 2)])
def test_a_folder_that_cannot_be_written_ends_the_command_with_its_code(exc, code, capsys):
    from ragsweep.harness.outputs import write_failed

    with pytest.raises(SystemExit) as stop:
        write_failed(exc, "outputs/sweeps/x", kept="the jobs logged as rescored before it keep their new scores")
    assert stop.value.code == code
    assert capsys.readouterr().err == (f"ragsweep: error: could not write to outputs/sweeps/x: {exc.strerror}; its "
                                       "files are left as they were; the jobs logged as rescored before it keep "
                                       "their new scores\n")


def test_the_python_apis_write_is_all_or_nothing_too(tmp_path, monkeypatch):
    import ragsweep
    import ragsweep.harness.score as score_module

    scores = ragsweep.score([{"question": "q", "answer": "Paris.", "ground_truth": "Paris"}], metrics=["rouge_l"])
    out = tmp_path / "out"
    out.mkdir()
    old = {"result.csv": "old", "explanations.jsonl": "old", "summary.csv": "old"}
    for name, text in old.items():
        (out / name).write_text(text)
    real = score_module.atomic_write

    def disk_full(path, write):
        if Path(path).name == "explanations.jsonl":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, write)

    monkeypatch.setattr(score_module, "atomic_write", disk_full)
    with pytest.raises(OSError, match="No space left"):
        scores.write(out)
    assert _files(out) == old
    monkeypatch.undo()
    scores.write(out)
    assert (out / "result.csv").read_text().startswith("id,")
