"""Citations read from what applications return: `ragsweep run` on an application answering with ``[n]``
markers, a structured source list over HTTP, LangChain's and LlamaIndex's shapes, and the sweep's citing
answerer on a scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragsweep.harness.app.frameworks import LangChainTarget, LlamaIndexTarget
from ragsweep.harness.app.replies import TargetError, reply_from
from ragsweep.harness.app.targets import HttpTarget
from ragsweep.harness.pipeline.answerers import CITE_EXAMPLE, CITE_INSTRUCTION, LLMAnswerer
from ragsweep.harness.records import cite_answers
from ragsweep.metrics.llm import ScriptedLLM

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "citations.md"  # its example is run here


def example() -> tuple[str, list[str]]:
    """The citations page's example application and the arguments of its command."""
    import re
    import shlex

    text = PAGE.read_text(encoding="utf-8")
    block = re.search(r"<!-- cite-example:start -->\n(.*?)<!-- cite-example:end -->", text, re.S)
    assert block, f"{PAGE}: the example's markers are missing"
    module = re.search(r"```python\n(.*?)```", block.group(1), re.S).group(1)
    args = shlex.split(re.search(r"```bash\n(.*?)```", block.group(1), re.S).group(1).strip())
    assert args[:2] == ["ragsweep", "run"]
    return module, args[1:]

