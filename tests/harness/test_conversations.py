"""Conversations end to end: a generated multi-turn test set run against an application that needs the
history, scored; `ragsweep score` reading conversations; a sweep comparing the last-turn rewrites."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from ragsweep.gen.testset import read_testset
from ragsweep.harness.app.targets import HttpTarget, PythonTarget
from ragsweep.harness.pipeline.conversation import CONDENSE_QUESTION, queries
from ragsweep.harness.score import read_samples
from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.llm import ScriptedLLM
from ragsweep.metrics.prompts import identify
from ragsweep.metrics.scoring import score_samples

# The application: it knows the answer to each question, but a follow-up ("It is still owned by what
# family?") only together with its subject, which it finds in the history. Without the history it
# cannot tell whose family is asked about, and says so.
APP = '''
import json
from pathlib import Path

FACTS = json.loads((Path(__file__).parent / "facts.json").read_text())


def answer(question, history=None):
    said = " ".join(t["content"] for t in history or [])
    for fact in FACTS:
        if fact["question"] == question and (fact["subject"] is None or fact["subject"].split()[-1] in said):
            return {"answer": fact["answer"], "contexts": [fact["context"]]}
    return {"answer": "I don't know.", "contexts": []}


def answer_blind(question):
    return answer(question)
'''

# A stand-in for the LLM that condenses a follow-up: it knows, by the conversation's first question,
# what the follow-up asks about.
CONDENSER = '''
import json
from pathlib import Path

from ragsweep.metrics.llm import ScriptedLLM

STANDALONE = json.loads((Path(__file__).parent / "standalone.json").read_text())


def make(**_):
    def reply(messages, schema):
        first = messages[-1]["content"].split("user: ", 1)[1].split("\\n", 1)[0]
        return {"question": STANDALONE[first]}

    return ScriptedLLM(reply)
'''

# A tiny multi-turn set in Ragas' shape: follow-ups that name nothing of their subject and whose words
# ("When is it due to open?", "How much did it cost?") fit many documents of the shipped corpus.
TINY = [
    ("How long is the Saltgate Bridge?", "410 metres", "When is it due to open?", "summer 2026",
     "The bridge is due to open in summer 2026.", "When is the Saltgate Bridge due to open?"),
    ("When was Gannet Point Lighthouse built?", "1858", "Who maintains it?", "The Port Calder Harbour Authority",
     "The Port Calder Harbour Authority maintains the light.", "Who maintains Gannet Point Lighthouse?"),
    ("How many turbines make up the Skerry Narrows Tidal Array?", "fourteen", "How much did it cost?",
     "£84 million", "The project cost £84 million", "How much did the Skerry Narrows Tidal Array cost?"),
    ("Where is the new fish market?", "at Kestrel Dock", "How much did it cost?", "£18.5 million",
     "at a cost of £18.5 million", "How much did the new fish market cost?"),
    ("When was Calder University founded?", "1894", "How many staff does it have?", "3,100",
     "It has about 14,500 students and 3,100 staff", "How many staff does Calder University have?"),
    ("Who founded Tidewright Energy?", "Ines Marrow and Pavel Szendrey",
     "How many people did it employ at the end of 2023?", "212", "Tidewright employed 212 people at the end of 2023",
     "How many people did Tidewright Energy employ at the end of 2023?"),
]


@pytest.fixture(scope="module")
def multi_turn(tmp_path_factory, ragsweep):
    """A test set of the shipped corpus from `ragsweep gen llm=none`: single questions and follow-ups."""
    cwd = tmp_path_factory.mktemp("conversations")
    out = cwd / "ts.jsonl"
    done = ragsweep("gen", "llm=none", "n=10", "kinds={single_hop: 0.4, unanswerable: 0, follow_up: 0.6}",
                    f"out={out}", "progress=false", "gates.embed=false", cwd=cwd, cache=cwd / "cache")
    assert done.returncode == 0, done.stderr[-3000:]
    samples = read_testset(out)
    assert sum(s.kind == "follow_up" for s in samples) == 6
    facts = [{"question": s.question, "answer": s.reference, "context": s.quotes[0],
              "subject": s.provenance["follow_up"]["subject"] if s.conversation else None} for s in samples]
    (cwd / "facts.json").write_text(json.dumps(facts))
    (cwd / "app.py").write_text(APP)
    return cwd, out, samples


def _by_sample(path: Path, metric: str) -> dict[str, float | None]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["sample_id"]: r["value"] for r in rows if r["metric"] == metric}


def test_run_sends_the_history_and_scores_each_turn(multi_turn, ragsweep):
    cwd, out, samples = multi_turn
    done = ragsweep("run", "target=python", "target.function=app:answer,app:answer_blind", f"testset={out}",
                    "out=runs", "progress=false", "metrics.generation=[token_f1,faithfulness]",
                    "conversation.summary_metrics=[token_f1,faithfulness]", cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    follow = {s.id for s in samples if s.kind == "follow_up"}
    jobs = {json.loads((p / "summary.json").read_text())["target"]["function"]: p
            for p in (cwd / "runs").iterdir() if (p / "summary.json").is_file()}
    seen, blind = jobs["app:answer"], jobs["app:answer_blind"]
    # The history went to the application with each follow-up (and is kept in calls and runs).
    calls = [json.loads(line) for line in (seen / "calls.jsonl").read_text().splitlines()]
    assert {c["sample_id"] for c in calls if c.get("history")} == follow
    runs = {json.loads(line)["sample_id"]: json.loads(line) for line in (seen / "runs.jsonl").read_text().splitlines()}
    assert all(runs[s]["history"][0]["role"] == "user" for s in follow)
    # With it every turn is answered; without it no follow-up is.
    f1, f1_blind = _by_sample(seen / "scores.jsonl", "token_f1"), _by_sample(blind / "scores.jsonl", "token_f1")
    assert all(f1[s] == 1.0 for s in f1) and all(f1_blind[s] == 0.0 for s in follow)
    hit, hit_blind = _by_sample(seen / "scores.jsonl", "hit@10"), _by_sample(blind / "scores.jsonl", "hit@10")
    assert all(hit[s] == 1.0 for s in follow) and all(hit_blind[s] == 0.0 for s in follow)
    # The per-turn summary: turn 1 answered by both, turn 2 only with the history.
    conv = json.loads((seen / "summary.json").read_text())["variants"][0]["conversation"]
    conv_blind = json.loads((blind / "summary.json").read_text())["variants"][0]["conversation"]
    assert conv["by_turn"]["2"]["n"] == 6 and conv["by_turn"]["1"]["n"] == 4
    assert conv["by_turn"]["2"]["token_f1"] == 1.0 and conv_blind["by_turn"]["2"]["token_f1"] == 0.0
    assert conv_blind["by_turn"]["1"]["token_f1"] == 1.0
    assert conv["conversations"] == {"n": 10, "all_turns": conv["conversations"]["all_turns"]}
    assert conv_blind["conversations"]["all_turns"] <= 0.4 < conv["conversations"]["all_turns"]
    assert conv["metrics"] == ["token_f1", "faithfulness"]


def test_a_sweep_compares_the_rewrites_of_the_last_turn(tmp_path, ragsweep):
    with (tmp_path / "tiny.jsonl").open("w") as fh:
        for i, (q1, a1, q2, a2, context, _) in enumerate(TINY, 1):
            turns = [{"type": "human", "content": q1}, {"type": "ai", "content": a1}, {"type": "human", "content": q2}]
            fh.write(json.dumps({"id": f"c{i}", "user_input": turns, "reference": a2, "reference_contexts": [context],
                                 "kind": "follow_up"}) + "\n")
    (tmp_path / "standalone.json").write_text(json.dumps({t[0]: t[5] for t in TINY}))
    (tmp_path / "condenser.py").write_text(CONDENSER)
    done = ragsweep("sweep", "testset=tiny.jsonl", "retrieval=bm25", "answerer=none", "chunker.size=1024",
                    "retriever.top_k=[3]", "retriever.latency_queries=0", "conversation.query=last,history,condensed",
                    "llm._target_=condenser.make", "hydra.sweep.dir=sw", "progress=false", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    mrr: dict[str, float] = {}
    for summary in (tmp_path / "sw").glob("*/summary.json"):
        body = json.loads(summary.read_text())
        mode = body["variants"][0]["params"]["conversation.query"]
        mrr[mode] = body["variants"][0]["metrics"]["mrr@10"]["mean"]
        runs = [json.loads(line) for line in (summary.parent / "runs.jsonl").read_text().splitlines()]
        # What each follow-up searched with is kept in its run record (none: the last turn itself).
        assert all(("query" in r) == (mode != "last") for r in runs)
        assert body["variants"][0]["conversation"]["by_turn"]["2"]["n"] == len(TINY)
    # The last turn alone lacks its subject and finds the right passage less often than with its history;
    # so does the condensed question (here written by a stand-in that knows it).
    assert mrr["last"] < mrr["history"] and mrr["last"] < mrr["condensed"]
    with (tmp_path / "sw" / "leaderboard.csv").open() as fh:
        names = [r["variant"] for r in csv.DictReader(fh)]
    assert sorted(n.split("conversation.query=")[1].split(",")[0] for n in names) == ["condensed", "history", "last"]


def test_condensed_queries_use_one_cached_call_per_conversation(multi_turn):
    _, _, samples = multi_turn
    llm = ScriptedLLM(lambda messages, schema: {"question": "standalone"})
    got = queries(samples, "condensed", llm)
    follow = [i for i, s in enumerate(samples) if s.conversation]
    assert [got[i] for i in follow] == ["standalone"] * len(follow)
    assert all(got[i] == s.question for i, s in enumerate(samples) if not s.conversation)
    assert len(llm.calls) == len(follow) and all(c.prompt == CONDENSE_QUESTION.id for c in llm.calls)
    first = samples[follow[0]]
    assert first.conversation[0]["content"] in llm.calls[0].messages[-1]["content"]  # the history is shown
    assert queries(samples, "history", None)[follow[0]].startswith(first.conversation[0]["content"])
    with pytest.raises(Exception, match="needs an LLM"):
        queries(samples, "condensed", None)


def test_score_reads_ragas_multi_turn_and_plain_message_lists(tmp_path):
    ragas = tmp_path / "ragas.jsonl"
    ragas.write_text(json.dumps({
        "user_input": [{"type": "human", "content": "When did the Forth Bridge open?"},
                       {"type": "ai", "content": "1890"},
                       {"type": "human", "content": "Who designed it?"},
                       {"type": "ai", "content": "John Fowler and Benjamin Baker"}],
        "reference": "John Fowler and Benjamin Baker"}) + "\n")
    samples, fields, _ = read_samples(ragas)
    s = samples[0]
    assert s.question == "Who designed it?" and s.answer == "John Fowler and Benjamin Baker"
    assert [t["role"] for t in s.history] == ["user", "assistant"] and fields["answer"] == "user_input"
    plain = tmp_path / "plain.csv"
    with plain.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["messages", "answer", "reference"])
        w.writerow([json.dumps([{"role": "user", "content": "When did the Forth Bridge open?"},
                                {"role": "assistant", "content": "1890"},
                                {"role": "user", "content": "Who designed it?"}]), "Fowler and Baker", "Fowler"])
        w.writerow(["A question on its own?", "yes", "yes"])
    samples, fields, _ = read_samples(plain)
    assert samples[0].question == "Who designed it?" and samples[0].answer == "Fowler and Baker"
    assert len(samples[0].history) == 2 and samples[1].history is None and fields["question"] == "messages"


def test_score_cli_scores_a_conversation_file(tmp_path, ragsweep):
    path = tmp_path / "conv.jsonl"
    path.write_text(json.dumps({"user_input": [{"type": "human", "content": "When did the Forth Bridge open?"},
                                               {"type": "ai", "content": "1890"},
                                               {"type": "human", "content": "Who designed it?"},
                                               {"type": "ai", "content": "John Fowler and Benjamin Baker"}],
                                "reference": "Benjamin Baker and John Fowler"}) + "\n")
    done = ragsweep("score", f"input={path}", "llm=none", "metrics=[token_f1]", "progress=false", "out=res",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    with (tmp_path / "res" / "result.csv").open() as fh:
        row = next(csv.DictReader(fh))
    assert float(row["token_f1"]) == 1.0


def test_judged_metrics_see_the_history_and_the_sentence_judges_the_last_turn():
    sample = RagSample("c1", question="Who designed it?", answer="John Fowler designed it.",
                       contexts=("Fowler designed it.",),
                       history=({"role": "user", "content": "When did the Forth Bridge open?"},
                                {"role": "assistant", "content": "1890"}))
    replies = {"claim_check": {"answer": "yes"},
               "claims_verdicts": {"claims": [{"claim": "Fowler designed it.", "reason": "r", "verdict": "supported",
                                               "supporting": [1]}]},
               "answer_relevance": {"answer": "yes"}}
    judge = ScriptedLLM(lambda messages, schema: replies[identify(messages).name])
    got = asyncio.run(score_samples([sample], resolve(["faithfulness", "answer_relevancy", "hallucination"]),
                                    judge=judge, embedder=FixedEmbedder(), progress=False))
    assert all(r.result.status == "ok" for r in got)
    shown = {identify(c.messages).name: c.messages[-1]["content"] for c in judge.calls}
    # Hallucination's judge reads the conversation; faithfulness judges each sentence of the response on
    # the context sentences about it with the last turn alone (a transcript pulls a small judge off the
    # response), and answer relevancy asks of the last turn alone whether the response answers it.
    assert "When did the Forth Bridge open?" in shown["claims_verdicts"] and "Who designed it?" in shown["claims_verdicts"]
    assert "Who designed it?" in shown["claim_check"] and "Forth Bridge open" not in shown["claim_check"]
    assert "Who designed it?" in shown["answer_relevance"] and "Forth Bridge open" not in shown["answer_relevance"]
    # Without a judge, the stand-in reads the last turn alone (nothing to steer).
    offline = asyncio.run(score_samples([sample], resolve(["faithfulness"]), progress=False))
    assert offline[0].result.status == "ok"


class FixedEmbedder:
    def identity(self):
        return {"backend": "fixed"}

    def embed(self, texts, *, progress=False):
        import numpy as np

        return np.ones((len(texts), 3), dtype="float32") / 3 ** 0.5


def test_http_sends_the_conversation_only_for_conversations():
    target = HttpTarget("http://127.0.0.1:1/ask")
    history = [{"role": "user", "content": "When did it open?"}, {"role": "assistant", "content": "1890"}]
    assert target.request_body("q", "s1") == {"question": "q"}  # a single question: as before
    body = target.request_body("Who designed it?", "s2", history)
    assert body["messages"][-1] == {"role": "user", "content": "Who designed it?"} and len(body["messages"]) == 3
    placed = HttpTarget("http://127.0.0.1:1/ask", body={"q": "{question}", "turns": "{history}"})
    assert placed.request_body("Who?", "s", history) == {"q": "Who?", "turns": history}
    assert "history_field" not in target.identity()  # earlier runs' fingerprints unchanged


def test_python_targets_get_history_only_by_name():
    got = {}

    def with_history(question, history=None):
        got["history"] = history
        return "a"

    def plain(question, **params):
        got["params"] = params
        return "b"

    from ragsweep.harness.app.targets import CallableTarget

    history = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    asyncio.run(CallableTarget(with_history).call("q", "s", history))
    asyncio.run(CallableTarget(plain).call("q", "s", history))
    assert got["history"] == history and got["params"] == {}
    assert issubclass(CallableTarget, PythonTarget)  # target=python makes the same call
