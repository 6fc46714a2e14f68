"""The metric runner: isolation of failures, judge handling, order, options, and threshold summaries."""

from __future__ import annotations

import asyncio

import pytest

from ragsweep.metrics.catalogue import MetricSpec, RagSample
from ragsweep.metrics.errors import InputError, JudgeError
from ragsweep.metrics.lexical import SPECS
from ragsweep.metrics.scoring import NO_JUDGE, check_thresholds, score_samples, summary_rows
from ragsweep.metrics.values import MetricValue, ScoredSample

LEX = {s.name: s for s in SPECS}
SAMPLES = [
    RagSample("a", question="q1", answer="Paris", reference="Paris"),
    RagSample("b", question="q2", answer="Lyon", reference="Paris"),
    RagSample("c", question="q3", answer="Nice"),  # no reference
]


def _boom(answer: str, reference: str) -> MetricValue:
    if answer == "Lyon":
        raise ZeroDivisionError("division by zero")
    return MetricValue.ok(1.0)


def _nan(answer: str, reference: str) -> MetricValue:
    return MetricValue.ok(float("nan"))


async def _judged(answer: str, reference: str, *, judge) -> MetricValue:
    return await judge(answer, reference)


BOOM = MetricSpec("boom", _boom, ("answer", "reference"))
NAN = MetricSpec("nan", _nan, ("answer", "reference"))
JUDGED = MetricSpec("judged", _judged, ("answer", "reference"), needs_judge=True)


def run(specs, **kw):
    return asyncio.run(score_samples(SAMPLES, specs, progress=False, **kw))


def test_a_raising_metric_is_an_error_on_its_row_only():
    out = run([LEX["exact_match"], BOOM, NAN])
    assert [(r.sample_id, r.metric) for r in out] == [
        (s, m) for s in "abc" for m in ("exact_match", "boom", "nan")]  # sample-major, metric order
    by = {(r.sample_id, r.metric): r.result for r in out}
    assert by["b", "boom"].status == "error"
    assert by["b", "boom"].explanation["reason"] == "ZeroDivisionError: division by zero"
    assert by["a", "boom"].value == 1.0 and by["b", "exact_match"].value == 0.0
    assert by["a", "nan"].status == "error"  # a NaN never becomes a value
    assert by["c", "exact_match"].status == "undefined"
    assert by["c", "exact_match"].explanation["reason"] == "no reference"


def test_judged_metric_without_a_judge_is_undefined():
    out = run([JUDGED])
    assert all(r.result.status == "undefined" for r in out[:2])
    assert out[0].result.explanation["reason"] == NO_JUDGE
    assert out[2].result.explanation["reason"] == "no reference"  # missing input is reported first


def test_judge_errors_keep_reason_and_raw_text_and_calls_are_bounded():
    in_flight, peak = 0, 0

    async def judge(answer, reference):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        if answer == "Lyon":
            raise JudgeError("no valid JSON after one repair", raw="{oops")
        return MetricValue.ok(0.5, verdict="yes")

    samples = [RagSample(str(i), answer="Paris", reference="Paris") for i in range(8)] + SAMPLES
    out = asyncio.run(score_samples(samples, [JUDGED], judge=judge, concurrency=3, progress=False))
    assert peak == 3
    assert [r.sample_id for r in out] == [s.id for s in samples]
    err = out[9].result
    assert err.status == "error" and err.explanation == {
        "reason": "no valid JSON after one repair", "raw": "{oops"}
    assert out[0].result.explanation == {"verdict": "yes"}


def test_options_override_defaults_and_unknown_options_are_input_errors():
    s = [RagSample("x", contexts=("abcd",), reference_contexts=("abcx",))]  # similarity 3/4
    spec = LEX["non_llm_context_recall"]
    assert asyncio.run(score_samples(s, [spec], progress=False))[0].result.value == 1.0
    strict = asyncio.run(score_samples(s, [spec], options={spec.name: {"threshold": 0.8}}, progress=False))
    assert strict[0].result.value == 0.0
    with pytest.raises(InputError, match="no option beta"):
        run([LEX["rouge_l"]], options={"rouge_l": {"beta": 2}})


def _scored(metric, statuses_values):
    return [ScoredSample(str(i), "", metric, MetricValue(v, s))
            for i, (s, v) in enumerate(statuses_values)]


def test_summary_pass_fail_both_directions_and_without_values():
    lower = MetricSpec("latency", _boom, ("answer",), higher_is_better=False)
    scored = (_scored("rouge_l", [("ok", 0.2), ("ok", 0.4), ("undefined", None)])
              + _scored("latency", [("ok", 2.0), ("ok", 4.0)])
              + _scored("bleu", [("error", None), ("undefined", None)])
              + _scored("token_f1", [("ok", 1.0)]))
    specs = [LEX["rouge_l"], lower, LEX["bleu"], LEX["token_f1"]]
    rows = {r["metric"]: r for r in summary_rows(scored, specs, {"rouge_l": 0.3, "latency": 3.0, "bleu": 0.1})}
    assert rows["rouge_l"]["mean"] == pytest.approx(0.3)
    assert rows["rouge_l"]["passed"] is True and rows["rouge_l"]["n_undefined"] == 1
    assert rows["latency"]["passed"] is True  # 3.0 <= 3.0
    assert rows["bleu"]["passed"] is False and "no ok value" in rows["bleu"]["reason"]
    assert rows["bleu"]["mean"] is None and rows["bleu"]["n_error"] == 1
    assert rows["token_f1"]["passed"] == "" and rows["token_f1"]["threshold"] is None
    failing = {r["metric"]: r for r in summary_rows(scored, specs, {"rouge_l": 0.31, "latency": 2.9})}
    assert failing["rouge_l"]["passed"] is False and failing["latency"]["passed"] is False
    assert failing["latency"]["reason"] == "mean 3.0000 > threshold 2.9"


def test_thresholds_must_name_a_scored_metric_and_be_numbers():
    with pytest.raises(InputError, match="faithfulness"):
        check_thresholds({"faithfulness": 0.5}, [LEX["rouge_l"]])
    with pytest.raises(InputError, match="finite number"):
        check_thresholds({"rouge_l": "high"}, [LEX["rouge_l"]])
    assert check_thresholds({"rouge_l": 1}, [LEX["rouge_l"]]) == {"rouge_l": 1.0}