CITATION_METRICS = {"citation_recall", "citation_precision", "citation_f1", "cited_evidence"}


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_run_reads_inline_markers_and_writes_the_citation_metrics(tmp_path, ragsweep):
    module, args = example()  # docs/how-to/citations.md
    (tmp_path / "cite_app.py").write_text(module, encoding="utf-8")
    out = ragsweep(*args, "progress=false", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    root = tmp_path / "outputs/runs/cite"
    jobs = {json.loads((p / "summary.json").read_text())["variants"][0]["params"]["target.params.cite"]: p
            for p in root.iterdir() if (p / "summary.json").is_file()}
    citing, plain = jobs[True], jobs[False]
    runs = jsonl(citing / "runs.jsonl")
    first = runs[0]
    (label, sentences), = first["citations"].items()
    assert "[" not in first["answers"][label]  # the other metrics read the answer without markers
    assert [(s["cites"], s["invalid"]) for s in sentences] == [([1], []), ([3], [7])]
    scores = jsonl(citing / "scores.jsonl")
    by_metric: dict[str, list[dict]] = {}
    for row in scores:
        by_metric.setdefault(row["metric"], []).append(row)
    assert CITATION_METRICS <= set(by_metric)
    recall = by_metric["citation_recall"][0]
    assert recall["status"] == "ok" and len(recall["explanation"]["sentences"]) == 2
    precision = by_metric["citation_precision"][0]["explanation"]["sentences"][1]["citations"]
    assert {"context": 7, "relevant": False, "why": "names no context"} in precision
    # cited_evidence: a citing sentence is on the evidence when its cited context overlaps it
    assert all(r["status"] in ("ok", "undefined") for r in by_metric["cited_evidence"])
    assert any(r["status"] == "ok" for r in by_metric["cited_evidence"])
    summary = json.loads((citing / "summary.json").read_text())["variants"][0]["metrics"]
    assert CITATION_METRICS <= set(summary)
    # an application that never cites gets no citation columns, rather than a column of zeros
    plain_metrics = {r["metric"] for r in jsonl(plain / "scores.jsonl")}
    assert not CITATION_METRICS & plain_metrics and "citations" not in jsonl(plain / "runs.jsonl")[0]


def test_an_http_response_with_a_source_list_at_citations_path():
    target = HttpTarget("http://app.local/ask", contexts_path="sources", citations_path="answer_parts")
    data = {"answer": "It is iron. It is brown.",
            "sources": [{"id": "doc-a", "text": "The tower is made of iron."},
                        {"id": "doc-b", "text": "The tower is painted brown."}],
            "answer_parts": [{"text": "It is iron.", "sources": ["doc-a"]},
                             {"text": "It is brown.", "sources": [2, "doc-z"]}]}
    reply = target.read(data)
    assert reply.citations == [{"sentence": "It is iron.", "cites": [1], "invalid": []},
                               {"sentence": "It is brown.", "cites": [2], "invalid": [0]}]
    assert target.identity()["citations_path"] == "answer_parts"
    assert target.read({**data, "answer_parts": None}).citations is None  # no list: markers are read instead
    with pytest.raises(TargetError, match="must be a list"):
        target.read({**data, "answer_parts": "It is iron."})
    zero = HttpTarget("http://app.local/ask", contexts_path="sources", citations_path="answer_parts", citation_base=0)
    assert zero.read({**data, "answer_parts": [{"text": "x", "sources": [0]}]}).citations[0]["cites"] == [1]


def test_a_python_reply_with_citations_and_the_variant_level_rule():
    reply = reply_from({"answer": "It is iron [2].", "contexts": ["a", "b"],
                        "citations": [{"text": "It is iron.", "sources": [1]}]})
    assert reply.citations == [{"sentence": "It is iron.", "cites": [1], "invalid": []}]
    # the structured list wins over the markers; the answer is still stripped of them
    answers, cited = cite_answers([reply.answer, "Brown."], [2, 2], [reply.citations, None])
    assert answers == ["It is iron.", "Brown."] and cited[0][0]["cites"] == [1] and cited[1][0]["cites"] == []
    untouched, none = cite_answers(["Iron.", None], [2, 2])
    assert untouched == ["Iron.", None] and none is None


def test_langchain_source_list_and_llamaindex_source_labels():
    class Chain:
        async def ainvoke(self, given, config=None):
            docs = [SimpleNamespace(page_content="The tower is made of iron.", metadata={"source": "a.md"}),
                    SimpleNamespace(page_content="The tower is painted brown.", metadata={"source": "b.md"})]
            return {"answer": "It is brown.", "context": docs,
                    "citations": [{"text": "It is brown.", "sources": ["b.md"]}]}

        def invoke(self, given, config=None):
            raise AssertionError("async only")

    reply = asyncio.run(LangChainTarget(Chain()).call("q", "s1"))
    assert reply.citations == [{"sentence": "It is brown.", "cites": [2], "invalid": []}]

    class Engine:
        async def aquery(self, question):
            nodes = [SimpleNamespace(node=SimpleNamespace(get_content=lambda t=t: t, node_id=str(i)), score=1.0)
                     for i, t in enumerate(["Source 2:\nThe tower is painted brown.", "Source 1:\nThe tower is iron."])]
            return SimpleNamespace(response="It is iron [1]. It is brown [2].", source_nodes=nodes)

        def query(self, question):
            raise AssertionError("async only")

    reply = asyncio.run(LlamaIndexTarget(Engine()).call("q", "s1"))
    assert reply.contexts == ["The tower is painted brown.", "The tower is iron."]  # labels off: locatable
    assert reply.answer == "It is iron [2]. It is brown [1]."  # markers renumbered to the nodes' places


def test_the_citing_answerer_numbers_the_contexts_and_asks_for_markers():
    model = ScriptedLLM(lambda messages, schema: "It is iron [1].")
    plain, citing = LLMAnswerer(model), LLMAnswerer(model, cite=True)
    assert citing.answer_all(["What is it?"], [["The tower is made of iron.", "It is brown."]]) == ["It is iron [1]."]
    system, user = model.calls[0].messages
    assert system["content"] == CITE_INSTRUCTION and "[1] The tower is made of iron.\n\n[2] It is brown." in user["content"]
    assert model.calls[0].prompt.name == "answerer.llm_cite"
    assert citing.params()["cite"] is True and "cite" not in plain.params()


def test_a_copy_of_the_instruction_example_is_no_part_of_a_cited_answer():
    replies = iter([f"{CITE_EXAMPLE} It is iron [1].", CITE_EXAMPLE, "It is iron [1].\nIt is brown [2]."])
    model = ScriptedLLM(lambda messages, schema: next(replies))
    citing = LLMAnswerer(model, cite=True)
    got = citing.answer_all(["What is it?"] * 3, [["The tower is made of iron.", "It is brown."]] * 3)
    # The copy goes; an answer that was only the copy is missing (its metrics say so); others are untouched.
    assert got == ["It is iron [1].", None, "It is iron [1].\nIt is brown [2]."]


def test_sweep_answerer_cite_puts_citation_metrics_on_the_board(tmp_path):
    import csv

    import ragsweep.harness.sweep as sweep
    from hydra import compose, initialize_config_module
    from ragsweep.harness.board.leaderboard import build as build_board

    def respond(messages, schema):
        if messages[0]["content"] == CITE_INSTRUCTION:
            return "The answer is in the first context [1]. The rest is in the second [2][9]."
        return {"answer": "yes"}  # the judge's verdicts (claim and slot checks)

    model = ScriptedLLM(respond)
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=["chunker.size=512", f"cache.dir={tmp_path / 'cache'}",
                                                       "progress=false", "answerer=llm", "answerer.cite=true",
                                                       "retriever.top_k=[3]"])
    real = sweep.build
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sweep, "build", lambda node, what, **kw: model if what == "llm" else real(node, what, **kw))
        summary = sweep.run_job(cfg, tmp_path / "sweep" / "0", {"corpus": "shipped", "chunker": "recursive",
                                                                "embedder": "minilm", "index": "flat"})
    variant = summary["variants"][0]
    assert variant["params"]["answerer.cite"] is True
    assert CITATION_METRICS <= set(variant["metrics"])
    assert variant["metrics"]["citation_recall"]["n_ok"] == 40
    run = jsonl(tmp_path / "sweep" / "0" / "runs.jsonl")[0]
    assert run["answers"]["top_k=3"] == "The answer is in the first context. The rest is in the second."
    assert [s["invalid"] for s in run["citations"]["top_k=3"]] == [[], [9]]
    paths = build_board(tmp_path / "sweep", "citation_f1", n_resamples=200)
    row = next(csv.DictReader(paths["csv"].open()))
    assert float(row["citation_precision"]) < 1  # the invalid [9] is an irrelevant citation on every answer


@pytest.mark.model
@pytest.mark.slow
def test_a_real_small_model_answers_with_citations_that_the_sweep_scores(tmp_path, ragsweep, small_model_cache):
    cache = small_model_cache
    import re
    done = ragsweep("sweep", "llm=local_small", "answerer=llm", "answerer.cite=true", "chunker.size=512",
                    "retriever.top_k=[3]", "retriever.latency_queries=0", "max_queries=3", "hydra.sweep.dir=sw",
                    "progress=false", cwd=tmp_path, cache=cache, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    [summary_file] = (tmp_path / "sw").glob("*/summary.json")
    metrics = json.loads(summary_file.read_text())["variants"][0]["metrics"]
    assert metrics["citation_recall"]["n_ok"] == 3 and metrics["citation_f1"]["n_ok"] == 3
    runs = jsonl(summary_file.parent / "runs.jsonl")
    for run in runs:
        answer, sentences = run["answers"]["top_k=3"], run["citations"]["top_k=3"]
        assert answer and not re.search(r"\[\d+\]", answer) and sentences
        assert all(1 <= k <= 3 for s in sentences for k in s["cites"])
    assert any(s["cites"] for run in runs for s in run["citations"]["top_k=3"])  # the model did cite
