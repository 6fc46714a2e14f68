"""``ragsweep run``: the user's application over a test set, scored like a sweep variant.

One Hydra job = one application version (a target and its ``target.params``). The job calls the
application once per test question (:mod:`ragsweep.harness.app.calls`: bounded concurrency, timeouts,
retries, an append-only ``calls.jsonl`` it resumes from), locates every context string the
application returned in the corpus (:mod:`ragsweep.harness.app.locate`), and writes the same files a
sweep job writes, so ``ragsweep board`` and ``ragsweep rescore`` work on it:

- ``runs.jsonl``: a :class:`RunSample` per question: ground truth, the located contexts as the
  ranked retrieval, the answer, latency, token usage, the raw response; a failed call is a row
  with ``status: error`` (every metric of it ``error``), never dropped,
- ``scores.jsonl`` and ``summary.json`` (one variant per job, with the application's cost: calls,
  errors, latency p50/p95, tokens, and how its contexts were located; with conversations in the
  test set, the share of turns answered well by turn index: :mod:`ragsweep.harness.pipeline.conversation`).

A conversation sample is sent as its last user turn with the turns before it
(:mod:`ragsweep.harness.app.targets`, "Conversations").

**Relevance for a black-box application.** A located context is relevant when it overlaps a gold
span -- the sweep's rule. Hit, MRR and the span metrics need nothing more. Recall, nDCG and MAP also
need the size of the judged-relevant set, which for a sweep is "every chunk of this chunking that
overlaps the evidence"; an application's chunking is unknown, so ``ragsweep run`` pools (as TREC
does): the judged-relevant set of a question is every distinct span the application returned *for
any question of the run* that overlaps its evidence -- at least one, and at least the relevant items
of its own ranking. This is a lower bound of the application's true relevant set, so its recall,
nDCG and MAP are upper bounds, comparable between versions that return similar pools; prefer hit,
MRR and span recall/precision/IoU to compare an application with the sweep's variants.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf

from ragsweep.gen import Corpus, TestSample, build
from ragsweep.harness.app.calls import CallLog, CallPolicy, call_all, pending
from ragsweep.harness.app.locate import Locator
from ragsweep.harness.app.targets import Target
from ragsweep.harness.board.leaderboard import LeaderboardCallback
from ragsweep.harness.cache import write_json
from ragsweep.harness.outputs import run_safely
from ragsweep.harness.pipeline.conversation import conversation_summary, history_of
from ragsweep.harness.pipeline.relevance import copy_grades, stand_ins
from ragsweep.harness.records import Cut, Retrieved, RunSample, cite_answers
from ragsweep.harness.runs import aggregate, applicable, embedder_for, score_variant, write_jsonl
from ragsweep.harness.testsets import load_samples
from ragsweep.metrics import InputError, credit_once, resolve, span_gains, staged

log = logging.getLogger(__name__)


def fingerprint(target: Target) -> str:
    """What the application version is (no timeouts, retries or secrets): a resumed run must match it."""
    return hashlib.sha256(json.dumps(target.identity(), sort_keys=True, default=str).encode()).hexdigest()[:16]


def check_folder(out_dir: Path, target: Target) -> None:
    """Refuse to resume a folder that holds a run of another application version."""
    marker = out_dir / "target.json"
    mine = {"fingerprint": fingerprint(target), "target": target.identity()}
    if marker.is_file():
        theirs = json.loads(marker.read_text(encoding="utf-8"))
        if theirs.get("fingerprint") != mine["fingerprint"]:
            raise InputError(f"{out_dir} holds a run of another application ({theirs.get('target')}); "
                             "give this one its own folder (out=...)")
    else:
        write_json(marker, mine)


def variant_params(kind: str, target: Target, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that name an application version on the board."""
    return {"target": kind, "app": target.label(), **{f"target.params.{k}": v for k, v in params.items()}}


def variant_name(params: Mapping[str, Any], name: str | None = None) -> str:
    return name or ",".join(f"{k}={v}" for k, v in params.items())


# ---------------------------------------------------------------- from calls to run records

def located_run(sample: TestSample, corpus: Corpus, row: Mapping[str, Any], locator: Locator, name: str,
                span_mode: bool) -> RunSample:
    """A question's run record from its call line: contexts located and ranked as the application gave them."""
    ok = row.get("status") == "ok"
    contexts = list(row.get("contexts") or []) if ok else []
    scores = row.get("scores") or [0.0] * len(contexts)
    retrieved, located = [], []
    for rank, (text, score) in enumerate(zip(contexts, scores)):
        where = locator.locate(text)
        chunk_id = f"{where.doc_id}#{where.start}-{where.end}" if where.located else where.doc_id
        retrieved.append(Retrieved(chunk_id, where.doc_id, where.start, where.end, float(score or 0.0), text))
        located.append({"rank": rank + 1, **where.to_dict(locator.threshold)})
    evidence = tuple((e.doc_id, e.start, e.end) for e in sample.evidence) if span_mode else None
    # A context found in a copy of a document stands for its original (corpus option duplicates).
    retrieved = stand_ins(retrieved, corpus, by_document=not span_mode)
    return RunSample(
        sample.id, name, tuple(retrieved), {}, sample.question, sample.reference or None, evidence,
        tuple(corpus.get(e.doc_id).text[e.start:e.end] for e in sample.evidence) if span_mode else None,
        None if span_mode else copy_grades(corpus.qrels[sample.id], corpus),  # type: ignore[index]
        None, "ok" if ok else "error", None if ok else str(row.get("error")), row.get("latency_ms"),
        row.get("usage"), row.get("raw"), tuple(located), history=history_of(sample) or None, kind=sample.kind)


