"""``ragsweep sweep``: one Hydra job = one (corpus, chunker, embedder, index) variant, every top-K.

The job searches once at the largest K and scores each K from that ranking. It writes into its
Hydra job folder:

- ``runs.jsonl``: a :class:`RunSample` per test sample (what was retrieved, at the largest K),
- ``scores.jsonl``: a :class:`ScoredSample` per (sample, variant, metric), with explanations,
- ``summary.json``: per variant, its parameters, every metric's mean, 95% CI and counts, and the
  LLM calls and tokens it took; the job's cost (seconds per stage, embedded texts, cache use).

A job that fails writes ``error.json`` instead and the sweep goes on; bad input (a missing file, a
bad option) stops the command with exit code 2 and a one-line message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.gen.chunking import WholeDocument
from ragsweep.gen.documents import Corpus, shipped_corpus_path, shipped_testset_path
from ragsweep.gen.testset import TestSample, check_against, read_testset, samples_from_qrels
from ragsweep.harness.cache import Cache, atomic_write, write_json
from ragsweep.harness.evaluate import ChunkLocator, score_qrels, score_spans
from ragsweep.harness.parts import build
from ragsweep.harness.pipeline import Pipeline
from ragsweep.harness.records import RunSample
from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm.meter import Meter
from ragsweep.metrics.scoring import score_samples
from ragsweep.metrics.values import MetricValue, ScoredSample, summarise

log = logging.getLogger(__name__)

GROUPS = ("corpus", "chunker", "embedder", "index")


def load_samples(testset: str | None, corpus: Corpus) -> list[TestSample]:
    """The test set to run: the file given, else the corpus's own (BEIR qrels, or the shipped set)."""
    if testset:
        samples = read_testset(testset)
        check_against(samples, corpus, str(testset))
        return samples
    if corpus.qrels is not None:
        return samples_from_qrels(corpus)
    if Path(corpus.source).resolve() == shipped_corpus_path().resolve():
        samples = read_testset(shipped_testset_path())
        check_against(samples, corpus, str(shipped_testset_path()))
        return samples
    raise InputError(f"{corpus.source}: no test set for this corpus: pass testset=PATH (write one with `ragsweep gen`)")


def top_ks(value: Any) -> list[int]:
    ks = [value] if isinstance(value, int) else list(value)
    if not ks or any(not isinstance(k, int) or k < 1 for k in ks):
        raise InputError(f"retriever.top_k must be a positive integer or a list of them, got {value!r}")
    return sorted(set(ks))


def variant_params(cfg: DictConfig, choices: Mapping[str, str], k: int) -> dict[str, Any]:
    """The parameters that name a variant: group choices, the chunk size/overlap, and K."""
    params: dict[str, Any] = {g: choices.get(g) for g in GROUPS if choices.get(g)}
    for key in ("size", "overlap"):
        if key in cfg.chunker:
            params[f"chunker.{key}"] = cfg.chunker[key]
    params["top_k"] = k
    return params


def variant_name(params: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items() if k != "corpus")


def _aggregate(rows: list[ScoredSample], seed: int) -> dict[str, dict[str, Any]]:
    by_metric: dict[str, list[MetricValue]] = {}
    for r in rows:
        by_metric.setdefault(r.metric, []).append(r.result)
    return {m: summarise(((r.status, r.value) for r in results), seed) for m, results in by_metric.items()}


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    atomic_write(path, write)


def answer_samples(answerer: Any, samples: list[TestSample], retrieved: list[list[Any]],
                   corpus: Corpus) -> list[RagSample]:
    """Answer every question from its retrieved chunks; the evidence texts are the reference contexts."""
    contexts = [[r.text for r in got] for got in retrieved]
    answers = answerer.answer_all([s.question for s in samples], contexts)
    return [RagSample(s.id, s.question, a, tuple(ctx), s.reference or None,
                      tuple(corpus.get(e.doc_id).text[e.start:e.end] for e in s.evidence) or None)
            for s, a, ctx in zip(samples, answers, contexts)]


