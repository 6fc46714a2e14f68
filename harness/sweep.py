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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
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
from ragsweep.harness.records import Cut, Retrieved, RunSample, cite_answers
from ragsweep.harness.runs import aggregate, applicable, score_variant, write_jsonl
from ragsweep.harness.sweep_variants import embedder_use, variant_name, variant_params
from ragsweep.harness.testsets import check_max_queries, load_samples, subset
from ragsweep.metrics import InputError, LLMCost, Meter, fail, resolve, staged

log = logging.getLogger(__name__)


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


def answer_at(answerer: Any, questions: list[str], retrieved: list[list[Retrieved]], cut: Cut) -> list[str | None]:
    """The answerer's answer to every question (as searched: ``conversation.query``) from the chunks
    ``cut`` passes on."""
    contexts = [[r.text for r in cut.passed(tuple(got))] for got in retrieved]
    return list(answerer.answer_all(questions, contexts))


def context_chars(retrieved: list[list[Retrieved]], cut: Cut) -> float:
    """Mean characters of context a variant passes on per question (its cost in an LLM's prompt)."""
    sizes = [sum(r.end - r.start for r in cut.passed(tuple(got))) for got in retrieved]
    return round(sum(sizes) / len(sizes), 1) if sizes else 0.0


def cited_at(answers: list[str | None], retrieved: list[list[Retrieved]],
             cut: Cut) -> tuple[list[str | None], list[list[dict[str, Any]] | None]]:
    """A citing answerer's answers under ``cut`` with their ``[n]`` markers read (indexing the chunks the
    cut passes on) and stripped: (answers, citations per answer)."""
    n = [len(cut.passed(tuple(got))) for got in retrieved]
    stripped, cited = cite_answers(answers, n, always=True)
    return stripped, cited or [None] * len(answers)


def run_records(name: str, samples: list[TestSample], retrieved: list[list[Retrieved]], corpus: Corpus,
                locator: ChunkLocator | None, answers: dict[str, list[str | None]],
                queries: list[str] | None = None, searched: list[list[str]] | None = None,
                citations: dict[str, list[list[dict[str, Any]] | None]] | None = None) -> list[RunSample]:
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
            if searched is not None else None, kind=s.kind,
            citations={k: c[i] for k, c in citations.items() if c[i] is not None} or None if citations else None))
    return out


@dataclass
class Job:
    """One sweep job as it goes through its stages: what each stage made, for the next ones."""

    cfg: DictConfig
    out_dir: Path
    choices: Mapping[str, str]
    corpus: Corpus
    samples: list[TestSample]
    prepared: dict[str, Any]
    cuts: list[Cut]
    retrieval_specs: list[Any]
    #: built
    pipe: Pipeline | None = None
    llm: Meter | None = None
    concurrency: int = 1
    rewriter: QueryRewriter = field(default_factory=QueryRewriter)
    reranker: Reranker = field(default_factory=Reranker)
    k_search: int = 1
    #: searched
    questions: list[str] = field(default_factory=list)
    searched: list[list[str]] | None = None
    retrieved: list[list[Retrieved]] = field(default_factory=list)
    latency: dict[str, Any] | None = None
    #: answered (the runs' name is the job's: its variants differ only in the cut)
    name: str = ""
    names: dict[Cut, str] = field(default_factory=dict)
    params: dict[Cut, dict[str, Any]] = field(default_factory=dict)
    runs: list[RunSample] = field(default_factory=list)
    specs: list[Any] = field(default_factory=list)
    #: LLM calls and tokens per stage (``query_rewrite``, ``rerank``) and per cut (its answers)
    stages: dict[str, Any] = field(default_factory=dict)
    answer_cost: dict[Cut, LLMCost] = field(default_factory=dict)

    @property
    def span_mode(self) -> bool:
        return self.corpus.qrels is None

    @property
    def conversations(self) -> bool:
        return has_conversations(self.samples)


@dataclass
class Spent:
    """The LLM calls and tokens spent inside a :func:`metered` block (None: no LLM)."""

    cost: LLMCost | None = None

    def to_dict(self) -> dict[str, int] | None:
        return self.cost.to_dict(prefix="") if self.cost is not None else None


@contextmanager
def metered(llm: Meter | None) -> Iterator[Spent]:
    """The one cost meter around a stage: the difference of two snapshots of the job's meter (the
    stages and variants of a job run one after another)."""
    spent = Spent()
    before = llm.snapshot() if llm is not None else None
    yield spent
    if llm is not None and before is not None:
        spent.cost = llm.snapshot() - before