def pooled_relevant(runs: Sequence[RunSample]) -> list[int]:
    """Per run, the size of its judged-relevant set under pooling (see the module's docstring)."""
    pool = {r.judged_span for run in runs for r in run.retrieved if not r.doc_id.startswith("unlocated:")}
    out = []
    for run in runs:
        if run.evidence is None:
            out.append(0)
            continue
        in_pool = sum(span_gains(sorted(pool), run.evidence)) if pool else 0
        spans = [r.judged_span for r in run.retrieved]
        own = sum(credit_once(spans, span_gains(spans, run.evidence)))
        out.append(int(max(1, in_pool, own)))
    return out


def with_answers(runs: Sequence[RunSample], rows: Mapping[str, Mapping[str, Any]], cut: Cut) -> list[RunSample]:
    """The runs with their answers, and the answers' citations when the application cites
    (:func:`ragsweep.harness.records.cite_answers`: a structured source list, or ``[n]`` markers)."""
    from dataclasses import replace

    relevant = pooled_relevant(runs)
    ok = [r for r in runs if r.status == "ok"]
    answers, cited = cite_answers([rows[r.sample_id].get("answer") for r in ok],
                                  [len(rows[r.sample_id].get("contexts") or []) or None for r in ok],
                                  [rows[r.sample_id].get("citations") for r in ok])
    by_id = {r.sample_id: (a, None if cited is None else cited[i]) for i, (r, a) in enumerate(zip(ok, answers))}
    out = []
    for r, n in zip(runs, relevant):
        answer, sentences = by_id.get(r.sample_id, (None, None)) if r.status == "ok" else (None, None)
        out.append(replace(r, answers={cut.label: answer} if r.status == "ok" else {},
                           n_relevant=n if r.evidence is not None else None,
                           citations=None if sentences is None else {cut.label: sentences}))
    return out


