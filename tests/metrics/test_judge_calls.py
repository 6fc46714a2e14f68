"""The call budget: metrics that need the same evidence share one judge call per sample."""

import asyncio
from collections import Counter

import numpy as np

from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.llm import CachedLLM, ScriptedLLM
from ragsweep.metrics.llm.dryrun import DryRunEmbedder, DryRunLLM, dry_run_report, minimal_instance
from ragsweep.metrics.prompts import identify
from ragsweep.metrics.scoring import score_samples

FOUR = ["faithfulness", "answer_relevancy", "context_precision", "context_recall"]
SAMPLE = RagSample("s1", question="Who discovered radium?", answer="Marie and Pierre Curie discovered radium in 1898.",
                   contexts=tuple(f"Passage {i} about the Curies." for i in range(1, 6)),
                   reference="Radium was discovered by Marie and Pierre Curie in 1898.")


def valid_replies():
    """A scripted judge giving a schema-valid reply (five items per list) to any prompt."""
    return ScriptedLLM(lambda messages, schema: minimal_instance(schema.model_json_schema(), items=5))


def score(names, judge, concurrency=4, samples=(SAMPLE,)):
    return asyncio.run(score_samples(list(samples), resolve(names), judge=judge, embedder=DryRunEmbedder(),
                                     concurrency=concurrency, progress=False))


def test_four_core_metrics_write_one_token_verdicts_but_for_relevancy(tmp_path):
    inner = valid_replies()
    rows = score(FOUR, CachedLLM(inner, tmp_path / "llm.sqlite"))
    assert [r.result.status for r in rows] == ["ok"] * 4
    # On a CPU judge a written token costs tens of prompt tokens' time, so the budget is in replies, not calls.
    # Ragas: 2 (faithfulness) + 1 (relevancy, n=3) + 5 (one per context) + 1 = ~11 calls, each writing JSON with
    # reasons. Here: one claim_check for the answer's sentence (faithfulness), one for the reference's (context
    # recall), one per context for the reference's sentence (context precision), each replying with one schema
    # token; so does answer relevancy's one answer_relevance call.
    names = Counter(identify(c.messages).name for c in inner.calls)
    assert names == {"claim_check": 2 + len(SAMPLE.contexts), "answer_relevance": 1}


def test_shared_evidence_is_one_call_whatever_the_concurrency(tmp_path):
    names = [*FOUR, "hallucination", "noise_sensitivity", "noise_sensitivity_irrelevant", "context_utilization",
             "factual_correctness", "answer_correctness", "summary_score"]
    for concurrency in (1, 8):
        inner = valid_replies()
        rows = score(names, CachedLLM(inner, tmp_path / f"llm{concurrency}.sqlite"), concurrency=concurrency)
        assert all(r.result.status == "ok" for r in rows), [r.result.explanation for r in rows]
        calls = Counter(identify(c.messages).name for c in inner.calls)
        # claim_check: faithfulness (the answer's sentence), context recall (the reference's), context precision
        # (the reference's sentence on each context alone) and utilization (the answer's on each context alone);
        # claims_verdicts: vs contexts (hallucination, noise sensitivity) + vs reference; attribution:
        # vs contexts (noise sensitivity) + vs answer; + answer relevance + claim verification.
        k = len(SAMPLE.contexts)
        assert calls == {"claim_check": 2 + k + k, "claims_verdicts": 2, "reference_claims_attribution": 2,
                         "answer_relevance": 1, "claim_verification": 1}


def test_a_second_run_makes_no_call(tmp_path):
    inner = valid_replies()
    first = score(FOUR, CachedLLM(inner, tmp_path / "llm.sqlite"))
    n = len(inner.calls)
    again = score(FOUR, CachedLLM(inner, tmp_path / "llm.sqlite"))
    assert len(inner.calls) == n and [r.result for r in again] == [r.result for r in first]


def test_dry_run_says_the_calls_per_sample():
    judge = DryRunLLM()
    samples = [SAMPLE, RagSample("s2", question="Where?", answer="In Paris.", contexts=SAMPLE.contexts,
                                 reference="Paris.")]
    rows = score(FOUR, judge, samples=samples)
    assert all(r.result.status == "ok" for r in rows)
    report = dry_run_report(judge.calls, n_samples=2)
    # s1: a claim_check for its answer, one for its reference, one for its reference on each of its 5 contexts,
    # answer relevance; s2 ("In Paris." against passages about the Curies): no passage sentence is about its
    # answer or its reference, so none is sent to the judge: only its answer relevance.
    assert "judge calls: 9 (4.5 per sample)" in report
    assert {c.prompt for c in judge.calls} == {"claim_check", "answer_relevance"}
    assert all(c.prompt_tokens > 0 and c.max_tokens for c in judge.calls)


def test_dry_run_counts_identical_calls_once():
    judge = DryRunLLM()
    score(["hallucination", "noise_sensitivity"], judge)  # both need the answer's claims_verdicts
    assert len(judge.calls) == 4 and [c.shared for c in judge.calls].count(True) == 1
    assert "judge calls: 3" in dry_run_report(judge.calls)


def test_dry_run_replies_are_schema_valid_with_numbered_items():
    from ragsweep.metrics.prompts import ChunkVerdicts

    obj = minimal_instance(ChunkVerdicts.model_json_schema(), items=3)
    assert [v["chunk"] for v in ChunkVerdicts.model_validate(obj).model_dump()["verdicts"]] == [1, 2, 3]
    assert np.allclose(np.linalg.norm(DryRunEmbedder().embed(["a", "b"]), axis=1), 1.0)
