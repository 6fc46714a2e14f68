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


@pytest.mark.parametrize("args, fix", [
    (["score", "input=data.csv", "metrics=rouge_l,bleu"], "'metrics=[rouge_l,bleu]'"),
    (["gen", "llm=none", "n=2", "personas=a,b"], "'personas=[a,b]'"),
    (["rescore", "outputs/sweeps/x", "metrics=ndcg@5,mrr@10"], "'metrics=[ndcg@5,mrr@10]'"),
    (["board", "outputs/sweeps/x", "sort_by=ndcg@10,mrr@10"], "'sort_by=\"ndcg@10,mrr@10\"'"),
    (["convert", "input=a.json", "out=b.jsonl", "format=ragas,deepeval"], "'format=[ragas,deepeval]'"),
])
def test_an_unquoted_comma_on_a_single_run_command_exits_2_with_the_fix(tmp_path, ragsweep, args, fix):
    write_rows(tmp_path / "data.csv")
    proc = ragsweep(*args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert fix in proc.stderr and "runs once" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("args, message", [
    (["score", "input=data.csv", "+frobnicate=1"], "unknown key frobnicate"),
    (["score", "input=data.csv", "+metrcs=[rouge_l]"],
     "unknown key metrcs: `ragsweep score` has no such setting (did you mean metrics?)"),
    (["score", "input=data.csv", "++metric_options.rogue_l.x=1"], "rogue_l is not a metric (did you mean rouge_l?)"),
    (["score", "input=data.csv", "++thresholds.faithfulnes=0.5"], "did you mean faithfulness?"),
    (["score", "input=data.csv", "++llm.temprature=0"], "unknown key llm.temprature"),
    (["score", "input=data.csv", "++metric_options={rogue_l: {x: 1}}"], "rogue_l is not a metric"),
    (["sweep", "++metrics.options.rogue_l.x=1"], "rogue_l is not a metric"),
    (["sweep", "+chunker.sise=3"], "(did you mean chunker.size?)"),
    (["gen", "llm=none", "++gates.min_suport=0.5"], "(did you mean gates.min_support?)"),
])
def test_keys_no_config_or_metric_knows_are_refused_with_the_nearest(tmp_path, ragsweep, args, message):
    write_rows(tmp_path / "data.csv")
    proc = ragsweep(*args, "--cfg", "job", cwd=tmp_path)  # --cfg job: refused before Hydra prints anything
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("args", [
    ["score", "input=data.csv", "++metric_options.answer_similarity.model=x"],  # an alias names its metric
    ["score", "input=data.csv", "++thresholds.answer_similarity=0.5"],
    ["run", "+target.params.top_k=5", "++target.params.mode=fast"],  # an application's settings are open
    ["sweep", "++metrics.options.answer_correctness.weights=[0.5,0.5]"],
    ["sweep", "+experiment=chunkers"],
])
def test_open_mappings_and_config_groups_are_accepted(tmp_path, ragsweep, args):
    write_rows(tmp_path / "data.csv")
    proc = ragsweep(*args, "--cfg", "job", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_a_bad_value_in_any_job_of_a_sweep_refuses_it_before_its_folder_is_claimed(tmp_path, ragsweep):
    sweep_dir = tmp_path / "sweeps" / "mine"
    proc = ragsweep("sweep", "chunker.size=256,0,512", "retriever.top_k=1", "progress=false",
                    f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "chunker.size must be positive, got 0 (in 1 of the sweep's 3 jobs: chunker.size=0)" in proc.stderr
    assert not sweep_dir.exists()  # so the corrected command may use the same folder
    assert not (tmp_path / "outputs").exists()


@pytest.mark.parametrize("overrides, message", [
    (["chunker=recursive,sentence", "chunker.overlap=300"], "chunker.overlap must be in [0, size)"),
    (["llm=none,openai", "query=plain,hyde"], "query=hyde needs an LLM, but llm=none"),
    (["max_queries=5,0"], "max_queries must be a positive integer"),
    (["context=window", "context.neighbours=1,-1"], "context.neighbours must be an integer >= 0"),
    (["metrics.generation=[rouge_l],[rogue_l]"], "unknown metric rogue_l"),
])
def test_every_combination_of_a_sweep_is_checked(overrides, message):
    from ragsweep.harness.preflight import check

    with pytest.raises(InputError) as err:
        check("sweep", "sweep", overrides)
    assert message in str(err.value)


@pytest.mark.parametrize("args, shown", [
    (["sweep", "chunker.size=300,600"], "size: 300"),
    (["run", "target.function=m:f", "target.params.top_k=2,5"], "top_k: 2"),
])
def test_cfg_of_a_multirun_command_shows_its_first_job(tmp_path, ragsweep, args, shown):
    proc = ragsweep(*args, "--cfg", "job", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shown in proc.stdout and "showing the first job's config" in proc.stderr


@pytest.mark.parametrize("command,args,expected", [
    ("score", ["results.csv", "llm=none"], ["input=results.csv", "llm=none"]),
    ("score", ["llm=none", "results.csv"], ["llm=none", "input=results.csv"]),
    ("convert", ["goldens.json", "out=t.jsonl"], ["input=goldens.json", "out=t.jsonl"]),
    ("run", ["testset.jsonl", "target=python"], ["testset=testset.jsonl", "target=python"]),
    ("board", ["outputs/sweeps/x", "top=5"], ["dir=outputs/sweeps/x", "top=5"]),
    # a flag's value, a deletion and a second bare word stay as they are
    ("board", ["--cfg", "job", "outputs/x"], ["--cfg", "job", "dir=outputs/x"]),
    ("score", ["~thresholds", "a.csv", "b.csv"], ["~thresholds", "input=a.csv", "b.csv"]),
    ("sweep", ["retrieval=bm25"], ["retrieval=bm25"]),
    ("gen", ["n=2"], ["n=2"]),
])
def test_a_bare_first_argument_is_the_file_or_folder_the_command_reads(command, args, expected):
    from ragsweep.harness.cli import positional

    assert positional(command, args) == expected


def test_score_reads_a_file_given_bare_as_other_tools_take_it(tmp_path, ragsweep):
    data = write_rows(tmp_path / "results.csv")
    done = ragsweep("score", str(data), "llm=none", "progress=false", "metrics=[exact_match]", "out=scored",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader((tmp_path / "scored" / "result.csv").open()))
    assert [r["question"] for r in rows] == ["Who built the bridge?", "When?"]


def test_a_key_the_config_lacks_is_refused_with_hydra_s_hint_kept():
    from hydra.errors import HydraException

    from ragsweep.harness.cli import _message
    from ragsweep.harness.preflight import check

    # metric_options is an open mapping: a new key needs +/++, and the message must say so, not stop at line one
    with pytest.raises(HydraException) as err:
        check("score", "score", ["input=x.csv", "metric_options.answer_relevancy.method=questions"], jobs=False)
    message = _message(err.value)
    assert message.startswith("Could not override 'metric_options.answer_relevancy.method'. ")
    assert "use +metric_options.answer_relevancy.method=questions" in message
