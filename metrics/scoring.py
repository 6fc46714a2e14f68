"""Run metric specs over samples, and summarise the results per metric with thresholds.

The runner is shared by ``ragsweep score`` and the sweep. Its promise: every sample x metric
pair gets exactly one :class:`~metrics.values.ScoredSample`, in sample order then metric order,
whatever the metric does. A missing input is ``undefined``; without a judge a metric runs its
deterministic stand-in (``MetricSpec.offline_fn``, ``metrics/offline.py``) or, having none, is
``undefined``; a judge that fails for good, or a metric that raises, is ``error`` with the
reason kept — the other rows are unaffected and nothing becomes NaN.

Empty answers (``empty_answers=``, used by ``ragsweep score``): a blank or missing answer on a
metric that reads the answer either earns no credit (``"fail"``: 0, or the worst end of the range
for a lower-is-better metric, without calling the metric) or is left out of the mean (``"exclude"``:
``undefined``); both mark the result ``empty_answer`` so summaries count them. Without the option
(the sweep) each metric treats a blank answer its own way and a missing one is ``undefined``.

Conversations (``RagSample.history``): every metric reads the last user turn as the question; a
judged metric whose prompt reads it gets the earlier turns with it (:mod:`metrics.conversation`).

Several references (``RagSample.references``, from a ``ground_truths`` list): ``reference`` holds
them all, joined by blank lines, which is what claim-based metrics read (context recall, factual
correctness: every reference's facts count). A metric whose spec says ``best_reference`` (exact
match, token F1, BLEU, ROUGE-L, string and semantic similarity) compares the answer with each
reference alone and keeps the best score, as SQuAD's EM / F1 and multi-reference ROUGE do; its
explanation gives ``reference_index`` and ``per_reference``.

Unanswerable questions (reference ``"not in the knowledge base"``, :mod:`metrics.refusal`): a metric
that compares with the reference or its contexts is ``undefined`` on them, with that reason, unless
its spec says ``scores_unanswerable`` (``refusal``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ragsweep.metrics.aliases import by_canonical
from ragsweep.metrics.catalogue import MetricSpec, RagSample
from ragsweep.metrics.conversation import with_history
from ragsweep.metrics.guard import guard_sample
from ragsweep.metrics.refusal import UNANSWERABLE_REASON, is_unanswerable
from ragsweep.metrics.errors import EXIT_NOT_SCORED, EXIT_OK, EXIT_THRESHOLD, InputError, JudgeError, scrub
from ragsweep.metrics.values import MetricValue, ScoredSample, summarise

log = logging.getLogger("ragsweep")

NO_JUDGE = "needs an LLM judge (llm=none)"
EMPTY_ANSWERS = ("fail", "exclude")
"""What ``empty_answers=`` may be: an empty answer scores no credit, or is left out of the mean."""


def reads_answer(spec: MetricSpec) -> bool:
    """Whether the metric scores the answer (it is among its required inputs)."""
    return "answer" in spec.inputs


def no_credit(spec: MetricSpec) -> float:
    """The score of an answer that says nothing: 0 (clamped into the range), or the top of the range
    when lower is better (``hallucination`` 1)."""
    low, high = spec.value_range if spec.value_range is not None else (0.0, 1.0)
    return float(high) if not spec.higher_is_better else min(max(0.0, float(low)), float(high))


def _empty_answer(spec: MetricSpec, policy: str) -> MetricValue:
    if policy == "exclude":
        return MetricValue.undefined("empty answer (left out: empty_answers=exclude)", empty_answer=True)
    return MetricValue.ok(no_credit(spec), reason="empty answer (no credit: empty_answers=fail)",
                          empty_answer=True)


def metric_kwargs(spec: MetricSpec, options: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The spec's default options updated by ``options[spec.name]``; an unknown option is an InputError."""
    given = dict(by_canonical(options, "metric_options for").get(spec.name) or {})
    unknown = sorted(set(given) - set(spec.options))
    if unknown:
        known = ", ".join(sorted(spec.options)) or "none"
        raise InputError(f"metric {spec.name} has no option {', '.join(unknown)} (options: {known})")
    return {**spec.options, **given}


