"""``ragsweep board``: rebuild a sweep's (or a run folder's) leaderboard files from its job folders."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from ragsweep.harness.board.leaderboard import rebuild, to_terminal
from ragsweep.harness.outputs import jobs_outcome, write_failed
from ragsweep.metrics import EXIT_NOT_SCORED, InputError, fail


def board_app(cfg: DictConfig) -> None:
    """The ``ragsweep board`` app: the board on the terminal and in files; the sweep's own exit code."""
    if not cfg.dir:
        fail("which sweep folder? ragsweep board outputs/sweeps/<stamp>")
    code, message = jobs_outcome(Path(cfg.dir))  # the sweep's own exit code: 3 and 4 gate CI here too
    if code == EXIT_NOT_SCORED:
        fail(f"no leaderboard: {message}", code)
    try:
        rows, metrics, paths = rebuild(cfg.dir, cfg.sort_by, cfg.seed, baseline=cfg.baseline, alpha=cfg.alpha,
                                       n_resamples=cfg.n_resamples, top=cfg.top, html=cfg.html)
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        write_failed(exc, cfg.dir)
    print(to_terminal(rows, metrics, cfg.sort_by, paths))
    print("leaderboard: " + "\n             ".join(str(p) for p in paths.values()))
    if code:
        fail(message, code, warning=True)
