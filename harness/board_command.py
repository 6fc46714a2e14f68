"""``ragsweep board``: rebuild a sweep's (or a run folder's) leaderboard files from its job folders."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from ragsweep.harness.board.leaderboard import rebuild, to_terminal
from ragsweep.harness.board.model import Row
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


@dataclass
class Board:
    """A sweep's leaderboard: ranked rows (best first) with statistics, comparisons and cost.

    Attributes:
        dir: The sweep folder.
        sort_by: The metric the rows are ordered and compared by.
        rows: One :class:`~ragsweep.harness.board.model.Row` per variant (failed jobs last).
        metrics: The metric columns.
        paths: The leaderboard files written (csv, md, html).
    """

    dir: Path
    sort_by: str
    rows: list[Row]
    metrics: list[str]
    paths: dict[str, Path]

    @property
    def best(self) -> Row:
        """The top row."""
        return self.rows[0]

    @property
    def failed(self) -> list[Row]:
        """The rows of failed jobs (each with its ``error``); empty when every job finished."""
        return [r for r in self.rows if r.error is not None]

    def to_pandas(self) -> Any:
        """The board as a DataFrame, the same table as ``leaderboard.csv``."""
        import pandas as pd

        from ragsweep.harness.board.leaderboard import to_csv

        return pd.read_csv(io.StringIO(to_csv(self.rows, self.metrics)))

    def markdown(self) -> str:
        return self.paths["md"].read_text(encoding="utf-8")

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return f"Board({self.dir}, {len(self.rows)} variants, sorted by {self.sort_by}, best: {self.best.variant})"


def sweep_sort_by(root: Path) -> str:
    """The sort metric the sweep was run with (its multirun.yaml), else the default."""
    from omegaconf import OmegaConf

    for path in (root / "multirun.yaml", root / ".hydra" / "config.yaml"):
        if path.is_file():
            value = OmegaConf.select(OmegaConf.load(path), "hydra.callbacks.leaderboard.sort_by")
            if value:
                return str(value)
    return "ndcg@10"