def _offline_call(fn: Any, sample: RagSample, spec: MetricSpec, kwargs: dict[str, Any],
                  embedder: Any) -> dict[str, Any]:
    """Arguments for a metric's ``llm=none`` stand-in: its inputs, the options it names, the embedder."""
    params = inspect.signature(fn).parameters
    call = {f: sample.get(f) for f in (*spec.inputs, *spec.optional)}
    call |= {k: v for k, v in kwargs.items() if k in params}
    if "embedder" in params and embedder is not None:
        call["embedder"] = embedder
    return call


async def _score_one(sample: RagSample, spec: MetricSpec, kwargs: dict[str, Any], judge: Any,
                     embedder: Any, limit: asyncio.Semaphore, empty_answers: str | None = None,
                     guarded: tuple[RagSample, list[dict[str, Any]]] | None = None) -> MetricValue:
    """One metric on one sample. A judged metric (or its stand-in) sees ``guarded``'s sample, the
    one :func:`metrics.guard.guard_sample` cleaned of text addressed to the evaluator, and its
    explanation lists what was removed (``injections``)."""
    findings: list[dict[str, Any]] = []
    if spec.needs_judge:
        sample, findings = guarded if guarded is not None else guard_sample(sample)
        if sample.history and judge is not None and spec.reads_history:  # a conversation: the judge sees it
            sample = replace(sample, question=with_history(sample.question, sample.history))
    out = await _run_metric(sample, spec, kwargs, judge, embedder, limit, empty_answers)
    if findings:
        out = MetricValue(out.value, out.status, {**out.explanation, "injections": findings})
    return out


async def _run_metric(sample: RagSample, spec: MetricSpec, kwargs: dict[str, Any], judge: Any,
                      embedder: Any, limit: asyncio.Semaphore, empty_answers: str | None) -> MetricValue:
    empty = empty_answers is not None and reads_answer(spec) and not (sample.answer or "").strip()
    missing = [f for f in spec.inputs if sample.get(f) is None and not (empty and f == "answer")]
    if missing:
        return MetricValue.undefined(f"no {' and no '.join(missing)}", missing=missing)
    if not spec.scores_unanswerable and {"reference", "reference_contexts"} & {*spec.inputs, *spec.optional} \
            and is_unanswerable(sample.reference):
        return MetricValue.undefined(UNANSWERABLE_REASON, unanswerable=True)
    if empty:
        return _empty_answer(spec, str(empty_answers))
    fn = spec.fn
    if spec.needs_judge and judge is None:
        if spec.offline_fn is None:
            return MetricValue.undefined(NO_JUDGE)
        fn, call = spec.offline_fn, _offline_call(spec.offline_fn, sample, spec, kwargs, embedder)
    elif embedder is None and spec.uses_embedder(kwargs):
        return MetricValue.undefined("needs an embedder")
    else:
        call = {f: sample.get(f) for f in (*spec.inputs, *spec.optional)} | kwargs
        if spec.needs_judge:
            call["judge"] = judge
        if spec.needs_embedder:
            call["embedder"] = embedder
    # The semaphore bounds how many metrics are in flight at once, which for judged metrics is
    # the number of concurrent model calls; synchronous metrics hold it only while they run.
    async with limit:
        try:
            if spec.best_reference and "reference" in call and len(sample.references or ()) > 1:
                out = await _best_of_references(fn, call, sample.references, spec.higher_is_better)
            else:
                out = await _called(fn, call)
        except JudgeError as exc:  # its message and raw text are scrubbed of credentials already
            return MetricValue.error(str(exc) or "judge failed", raw=exc.raw)
        except Exception as exc:  # noqa: BLE001 - a metric bug must not lose the other rows
            # scrubbed: an SDK error (an embedder's endpoint) may quote a request header
            return MetricValue.error(scrub(f"{type(exc).__name__}: {exc}"), exception=type(exc).__name__)
    if not isinstance(out, MetricValue):
        return MetricValue.error(f"metric returned {type(out).__name__}, not a MetricValue")
    return out


async def _called(fn: Any, call: dict[str, Any]) -> Any:
    out = fn(**call)
    return await out if inspect.isawaitable(out) else out


