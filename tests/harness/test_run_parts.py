"""The parts of ``ragsweep run``, in process and fast: locating contexts, reading responses, the call
record it resumes from, pooled relevance, and failed calls scored as errors."""

from __future__ import annotations

import asyncio
import json

import pytest
from ragsweep.gen.documents import Corpus, Document
from ragsweep.harness.app.calls import CallLog, CallPolicy, call_one, pending
from ragsweep.harness.app.locate import Locator
from ragsweep.harness.app.replies import Reply, TargetError, get_path, reply_from
from ragsweep.harness.app.targets import HttpTarget, open_keys
from ragsweep.harness.records import Cut, Retrieved, RunSample
from ragsweep.harness.run import pooled_relevant
from ragsweep.harness.runs import score_variant
from ragsweep.metrics.catalogue import resolve
from ragsweep.metrics.errors import InputError

HARBOUR = ("The harbour opened in 1890.  It has two piers,\nthe north pier and the south pier.\n\n"
           "Ferries leave every hour from the north pier.")
CORPUS = Corpus([Document("harbour.md", HARBOUR), Document("other.md", "Nothing about boats here.\n"
                                                                      "The harbour opened in 1890.")], "test")


# ---------------------------------------------------------------- locating contexts

def test_exact_match_is_the_first_occurrence_and_says_it_is_ambiguous():
    where = Locator(CORPUS).locate("The harbour opened in 1890.")
    assert (where.doc_id, where.start, where.end, where.method) == ("harbour.md", 0, 27, "exact")
    assert where.n_matches == 2 and where.to_dict(0.9)["ambiguous"] is True


def test_normalised_match_maps_back_to_the_original_characters():
    text = "it has two PIERS, the north pier   and the south pier."
    where = Locator(CORPUS).locate(text)
    assert where.method == "normalised" and where.score == 1.0
    assert HARBOUR[where.start:where.end] == "It has two piers,\nthe north pier and the south pier."


def test_fuzzy_match_reports_its_score_and_the_threshold():
    text = "Ferries leave evry hour from teh north pier."
    where = Locator(CORPUS, fuzzy_threshold=0.9).locate(text)
    assert where.method == "fuzzy" and 0.9 <= where.score < 1.0
    assert HARBOUR[where.start:where.end] == "Ferries leave every hour from the north pier."
    assert where.to_dict(0.9) == {"method": "fuzzy", "score": round(where.score, 4), "threshold": 0.9}


def test_below_the_threshold_a_context_is_unlocated_not_dropped():
    locator = Locator(CORPUS, fuzzy_threshold=0.99)
    where = locator.locate("Ferries leave evry hour from teh north pier.")
    assert where.method == "unlocated" and 0.9 <= where.score < 0.99
    assert where.doc_id.startswith("unlocated:") and (where.start, where.end) == (0, 44)
    assert Locator(CORPUS).locate("A sentence about something else entirely, at length.").method == "unlocated"
    assert Locator(CORPUS).locate("   ").method == "unlocated"
    with pytest.raises(InputError):
        Locator(CORPUS, fuzzy_threshold=0)


# ---------------------------------------------------------------- reading the application's answers

def test_response_paths():
    data = {"data": {"sources": [{"text": "a", "score": 0.5}, {"text": "b", "score": 0.25}]},
            "choices": [{"message": {"content": "hi"}}]}
    assert get_path(data, "data.sources[*].text") == ["a", "b"] == get_path(data, "data.sources.*.text")
    assert get_path(data, "choices[0].message.content") == "hi" == get_path(data, "choices.0.message.content")
    with pytest.raises(KeyError):
        get_path(data, "choices[3].message")


def test_http_target_reads_answer_contexts_scores_and_usage():
    target = HttpTarget("http://127.0.0.1:1/ask", contexts_path="data.sources", usage_path="usage",
                        params={"top_k": 2})
    assert target.request_body("Q?", "q1") == {"top_k": 2, "question": "Q?"}
    reply = target.read({"answer": "A", "data": {"sources": [{"text": "a", "score": 0.5}, {"page_content": "b",
                                                                                           "score": 0.25}]},
                         "usage": {"prompt_tokens": 10, "completion_tokens": 2}})
    assert (reply.answer, reply.contexts, reply.scores) == ("A", ["a", "b"], [0.5, 0.25])
    assert reply.usage == {"prompt_tokens": 10, "completion_tokens": 2}
    with pytest.raises(TargetError) as err:
        target.read({"response": "A"})
    assert not err.value.retryable and "answer_path" in str(err.value)


def test_secrets_never_go_into_literal_headers():
    with pytest.raises(InputError, match="env_headers"):
        HttpTarget("http://127.0.0.1:1/ask", headers={"Authorization": "Bearer abc"})
    with pytest.raises(InputError, match="not hold the secret"):
        HttpTarget("http://127.0.0.1:1/ask", env_headers={"Authorization": "Bearer sk-abcdefghijklmnopqrstuvwx"})
    HttpTarget("http://127.0.0.1:1/ask", env_headers={"Authorization": "Bearer $APP_TOKEN"}, headers={"X-Client": "t"})


def test_python_replies():
    assert reply_from("just an answer") == Reply("just an answer", raw="just an answer")
    reply = reply_from({"answer": "A", "contexts": ["a", {"text": "b"}], "usage": {"prompt_tokens": 3}})
    assert (reply.answer, reply.contexts, reply.usage) == ("A", ["a", "b"], {"prompt_tokens": 3})
    with pytest.raises(TargetError):
        reply_from(42)