def application_cost(runs: Sequence[RunSample], rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The variant's cost columns: calls, errors, latency, tokens, and how its contexts were located."""
    ok = [r for r in runs if r.status == "ok"]
    lat = [r.latency_ms for r in ok if r.latency_ms is not None]
    cost: dict[str, Any] = {"app_calls": sum(int(rows[r.sample_id].get("attempts") or 1) for r in runs),
                            "app_errors": len(runs) - len(ok)}
    if lat:
        cost["app_latency_p50_ms"] = round(float(np.percentile(lat, 50)), 2)
        cost["app_latency_p95_ms"] = round(float(np.percentile(lat, 95)), 2)
    for key in ("prompt_tokens", "completion_tokens"):
        values = [int(r.usage[key]) for r in ok if r.usage and key in r.usage]
        if values:
            cost[f"app_{key}"] = sum(values)
    methods = [m["method"] for r in ok for m in (r.located or ())]
    cost["contexts_returned"] = len(methods)
    cost["contexts_unlocated"] = methods.count("unlocated")
    return cost


def location_report(runs: Sequence[RunSample], threshold: float) -> dict[str, Any]:
    found = [m for r in runs for m in (r.located or ())]
    fuzzy = [m["score"] for m in found if m["method"] == "fuzzy"]
    return {"returned": len(found), **{k: sum(m["method"] == k for m in found)
                                       for k in ("exact", "normalised", "fuzzy", "unlocated")},
            "ambiguous": sum(bool(m.get("ambiguous")) for m in found), "fuzzy_threshold": threshold,
            "fuzzy_min_score": min(fuzzy) if fuzzy else None,
            "unlocated_best_score": max((m["score"] for m in found if m["method"] == "unlocated"), default=None)}


# ---------------------------------------------------------------- the job

def public_config(cfg: DictConfig) -> dict[str, Any]:
    """The config for summary.json: resolved, except the target, kept as written (an interpolated
    ``${oc.env:...}`` in it stays the variable's name, never its value)."""
    out = OmegaConf.to_container(cfg, resolve=True)
    if "target" in cfg:
        out["target"] = OmegaConf.to_container(cfg.target, resolve=False)  # type: ignore[index]
    return out  # type: ignore[return-value]


def run_job(cfg: DictConfig, out_dir: Path, kind: str, target: Target | None = None) -> dict[str, Any]:
    """Run one application version into ``out_dir`` (resuming what it holds); return the summary."""
    started = time.perf_counter()
    corpus: Corpus = build(cfg.corpus, "corpus")
    samples = load_samples(cfg.testset, corpus, cfg.get("testset_format"), cfg.locate)
    target = target if target is not None else build(cfg.target, "target")
    params = dict(getattr(target, "params", {}) or {})
    out_dir.mkdir(parents=True, exist_ok=True)
    check_folder(out_dir, target)
    calls = CallLog(out_dir / "calls.jsonl")
    done = calls.read()
    histories = {s.id: history_of(s) for s in samples if history_of(s)}  # conversations: the earlier turns
    todo = pending(((s.id, s.question) for s in samples), done, bool(cfg.resume.retry_errors), histories)
    log.info("%s: %d questions, %d to call (%d recorded)", target.label(), len(samples), len(todo), len(done))
    policy = CallPolicy(**OmegaConf.to_container(cfg.call))  # type: ignore[arg-type]
    t = time.perf_counter()
    if todo:
        failed = asyncio.run(call_all(target, todo, policy, calls, progress=bool(cfg.progress), histories=histories))
        if failed:
            log.warning("%d of %d calls failed (kept as error rows; run again to retry them)", failed, len(todo))
    seconds = {"calls": time.perf_counter() - t}

    rows = calls.read()
    span_mode = corpus.qrels is None
    t = time.perf_counter()
    locator = Locator(corpus, float(cfg.locate.fuzzy_threshold), bool(cfg.locate.fuzzy))
    vparams = variant_params(kind, target, params)
    name = variant_name(vparams, cfg.target.get("name"))
    runs = [located_run(s, corpus, rows[s.id], locator, name, span_mode) for s in samples]
    seconds["locate"] = time.perf_counter() - t
    # The variant passes on every context the application returned: a top-K as deep as its longest list.
    cut = Cut("top_k", max([1, *(len(r.retrieved) for r in runs)]))
    runs = with_answers(runs, rows, cut)
    write_jsonl(out_dir / "runs.jsonl", [r.to_dict(bool(cfg.output.keep_text)) for r in runs])

    reports_contexts = any(rows[s.id].get("contexts") is not None for s in samples if rows[s.id].get("status") == "ok")
    specs = applicable([*resolve(list(cfg.metrics.retrieval)), *resolve(list(cfg.metrics.generation))], runs)
    if not reports_contexts:  # nothing to locate: retrieval and context metrics would only count zeros
        specs = [s for s in specs if not {"retrieved", "contexts"} & set(s.inputs)]
    llm = build(cfg.llm, "llm")
    embedder = embedder_for(specs, cfg.embedder)
    t = time.perf_counter()
    scored = score_variant(runs, name, cut, specs, judge=llm, embedder=embedder, options=cfg.metrics.options)
    seconds["metrics"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - started
    variant = {"variant": name, "run": name, "top_k": cut.value, "params": vparams, "n_samples": len(samples),
               "metrics": aggregate(scored, int(cfg.seed)), "cost": application_cost(runs, rows)}
    if histories:  # per turn index and per conversation: the share answered well
        variant["conversation"] = conversation_summary(scored, samples, cfg.get("conversation"))
    summary = {"job": str(out_dir), "kind": "application", "corpus": corpus.source, "seed": cfg.seed,
               "target": target.identity(), "variants": [variant], "contexts": location_report(runs, locator.threshold),
               "cost": {"seconds": seconds}, "config": public_config(cfg)}
    with staged(out_dir) as into:  # the scores and the summary that counts them, together or neither
        write_jsonl(into / "scores.jsonl", [r.to_dict() for r in scored])
        write_json(into / "summary.json", summary)
    return summary


# ---------------------------------------------------------------- the command

def run_app(cfg: DictConfig) -> Any:
    """The ``ragsweep run`` app: one version of the application; its summary (None: it failed)."""
    from hydra.core.hydra_config import HydraConfig

    from ragsweep.metrics import fail

    logging.getLogger().setLevel(logging.INFO)
    hc = HydraConfig.get()
    out_dir, kind = Path(hc.runtime.output_dir), str(hc.runtime.choices.get("target", "target"))
    try:
        return run_safely(lambda: run_job(cfg, out_dir, kind), cfg, out_dir)
    except InputError as exc:
        fail(str(exc))


def board_metric(metrics: Sequence[str], wanted: str) -> str:
    """``wanted`` when the board has it, else the first of mrr@10, hit@10, token_f1, or the first metric."""
    for m in (wanted, "mrr@10", "hit@10", "token_f1"):
        if m in metrics:
            return m
    return metrics[0]


class RunLeaderboardCallback(LeaderboardCallback):
    """The sweep's leaderboard callback, falling back to a metric the runs have when ``sort_by`` is
    not one of them (an application that reports no contexts has no retrieval metrics)."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from ragsweep.harness.board.model import collect, metric_names

        try:
            metrics = metric_names(collect(config.hydra.sweep.dir, self.seed))
        except InputError as exc:
            log.error("no leaderboard: %s", exc)
            return
        if metrics and self.sort_by not in metrics:
            chosen = board_metric(metrics, self.sort_by)
            log.warning("sort_by=%s is not a metric of these runs: sorting by %s", self.sort_by, chosen)
            self.sort_by = chosen
        super().on_multirun_end(config, **kwargs)
