"""The Python API: the docs' walk-through (docs/get-started/python.md) runs, and gives the CLI's numbers on the
same input."""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

import ragsweep
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import ScriptedLLM
from ragsweep.metrics.prompts import identify

README = Path(__file__).resolve().parents[1] / "docs" / "get-started" / "python.md"  # the walk-through's page


def walkthrough() -> str:
    found = re.search(r"<!-- walkthrough:start -->\n```python\n(.*?)```\n<!-- walkthrough:end -->",
                      README.read_text(encoding="utf-8"), re.S)
    assert found, f"{README} lost its walk-through markers"
    return found.group(1)


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def cli(*args: str, cwd: Path) -> None:
    out = run_cli(*args, cwd=cwd)
    assert out.returncode == 0, out.stderr[-2000:]


def _same(a: object, b: object) -> bool:
    if a in ("", None) or b in ("", None) or (isinstance(b, float) and math.isnan(b)):
        return a in ("", None) and (b in ("", None) or (isinstance(b, float) and math.isnan(b)))
    return float(a) == pytest.approx(float(b), abs=1e-12)  # type: ignore[arg-type]


@pytest.mark.slow
def test_readme_walkthrough_runs_and_equals_the_cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "walkthrough").mkdir()
    ns: dict = {}
    exec(compile(walkthrough(), str(README), "exec"), ns)  # noqa: S102 - the docs' own code

    # generate == ragsweep gen (same corpus, n, seed, writer)
    cli("gen", "llm=none", "n=12", "out=cli/testset.jsonl", cwd=tmp_path)
    api_set = [json.loads(line) for line in (tmp_path / "walkthrough/testset.jsonl").read_text().splitlines()]
    cli_set = [json.loads(line) for line in (tmp_path / "cli/testset.jsonl").read_text().splitlines()]
    assert api_set == cli_set and len(api_set) == 12

    # sweep + rescore == ragsweep sweep + ragsweep rescore, every metric of every variant
    cli("sweep", "chunker.size=256,1024", "retriever.top_k=[1,5]", "testset=walkthrough/testset.jsonl",
            "progress=false", "hydra.sweep.dir=cli/sweep", cwd=tmp_path)
    cli("rescore", "cli/sweep", "metrics=[ndcg@5,precision@5]", cwd=tmp_path)
    board = ns["board"]
    api_rows = {r["variant"]: r for r in board.to_pandas().to_dict(orient="records")}
    cli_rows = {r["variant"]: r for r in _csv(tmp_path / "cli/sweep/leaderboard.csv")}
    assert set(api_rows) == set(cli_rows) and len(api_rows) == 4
    assert "ndcg@5" in board.metrics and "precision@5" in board.metrics
    for variant, row in cli_rows.items():
        for metric in board.metrics:
            for col in (metric, f"{metric}_ci_low", f"{metric}_ci_high", f"{metric}_n_ok"):
                assert _same(row[col], api_rows[variant][col]), (variant, col)
        assert row["verdict"] == api_rows[variant]["verdict"]

    # score == ragsweep score on the same rows, value by value
    cli("score", "input=walkthrough/answers.csv", "metrics=[rouge_l,answer_similarity,faithfulness]",
            "llm=none", "progress=false", "out=cli/score", cwd=tmp_path)
    api = ns["per_sample"].to_dict(orient="records")
    result = _csv(tmp_path / "cli/score/result.csv")
    assert len(api) == len(result) == 12
    for a, c in zip(api, result):
        for metric in ("rouge_l", "answer_semantic_similarity", "faithfulness"):
            assert _same(c[metric], a[metric]) and c[f"{metric}_status"] == a[f"{metric}_status"]
    summary = {r["metric"]: r for r in _csv(tmp_path / "cli/score/summary.csv")}
    for metric, row in ns["scores"].summary().iterrows():
        assert _same(summary[metric]["mean"], row["mean"]) and _same(summary[metric]["ci_low"], row["ci_low"])


ROWS = [
    {"question": "Who wrote it?", "answer": "Ada wrote it in 1843.", "contexts": ["Ada wrote the notes in 1843."],
     "ground_truth": "Ada Lovelace wrote it in 1843."},
    {"question": "Where?", "answer": "In London.", "contexts": ["It was London.", "Or Paris."],
     "ground_truth": "London"},
]