async def _best_of_references(fn: Any, call: dict[str, Any], references: Sequence[str],
                              higher_is_better: bool) -> Any:
    """The metric against each reference alone, keeping the best ok score; the explanation names the
    reference it came from and every reference's score. None ok: the first reference's result."""
    results = [await _called(fn, {**call, "reference": ref}) for ref in references]
    if not all(isinstance(r, MetricValue) for r in results):
        return next(r for r in results if not isinstance(r, MetricValue))
    ok = [(i, r) for i, r in enumerate(results) if r.status == "ok"]
    if not ok:
        return results[0]
    pick = max if higher_is_better else min
    i, best = pick(ok, key=lambda pair: pair[1].value)
    return MetricValue(best.value, "ok", {**best.explanation, "reference_index": i,
                                          "per_reference": [r.value for r in results]})


async def score_samples(
    samples: list[RagSample],
    specs: list[MetricSpec],
    *,
    judge: Any = None,
    embedder: Any = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    concurrency: int = 4,
    progress: bool = True,
    variant: str = "",
    empty_answers: str | None = None,
) -> list[ScoredSample]:
    """Score every sample with every metric.

    Args:
        samples: The samples, in the order results should come back.
        specs: The metrics to run, in column order.
        judge: An :class:`metrics.llm.LLM` for judged metrics; None leaves them ``undefined``.
        embedder: An embedder (``embed(texts) -> rows``) for metrics with ``needs_embedder``.
        options: Per-metric keyword options, ``{metric: {option: value}}``, over the spec defaults.
        concurrency: Most metric calls in flight at once (>= 1).
        progress: Show a tqdm bar on stderr.
        variant: Recorded on every result (the sweep's variant name; "" for ``ragsweep score``).
        empty_answers: What a blank or missing answer scores on a metric that reads it: ``"fail"``
            no credit (see :func:`no_credit`), ``"exclude"`` undefined; None: whatever the metric
            makes of a blank answer (a missing one is undefined).

    Returns:
        One :class:`ScoredSample` per sample x metric, sample-major, in input order.

    Raises:
        InputError: An option a metric does not take, concurrency < 1, an unknown ``empty_answers``.
    """
    if concurrency < 1:
        raise InputError(f"concurrency must be >= 1, got {concurrency}")
    if empty_answers is not None and empty_answers not in EMPTY_ANSWERS:
        raise InputError(f"empty_answers must be one of {', '.join(EMPTY_ANSWERS)}, got {empty_answers!r}")
    kwargs = {spec.name: metric_kwargs(spec, options or {}) for spec in specs}
    limit = asyncio.Semaphore(concurrency)
    from tqdm import tqdm

    bar = tqdm(total=len(samples) * len(specs), desc="scoring", unit="score", disable=not progress)

    # Once per sample, not per metric: what a judge may see of it (see metrics.guard).
    judged = any(spec.needs_judge for spec in specs)
    guarded = [guard_sample(s) if judged else (s, []) for s in samples]
    n_flagged = sum(bool(g[1]) for g in guarded)
    if n_flagged:
        log.warning("%d of %d samples hold text that looks addressed to the evaluator; it is flagged under "
                    "'injections' in explanations (a judge sees only the sentences about each claim)",
                    n_flagged, len(samples))

    async def run(i: int, sample: RagSample, spec: MetricSpec) -> ScoredSample:
        result = await _score_one(sample, spec, kwargs[spec.name], judge, embedder, limit, empty_answers,
                                  guarded[i])
        bar.update(1)
        return ScoredSample(sample.id, variant, spec.name, result)

    try:
        # gather keeps argument order, so results are deterministic however calls interleave.
        results = await asyncio.gather(*(run(i, s, m) for i, s in enumerate(samples) for m in specs))
    finally:
        bar.close()
    n_error = sum(r.result.status == "error" for r in results)
    if n_error:
        log.warning("%d of %d scores are errors (see explanations)", n_error, len(results))
    return list(results)


