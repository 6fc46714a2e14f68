"""The ``ragsweep`` command: ``ragsweep <sweep|board|gen|score|rescore|run|convert> [overrides]``, each a Hydra app.

Before handing over to Hydra, the overrides are checked against the command's config
(:mod:`harness.preflight`) so that an unknown key, a bad value (in any job of a sweep) or a missing
mandatory key exits with code 2 and one clear line, not a Hydra traceback with exit code 1. Every
command keeps one exit-code contract (:data:`metrics.errors.EXIT_OK` ... ``EXIT_SOME_FAILED``).
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from ragsweep.harness.overrides import first_job, overrides_of
from ragsweep.metrics import EXIT_NOT_SCORED, InputError, fail

log = logging.getLogger("ragsweep")

USAGE = """usage: ragsweep <command> [key=value ...]

commands:
  sweep   chunk, embed, index and retrieve over the test set for every variant; writes a leaderboard
          e.g. ragsweep sweep chunker.size=256,512 'retriever.top_k=[1,5,10]'
  board   rebuild the leaderboard of a sweep folder: ragsweep board outputs/sweeps/<stamp>
  gen     write a test set (questions, reference answers, evidence spans) from a corpus
  score   score recorded RAG outputs (CSV, JSONL, Parquet, datasets folder); exit 1 if a threshold fails
  rescore add metrics to a finished sweep from its run records and rebuild its leaderboard:
          ragsweep rescore outputs/sweeps/<stamp> 'metrics=[faithfulness,ndcg@5]' llm=local
  run     call your own application on every test question and score it like a variant:
          ragsweep run target=python target.function=my_app:answer 'target.params.top_k=2,5'
  convert read a test set in one format and write it in another (ragsweep, ragas, deepeval,
          llamaindex, llamaindex_qa), locating reference contexts in a corpus as evidence spans:
          ragsweep convert input=goldens.json out=testset.jsonl corpus=folder corpus.path=docs/

Every option is a Hydra override; `ragsweep <command> --cfg job` prints the composed config,
`ragsweep <command> --help` lists the config groups. Only sweep and run take comma sweeps.

exit codes: 0 ok, 1 a threshold failed, 2 bad input or usage (before any work where it can be known),
            3 nothing measured (every job failed), 4 some jobs failed (the others are ranked)"""


def _job_choices() -> dict[str, str]:
    return {k: v for k, v in HydraConfig.get().runtime.choices.items() if isinstance(v, str)}


@hydra.main(version_base="1.3", config_path="pkg://ragsweep.conf", config_name="sweep")
def sweep_app(cfg: DictConfig) -> Any:
    from ragsweep.harness.optuna_search import OPTUNA, record
    from ragsweep.harness.sweep import run_job_safely

    logging.getLogger().setLevel(logging.INFO)
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    try:
        summary = run_job_safely(cfg, out_dir, _job_choices())
        if hc.sweeper.get("_target_") == OPTUNA:
            return record(summary, out_dir, str(hc.callbacks.leaderboard.sort_by))  # the trial's objective
        return summary
    except InputError as exc:
        fail(str(exc))


@hydra.main(version_base="1.3", config_path="pkg://ragsweep.conf", config_name="board")
def board_app(cfg: DictConfig) -> None:
    from ragsweep.harness.board.leaderboard import ranked, to_terminal, write
    from ragsweep.harness.outputs import jobs_outcome, write_failed

    if not cfg.dir:
        fail("which sweep folder? ragsweep board outputs/sweeps/<stamp>")
    code, message = jobs_outcome(Path(cfg.dir))  # the sweep's own exit code: 3 and 4 gate CI here too
    if code == EXIT_NOT_SCORED:
        print(f"ragsweep: error: no leaderboard: {message}", file=sys.stderr)
        raise SystemExit(code)
    try:
        rows, metrics = ranked(cfg.dir, cfg.sort_by, cfg.seed, baseline=cfg.baseline, alpha=cfg.alpha,
                               n_resamples=cfg.n_resamples)
        paths = write(Path(cfg.dir), rows, metrics, cfg.sort_by, top=cfg.top, alpha=cfg.alpha, seed=cfg.seed,
                      html=cfg.html)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(exc, cfg.dir)
    print(to_terminal(rows, metrics, cfg.sort_by, paths))
    print("leaderboard: " + "\n             ".join(str(p) for p in paths.values()))
    if code:
        print(f"ragsweep: warning: {message}", file=sys.stderr)
        raise SystemExit(code)


# command -> (module, Hydra app function, primary config). Imported only when that command runs.
APPS: dict[str, tuple[str, str, str]] = {
    "sweep": ("ragsweep.harness.cli", "sweep_app", "sweep"),
    "board": ("ragsweep.harness.cli", "board_app", "board"),
    "gen": ("ragsweep.gen.app", "gen_app", "gen"),
    "score": ("ragsweep.harness.score", "score_app", "score"),
    "rescore": ("ragsweep.harness.rescore", "rescore_app", "rescore"),
    "run": ("ragsweep.harness.run", "run_app", "run"),
    "convert": ("ragsweep.harness.testsets", "convert_app", "convert"),
}


def _message(exc: BaseException) -> str:
    """The first non-empty message along the exception's cause chain."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen).strip()
        if text:
            return text.splitlines()[0]
        seen = seen.__cause__ or seen.__context__
    return type(exc).__name__


