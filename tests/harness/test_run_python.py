"""`ragsweep run target=python` as the docs show it (docs/how-to/your-application.md): its example module and
command, two versions of one application on one board with paired tests, and the same from Python
(``ragsweep.run``)."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import shlex
from pathlib import Path

import pytest

import ragsweep
import ragsweep as ragsweep_api
from ragsweep.metrics.errors import InputError

README = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "your-application.md"  # the run example's page


def example() -> tuple[str, list[str]]:
    """The docs' example module and the arguments of its command."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- run-example:start -->\n(.*?)<!-- run-example:end -->", text, re.S)
    assert block, f"{README}: the run example's markers are missing"
    module = re.search(r"```python\n(.*?)```", block.group(1), re.S).group(1)
    command = re.search(r"```bash\n(.*?)```", block.group(1), re.S).group(1).strip()
    args = shlex.split(command)
    assert args[:2] == ["ragsweep", "run"]
    return module, args[1:]


def board(root: Path) -> list[dict[str, str]]:
    with (root / "leaderboard.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_readme_example_puts_two_versions_on_one_board(tmp_path, ragsweep, monkeypatch):
    module, args = example()
    (tmp_path / "my_app.py").write_text(module, encoding="utf-8")
    out = ragsweep(*args, "progress=false", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    root = tmp_path / "outputs/runs/my_app"
    rows = board(root)
    assert sorted(r["target.params.top_k"] for r in rows) == ["2", "5"]
    best, other = rows
    assert best["verdict"] == "baseline" and other["baseline"] == best["variant"]
    assert other["verdict"] in ("worse", "tie") and float(other["p_holm"]) <= 1 and int(other["n_pairs"]) == 40
    for r in rows:
        assert int(r["mrr@10_n_ok"]) == 40 and float(r["app_latency_p50_ms"]) >= 0
        assert r["app_calls"] == "40" and r["app_errors"] == "0" and r["contexts_unlocated"] == "0"
    assert int(best["contexts_returned"]) + int(other["contexts_returned"]) == 40 * (2 + 5)
    assert "top_k" in (root / "leaderboard.md").read_text()
    # the board rebuilds from the run folder, and a rerun of the finished command calls nothing
    assert ragsweep("board", str(root), cwd=tmp_path).returncode == 0
    again = ragsweep(*args, "progress=false", cwd=tmp_path)
    assert again.returncode == 0 and "40 questions, 0 to call (40 recorded)" in again.stderr
    # the same command from Python (a child process, as the CLI), resuming into the same folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    got = ragsweep_api.run(*[a for a in args[1:] if not a.startswith("out=")], "progress=false", dir=root)
    assert sorted(r.variant for r in got.rows) == sorted(r["variant"] for r in rows) and got.sort_by == "mrr@10"


def test_bad_input_exits_2_with_one_line(tmp_path, ragsweep):
    out = ragsweep("run", "target=python", "target.function=nowhere:answer", "progress=false", cwd=tmp_path)
    assert out.returncode == 2 and "cannot import nowhere" in out.stderr
    out = ragsweep("run", "target=python", "progress=false", cwd=tmp_path)
    assert out.returncode == 2 and "target.function=module:function" in out.stderr
    (tmp_path / "app_a.py").write_text("def answer(question, top_k=1):\n    return 'A'\n")
    first = ragsweep("run", "target=python", "target.function=app_a:answer", "out=o", "progress=false", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    other = ragsweep("run", "target=python", "target.function=app_a:answer", "target.params.top_k=3", "out=o",
                     "progress=false", cwd=tmp_path)
    assert other.returncode == 2 and "holds a run of another application" in other.stderr


def test_an_application_without_contexts_is_scored_on_its_answers(tmp_path, ragsweep):
    (tmp_path / "plain.py").write_text("async def answer(question):\n    return 'The harbour opened in 1890.'\n")
    out = ragsweep("run", "target=python", "target.function=plain:answer", "out=o", "progress=false", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads((tmp_path / "o/0/summary.json").read_text())
    metrics = set(summary["variants"][0]["metrics"])
    assert "token_f1" in metrics and not metrics & {"mrr@10", "span_recall", "non_llm_context_recall"}
    assert "sorted by token_f1" in (tmp_path / "o/leaderboard.md").read_text()


def test_python_api_runs_functions_in_process_onto_one_board(tmp_path, monkeypatch, cache_dir):
    monkeypatch.chdir(tmp_path)
    module, _ = example()
    namespace: dict = {}
    exec(compile(module, "my_app.py", "exec"), namespace)  # noqa: S102 - the README's own example
    answer = namespace["answer"]
    calls = []

    def counted(question: str, top_k: int = 3) -> dict:
        calls.append(question)
        return answer(question, top_k)

    first = ragsweep.run("progress=false", app=counted, dir="runs", name="top2", params={"top_k": 2})
    assert len(first.rows) == 1 and len(calls) == 40
    second = ragsweep.run("progress=false", app=counted, dir="runs", name="top5", params={"top_k": 5})
    assert sorted(r.variant for r in second.rows) == ["top2", "top5"]
    assert second.sort_by == "mrr@10" and {r.comparison.verdict for r in second.rows} >= {"baseline"}
    again = ragsweep.run("progress=false", app=counted, dir="runs", name="top5", params={"top_k": 5})
    assert len(calls) == 80 and len(again.rows) == 2  # resumed: nothing called again
    with pytest.raises(InputError):
        ragsweep.run(app=42, dir="runs")

    async def from_a_notebook() -> object:  # a running event loop, as in Jupyter
        return ragsweep.run("progress=false", app=counted, dir="runs", name="top1", params={"top_k": 1})

    assert len(asyncio.run(from_a_notebook()).rows) == 3 and len(calls) == 120


def test_two_runs_started_together_each_keep_their_folder(tmp_path):
    import os
    import subprocess

    from conftest import CLI

    module, args = example()
    (tmp_path / "my_app.py").write_text(module, encoding="utf-8")
    # the example's own out= names its folder; left out, the default folder is named by the clock
    args = [a for a in args if not a.startswith("out=")] + ["progress=false", "target.params.top_k=2"]
    env = {**os.environ, "RAGSWEEP_CACHE_DIR": str(tmp_path / "cache")}
    procs = [subprocess.Popen([*CLI, *args], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    assert [code for code, _ in outs] == [0, 0], [err[-2000:] for _, err in outs]
    folders = sorted((tmp_path / "outputs" / "runs").iterdir())
    assert len(folders) == 2  # run-2 when both started in the same second
    for folder in folders:
        assert len(board(folder)) == 1 and (folder / "0" / "scores.jsonl").is_file()