def run_job(cfg: DictConfig, out_dir: Path, choices: Mapping[str, str]) -> dict[str, Any]:
    """Run one job; return (and write) its summary."""
    started = time.perf_counter()
    corpus: Corpus = build(cfg.corpus, "corpus")
    samples = load_samples(cfg.testset, corpus)
    ks = top_ks(cfg.retriever.top_k)
    chunker = build(cfg.chunker, "chunker")
    pipe = Pipeline(corpus, chunker, build(cfg.embedder, "embedder"), build(cfg.index, "index"),
                    Cache(cfg.cache.dir, cfg.cache.enabled), progress=cfg.progress)
    span_mode = corpus.qrels is None
    # Document-level judgements on chunks need enough chunks to fill K distinct documents.
    k_search = max(ks) if span_mode or isinstance(chunker, WholeDocument) else max(ks) * 10
    retrieved = pipe.search([s.question for s in samples], k_search)
    locator = ChunkLocator(pipe.chunks) if span_mode else None

    # One meter for the answerer and the judge: each variant's LLM calls and tokens are the difference
    # of two snapshots (the variants run one after another).
    built = build(cfg.llm, "llm")
    llm = Meter(built) if built is not None else None
    answerer = build(cfg.answerer, "answerer", llm=llm, embedder=pipe.cached_embedder)
    specs = resolve(list(cfg.metrics.generation)) if answerer is not None and span_mode else []

    summaries, scored, answers = [], [], []
    for k in ks:
        params = variant_params(cfg, choices, k)
        name = variant_name(params)
        rows = []
        llm_before = llm.snapshot() if llm is not None else None
        for sample, got in zip(samples, retrieved):
            values = (score_spans(sample, got, k, locator) if locator is not None
                      else score_qrels(corpus.qrels[sample.id], got, k))  # type: ignore[index]
            rows.extend(ScoredSample(sample.id, name, f"{m}@k", v) for m, v in values.items())
        if specs:
            t = time.perf_counter()
            rag = answer_samples(answerer, samples, [got[:k] for got in retrieved], corpus)
            answers.extend({"sample_id": r.id, "variant": name, "answer": r.answer} for r in rag)
            pipe.cached_embedder.prime([t for r in rag for t in (r.answer, r.reference) if t])
            gen = asyncio.run(score_samples(rag, specs, judge=llm, embedder=pipe.cached_embedder,
                                            options=cfg.metrics.options, variant=name, progress=False))
            rows.extend(ScoredSample(g.sample_id, name, f"{g.metric}@k", g.result) for g in gen)
            pipe.cost.timed("answer+generation metrics", t)
        scored.extend(rows)
        variant = {"variant": name, "params": params, "n_samples": len(samples),
                   "metrics": _aggregate(rows, cfg.seed)}
        if llm is not None and llm_before is not None:
            variant["cost"] = (llm.snapshot() - llm_before).to_dict()
        summaries.append(variant)
    cost = {"seconds": {**pipe.cost.seconds, "total": time.perf_counter() - started},
            "embedded_texts": pipe.cost.embedded_texts, "n_chunks": len(pipe.chunks),
            "cache_hits": pipe.cache.hits, "cache_misses": pipe.cache.misses}
    if llm is not None:  # the job's totals; the leaderboard shows each variant's own
        cost["llm"] = llm.snapshot().to_dict(prefix="")
    top = max(ks)
    top_name = variant_name(variant_params(cfg, choices, top))
    runs = [RunSample(s.id, top_name, tuple(got[:top])).to_dict(cfg.output.keep_text)
            for s, got in zip(samples, retrieved)]
    _write_jsonl(out_dir / "runs.jsonl", runs)
    _write_jsonl(out_dir / "scores.jsonl", [r.to_dict() for r in scored])
    if answers:
        _write_jsonl(out_dir / "answers.jsonl", answers)
    summary = {"job": str(out_dir), "corpus": corpus.source, "seed": cfg.seed, "variants": summaries,
               "cost": cost, "config": OmegaConf.to_container(cfg, resolve=True)}
    write_json(out_dir / "summary.json", summary)
    return summary


def run_job_safely(cfg: DictConfig, out_dir: Path, choices: Mapping[str, str]) -> dict[str, Any] | None:
    """Bad input propagates (the command exits 2); any other failure is recorded and the sweep goes on."""
    try:
        return run_job(cfg, out_dir, choices)
    except InputError:
        raise
    except Exception as exc:  # keep the sweep alive; the leaderboard lists the failed job
        log.error("job failed: %s", exc)
        write_json(out_dir / "error.json", {"error": f"{type(exc).__name__}: {exc}",
                                            "traceback": traceback.format_exc(),
                                            "config": OmegaConf.to_container(cfg, resolve=False)})
        return None