def validate(command: str, config_name: str, overrides: list[str], jobs: bool = True) -> None:
    """Check the overrides before any work (:mod:`harness.preflight`; ``jobs``: also each job of a sweep);
    exit 2 on any error."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from ragsweep.harness.preflight import check

    try:
        check(command, config_name, overrides, jobs=jobs)
    except InputError as exc:
        fail(str(exc))
    except (HydraException, OmegaConfBaseException, ValueError) as exc:
        fail(_message(exc))


def refuse_secrets(overrides: list[str]) -> None:
    """Exit 2, before Hydra writes any override into a run folder (``multirun.yaml``,
    ``.hydra/overrides.yaml``), when an override carries what looks like a credential: a
    ``*api_key_env`` given a key instead of a variable's name, a URL with a password, or any value in a
    known key format (``sk-...``). The message names the override, never the value."""
    from ragsweep.metrics import holds_key_format, looks_like_key, register_secret, url_password

    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            continue
        name = key.lstrip("+~")
        value = value.strip().strip("'\"")
        if name.endswith("api_key_env") and looks_like_key(value):
            register_secret(value)
            fail(f"{name} takes the NAME of an environment variable, not the key itself; nothing was run or "
                 f"saved. Export the key (export OPENAI_API_KEY=...) and pass {name}=OPENAI_API_KEY")
        if url_password(value):  # Hydra would save it in the run's .hydra/overrides.yaml and multirun.yaml
            fail(f"{name} holds a URL with a password; nothing was run or saved. Keep the password in an "
                 f"environment variable and refer to it: '{name}=http://user:${{oc.env:NAME}}@host/v1'")
        if holds_key_format(value):
            register_secret(value)
            fail(f"{name} looks like a credential; nothing was run or saved (the run's config would keep it). "
                 "Put secrets in environment variables and name the variable instead")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        raise SystemExit(0 if args else 2)
    command, rest = args[0], args[1:]
    if command not in APPS:
        fail(f"unknown command {command!r}; expected one of: {', '.join(APPS)}")
    module, function, config_name = APPS[command]
    if command in ("board", "rescore") and rest and "=" not in rest[0] and not rest[0].startswith("-"):
        rest[0] = f"dir={rest[0]}"
    if command == "score":  # ragas_once's flags (--dataset, --model, --apikey, ...) become overrides
        from ragsweep.harness.ragas_once import apply

        rest = apply(rest)
    if command == "run":  # target.params.top_k=5 adds a key: an application's settings are open-ended
        from ragsweep.harness.app.targets import open_keys

        rest = open_keys(rest)
    refuse_secrets(rest)
    if not any(a in ("--help", "-h", "--hydra-help", "--info") for a in rest):
        # --cfg only prints the config: the jobs' checks of what they would read (files, model folders) wait
        # for a run, so a documented command composes on a machine without the reader's data.
        validate(command, config_name, overrides_of(rest), jobs=not any(a in ("--cfg", "-c") for a in rest))
        if command == "sweep":  # an Optuna study: the sort metric's direction, the sweep's seed
            from ragsweep.harness.optuna_search import sweeper_overrides
            from ragsweep.metrics import InputError

            try:
                rest = [*rest, *sweeper_overrides(overrides_of(rest))]
            except InputError as exc:
                fail(str(exc))
    if command in ("sweep", "run") and any(a in ("--cfg", "-c", "--info") for a in rest):
        rest, notes = first_job(rest)
        for note in notes:
            print(note, file=sys.stderr)
    sys.argv = [f"ragsweep-{command}", *rest]
    app: Callable[[], Any] = getattr(importlib.import_module(module), function)
    app()


if __name__ == "__main__":
    main()
