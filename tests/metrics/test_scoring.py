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
    lower = MetricSpec("latency", _boom, ("answer",), higher_is_better=False, value_range=(0.0, 10.0))
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


# ---------------------------------------------------------------- empty answers, ranges, exit codes

EMPTY = [
    RagSample("full", question="q", answer="Paris", reference="Paris"),
    RagSample("blank", question="q", answer="  ", reference="Paris"),
    RagSample("missing", question="q", answer=None, reference="Paris"),
    RagSample("noref", question="q", answer="", reference=None),
]


async def _claims(answer: str, *, judge) -> MetricValue:
    return MetricValue.undefined("no claim") if not answer.strip() else MetricValue.ok(0.9)


def test_blank_and_missing_answers_score_no_credit_or_are_excluded():
    lower = MetricSpec("hallucination_like", _claims, ("answer",), needs_judge=True, higher_is_better=False)
    cosine = MetricSpec("cosine_like", _claims, ("answer",), needs_judge=True, value_range=(-1.0, 1.0))
    specs = [LEX["rouge_l"], lower, cosine]

    def by(policy):
        rows = asyncio.run(score_samples(EMPTY, specs, judge=object(), empty_answers=policy, progress=False))
        return {(r.sample_id, r.metric): r.result for r in rows}, rows

    kept, _ = by(None)  # the sweep's default: each metric's own rule
    assert kept["blank", "rouge_l"].value == 0.0 and kept["missing", "rouge_l"].status == "undefined"
    assert kept["blank", "hallucination_like"].status == "undefined"

    failed, rows = by("fail")
    for sid in ("blank", "missing"):
        assert failed[sid, "rouge_l"].value == 0.0
        assert failed[sid, "hallucination_like"].value == 1.0  # the worst end when lower is better
        assert failed[sid, "cosine_like"].value == 0.0  # no credit, not -1
        assert failed[sid, "rouge_l"].explanation["empty_answer"] is True
    assert failed["noref", "rouge_l"].status == "undefined"  # nothing to compare with comes first
    assert failed["full", "rouge_l"].value == 1.0
    summary = {r["metric"]: r for r in summary_rows(rows, specs, {"rouge_l": 0.8})}
    assert summary["rouge_l"]["n_empty"] == 2 and summary["rouge_l"]["mean"] == pytest.approx(1 / 3)
    assert summary["rouge_l"]["passed"] is False  # two of three answers empty: the gate fails

    excluded, rows = by("exclude")
    assert excluded["blank", "rouge_l"].status == "undefined" and excluded["missing", "rouge_l"].status == "undefined"
    summary = {r["metric"]: r for r in summary_rows(rows, specs, {"rouge_l": 0.8})}
    assert summary["rouge_l"]["n_empty"] == 2 and summary["rouge_l"]["n_undefined"] == 3
    assert summary["rouge_l"]["passed"] is True and summary["rouge_l"]["mean"] == 1.0


def test_a_run_whose_every_answer_is_empty_measured_nothing_unless_another_metric_scored():
    from ragsweep.metrics.scoring import not_scored

    blank = [RagSample("a", answer="", reference="Paris", contexts=("Paris",), reference_contexts=("Paris",)),
             RagSample("b", answer=" ", reference="Rome", contexts=("Rome",), reference_contexts=("Rome",))]
    for policy in ("fail", "exclude"):
        rows = asyncio.run(score_samples(blank, [LEX["rouge_l"]], empty_answers=policy, progress=False))
        assert "every answer is empty" in not_scored(rows, [LEX["rouge_l"]])
    specs = [LEX["rouge_l"], LEX["non_llm_context_recall"]]  # the contexts were still measured
    rows = asyncio.run(score_samples(blank, specs, empty_answers="fail", progress=False))
    assert not_scored(rows, specs) == ""
    rows = asyncio.run(score_samples([*blank, RagSample("c", answer="Paris", reference="Paris")], [LEX["rouge_l"]],
                                     empty_answers="fail", progress=False))
    assert not_scored(rows, [LEX["rouge_l"]]) == ""


def test_empty_answers_is_fail_or_exclude_and_metrics_without_the_answer_have_no_count():
    with pytest.raises(InputError, match="empty_answers must be one of fail, exclude"):
        run([LEX["rouge_l"]], empty_answers="zero")
    s = [RagSample("x", answer="", contexts=("abcd",), reference_contexts=("abcd",))]
    rows = asyncio.run(score_samples(s, [LEX["non_llm_context_recall"]], empty_answers="fail", progress=False))
    assert rows[0].result.value == 1.0  # does not read the answer: unaffected
    assert summary_rows(rows, [LEX["non_llm_context_recall"]], {})[0]["n_empty"] is None


def test_thresholds_must_lie_in_the_metric_range():
    from ragsweep.metrics.catalogue import spec_of

    with pytest.raises(InputError, match=r"threshold for rouge_l is 1.5, outside the metric's range \[0, 1\]"):
        check_thresholds({"rouge_l": 1.5}, [LEX["rouge_l"]])
    with pytest.raises(InputError, match="outside"):
        check_thresholds({"rouge_l": -0.1}, [LEX["rouge_l"]])
    assert check_thresholds({"rouge_l": 0, "bleu": 1}, [LEX["rouge_l"], LEX["bleu"]]) == {"rouge_l": 0.0, "bleu": 1.0}
    relevancy = spec_of("answer_relevancy")
    assert relevancy.value_range == (-1.0, 1.0)  # a cosine: [-1, 1]
    assert check_thresholds({"answer_relevancy": -0.5}, [relevancy]) == {"answer_relevancy": -0.5}
    unbounded = MetricSpec("tokens", _boom, ("answer",), value_range=None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no known range"):
        check_thresholds({"tokens": 10}, [unbounded])


def test_exit_code_3_when_every_judged_score_errors_and_it_wins_over_a_failed_threshold():
    from ragsweep.metrics.errors import EXIT_NOT_SCORED, EXIT_OK, EXIT_THRESHOLD
    from ragsweep.metrics.scoring import outcome

    async def down(answer, reference):
        raise JudgeError("HTTP 503: unavailable")

    specs = [LEX["rouge_l"], JUDGED]
    rows = asyncio.run(score_samples(SAMPLES, specs, judge=down, progress=False))
    summary = summary_rows(rows, specs, {"rouge_l": 0.9})
    code, lines = outcome(rows, specs, summary)
    assert code == EXIT_NOT_SCORED and lines == [
        "could not score: every judged score is an error (2 of 2; reasons in explanations.jsonl)"]

    async def flaky(answer, reference):
        if answer == "Lyon":
            raise JudgeError("HTTP 503: unavailable")
        return MetricValue.ok(1.0)

    rows = asyncio.run(score_samples(SAMPLES, specs, judge=flaky, progress=False))
    assert outcome(rows, specs, summary_rows(rows, specs, {}))[0] == EXIT_OK
    code, lines = outcome(rows, specs, summary_rows(rows, specs, {"rouge_l": 0.9}))
    assert code == EXIT_THRESHOLD and lines[0].startswith("threshold failed: rouge_l: mean 0.5000 < threshold 0.9")
    broken = asyncio.run(score_samples(SAMPLES[:2], [BOOM], progress=False))  # no judge, every score broken
    assert outcome([broken[1]], [BOOM], [])[0] == EXIT_NOT_SCORED
