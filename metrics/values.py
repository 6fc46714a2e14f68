"""What every metric returns: a value or an explicit reason there is none. Never a NaN."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "undefined", "error"]


@dataclass(frozen=True)
class MetricValue:
    """A metric's result for one sample.

    ``value`` is set exactly when ``status == "ok"``. ``undefined`` means the metric does not apply
    (no relevant item, no claim to check); ``error`` means it could not be computed (a model call
    failed for good). ``explanation`` keeps the evidence: claims, verdicts, reasons, counts.
    """

    value: float | None
    status: Status = "ok"
    explanation: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status == "ok":
            if self.value is None or not math.isfinite(self.value):
                raise ValueError(f"an ok metric value must be a finite number, got {self.value!r}")
        elif self.value is not None:
            raise ValueError(f"a {self.status} metric value carries no number, got {self.value!r}")

    @classmethod
    def ok(cls, value: float, **explanation: Any) -> MetricValue:
        return cls(float(value), "ok", explanation)

    @classmethod
    def undefined(cls, reason: str, **explanation: Any) -> MetricValue:
        return cls(None, "undefined", {"reason": reason, **explanation})

    @classmethod
    def error(cls, reason: str, **explanation: Any) -> MetricValue:
        return cls(None, "error", {"reason": reason, **explanation})


@dataclass(frozen=True)
class ScoredSample:
    """One metric on one sample of one variant: the long-format row every report is built from."""

    sample_id: str
    variant: str
    metric: str
    result: MetricValue

    def to_dict(self) -> dict[str, Any]:
        return {"sample_id": self.sample_id, "variant": self.variant, "metric": self.metric,
                "value": self.result.value, "status": self.result.status,
                "explanation": self.result.explanation}


def one_side(mode: str, precision: float | None, recall: float | None, evidence: dict[str, Any]) -> MetricValue | None:
    """A claim-based correctness score when ``mode`` asks for one side of it: ``precision`` (of the answer's
    claims) or ``recall`` (of the reference's), undefined when that side extracted no claim; None when it
    asks for both (the F-score, which each metric computes its own way)."""
    if mode == "precision":
        return (MetricValue.undefined("no claims extracted from the answer", **evidence) if precision is None
                else MetricValue.ok(precision, **evidence))
    if mode == "recall":
        return (MetricValue.undefined("no claims extracted from the reference", **evidence) if recall is None
                else MetricValue.ok(recall, **evidence))
    return None


def summarise(results: Iterable[tuple[str, float | None]], seed: int = 0) -> dict[str, Any]:
    """Mean, 95% bootstrap CI and counts of ``(status, value)`` pairs; only ``ok`` values are averaged."""
    from ragsweep.metrics.stats import mean_ci

    pairs = list(results)
    ok = [v for s, v in pairs if s == "ok" and v is not None]
    mean, lo, hi = mean_ci(ok, seed=seed) if ok else (None, None, None)
    return {"mean": mean, "ci_low": lo, "ci_high": hi, "n_ok": len(ok),
            "n_undefined": sum(s == "undefined" for s, _ in pairs),
            "n_error": sum(s == "error" for s, _ in pairs)}
