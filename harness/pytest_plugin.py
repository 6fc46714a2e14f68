"""pytest plugin: gate a project's own tests on ragsweep metric thresholds.

Registered as the ``pytest11`` entry point ``ragsweep`` (or ``-p harness.pytest_plugin``); it gives
the fixture ``ragsweep_thresholds``::

    def test_retrieval_is_good_enough(ragsweep_thresholds):
        ragsweep_thresholds("outputs/sweeps/nightly", {"recall@10": 0.8, "ndcg@10": ">= 0.6"},
                            variant={"chunker.size": 512, "top_k": 5})

A failed threshold fails the test (pytest exits non-zero) with a table of every checked metric:
its mean, 95% CI, n_ok/n_error, the threshold and whether it holds. A metric with no ``ok`` value
fails: a gate that cannot be checked must not pass.

Sources: a sweep folder (or one job folder), a long-format ``scores.jsonl``, or the ``summary.csv``
of ``ragsweep score``. Nothing heavy is imported until the fixture is used, because an installed
plugin loads in every pytest run of the environment.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

Variant = str | Mapping[str, Any] | None


class ThresholdError(AssertionError):
    """At least one threshold does not hold; the message is the whole table."""


@dataclass(frozen=True)
class Check:
    metric: str
    op: str              # ">=" or "<="
    threshold: float
    stats: Mapping[str, Any]

    @property
    def mean(self) -> float | None:
        return self.stats.get("mean")

    @property
    def passed(self) -> bool:
        m = self.mean
        return m is not None and (m >= self.threshold if self.op == ">=" else m <= self.threshold)


def _parse(metric: str, limit: float | str) -> tuple[str, float]:
    """``0.8`` (direction from the metric catalogue) or ``">= 0.8"`` / ``"<= 2.5"``."""
    if isinstance(limit, str):
        m = re.fullmatch(r"\s*(>=|<=)\s*([-+0-9.eE]+)\s*", limit)
        if not m:
            raise ValueError(f"threshold for {metric}: expected a number, '>= x' or '<= x', got {limit!r}")
        return m.group(1), float(m.group(2))
    from ragsweep.harness.board.model import higher_is_better

    return (">=" if higher_is_better(metric) else "<="), float(limit)


def _select(rows: list[Any], variant: Variant, sort_by: str) -> Any:
    from ragsweep.harness.board.model import rank

    ok = [r for r in rows if r.error is None]
    if not ok:
        raise ThresholdError("no successful variant to check")
    if variant is None or variant == "best":
        return rank(ok, sort_by)[0]
    if isinstance(variant, str):
        found = [r for r in ok if r.variant == variant]
    else:
        found = [r for r in ok if all(str(r.params.get(k)) == str(v) for k, v in variant.items())]
    if len(found) != 1:
        names = ", ".join(r.variant for r in ok[:5])
        raise ThresholdError(f"variant {variant!r} matches {len(found)} variants (need 1); some are: {names}")
    return found[0]


def load_stats(source: str | Path, variant: Variant = None, sort_by: str = "ndcg@10",
               seed: int = 0) -> tuple[str, dict[str, dict[str, Any]]]:
    """The chosen variant's name and its per-metric statistics (mean, CI, counts)."""
    from ragsweep.harness.board.model import Row, collect
    from ragsweep.metrics import summarise

    path = Path(source)
    if path.is_dir():
        row = _select(collect(path, seed), variant, sort_by)
        return row.variant, row.stats
    if path.suffix == ".csv":  # `ragsweep score` summary: one row per metric
        with path.open(encoding="utf-8") as fh:
            table = list(csv.DictReader(fh))
        num = (lambda v: float(v) if v not in ("", None) else None)
        return path.name, {r["metric"]: {"mean": num(r.get("mean")), "ci_low": num(r.get("ci_low")),
                                         "ci_high": num(r.get("ci_high")), "n_ok": int(float(r.get("n_ok") or 0)),
                                         "n_error": int(float(r.get("n_error") or 0))} for r in table}
    by_variant: dict[str, dict[str, list[tuple[str, float | None]]]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                s = json.loads(line)
                by_variant.setdefault(s.get("variant", ""), {}).setdefault(s["metric"], []).append(
                    (s["status"], s["value"]))
    rows = [Row(v, {}, {m: summarise(x, seed) for m, x in ms.items()}) for v, ms in by_variant.items()]
    row = _select(rows, variant, sort_by)
    return row.variant, row.stats


def format_table(variant: str, checks: list[Check]) -> str:
    """A fixed-width table, one line per checked metric."""
    head = ("metric", "mean", "95% CI", "n_ok", "n_error", "threshold", "result")
    lines = [head]
    for c in checks:
        s = c.stats
        ci = f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}]" if s.get("ci_low") is not None else ""
        result = "ok" if c.passed else ("FAIL: no ok value" if c.mean is None else "FAIL")
        lines.append((c.metric, "" if c.mean is None else f"{c.mean:.4f}", ci, str(s.get("n_ok", "")),
                      str(s.get("n_error", "")), f"{c.op} {c.threshold:g}", result))
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    return f"ragsweep thresholds for {variant}:\n" + "\n".join(text)


def assert_thresholds(source: str | Path, thresholds: Mapping[str, float | str], *, variant: Variant = None,
                      sort_by: str = "ndcg@10", seed: int = 0) -> list[Check]:
    """Check ``thresholds`` (metric -> limit) on ``source``; raise :class:`ThresholdError` if one fails.

    Args:
        source: A sweep or job folder, a ``scores.jsonl``, or a ``ragsweep score`` ``summary.csv``.
        thresholds: metric -> a number (at least it, or at most for lower-is-better metrics) or a
            string ``">= x"`` / ``"<= x"``.
        variant: ``None`` or ``"best"`` (the best mean of ``sort_by``), a variant name, or a mapping
            of parameters that picks exactly one variant.
        sort_by: The metric that decides "best".
        seed: Bootstrap seed of the CIs.

    Returns:
        Every check, when all hold.
    """
    name, stats = load_stats(source, variant, sort_by, seed)
    checks = [Check(m, *_parse(m, limit), stats.get(m, {})) for m, limit in thresholds.items()]
    missing = [m for m in thresholds if m not in stats]
    if missing:
        raise ThresholdError(f"{source}: no metric {', '.join(missing)}; it has: {', '.join(sorted(stats))}")
    if not all(c.passed for c in checks):
        raise ThresholdError(format_table(name, checks))
    return checks


@pytest.fixture
def ragsweep_thresholds() -> Callable[..., list[Check]]:
    """``ragsweep_thresholds(source, {metric: limit}, variant=None)``: fail the test with a table."""
    def check(source: str | Path, thresholds: Mapping[str, float | str], **options: Any) -> list[Check]:
        try:
            return assert_thresholds(source, thresholds, **options)
        except ThresholdError as exc:
            pytest.fail(str(exc), pytrace=False)

    return check