def check_thresholds(thresholds: Mapping[str, Any], specs: Sequence[MetricSpec]) -> dict[str, float]:
    """Thresholds as floats.

    Raises:
        InputError: A threshold on a metric not being scored, not a finite number, outside the
            metric's ``value_range`` (a gate that can never, or always, hold), or on a metric
            without a range.
    """
    by_name = {s.name: s for s in specs}
    out = {}
    for name, value in by_canonical(thresholds, "threshold for").items():
        if name not in by_name:
            raise InputError(f"threshold for {name}, which is not among the metrics scored "
                             f"({', '.join(sorted(by_name)) or 'none'})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"threshold for {name} must be a finite number, got {value!r}")
        limits = getattr(by_name[name], "value_range", None)
        if limits is None:
            raise InputError(f"threshold for {name}: the metric has no known range, so it cannot gate")
        low, high = limits
        if not low <= value <= high:
            raise InputError(f"threshold for {name} is {value:g}, outside the metric's range [{low:g}, {high:g}]")
        out[name] = float(value)
    return out


def summary_rows(scored: Sequence[ScoredSample], specs: Sequence[MetricSpec],
                 thresholds: Mapping[str, float], seed: int = 0) -> list[dict[str, Any]]:
    """One row per metric: mean, 95% bootstrap CI, counts, threshold and whether it holds.

    ``passed`` is True/False when the metric has a threshold (mean >= threshold when higher is
    better, mean <= threshold otherwise) and "" when it has none. A thresholded metric without a
    single ``ok`` value fails: a gate that cannot be checked must not pass. ``reason`` says why a
    row failed. ``n_empty`` counts the results marked ``empty_answer`` (see :func:`score_samples`)
    for a metric that reads the answer, None for one that does not.
    """
    limits = check_thresholds(thresholds, specs)
    by_metric: dict[str, list[tuple[str, float | None]]] = {s.name: [] for s in specs}
    empty = {s.name: 0 for s in specs}
    for row in scored:
        if row.metric in by_metric:
            by_metric[row.metric].append((row.result.status, row.result.value))
            empty[row.metric] += bool(row.result.explanation.get("empty_answer"))
    rows = []
    for spec in specs:
        stats = summarise(by_metric[spec.name], seed=seed)
        threshold = limits.get(spec.name)
        passed: bool | str = ""
        reason = ""
        if threshold is not None:
            mean = stats["mean"]
            if mean is None:
                passed, reason = False, "no ok value to compare with the threshold"
            else:
                passed = mean >= threshold if spec.higher_is_better else mean <= threshold
                if not passed:
                    sign = "<" if spec.higher_is_better else ">"
                    reason = f"mean {mean:.4f} {sign} threshold {threshold:g}"
        rows.append({"metric": spec.name, **stats, "n_empty": empty[spec.name] if reads_answer(spec) else None,
                     "threshold": threshold, "passed": passed, "reason": reason})
    return rows


def not_scored(scored: Sequence[ScoredSample], specs: Sequence[MetricSpec]) -> str:
    """Why the run measured nothing ("" when it did): every judged score the judge was asked for is
    an ``error`` (an unreachable or failing judge), or every score of the run is, or every answer is empty
    and nothing else was scored."""
    judged = {s.name for s in specs if s.needs_judge}
    asked = [r for r in scored if r.metric in judged and r.result.status != "undefined"
             and not r.result.explanation.get("empty_answer")]
    if asked and all(r.result.status == "error" for r in asked):
        return f"every judged score is an error ({len(asked)} of {len(asked)}; reasons in explanations.jsonl)"
    if scored and all(r.result.status == "error" for r in scored):
        return f"every score is an error ({len(scored)}; reasons in explanations.jsonl)"
    if scored and any(r.result.explanation.get("empty_answer") for r in scored) and all(
            r.result.explanation.get("empty_answer") or r.result.status != "ok" for r in scored):
        # A file whose answers are all blank is, as a rule, a test set (goldens with an empty
        # actual_output column) rather than a system that said nothing: its zeros would pass for a score.
        return "every answer is empty, and no metric that does not read the answer scored a row"
    return ""


def outcome(scored: Sequence[ScoredSample], specs: Sequence[MetricSpec],
            summary: Sequence[Mapping[str, Any]]) -> tuple[int, list[str]]:
    """The exit code of a scoring run and the lines that explain it.

    3 (:data:`EXIT_NOT_SCORED`) when :func:`not_scored` says nothing was measured — it wins over a
    failed threshold, since such a run says nothing about the system; else 1 when a threshold
    fails, else 0.
    """
    why = not_scored(scored, specs)
    if why:
        return EXIT_NOT_SCORED, [f"could not score: {why}"]
    failed = [f"threshold failed: {r['metric']}: {r['reason']}" for r in summary if r["passed"] is False]
    return (EXIT_THRESHOLD if failed else EXIT_OK), failed