def load(cfg: DictConfig, out_dir: Path, choices: Mapping[str, str]) -> Job:
    """Stage 1: the config checked, the corpus read, the test set prepared, the cuts and retrieval metrics."""
    check_config(cfg)
    corpus: Corpus = build(cfg.corpus, "corpus")
    samples, prepared = prepare_testset(cfg, corpus)
    return Job(cfg, out_dir, choices, corpus, samples, prepared, cuts_of(cfg.retriever),
               resolve(list(cfg.metrics.retrieval)))


def build_parts(job: Job) -> None:
    """Stage 2: the pipeline (chunks, embeddings, index), the LLM behind a meter, the rewriter and the reranker."""
    cfg = job.cfg
    chunker = build(cfg.chunker, "chunker")
    job.pipe = Pipeline(job.corpus, chunker, build(cfg.embedder, "embedder"), build(cfg.index, "index"),
                        Cache(cfg.cache.dir, cfg.cache.enabled), progress=cfg.progress,
                        retrieval=build(cfg.retrieval, "retrieval"),
                        context=build(cfg.context, "context") if "context" in cfg else None)
    job.k_search = search_depth(job.cuts, job.pipe.chunks,
                                not job.span_mode and not isinstance(chunker, WholeDocument), job.pipe.context.expands)
    # One meter for the query rewriter, the answerer and the judge.
    built = build(cfg.llm, "llm")
    job.llm = Meter(built) if built is not None else None
    job.concurrency = int(getattr(built, "max_concurrency", 1) or 1)
    if "query" in cfg:
        job.rewriter = build(cfg.query, "query")
    if "rerank" in cfg:
        job.reranker = build(cfg.rerank, "rerank", llm=job.llm)


def search(job: Job) -> None:
    """Stage 3: the queries (of a conversation: as ``conversation.query`` says), rewritten, searched once at
    the deepest cut and reranked; the search latency."""
    cfg, pipe, llm, rewriter, reranker = job.cfg, job.pipe, job.llm, job.rewriter, job.reranker
    assert pipe is not None
    job.questions = questions = queries(job.samples, query_mode(cfg.get("conversation")), llm, job.concurrency)
    with metered(llm) as spent:
        searched = rewriter.rewrite(questions, llm)
    if rewriter.needs_llm:
        job.stages["query_rewrite"] = stage_cost(rewriter.stats.to_dict(), spent.to_dict(), len(questions))
    job.searched = searched if rewriter.kind != "plain" else None
    if reranker.active:  # the reranker sees its top_n candidates, however few the cuts pass on
        job.k_search = max(job.k_search, min(reranker.top_n, len(pipe.chunks)))
    with metered(llm) as spent:
        job.retrieved = pipe.search(questions, job.k_search, texts=job.searched, rrf_k=rewriter.rrf_k,
                                    rerank=reranker if reranker.active else None)
    if reranker.active:
        job.stages["rerank"] = stage_cost(reranker.stats.to_dict(), spent.to_dict() if reranker.needs_llm else None,
                                          len(questions))
    job.latency = pipe.latency(questions, job.k_search, int(cfg.retriever.get("latency_queries", 50)))


def answer(job: Job) -> None:
    """Stage 4: the answer at every cut (with generation metrics to score them), the variants' names, and
    the run records (``runs.jsonl``)."""
    cfg, pipe = job.cfg, job.pipe
    assert pipe is not None
    locator = ChunkLocator(pipe.units) if job.span_mode else None
    answerer = build(cfg.answerer, "answerer", llm=job.llm, embedder=pipe.cached_embedder)
    gen_specs = resolve(list(cfg.metrics.generation)) if answerer is not None and job.span_mode else []
    embedder_used = embedder_use(cfg, answerer if gen_specs else None, [*job.retrieval_specs, *gen_specs])
    job.params = {c: variant_params(cfg, job.choices, c, job.conversations, embedder_used) for c in job.cuts}
    job.names = {c: variant_name(p) for c, p in job.params.items()}
    answers: dict[str, list[str | None]] = {}
    citations: dict[str, list[list[dict[str, Any]] | None]] = {}
    if gen_specs:
        t = time.perf_counter()
        for c in job.cuts:
            with metered(job.llm) as spent:
                answers[c.label] = answer_at(answerer, job.questions, job.retrieved, c)
            if spent.cost is not None:
                job.answer_cost[c] = spent.cost
            if getattr(answerer, "cite", False):
                answers[c.label], citations[c.label] = cited_at(answers[c.label], job.retrieved, c)
        pipe.cost.timed("answer", t)
    cut_keys = set(job.cuts[0].params())
    job.name = variant_name({k: v for k, v in job.params[job.cuts[0]].items() if k not in cut_keys})
    job.runs = run_records(job.name, job.samples, job.retrieved, job.corpus, locator, answers, job.questions,
                           job.searched, citations or None)
    write_jsonl(job.out_dir / "runs.jsonl", [r.to_dict(cfg.output.keep_text) for r in job.runs])
    job.specs = applicable([*job.retrieval_specs, *gen_specs], job.runs)


