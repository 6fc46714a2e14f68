"""Which kind of question to draw next: each kind's quota of the run (:func:`kind_quotas`), and the schedule
that draws the kind furthest behind it and gives a hopeless kind up (:class:`Schedule`)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.report import Report
from ragsweep.gen.testset import KINDS


def kind_quotas(n: int, mix: Sequence[tuple[str, float]]) -> dict[str, int]:
    """Split ``n`` by weight (largest remainder); every kind with weight > 0 gets one when n allows."""
    kinds = [(k, w) for k, w in mix if w > 0]
    total = sum(w for _, w in kinds)
    raw = {k: n * w / total for k, w in kinds}
    out = {k: int(v) for k, v in raw.items()}
    for k in sorted(raw, key=lambda k: out[k] - raw[k])[: n - sum(out.values())]:
        out[k] += 1
    for k, _ in kinds:  # a configured kind should appear: take one from the largest share
        if out[k] == 0 and n >= len(kinds):
            donor = max(out, key=lambda d: out[d])
            out[donor] -= 1
            out[k] = 1
    return out


def pass_rate_upper(passed: int, tried: int, alpha: float = 0.1) -> float:
    """One-sided upper (1 - alpha) Clopper-Pearson bound of a pass rate seen as ``passed`` of ``tried``:
    the rate p at which ``passed`` or fewer passes has probability ``alpha`` (1.0 when nothing was tried
    or everything passed). A kind whose true rate is 0.4 is given up early by mistake with probability
    0.6^6 = 0.047 (0 of 6)."""
    if tried <= 0 or passed >= tried:
        return 1.0

    def cdf(p: float) -> float:
        return sum(math.comb(tried, i) * p ** i * (1 - p) ** (tried - i) for i in range(passed + 1))

    lo, hi = passed / tried, 1.0
    for _ in range(60):  # cdf falls with p: bisect for cdf(p) = alpha
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > alpha else (lo, mid)
    return hi


class Schedule:
    """Which kind to draw next: the one furthest behind its quota; an exhausted kind's share
    moves to the kinds that still have candidates. With ``tries`` a kind that has used ``tries``
    candidates per sample of its quota without filling it, passing fewer than one in ``tries``, gives up
    the same way (a writer that turns out one acceptable multi_hop question in twelve would otherwise
    spend most of the run on it). Whatever ``tries`` is (the rule writer has none), a kind other than
    single_hop that has spent its quota's share of ``max_attempts`` without filling its quota gives up:
    the kind furthest behind is always drawn first, so a kind no candidate passes (rule-written
    follow-ups on SciFact's abstracts) would otherwise spend every attempt of the run and leave the
    set nearly empty."""

    def __init__(self, quotas: dict[str, int], streams: dict[str, Iterator[Candidate]], report: Report,
                 tries: int | None = None, max_attempts: int | None = None) -> None:
        self.quotas, self.streams, self.report = dict(quotas), streams, report
        self.tries = tries or 0
        self.max_attempts = max_attempts or 0

    def _give_up(self) -> None:
        if not (self.tries or self.max_attempts):
            return
        for k in self.quotas:
            # The budget follows the quota, which grows when a kind takes over a given-up kind's share.
            # single_hop, the kind the others' shares fall back to, and the last open kind never give
            # up: the run ends when candidates or attempts do, not because every kind is hard.
            budget = self.tries * self.quotas[k]
            if sum(1 for o in self.quotas if o not in self.report.exhausted) <= 1:
                return
            if k == "single_hop":
                continue
            tried = self.report.tried_by_kind.get(k, 0)
            accepted = self.report.accepted_by_kind.get(k, 0)
            # Only a kind that passes less than one candidate in `tries`: one that passes well keeps
            # going when it fills the share of kinds that gave up. It is known sooner than after the
            # whole budget when even the optimistic end of its pass rate is below 1 / tries (0 of 6
            # candidates for tries=3): a kind with a large share no longer burns 3 x share candidates.
            if k in self.report.exhausted or accepted >= self.quotas[k]:
                continue
            share = self.max_attempts * self.quotas[k] / max(sum(self.quotas.values()), 1)
            hopeless = bool(self.tries) and accepted * self.tries < tried and (
                tried >= budget or pass_rate_upper(accepted, tried) < 1.0 / self.tries)
            if hopeless or (self.max_attempts and tried >= share):
                self.report.exhausted.append(k)
                self.report.gave_up[k] = tried

    def next(self) -> Candidate | None:
        self._give_up()
        while True:
            open_kinds = [k for k in self.quotas if k not in self.report.exhausted]
            behind = [k for k in open_kinds if self.report.accepted_by_kind.get(k, 0) < self.quotas[k]]
            if not behind:
                missing = sum(self.quotas.values()) - self.report.accepted
                if missing <= 0 or not open_kinds:
                    return None
                self.quotas[open_kinds[0]] += missing  # an exhausted kind's share, to the first open kind
                continue
            kind = min(behind, key=lambda k: (self.report.accepted_by_kind.get(k, 0) / max(self.quotas[k], 1),
                                              KINDS.index(k) if k in KINDS else 99))
            cand = next(self.streams[kind], None)
            if cand is not None:
                return cand
            self.report.exhausted.append(kind)


