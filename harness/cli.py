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
from typing import Any

import hydra
from omegaconf import DictConfig

from ragsweep.harness.overrides import first_job, overrides_of
from ragsweep.metrics import CommandExit, InputError, fail

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


# command -> (module, app function, primary config). Imported only when that command runs. Every app is a
# plain function of its config, made a Hydra app here, the one place where one is declared.
APPS: dict[str, tuple[str, str, str]] = {
    "sweep": ("ragsweep.harness.sweep", "sweep_app", "sweep"),
    "board": ("ragsweep.harness.board_command", "board_app", "board"),
    "gen": ("ragsweep.gen.app", "gen_app", "gen"),
    "score": ("ragsweep.harness.score", "score_app", "score"),
    "rescore": ("ragsweep.harness.rescore", "rescore_app", "rescore"),
    "run": ("ragsweep.harness.run", "run_app", "run"),
    "convert": ("ragsweep.harness.testsets", "convert_app", "convert"),
}


def _message(exc: BaseException) -> str:
    """The first non-empty message along the exception's cause chain, its lines joined: Hydra's second line says
    how to add a key the config lacks ("To append to your config use +metric_options...."), OmegaConf's which key
    failed (``full_key: n``)."""
    seen: BaseException | None = exc
    while seen is not None:
        lines = [line.strip() for line in str(seen).splitlines() if line.strip()]
        if lines:
            return "".join(line + ("" if i == len(lines) - 1 else " " if line.endswith(".") else "; ")
                           for i, line in enumerate(lines))
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


#: The key a command's first bare argument (no ``=``, no leading ``-``) stands for: ``ragsweep score
#: results.csv`` is ``input=results.csv``, as a user of any other evaluation tool types it; Hydra would
#: otherwise reject the path as an override it cannot parse.
POSITIONAL = {"board": "dir", "rescore": "dir", "score": "input", "convert": "input", "run": "testset"}


def positional(command: str, rest: list[str]) -> list[str]:
    """``rest`` with its first bare argument named by :data:`POSITIONAL` (unchanged for other commands).
    Bare means no ``=`` and not a flag, a deletion (``~key``) or a flag's value (``--cfg job``)."""
    key = POSITIONAL.get(command)
    for i, arg in enumerate(rest if key else []):
        after_flag = i > 0 and rest[i - 1].startswith("-") and "=" not in rest[i - 1]
        if "=" not in arg and not arg.startswith(("-", "~", "+")) and not after_flag:
            return [*rest[:i], f"{key}={arg}", *rest[i + 1:]]
    return rest


def main(argv: list[str] | None = None) -> None:
    """Run one command; its exit code and last line also go to :data:`harness.child.RESULT_ENV`'s file."""
    from ragsweep.harness.child import report

    try:
        _main(argv)
    except CommandExit as exc:
        report(int(exc.code or 0), exc.message)
        raise
    except SystemExit as exc:
        report(exc.code if isinstance(exc.code, int) else 1, None)
        raise
    report(0, None)


def _main(argv: list[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        raise SystemExit(0 if args else 2)
    command, rest = args[0], args[1:]
    if command not in APPS:
        fail(f"unknown command {command!r}; expected one of: {', '.join(APPS)}")
    module, function, config_name = APPS[command]
    if command == "score":  # ragas_once's flags (--dataset, --model, --apikey, ...) become overrides
        from ragsweep.harness.ragas_once import apply

        rest = apply(rest)
    rest = positional(command, rest)
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
    app: Callable[[DictConfig], Any] = getattr(importlib.import_module(module), function)
    hydra.main(version_base="1.3", config_path="pkg://ragsweep.conf", config_name=config_name)(app)()


if __name__ == "__main__":
    main()