def score(job: Job) -> tuple[list[dict[str, Any]], list[Any]]:
    """Stage 5: every metric, retrieval and generation, through one scoring path over the run records, cut
    by cut; each variant's summary (with the LLM calls and tokens of its answers and its judge)."""
    cfg, pipe = job.cfg, job.pipe
    assert pipe is not None
    summaries, scored = [], []
    for c in job.cuts:
        t = time.perf_counter()
        with metered(job.llm) as spent:
            rows = score_variant(job.runs, job.names[c], c, job.specs, judge=job.llm, embedder=pipe.cached_embedder,
                                 options=cfg.metrics.options)
        pipe.cost.timed("metrics", t)
        scored.extend(rows)
        variant = {"variant": job.names[c], "run": job.name, **c.params(), "params": job.params[c],
                   "n_samples": len(job.samples), "metrics": aggregate(rows, cfg.seed)}
        if job.conversations:
            variant["conversation"] = conversation_summary(rows, job.samples, cfg.get("conversation"))
        if spent.cost is not None:
            variant["cost"] = (spent.cost + job.answer_cost[c] if c in job.answer_cost else spent.cost).to_dict()
        variant["context_chars"] = context_chars(job.retrieved, c)
        summaries.append(variant)
    return summaries, scored


def record(job: Job, summaries: list[dict[str, Any]], scored: list[Any], started: float) -> dict[str, Any]:
    """Stage 6: the job's cost and summary; ``scores.jsonl`` and ``summary.json`` written together or neither."""
    cfg, pipe = job.cfg, job.pipe
    assert pipe is not None
    # the test set's preparation is the test set's, not the variant's: summary["testset"]
    cost = {"seconds": {**pipe.cost.seconds, "total": time.perf_counter() - started - job.prepared["seconds"]},
            "embedded_texts": pipe.cost.embedded_texts, "n_chunks": len(pipe.chunks),
            "cache_hits": pipe.cache.hits, "cache_misses": pipe.cache.misses,
            "indexes": pipe.indexes}
    if job.latency is not None:
        cost["latency"] = job.latency
    cost.update(job.stages)  # query_rewrite, rerank: shared by the job's variants, like its seconds
    if job.llm is not None:  # the job's totals; the leaderboard shows each variant's own
        cost["llm"] = job.llm.snapshot().to_dict(prefix="")
    summary = {"job": str(job.out_dir), "corpus": job.corpus.source, "seed": cfg.seed, "variants": summaries,
               "cost": cost, "testset": job.prepared, "config": OmegaConf.to_container(cfg, resolve=True)}
    summary.update(job.corpus.report())  # copies among the documents, empty files left out
    with staged(job.out_dir) as into:  # the scores and the summary that counts them, together or neither
        write_jsonl(into / "scores.jsonl", [r.to_dict() for r in scored])
        write_json(into / "summary.json", summary)
    return summary


def run_job(cfg: DictConfig, out_dir: Path, choices: Mapping[str, str]) -> dict[str, Any]:
    """Run one job through its stages (load, build, search, answer, score, record); return its summary."""
    started = time.perf_counter()
    job = load(cfg, out_dir, choices)
    build_parts(job)
    search(job)
    answer(job)
    summaries, scored = score(job)
    return record(job, summaries, scored, started)


def sweep_app(cfg: DictConfig) -> Any:
    """The ``ragsweep sweep`` app: one job; its summary, or (an Optuna trial) its objective."""
    from hydra.core.hydra_config import HydraConfig

    from ragsweep.harness.optuna_search import OPTUNA
    from ragsweep.harness.optuna_search import record as record_objective

    logging.getLogger().setLevel(logging.INFO)
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    choices = {k: v for k, v in hc.runtime.choices.items() if isinstance(v, str)}
    try:
        summary = run_safely(lambda: run_job(cfg, out_dir, choices), cfg, out_dir)
        if hc.sweeper.get("_target_") == OPTUNA:
            return record_objective(summary, out_dir, str(hc.callbacks.leaderboard.sort_by))  # the trial's objective
        return summary
    except InputError as exc:
        fail(str(exc))
