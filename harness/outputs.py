"""Output folders that belong to one run: named once, checked before any work, never lost at the end.

The rule for both ``ragsweep score``'s ``out`` and ``ragsweep sweep``'s ``hydra.sweep.dir`` (and
``hydra.run.dir``):

- A folder named by the clock (its configured value holds ``${now:...}``, as the defaults do) is
  **claimed**: created with ``os.mkdir``, which is atomic, and given a suffix ``-2``, ``-3``, ...
  when that name is taken. Two runs started in the same second get two folders.
- A folder named literally is the user's: ``score`` writes into it (``out=.`` is fine), and a sweep
  continues there only when it is the same sweep (same task overrides, same config: a resume);
  a different sweep is refused with exit code 2 (:class:`SweepFolder`).

A sweep's claimed folder is resolved once, in the process that starts the sweep, and then passed
on as a literal ``hydra.sweep.dir=...`` override, which is how Hydra rebuilds every job's config
(``load_sweep_config``) — in the same process or in joblib and Ray workers — so every job writes
into the same folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from ragsweep.harness.cache import write_json
from ragsweep.metrics import (
    EXIT_BAD_INPUT,
    EXIT_NOT_SCORED,
    EXIT_SOME_FAILED,
    REDACTED,
    InputError,
    fail,
    is_path_problem,
    looks_like_key,
    register_config_secrets,
    scrub,
    staged,
)

log = logging.getLogger(__name__)

CLOCK = "${now:"
"""A configured folder holding this is named by the clock, and so is claimed (made unique)."""


def named_by_clock(raw: Any) -> bool:
    """Whether an unresolved config value names its folder with ``${now:...}``."""
    return isinstance(raw, str) and CLOCK in raw


def claim_dir(base: Path) -> Path:
    """Create ``base``, or ``base-2``, ``base-3``, ... when taken, and return the one created.

    ``os.mkdir`` fails when the folder exists, atomically, so concurrent runs never share one.

    Raises:
        OSError: The parent cannot be created or written.
    """
    base.parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1


def check_writable(path: Path, key: str = "out") -> None:
    """Refuse (InputError) a folder that cannot be written, before any work is done.

    ``path`` may not exist yet; then its nearest existing parent must be a folder that can be
    written. The check writes and removes a probe file, which is the only test that holds for
    every case (permissions, read-only file systems, root).
    """
    if path.exists() and not path.is_dir():
        raise InputError(f"{key}={path}: is a file, not a folder")
    nearest = path
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise InputError(f"{key}={path}: {nearest} is a file, not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=nearest, prefix=".ragsweep-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{key}={path}: cannot write in {nearest} ({exc.strerror or exc})") from None


class WriteFailure(str):
    """Why a run's results could not be written where asked (a ``str``: the message), with its exit code:
    2 when the path or its permissions are at fault, 4 when the machine failed half way (a full disk)."""

    code: int

    def __new__(cls, message: str, code: int) -> WriteFailure:
        self = super().__new__(cls, message)
        self.code = code
        return self


#: Exit code of a run whose work finished but whose results could not be written into ``out`` (the
#: contract's "some jobs failed": the writing failed; the results are in a fallback folder).
EXIT_WRITE_FAILED = EXIT_SOME_FAILED


def save(out: Path, write: Callable[[Path, Path], None], *, claim: bool,
         command: str) -> tuple[Path, WriteFailure]:
    """Write a finished run's files into ``out`` all or nothing; if that fails, into a fallback folder.

    The files are written through :func:`metrics.staging.staged`: a write that fails (a full disk, a
    permission taken away) leaves the files already in ``out`` as they were -- never new results beside
    an older run's explanations.

    Args:
        out: The folder to write into (checked with :func:`check_writable` before the work began).
        write: ``write(into, folder)`` writes every file into ``into`` (a staging folder); ``folder`` is
            where they will be (for a config that records it).
        claim: Claim ``out`` (or ``out-N``) with :func:`claim_dir` first (a clock-named folder).
        command: Names the fallback folder: ``ragsweep-<command>-fallback-<date>_<time>`` in the
            system's temporary folder or, failing that, the current folder.

    Returns:
        The folder written, and a :class:`WriteFailure` saying why ``out`` could not be used ("", code 0,
        when it was).

    Raises:
        OSError: Neither ``out`` nor a fallback folder could be written.
    """
    folder: Path | None = None
    try:
        folder = claim_dir(out) if claim else out
        with staged(folder) as into:
            write(into, folder)
        return folder, WriteFailure("", 0)
    except OSError as exc:
        if claim and folder is not None:
            _remove_empty(folder)
        code = EXIT_BAD_INPUT if is_path_problem(exc) else EXIT_WRITE_FAILED
        problem = WriteFailure(f"could not write to {out}: {exc.strerror or exc}", code)
    name = f"ragsweep-{command}-fallback-{time.strftime('%Y-%m-%d_%H-%M-%S')}"
    for parent in (Path(tempfile.gettempdir()), Path.cwd()):
        try:
            folder = claim_dir(parent / name)
            with staged(folder) as into:
                write(into, folder)
            return folder, problem
        except OSError:
            if folder is not None and folder.parent == parent:
                _remove_empty(folder)
            continue
    raise OSError(f"{problem}; no fallback folder could be written either")


def write_failed(exc: OSError, where: Path | str, kept: str = "") -> NoReturn:
    """End a command whose files could not be written into ``where`` (a sweep or job folder, which has
    no fallback): one line on stderr, exit code 2 (the path or its permissions) or 4 (a full disk, an
    I/O error). The files written through :func:`metrics.staging.staged` are as they were.

    Args:
        kept: Where finished work was kept, said after the error ("" when nothing was finished).
    """
    code = EXIT_BAD_INPUT if is_path_problem(exc) else EXIT_WRITE_FAILED
    message = f"could not write to {where}: {exc.strerror or exc}; its files are left as they were"
    fail(f"{message}{'; ' + kept if kept else ''}", code)


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _quoted(value: str) -> str:
    """A value for a Hydra override, single-quoted so that any path survives its grammar (which
    escapes only quotes, and the backslashes just before a quote)."""
    inner = re.sub(r"(\\*)'", lambda m: m.group(1) * 2 + "\\'", value)
    inner = re.sub(r"(\\+)$", lambda m: m.group(1) * 2, inner)
    return f"'{inner}'"


def _job_config(cfg: Any) -> dict[str, Any]:
    """The config without the ``hydra`` node, unresolved (as ``multirun.yaml`` stores it)."""
    data = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(data, dict)
    return {k: v for k, v in data.items() if k != "hydra"}


def _first_difference(old: Any, new: Any, path: str = "") -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            if old.get(key, "<missing>") != new.get(key, "<missing>"):
                return _first_difference(old.get(key, "<missing>"), new.get(key, "<missing>"),
                                         f"{path}.{key}" if path else str(key))
    return f"{path or '(top)'}: {old!r} there, {new!r} now"


#: Written atomically into a named sweep folder by the first sweep to start there.
OWNER = ".ragsweep-sweep.json"


def _claim_for(folder: Path, cfg: DictConfig) -> None:
    """Mark ``folder`` as this sweep's, atomically (``O_EXCL``), or exit 2 when another sweep marked it.

    ``multirun.yaml`` is written by Hydra only after the callbacks ran, so two different sweeps
    started together would both find none; the marker closes that window. Its content is the
    sweep's overrides and a hash of its job config: the same sweep (a resume) passes.
    """
    task = list(OmegaConf.to_container(cfg.hydra.overrides.task, resolve=False))  # type: ignore[arg-type]
    digest = hashlib.sha256(json.dumps(_job_config(cfg), sort_keys=True, default=str).encode()).hexdigest()
    mine = {"overrides": task, "config_sha256": digest}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / OWNER, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            theirs = json.loads((folder / OWNER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            time.sleep(0.2)  # the other sweep is writing it this instant
            theirs = json.loads((folder / OWNER).read_text(encoding="utf-8") or "{}")
        if theirs != mine:
            fail(f"hydra.sweep.dir={folder} holds another sweep (overrides: "
                 f"{' '.join(theirs.get('overrides') or []) or 'none'}; now: {' '.join(task) or 'none'}); choose "
                 "another hydra.sweep.dir, or repeat that sweep's overrides (same order) to resume it")
        return
    except OSError as exc:
        fail(f"hydra.sweep.dir={folder}: cannot create it ({exc.strerror or exc})")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(mine, fh)


def refuse_other_sweep(folder: Path, cfg: DictConfig) -> None:
    """Exit 2 when ``folder`` holds a sweep (its ``multirun.yaml``) other than the one ``cfg`` describes."""
    if folder.exists() and not folder.is_dir():
        fail(f"hydra.sweep.dir={folder}: is a file, not a folder")
    saved = folder / "multirun.yaml"
    if not saved.is_file():
        _claim_for(folder, cfg)
        return
    try:
        old = OmegaConf.load(saved)
        old_task = list(OmegaConf.to_container(old.hydra.overrides.task, resolve=False))  # type: ignore[arg-type]
        old_config = _job_config(old)
    except Exception as exc:  # noqa: BLE001 - any unreadable record means we cannot tell it is ours
        fail(f"hydra.sweep.dir={folder} holds a sweep whose {saved.name} cannot be read ({exc}); "
             "choose another folder")
    new_task = list(OmegaConf.to_container(cfg.hydra.overrides.task, resolve=False))  # type: ignore[arg-type]
    hint = "choose another hydra.sweep.dir, or repeat that sweep's overrides (same order) to resume it"
    if old_task != new_task:
        fail(f"hydra.sweep.dir={folder} holds another sweep (overrides: {' '.join(old_task) or 'none'}; "
             f"now: {' '.join(new_task) or 'none'}); {hint}")
    new_config = _job_config(cfg)
    if old_config != new_config:
        fail(f"hydra.sweep.dir={folder} holds another sweep (its config differs at "
             f"{_first_difference(old_config, new_config)}); {hint}")
    _claim_for(folder, cfg)


def _record_sweep(config: DictConfig) -> None:
    """Write the sweep's ``multirun.yaml`` when its sweeper does not: Hydra's basic sweeper writes it,
    the Optuna sweeper does not, and a resume check, ``ragsweep board`` (its sort metric) and MLflow
    read it."""
    target = str(config.hydra.sweeper.get("_target_", ""))
    path = Path(str(config.hydra.sweep.dir)) / "multirun.yaml"
    if target.startswith("hydra._internal.core_plugins.basic_sweeper") or path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(config, path)


def _job_failure(job: Path) -> str:
    """Why a job folder measured nothing ("" when it did): its ``error.json``, or a run of an application
    whose every call failed (each question an error row, kept so that a rerun retries them)."""
    try:
        if (job / "error.json").is_file():
            return str(json.loads((job / "error.json").read_text(encoding="utf-8")).get("error", ""))
        summary = json.loads((job / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"unreadable record ({exc})"
    variants = summary.get("variants") or []
    if variants and all(0 < int(v.get("n_samples") or 0) == int((v.get("cost") or {}).get("app_errors") or 0)
                        for v in variants):
        return "every call to the application failed (see calls.jsonl)"
    return ""


def jobs_outcome(folder: Path) -> tuple[int, str]:
    """The exit code of a finished sweep (or run) folder, and the line that explains a non-zero one.

    Its jobs are the folders right below it with a ``summary.json`` or an ``error.json`` (a job that
    succeeds removes an earlier one); a job failed when :func:`_job_failure` gives a reason. Every job
    failed: 3; some: 4; else 0.
    """
    jobs = sorted((p for p in folder.iterdir() if (p / "summary.json").is_file() or (p / "error.json").is_file()),
                  key=lambda p: (len(p.name), p.name)) if folder.is_dir() else []
    why = {p: reason for p in jobs if (reason := _job_failure(p))}
    failed = list(why)
    if not failed:
        return 0, ""
    where = f"{failed[0]}: {why[failed[0]]}"
    if len(failed) == len(jobs):
        return EXIT_NOT_SCORED, f"every job failed ({len(jobs)} of {len(jobs)}), nothing was measured; {where}"
    return EXIT_SOME_FAILED, (f"{len(failed)} of {len(jobs)} jobs failed ({', '.join(p.name for p in failed[:10])}"
                              f"{', ...' if len(failed) > 10 else ''}); the leaderboard ranks the others; {where}")


class SweepFolder(Callback):
    """Hydra callback: claim the clock-named sweep (or run) folder, refuse a different sweep in a named one.

    Listed first among ``hydra.callbacks`` so that every other callback, the sweeper and the
    launcher see the claimed folder.

    Args:
        dir_key: The config key the sweep folder comes from when ``hydra.sweep.dir`` only points at
            it (``ragsweep run``: ``${out}``); None: ``hydra.sweep.dir`` itself.
        refuse_others: Refuse a different sweep in a named folder. ``ragsweep run`` checks its own
            fingerprint on resume (its call settings may change), so it passes False.
    """

    def __init__(self, dir_key: str | None = None, refuse_others: bool = True) -> None:
        self.dir_key = dir_key
        self.refuse_others = refuse_others

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        if self.dir_key is not None:
            raw = OmegaConf.to_container(config, resolve=False).get(self.dir_key)  # type: ignore[union-attr]
        else:
            raw = OmegaConf.to_container(config.hydra.sweep, resolve=False)["dir"]  # type: ignore[index]
        if not named_by_clock(raw):
            if self.refuse_others:
                refuse_other_sweep(Path(str(config.hydra.sweep.dir)), config)
            _record_sweep(config)
            return
        folder = _claim(config, "sweep")
        with read_write(config.hydra), open_dict(config.hydra):
            # Every job's config is composed again from these overrides (also in other processes)
            config.hydra.overrides.hydra.append(f"hydra.sweep.dir={_quoted(str(folder))}")
        _record_sweep(config)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """The sweep's exit code, once every other callback (the board, MLflow) has ended: Hydra ends
        callbacks in reverse order and this one is listed first."""
        code, message = jobs_outcome(Path(str(config.hydra.sweep.dir)))
        if code:
            fail(message, code, warning=code != EXIT_NOT_SCORED)

    def on_run_end(self, config: DictConfig, **kwargs: Any) -> None:
        """``hydra.mode=RUN``: the one job is the run folder itself; it failed -> exit 3."""
        job = Path(str(config.hydra.run.dir))
        if (job / "error.json").is_file() or (job / "summary.json").is_file():
            why = _job_failure(job)
            if why:
                fail(f"the job failed, nothing was measured; {job}: {why}", EXIT_NOT_SCORED)

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        raw = OmegaConf.to_container(config.hydra.run, resolve=False)["dir"]  # type: ignore[index]
        if not named_by_clock(raw):
            return
        _claim(config, "run")


def _claim(config: DictConfig, node: str) -> Path:
    """Claim the folder ``hydra.<node>.dir`` names (:func:`claim_dir`: a ``-2`` ... suffix when it is taken) and
    point ``hydra.<node>.dir`` at it; a folder that cannot be created is a clear error."""
    where = config.hydra[node]
    try:
        folder = claim_dir(Path(str(where.dir)))
    except OSError as exc:
        fail(f"hydra.{node}.dir={where.dir}: cannot create it ({exc.strerror or exc})")
    with read_write(config.hydra), open_dict(config.hydra):
        config.hydra[node].dir = str(folder)
    return folder


def _redact(node: Any) -> Any:
    """Key fields (``*api_key``) and key-like values of ``*api_key_env`` (a key passed as the
    variable's name) replaced by ``<redacted>``, at any depth."""
    if isinstance(node, list):
        return [_redact(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        name = str(k)
        secret = isinstance(v, str) and v and (name.endswith("api_key")
                                               or (name.endswith("api_key_env") and looks_like_key(v)))
        out[k] = REDACTED if secret else _redact(v)
    return out


def config_yaml(cfg: DictConfig, **actual: Any) -> str:
    """A run's resolved config for its ``config.yaml``, with ``actual`` values set (the folder really
    written), nothing that looks like a key (:func:`metrics.errors.scrub`)."""
    register_config_secrets(OmegaConf.to_container(cfg, resolve=False))  # the variables it points at
    data = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(data, dict)
    data = {k: v for k, v in _redact(data).items() if k != "hydra"} | actual
    return scrub(OmegaConf.to_yaml(OmegaConf.create(data)))


def run_safely(job: Callable[[], dict[str, Any]], cfg: DictConfig, out_dir: Path) -> dict[str, Any] | None:
    """One job of a sweep or a run: its summary, or None when it failed. Bad input propagates (the command
    exits 2); any other failure is recorded as the job's ``error.json`` and the other jobs go on (the board
    lists the failed one)."""
    try:
        summary = job()
        (out_dir / "error.json").unlink(missing_ok=True)  # an earlier failure of this job, now mended
        return summary
    except InputError:
        raise
    except Exception as exc:
        log.error("job failed: %s", exc)
        write_json(out_dir / "error.json", {"error": f"{type(exc).__name__}: {exc}",
                                            "traceback": traceback.format_exc(),
                                            "config": OmegaConf.to_container(cfg, resolve=False)})
        return None