def test_score_reads_every_in_memory_form_the_same(tmp_path):
    import datasets
    import pandas as pd

    metrics = ["rouge_l", "token_f1", "bleu", "faithfulness"]
    forms = {
        "list": ROWS,
        "DataFrame": pd.DataFrame(ROWS),
        "Dataset": datasets.Dataset.from_list(ROWS),
        "samples": [ragsweep.RagSample(str(i), r["question"], r["answer"], tuple(r["contexts"]), r["ground_truth"])
                    for i, r in enumerate(ROWS, 1)],
    }
    got = {name: ragsweep.score(data, metrics).to_pandas() for name, data in forms.items()}
    first = got["list"]
    assert list(first.columns) == ["id", *[c for m in metrics for c in (m, f"{m}_status")]]
    assert first["faithfulness_status"].tolist() == ["ok", "ok"]  # llm=none: its deterministic stand-in
    for frame in got.values():
        assert frame.drop(columns="id").equals(first.drop(columns="id"))
    scores = ragsweep.score(ROWS, metrics, thresholds={"rouge_l": 0.99})
    assert not scores.passed and scores.mean("token_f1") == pytest.approx(first["token_f1"].mean())
    out = scores.write(tmp_path / "out")
    assert {p.name for p in out.iterdir()} == {"result.csv", "summary.csv", "explanations.jsonl", "cost.json"}


def test_score_errors_name_the_row_and_column():
    with pytest.raises(InputError, match=r"list row 2, column contexts"):
        ragsweep.score([ROWS[0], {**ROWS[1], "contexts": ["a passage", 3]}], ["rouge_l"])
    with pytest.raises(InputError, match="unknown metric rouge_x"):
        ragsweep.score(ROWS, ["rouge_x"])
    with pytest.raises(InputError, match="no column reference_contexts, which metric non_llm_context_recall needs"):
        ragsweep.score(ROWS, ["non_llm_context_recall"])
    with pytest.raises(InputError, match="cannot score a int"):
        ragsweep.score(3, ["rouge_l"])


def test_ascore_and_score_inside_a_running_loop_agree():
    import asyncio

    async def inside() -> tuple:
        a = await ragsweep.ascore(ROWS, ["token_f1"])
        b = ragsweep.score(ROWS, ["token_f1"])  # a notebook's loop is running: the sync call still works
        return a, b

    a, b = asyncio.run(inside())
    assert a.to_pandas().equals(b.to_pandas())


def test_import_is_cheap_and_judges_are_explicit():
    code = ("import sys, ragsweep\n"
            "heavy = [m for m in ('hydra', 'faiss', 'numpy', 'onnxruntime', 'xllamacpp') if m in sys.modules]\n"
            "print(heavy, ragsweep.llm.none())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] None"


def _hallucination_judge() -> ScriptedLLM:
    """Every answer has one claim that contradicts the first context: hallucination = 1 / n_contexts."""
    def respond(messages, schema):
        name = identify(messages).name
        assert name == "claims_verdicts", name
        return {"claims": [{"claim": "c", "reason": "r", "verdict": "contradicted", "contradicting": [1]}]}

    return ScriptedLLM(respond)


@pytest.mark.slow
def test_rescore_ranks_a_lower_is_better_metric_the_right_way_round(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(tmp_path / "cache"))
    board = ragsweep.sweep("chunker.size=512", "retriever.top_k=[1,4]", "progress=false", dir=tmp_path / "sweep")
    board = ragsweep.rescore(board.dir, ["hallucination"], judge=_hallucination_judge(),
                             sort_by="hallucination")
    rows = board.to_pandas()
    assert list(rows["top_k"]) == [4, 1]  # 1/4 contradicted contexts beats 1/1: ascending
    assert rows["hallucination"].tolist() == [pytest.approx(0.25), pytest.approx(1.0)]
    assert rows["verdict"].tolist() == ["baseline", "worse"]  # ▼ for the higher hallucination
    assert "▼" in board.markdown()
    # ...and the rank metrics of the sweep are untouched by the rescore
    assert rows["ndcg@10"].notna().all()
    summary = json.loads((tmp_path / "sweep/0/summary.json").read_text())
    assert summary["rescored"][0]["metrics"] == ["hallucination"]
    assert all(v["cost"]["llm_calls"] == 40 for v in summary["variants"])


def test_rescore_refuses_a_folder_without_runs(tmp_path):
    with pytest.raises(InputError, match="no finished job"):
        ragsweep.rescore(tmp_path, ["ndcg@5"])
    with pytest.raises(InputError, match="needs its k"):
        ragsweep.rescore(tmp_path, ["ndcg"])


def test_a_model_named_by_a_string_is_a_clear_error_and_none_means_no_model(tmp_path):
    # A notebook user writes llm="local" as on the command line: the API says what to pass instead of
    # failing deep in a run; "none" means the rule writer, as llm=none does.
    with pytest.raises(InputError, match=r"llm='local': pass a model, e\.g\. llm=ragsweep\.llm\.local\(\)"):
        ragsweep.generate(n=2, llm="local")
    with pytest.raises(InputError, match="judge: a dict is not a model"):
        ragsweep.score([{"question": "Q?", "answer": "A.", "contexts": ["A."]}], ["faithfulness"], judge={})
    assert len(ragsweep.generate(n=2, llm="none", out=tmp_path / "t.jsonl")) == 2
