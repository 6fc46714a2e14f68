"""Character Levenshtein distance with a time budget: exact for ordinary texts, certified bounds beyond.

Exact Levenshtein distance takes ``len(a) * len(b)`` cells: 1.6e9 for two 40 KB answers, 1e12 for two
1 MB texts. :func:`bounded_levenshtein` spends at most about :data:`EXACT_CELLS` cells of rapidfuzz's
bit-parallel algorithm (Hyyrö 2003: 64 cells a machine word) on one pair, in three steps:

1. ``len(a) * len(b) <= cells``: the exact distance (``method="exact"``). Every pair up to ~158 KB a side.
2. Otherwise the banded computation with cut-off ``k = cells // (2 * max(len))`` (Ukkonen 1985: a
   distance <= k lies in the diagonal band of width 2k+1): if the distance is at most ``k`` it is
   exact (``method="banded"``): a long answer that copies its reference with a few edits.
3. Otherwise an interval that holds the exact distance (``approximate=True``):

   - upper bound: both texts cut into aligned pieces, each piece pair's exact distance summed
     (``method="pieces"``). Editing each piece of ``a`` into its partner in ``b`` edits ``a`` into
     ``b``, so the sum is never below the true distance. Each cut in ``a`` is placed in ``b`` where
     the exact alignment of 2,000 characters either side puts it, after following 16-character
     stretches of ``a`` to where they recur in ``b`` within 32 pieces' length (the place whose next
     characters, half a piece or 2,000, are nearest to ``a``'s, if clearly nearer than the expected
     place's), so text inserted or deleted before a cut does not misalign every later piece. A
     longer insertion or deletion is not followed: the bound still holds, but is looser.
   - lower bound: the largest of ``k + 1`` (step 2 failed), ``|len(a) - len(b)|``, and the
     character-count bound: one operation removes at most one character and adds at most one, so
     ``d >= max(sum_c (na_c - nb_c)+, sum_c (nb_c - na_c)+)`` over characters ``c``.

   The distance reported is the upper bound, so a similarity made from it is a lower bound of the
   exact similarity: an approximation never flatters the answer.

:func:`bounded_indel` does the same for the insert/delete distance ``len(a) + len(b) - 2 * LCS``
(its count bound is ``removed + added``), and :func:`token_strings` turns word sequences into strings
of one code point per word, so ROUGE-L's word LCS gets the same budget and bounds.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Indel, Levenshtein

#: Cells (``len(a) * len(b)``) computed for one pair: ~1 s of bit-parallel Levenshtein on one core.
EXACT_CELLS = 25_000_000_000
_WINDOW = 2_000  # characters each side of a cut aligned exactly to place its partner in ``b``
_PROBE, _PROBE_STEP, _PROBES = 16, 61, 16  # stretches of ``a`` looked up in ``b`` to follow a long insertion
_MOVE = 0.75  # a cut moves to a recurring stretch only if the text after it is this much nearer (edit distance)


@dataclass(frozen=True)
class EditDistance:
    """The distance of one pair: exact (``lower == distance``) or an interval with its upper end reported.

    Attributes:
        distance: The exact distance, or the certified upper bound when ``approximate``.
        lower: A certified lower bound (equal to ``distance`` when exact).
        method: ``exact``, ``banded`` or ``pieces`` (how ``distance`` was found; see the module docstring).
    """

    distance: int
    lower: int
    method: str

    @property
    def approximate(self) -> bool:
        return self.lower != self.distance

    def explain(self, longest: int) -> dict[str, object]:
        """The explanation entries of a similarity ``1 - distance / longest`` made from this distance."""
        if not self.approximate:
            return {"distance": self.distance}
        return {"distance": self.distance, "approximate": True, "method": self.method,
                "distance_bounds": [self.lower, self.distance],
                "similarity_bounds": [1.0 - self.distance / longest, 1.0 - self.lower / longest],
                "note": f"texts too long for an exact distance within {EXACT_CELLS:.2g} cells: the distance "
                        "is an upper bound (aligned pieces), so the similarity is a lower bound"}


def levenshtein(a: str, b: str) -> int:
    """Exact Levenshtein distance (unit-cost insert, delete, substitute) of two strings, by code point."""
    return int(Levenshtein.distance(a, b))


def bounded_levenshtein(a: str, b: str, cells: int | None = None) -> EditDistance:
    """The distance of ``a`` and ``b`` within about ``cells`` cells of work (default :data:`EXACT_CELLS`)."""
    return _bounded(a, b, Levenshtein, cells)


def bounded_indel(a: str, b: str, cells: int | None = None) -> EditDistance:
    """The insert/delete distance ``len(a) + len(b) - 2 * LCS(a, b)``, budgeted as :func:`bounded_levenshtein`."""
    return _bounded(a, b, Indel, cells)


def token_strings(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[str, str] | None:
    """Two token sequences as strings of one code point per distinct token, so that words get the same
    bit-parallel distances, bands and pieces as characters; None with more distinct tokens than code points."""
    ids: dict[Hashable, int] = {}
    ia = [ids.setdefault(t, len(ids)) for t in a]
    ib = [ids.setdefault(t, len(ids)) for t in b]
    return None if len(ids) > sys.maxunicode else ("".join(map(chr, ia)), "".join(map(chr, ib)))


def _bounded(a: str, b: str, scorer: type, cells: int | None) -> EditDistance:
    cells = EXACT_CELLS if cells is None else cells
    n, m = len(a), len(b)
    if n * m <= cells:
        d = int(scorer.distance(a, b))
        return EditDistance(d, d, "exact")
    k = max(1, cells // (2 * max(n, m)))
    d = int(scorer.distance(a, b, score_cutoff=k))
    if d <= k:
        return EditDistance(d, d, "banded")
    upper = _pieces_distance(a, b, cells, scorer)
    lower = max(k + 1, abs(n - m), _count_bound(a, b, indel=scorer is Indel))
    return EditDistance(upper, min(lower, upper), "pieces")


def _count_bound(a: str, b: str, indel: bool = False) -> int:
    """A lower bound from the two character multisets: a Levenshtein operation removes at most one character
    and adds at most one (``max(removed, added)``); an insert/delete operation does one of the two (their sum)."""
    ca, cb = Counter(a), Counter(b)
    removed, added = sum((ca - cb).values()), sum((cb - ca).values())
    return removed + added if indel else max(removed, added)


def _partner(a: str, b: str, i: int, expected: int, lo: int) -> int:
    """Where ``a[i]`` lands in ``b`` in the exact alignment of the text around it with the text of ``b`` around
    ``expected`` (so a cut does not split text that the two share), never before ``lo``."""
    left = min(_WINDOW, i, expected - lo)
    a_win, b_win = a[i - left:i + _WINDOW], b[expected - left:expected + _WINDOW]
    for tag, s0, s1, d0, d1 in Levenshtein.opcodes(a_win, b_win):
        if s0 <= left < s1 or (s0 == s1 == left and tag == "insert"):
            offset = left - s0 if tag in ("equal", "replace") else 0
            return max(lo, expected - left + min(d0 + offset, d1))
    return max(lo, expected - left + len(b_win))


def _coarse(a: str, b: str, i: int, expected: int, lo: int, piece: int) -> int:
    """``expected`` moved to where the text of ``a`` from ``i`` on recurs in ``b`` (after a whole inserted or
    deleted paragraph). Candidates are the places where a few short stretches of ``a`` recur within 2 pieces'
    length, else 32. The winner is the candidate whose following text is nearest (edit distance) to ``a``'s,
    and only if clearly nearer than at ``expected``: stretches also recur by chance, and a cut moved for
    nothing unbalances the pieces."""
    width = min(_WINDOW, piece // 2)  # short enough that an edit just after the cut rarely falls inside
    ahead = a[i:i + width]
    stay = levenshtein(ahead, b[expected:expected + width])
    for reach in (2 * piece, 32 * piece):
        places = set()
        for k in range(_PROBES):
            at = i + k * _PROBE_STEP
            probe = a[at:at + _PROBE]
            found = b.find(probe, max(lo, expected - reach), expected + reach + at - i + _PROBE)
            if len(probe) == _PROBE and found >= 0:
                places.add(max(lo, found - (at - i)))
        cost = {j: levenshtein(ahead, b[j:j + width]) for j in places}
        best = min(cost, key=lambda j: (cost[j], abs(j - expected)), default=None)
        if best is not None and cost[best] <= _MOVE * stay:
            return best
    return expected


def _cuts(a: str, b: str, pieces: int) -> list[tuple[int, int]]:
    """Cut points ``(i, j)``, from ``(0, 0)`` to ``(len(a), len(b))``, both non-decreasing."""
    n, m = len(a), len(b)
    cuts = [(0, 0)]
    for p in range(1, pieces):
        i = p * n // pieces
        prev_i, prev_j = cuts[-1]
        expected = min(m, max(prev_j, prev_j + (i - prev_i) * m // n))
        coarse = min(m, _coarse(a, b, i, expected, prev_j, piece=i - prev_i))
        cuts.append((i, min(m, _partner(a, b, i, coarse, prev_j))))
    cuts.append((n, m))
    return cuts


def _pieces_distance(a: str, b: str, cells: int, scorer: type = Levenshtein) -> int:
    """Sum of the exact distances of aligned pieces: an upper bound of the distance of ``a`` and ``b``."""
    pieces = -(-len(a) * len(b) // cells)  # ceil: total cells ~ len(a) * len(b) / pieces <= cells
    cuts = _cuts(a, b, pieces)
    return sum(int(scorer.distance(a[i0:i1], b[j0:j1])) for (i0, j0), (i1, j1) in itertools.pairwise(cuts))
