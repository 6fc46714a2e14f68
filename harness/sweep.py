"""``ragsweep sweep``: one Hydra job = one (corpus, chunker, embedder, index, context) variant, every top-K.

The job searches once at the largest K and scores each K from that ranking (with ``context=window``
or ``parent``, each hit expanded into what is passed on: ``harness/pipeline/context.py``). It writes into its
Hydra job folder:

- ``runs.jsonl``: a :class:`RunSample` per test sample: its ground truth, what was retrieved (at the
  largest K) and the answer at every K -- the hand-off every metric is scored from,
- ``scores.jsonl``: a :class:`ScoredSample` per (sample, variant, metric), with explanations; the
  variants of a job are its top-K values,
- ``summary.json``: per variant, its parameters, every metric's mean, 95% CI and counts, and the
  LLM calls and tokens it took; the job's cost (seconds per stage, embedded texts, cache use, and
  for ``query=multi_query|hyde`` and ``rerank=llm|cross_encoder`` what they spent: ``query_rewrite``
  and ``rerank``, with calls, tokens and seconds per query).

Query rewriting (``harness/pipeline/rewrite.py``) changes what is searched; reranking (``harness/pipeline/rerank.py``)
reorders the top ``rerank.top_n`` chunks found, before any context expansion, so every K, budget and
context option passes on the reranked order and the retrieval metrics score it.

A job that fails writes ``error.json`` instead and the sweep goes on; bad input (a missing file, a
bad option) stops the command with exit code 2 and a one-line message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.gen import Corpus, TestSample, WholeDocument, build
from ragsweep.harness.cache import Cache, write_json
from ragsweep.harness.outputs import run_safely
from ragsweep.harness.pipeline.conversation import (
    conversation_summary,
    has_conversations,
    history_of,
    queries,
    query_mode,
)
from ragsweep.harness.pipeline.pipeline import Pipeline
from ragsweep.harness.pipeline.relevance import ChunkLocator, copy_grades, stand_ins
from ragsweep.harness.pipeline.rerank import Reranker
from ragsweep.harness.pipeline.rewrite import QueryRewriter
from ragsweep.harness.records import Cut, Retrieved, RunSample
from ragsweep.harness.runs import aggregate, applicable, score_variant, write_jsonl
from ragsweep.harness.testsets import check_max_queries, load_samples, subset
from ragsweep.metrics import InputError, Meter, fail, resolve, staged

log = logging.getLogger(__name__)

GROUPS = ("corpus", "chunker", "embedder", "retrieval", "index")




def prepare_testset(cfg: DictConfig, corpus: Corpus) -> tuple[list[TestSample], dict[str, Any]]:
    """The job's samples (:func:`load_samples`, then ``max_queries``), and what preparing them took:
    ``seconds`` (reading, and locating imported contexts) and whether the locations came from the cache."""
    started = time.perf_counter()
    cache = Cache(cfg.cache.dir, cfg.cache.enabled)
    samples = subset(load_samples(cfg.testset, corpus, cfg.get("testset_format"), cfg.get("locate"), cache),
                     cfg.get("max_queries"), cfg.seed)
    seconds = time.perf_counter() - started
    from_cache = cache.hits > 0 if cache.hits + cache.misses else None  # None: nothing to locate
    return samples, {"path": cfg.testset, "seconds": round(seconds, 3), "located_from_cache": from_cache}


def top_ks(value: Any) -> list[int]:
    ks = [value] if isinstance(value, int) else list(value)
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise InputError(f"retriever.top_k must be a positive integer or a list of them, got {value!r}")
    return sorted(set(ks))


def cuts_of(retriever: Any) -> list[Cut]:
    """The job's variants: one per ``retriever.budget`` when set, else one per ``retriever.top_k``, else
    (neither given) one per ``retriever.default_budget``: a sweep compares chunk sizes on equal amounts
    of text unless told to cut at K, where a bigger chunk wins partly by its size."""
    budget = retriever.get("budget")
    if budget is None and retriever.get("top_k") is None:
        budget = retriever.get("default_budget")
        if budget is None:
            raise InputError("set retriever.top_k (a K or a list) or retriever.budget (characters or tokens)")
    if budget is None:
        return [Cut("top_k", k) for k in top_ks(retriever.top_k)]
    values = [budget] if isinstance(budget, int) else list(budget)
    if not values or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in values):
        raise InputError(f"retriever.budget must be a positive integer or a list of them, got {budget!r}")
    unit = retriever.get("budget_unit", "chars")
    if unit not in ("chars", "tokens"):
        raise InputError(f"retriever.budget_unit must be chars or tokens, got {unit!r}")
    return [Cut("budget", b, unit) for b in sorted(set(values))]


def search_depth(cuts: list[Cut], chunks: list[Any], qrels_on_chunks: bool, expands: bool = False) -> int:
    """How deep to search so that every cut can be served from one ranking."""
    deepest = max(c.value for c in cuts if c.kind == "top_k") if cuts[0].kind == "top_k" else 0
    if qrels_on_chunks or expands:  # K distinct documents, or K distinct contexts (children share a parent)
        deepest *= 10
    budgets = [c for c in cuts if c.kind == "budget"]
    if budgets and chunks:
        # Enough chunks to fill the largest budget with short ones (the 10th percentile length);
        # a token is at least one character.
        lengths = sorted(c.end - c.start for c in chunks)
        short = max(1, lengths[len(lengths) // 10])
        deepest = max(deepest, -(-max(b.value for b in budgets) // short) + 1)
    return max(1, min(deepest, len(chunks))) if chunks else max(1, deepest)






def check_llm_uses(cfg: DictConfig) -> None:
    """``rerank=llm`` and ``query=multi_query|hyde`` call the ``llm``: with ``llm=none`` they are an
    InputError (exit 2) before anything runs, not a silent no-op."""
    uses = []
    if "rerank" in cfg and str(cfg.rerank.get("_target_", "")).endswith("rerank.llm"):
        uses.append("rerank=llm")
    if "query" in cfg and cfg.query.get("kind", "plain") != "plain":
        uses.append(f"query={cfg.query.kind}")
    if uses and "llm" in cfg and str(cfg.llm.get("_target_", "")).endswith("factory.none"):
        raise InputError(f"{' and '.join(uses)} need{'s' if len(uses) == 1 else ''} an LLM, but llm=none: "
                         "pass llm=local, llm=local_small or llm=openai ...")


def check_config(cfg: DictConfig) -> None:
    """The checks of a job's config that need no corpus and no model: the LLM's uses, the cuts, ``max_queries``,
    that ``corpus.path`` and ``testset`` exist, the metrics and their options, and every part whose constructor checks its settings without loading
    anything (chunker, retrieval, index, context, query, rerank). :func:`run_job` runs them first, and
    ``ragsweep sweep`` runs them on every job before any starts (:mod:`harness.preflight`)."""
    from ragsweep.metrics import metric_kwargs

    check_llm_uses(cfg)
    cuts_of(cfg.retriever)
    check_max_queries(cfg.get("max_queries"))
    corpus_path = cfg.corpus.get("path") if "corpus" in cfg else None
    if corpus_path and not Path(str(corpus_path)).expanduser().exists():  # read by the job: only its presence here
        raise InputError(f"{corpus_path}: corpus.path not found")
    if cfg.get("testset") and not Path(str(cfg.testset)).expanduser().exists():
        raise InputError(f"{cfg.testset}: test set not found")
    specs = resolve([*cfg.metrics.retrieval, *cfg.metrics.generation])
    node = cfg.metrics.get("options")
    options = OmegaConf.to_container(node) if node is not None else {}
    for spec in specs:
        metric_kwargs(spec, options)  # type: ignore[arg-type]
    for group in ("chunker", "retrieval", "index", "context", "query"):
        if group in cfg:
            build(cfg[group], group)
    if "rerank" in cfg:  # an LLM reranker keeps its model for later: a stand-in serves the check
        build(cfg.rerank, "rerank", llm=object())


def stage_cost(stats: Mapping[str, Any], spent: Mapping[str, int] | None, n_queries: int) -> dict[str, Any]:
    """A stage's cost record (``query_rewrite``, ``rerank``): its counts and seconds, the LLM calls
    and tokens it spent (``llm_*``), and per query: seconds, LLM calls, tokens (prompt + completion)."""
    out: dict[str, Any] = dict(stats)
    n = max(1, n_queries)
    per: dict[str, float] = {"seconds": round(float(out.get("seconds", 0.0)) / n, 4)}
    if spent is not None:
        out.update({f"llm_{k}": v for k, v in spent.items()})
        per["llm_calls"] = round(spent["calls"] / n, 3)
        per["llm_tokens"] = round((spent["prompt_tokens"] + spent["completion_tokens"]) / n, 1)
    out["per_query"] = per
    return out


def _choice_params(cfg: DictConfig, choices: Mapping[str, str], group: str, default: str) -> dict[str, Any]:
    """``rerank`` / ``query`` and the settings that apply, when not the default (names stay as they were)."""
    choice = choices.get(group)
    if not choice or choice == default or group not in cfg:
        return {}
    shown = build(cfg[group], group).params()
    return {group: choice, **{f"{group}.{k}": v for k, v in shown.items()}}


def embedder_use(cfg: DictConfig, answerer: Any, specs: list[Any]) -> str | None:
    """What a job's embedder serves: ``retrieval`` (dense or hybrid search), ``answers`` (BM25 search
    with an answerer that embeds -- extractive picks sentences by cosine -- or a metric that does, such
    as answer similarity), or None (nothing embeds)."""
    mode = cfg.retrieval.get("mode", "dense") if "retrieval" in cfg else "dense"
    if mode != "bm25":
        return "retrieval"
    if getattr(answerer, "embedder", None) is not None or any(getattr(s, "needs_embedder", False) for s in specs):
        return "answers"
    return None


def variant_params(cfg: DictConfig, choices: Mapping[str, str], cut: Cut, conversations: bool = False,
                   embedder: str | None = "retrieval") -> dict[str, Any]:
    """The parameters that name a variant: group choices, the chunk size/overlap, fusion settings, the
    query rewriting and reranking (when not plain / none), the query of a conversation (when the test
    set has conversations), and K.

    A part the variant does not use is not named: BM25 search has no index, and no ``embedder``; when its
    embedder serves only the answers and their metrics (``embedder="answers"``, :func:`embedder_use`) it is
    named ``answer_embedder``, so a board does not read as if BM25 searched by embeddings."""
    params: dict[str, Any] = {g: choices.get(g) for g in GROUPS if choices.get(g)}
    if embedder != "retrieval" and "embedder" in params:
        named = params.pop("embedder")
        if embedder == "answers":
            params["answer_embedder"] = named
    mode = cfg.retrieval.get("mode", "dense") if "retrieval" in cfg else "dense"
    if mode == "bm25":
        params.pop("index", None)  # BM25 searches no FAISS index
    for key in ("size", "overlap"):
        if key in cfg.chunker:
            params[f"chunker.{key}"] = cfg.chunker[key]
    if mode == "hybrid":
        params["retrieval.fusion"] = cfg.retrieval.fusion
        key = "rrf_k" if cfg.retrieval.fusion == "rrf" else "alpha"
        params[f"retrieval.{key}"] = cfg.retrieval[key]
    context = choices.get("context")
    if context and context != "chunks" and "context" in cfg:  # the default leaves names as they were
        params["context"] = context
        shown = build(cfg.context, "context").params()  # the settings that apply (no size for by=paragraph)
        params.update({f"context.{k}": v for k, v in shown.items() if k not in ("name", "splitter")})
    params.update(_choice_params(cfg, choices, "query", "plain"))
    params.update(_choice_params(cfg, choices, "rerank", "none"))
    if conversations:
        params["conversation.query"] = query_mode(cfg.get("conversation"))
    params.update(cut.params())
    return params


def variant_name(params: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items() if k != "corpus")


def answer_at(answerer: Any, questions: list[str], retrieved: list[list[Retrieved]], cut: Cut) -> list[str | None]:
    """The answerer's answer to every question (as searched: ``conversation.query``) from the chunks
    ``cut`` passes on."""
    contexts = [[r.text for r in cut.passed(tuple(got))] for got in retrieved]
    return list(answerer.answer_all(questions, contexts))


def context_chars(retrieved: list[list[Retrieved]], cut: Cut) -> float:
    """Mean characters of context a variant passes on per question (its cost in an LLM's prompt)."""
    sizes = [sum(r.end - r.start for r in cut.passed(tuple(got))) for got in retrieved]
    return round(sum(sizes) / len(sizes), 1) if sizes else 0.0


def run_records(name: str, samples: list[TestSample], retrieved: list[list[Retrieved]], corpus: Corpus,
                locator: ChunkLocator | None, answers: dict[str, list[str | None]],
                queries: list[str] | None = None, searched: list[list[str]] | None = None) -> list[RunSample]:
    """The job's run records: each question with its ground truth, ranked retrieval and answers per K.

    A chunk of a copy of a document carries what it stands for in the original (``same_as``), and
    document judgements judge each group of copies once (``harness/pipeline/relevance.py``).
    """
    out = []
    for i, (s, got) in enumerate(zip(samples, retrieved)):
        span_mode = locator is not None
        out.append(RunSample(
            s.id, name, tuple(stand_ins(got, corpus, locator, by_document=not span_mode)),
            {k: a[i] for k, a in answers.items()},
            s.question, s.reference or None,
            tuple((e.doc_id, e.start, e.end) for e in s.evidence) if span_mode else None,
            tuple(corpus.get(e.doc_id).text[e.start:e.end] for e in s.evidence) if span_mode else None,
            None if span_mode else copy_grades(corpus.qrels[s.id], corpus),  # type: ignore[index]
            locator.n_relevant(s) if locator is not None else None,
            history=history_of(s) or None,
            query=queries[i] if queries is not None and queries[i] != s.question else None,
            rewrites=tuple(t for t in searched[i] if queries is None or t != queries[i]) or None
            if searched is not None else None, kind=s.kind))
    return out


def run_job(cfg: DictConfig, out_dir: Path, choices: Mapping[str, str]) -> dict[str, Any]:
    """Run one job; return (and write) its summary."""
    started = time.perf_counter()
    check_config(cfg)
    corpus: Corpus = build(cfg.corpus, "corpus")
    samples, prepared = prepare_testset(cfg, corpus)
    cuts = cuts_of(cfg.retriever)
    chunker = build(cfg.chunker, "chunker")
    retrieval_specs = resolve(list(cfg.metrics.retrieval))
    pipe = Pipeline(corpus, chunker, build(cfg.embedder, "embedder"), build(cfg.index, "index"),
                    Cache(cfg.cache.dir, cfg.cache.enabled), progress=cfg.progress,
                    retrieval=build(cfg.retrieval, "retrieval"),
                    context=build(cfg.context, "context") if "context" in cfg else None)
    span_mode = corpus.qrels is None
    k_search = search_depth(cuts, pipe.chunks, not span_mode and not isinstance(chunker, WholeDocument),
                            pipe.context.expands)
    # One meter for the query rewriter, the answerer and the judge: each variant's LLM calls and tokens
    # are the difference of two snapshots (the variants run one after another).
    built = build(cfg.llm, "llm")
    llm = Meter(built) if built is not None else None
    rewriter: QueryRewriter = build(cfg.query, "query") if "query" in cfg else QueryRewriter()
    reranker: Reranker = build(cfg.rerank, "rerank", llm=llm) if "rerank" in cfg else Reranker()
    conversations = has_conversations(samples)
    questions = queries(samples, query_mode(cfg.get("conversation")), llm,
                        int(getattr(built, "max_concurrency", 1) or 1))
    stages: dict[str, Any] = {}
    before = llm.snapshot() if llm is not None else None
    searched = rewriter.rewrite(questions, llm)
    if rewriter.needs_llm:
        spent = (llm.snapshot() - before).to_dict(prefix="") if llm is not None and before is not None else None
        stages["query_rewrite"] = stage_cost(rewriter.stats.to_dict(), spent, len(questions))
    if reranker.active:  # the reranker sees its top_n candidates, however few the cuts pass on
        k_search = max(k_search, min(reranker.top_n, len(pipe.chunks)))
    before = llm.snapshot() if llm is not None else None
    retrieved = pipe.search(questions, k_search, texts=searched if rewriter.kind != "plain" else None,
                            rrf_k=rewriter.rrf_k, rerank=reranker if reranker.active else None)
    if reranker.active:
        spent = ((llm.snapshot() - before).to_dict(prefix="") if reranker.needs_llm and llm is not None
                 and before is not None else None)
        stages["rerank"] = stage_cost(reranker.stats.to_dict(), spent, len(questions))
    latency = pipe.latency(questions, k_search, int(cfg.retriever.get("latency_queries", 50)))
    locator = ChunkLocator(pipe.units) if span_mode else None
    answerer = build(cfg.answerer, "answerer", llm=llm, embedder=pipe.cached_embedder)
    gen_specs = resolve(list(cfg.metrics.generation)) if answerer is not None and span_mode else []

    embedder_used = embedder_use(cfg, answerer if gen_specs else None, [*retrieval_specs, *gen_specs])
    names = {c: variant_name(variant_params(cfg, choices, c, conversations, embedder_used)) for c in cuts}
    answers: dict[str, list[str | None]] = {}
    answer_cost: dict[Cut, Any] = {}
    if gen_specs:
        t = time.perf_counter()
        for c in cuts:
            before = llm.snapshot() if llm is not None else None
            answers[c.label] = answer_at(answerer, questions, retrieved, c)
            if llm is not None and before is not None:
                answer_cost[c] = llm.snapshot() - before
        pipe.cost.timed("answer", t)
    cut_keys = set(cuts[0].params())
    job_name = variant_name({key: v for key, v in variant_params(cfg, choices, cuts[0], conversations,
                                                                 embedder_used).items()
                             if key not in cut_keys})
    runs = run_records(job_name, samples, retrieved, corpus, locator, answers, questions,
                       searched if rewriter.kind != "plain" else None)
    write_jsonl(out_dir / "runs.jsonl", [r.to_dict(cfg.output.keep_text) for r in runs])

    # Every metric, retrieval and generation, through one scoring path over the run records.
    specs = applicable([*retrieval_specs, *gen_specs], runs)
    summaries, scored = [], []
    for c in cuts:
        t = time.perf_counter()
        before = llm.snapshot() if llm is not None else None
        rows = score_variant(runs, names[c], c, specs, judge=llm, embedder=pipe.cached_embedder,
                             options=cfg.metrics.options)
        pipe.cost.timed("metrics", t)
        scored.extend(rows)
        variant = {"variant": names[c], "run": job_name, **c.params(),
                   "params": variant_params(cfg, choices, c, conversations, embedder_used),
                   "n_samples": len(samples), "metrics": aggregate(rows, cfg.seed)}
        if conversations:
            variant["conversation"] = conversation_summary(rows, samples, cfg.get("conversation"))
        if llm is not None and before is not None:
            spent = llm.snapshot() - before
            if c in answer_cost:
                spent = spent + answer_cost[c]
            variant["cost"] = spent.to_dict()
        variant["context_chars"] = context_chars(retrieved, c)
        summaries.append(variant)
    # the test set's preparation is the test set's, not the variant's: summary["testset"]
    cost = {"seconds": {**pipe.cost.seconds, "total": time.perf_counter() - started - prepared["seconds"]},
            "embedded_texts": pipe.cost.embedded_texts, "n_chunks": len(pipe.chunks),
            "cache_hits": pipe.cache.hits, "cache_misses": pipe.cache.misses,
            "indexes": pipe.indexes}
    if latency is not None:
        cost["latency"] = latency
    cost.update(stages)  # query_rewrite, rerank: shared by the job's variants, like its seconds
    if llm is not None:  # the job's totals; the leaderboard shows each variant's own
        cost["llm"] = llm.snapshot().to_dict(prefix="")
    summary = {"job": str(out_dir), "corpus": corpus.source, "seed": cfg.seed, "variants": summaries,
               "cost": cost, "testset": prepared, "config": OmegaConf.to_container(cfg, resolve=True)}
    summary.update(corpus.report())  # copies among the documents, empty files left out
    with staged(out_dir) as into:  # the scores and the summary that counts them, together or neither
        write_jsonl(into / "scores.jsonl", [r.to_dict() for r in scored])
        write_json(into / "summary.json", summary)
    return summary


def sweep_app(cfg: DictConfig) -> Any:
    """The ``ragsweep sweep`` app: one job; its summary, or (an Optuna trial) its objective."""
    from hydra.core.hydra_config import HydraConfig

    from ragsweep.harness.optuna_search import OPTUNA, record

    logging.getLogger().setLevel(logging.INFO)
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    choices = {k: v for k, v in hc.runtime.choices.items() if isinstance(v, str)}
    try:
        summary = run_safely(lambda: run_job(cfg, out_dir, choices), cfg, out_dir)
        if hc.sweeper.get("_target_") == OPTUNA:
            return record(summary, out_dir, str(hc.callbacks.leaderboard.sort_by))  # the trial's objective
        return summary
    except InputError as exc:
        fail(str(exc))