def test_open_keys_let_params_be_added():
    assert open_keys(["target.params.top_k=2,5", "++target.params.x=1", "target.url=u", "target.env_headers.A=B"]) == [
        "++target.params.top_k=2,5", "++target.params.x=1", "target.url=u", "++target.env_headers.A=B"]


# ---------------------------------------------------------------- calling: retries and the record

class Flaky:
    """Fails ``n`` times (retryable or not), then answers."""

    def __init__(self, n: int, retryable: bool = True, slow: float = 0.0) -> None:
        self.n, self.retryable, self.slow, self.calls = n, retryable, slow, 0

    async def call(self, question: str, sample_id: str) -> Reply:
        self.calls += 1
        await asyncio.sleep(self.slow)
        if self.calls <= self.n:
            raise TargetError("HTTP 503", retryable=self.retryable, raw="down")
        return Reply("A", ["ctx"])


def test_retries_then_answers_and_counts_attempts():
    app = Flaky(2)
    row = asyncio.run(call_one(app, "q1", "Q?", CallPolicy(retries=3, backoff_s=0)))
    assert row["status"] == "ok" and row["attempts"] == 3 and row["answer"] == "A"


def test_a_call_that_keeps_failing_is_an_error_row():
    row = asyncio.run(call_one(Flaky(9), "q1", "Q?", CallPolicy(retries=2, backoff_s=0)))
    assert (row["status"], row["attempts"], row["error"], row["raw"]) == ("error", 3, "HTTP 503", "down")
    row = asyncio.run(call_one(Flaky(9, retryable=False), "q1", "Q?", CallPolicy(retries=2, backoff_s=0)))
    assert row["attempts"] == 1  # a 400 is not tried again
    row = asyncio.run(call_one(Flaky(0, slow=1.0), "q1", "Q?", CallPolicy(retries=0, timeout_s=0.05)))
    assert row["status"] == "error" and "timed out" in row["error"]


def test_call_log_drops_a_cut_line_and_resumes(tmp_path):
    log = CallLog(tmp_path / "calls.jsonl")
    log.open()
    log.append({"sample_id": "q1", "question": "Q1", "status": "ok"})
    log.append({"sample_id": "q2", "question": "Q2", "status": "error"})
    log.close()
    with (tmp_path / "calls.jsonl").open("a") as fh:
        fh.write('{"sample_id": "q3", "quest')  # a kill in the middle of a line
    done = log.read()
    assert set(done) == {"q1", "q2"}
    questions = [("q1", "Q1"), ("q2", "Q2"), ("q3", "Q3"), ("q4", "Q4")]
    assert pending(questions, done) == questions[1:]
    assert pending(questions, done, retry_errors=False) == questions[2:]
    assert pending([("q1", "Q1 changed")], done) == [("q1", "Q1 changed")]
    log.open()
    log.append({"sample_id": "q3", "question": "Q3", "status": "ok"})
    log.close()
    lines = (tmp_path / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["sample_id"] for line in lines] == ["q1", "q2", "q3"]


# ---------------------------------------------------------------- relevance and scoring

def _run(sid: str, spans: list[tuple[str, int, int]], evidence: list[tuple[str, int, int]], **kw) -> RunSample:
    got = tuple(Retrieved(f"{d}#{s}-{e}", d, s, e, 0.0, HARBOUR[s:e]) for d, s, e in spans)
    return RunSample(sid, "app", got, {"top_k=2": "A"}, "Q?", "A", tuple(evidence), ("ev",), **kw)


def test_pooled_relevant_counts_every_returned_span_that_overlaps_the_evidence():
    a = _run("q1", [("harbour.md", 0, 27), ("harbour.md", 80, 120)], [("harbour.md", 5, 10)])
    b = _run("q2", [("harbour.md", 0, 20)], [("harbour.md", 5, 10)])  # another span over q2's evidence
    c = _run("q3", [("harbour.md", 80, 120)], [("other.md", 0, 5)])    # nothing relevant anywhere: 1
    d = _run("q4", [("harbour.md", 0, 27), ("harbour.md", 0, 27)], [("harbour.md", 0, 5)])  # a repeat counts
    assert pooled_relevant([a, b, c, d]) == [2, 2, 1, 2]


def test_failed_calls_score_error_on_every_metric_in_place():
    ok = _run("q1", [("harbour.md", 0, 27)], [("harbour.md", 5, 10)], n_relevant=1)
    failed = RunSample("q2", "app", (), {}, "Q?", "A", (("harbour.md", 5, 10),), ("ev",), n_relevant=1,
                       status="error", error="HTTP 500")
    specs = resolve(["hit@10", "span_recall", "token_f1"])
    rows = score_variant([ok, failed, ok], "app", Cut("top_k", 2), specs)
    assert [(r.sample_id, r.metric, r.result.status) for r in rows[3:6]] == [
        ("q2", "hit@10", "error"), ("q2", "span_recall", "error"), ("q2", "token_f1", "error")]
    assert rows[3].result.explanation["reason"] == "the application call failed: HTTP 500"
    assert {r.result.status for r in rows[:3] + rows[6:]} == {"ok"}
    again = RunSample.from_dict(json.loads(json.dumps(failed.to_dict())))
    assert (again.status, again.error) == ("error", "HTTP 500")
    assert "status" not in ok.to_dict()  # a sweep's records are unchanged
