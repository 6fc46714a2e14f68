"""Attachment checks: does another value of the same shape stand better than the claim's own among the
claim's words, on the same sides, in the sentences the judge was shown?

A swapped fact keeps every word of its claim in the evidence; what changes is which value those words
stand beside. "Graenpend ceded Sendwick to Drufith" against "Drufith ceded the province of Sendwick to
Graenpend": both names are there, but the claim puts "ceded" and "Sendwick" *after* Graenpend, and in the
evidence they stand after Drufith. A small judge reads the sentence as being about the same things and says
yes; the cloze offers the names but the judge need not read word order to fill it.

The check is deterministic and the same for any value (a number, a year, a name): it knows no kind of
fact and no word. Per value the slot checks look at (:func:`metrics.slots.slots_to_check`):

- its *anchors* are the claim's non-stop tokens within :data:`metrics.offline.CLAIM_REACH` tokens of it,
  split into those on its left and those on its right (the value's own tokens left out);
- an occurrence of a value in an evidence sentence *attaches* the left anchors found within
  :data:`metrics.offline.CONTEXT_REACH` tokens before it plus the right anchors found within as many after
  it (a candidate's own tokens never count for it); a value's attachment is that of its best occurrence;
- the claim's value is *displaced* by ``d`` when a value of its shape (:func:`metrics.slots.shape`) in the
  shown sentences attaches ``d`` more anchors than it does. Values the claim states elsewhere are
  candidates too: a reversal's rival is one of them.

A displaced value gives a slot row of kind "attach" with P(claim's value) = sigmoid(-SLOPE x d / n),
``n`` the anchors that occur anywhere in the shown sentences, which :func:`metrics.support.slot_penalty`
weighs like the other slot kinds. A value the shown sentences do not hold is left to the word evidence,
and a value with no rival of its shape has nothing to be confused with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragsweep.metrics import offline
from ragsweep.metrics.slots import Slot, _same, shape, slots_to_check, values
from ragsweep.metrics.support import sigmoid

#: How fast P(claim's value) falls with the share of its anchors a rival holds beyond it. Fixed with the
#: mechanism before any figure (it sets the unit of the weight, which is what was chosen).
SLOPE = 3.0


def _keys(text: str) -> list[str]:
    """Token keys of ``text`` as :mod:`metrics.offline` reads them; a stop word is kept as "" so that
    distances stay in tokens."""
    return [k if kind != "stop" else "" for k, kind, _ in offline._tokens(text)]


def anchors(claim: str, slot: Slot) -> tuple[set[str], set[str]]:
    """The claim's keys within :data:`offline.CLAIM_REACH` tokens left and right of ``slot`` (the value's
    own keys left out)."""
    before, after = _keys(claim[: slot.start]), _keys(claim[slot.end:])
    own = set(_keys(slot.text))
    reach = offline.CLAIM_REACH
    left = {k for k in before[-reach:] if k and k not in own}
    right = {k for k in after[:reach] if k and k not in own}
    return left, right


def attachment(sentence: str, value: str, left: set[str], right: set[str]) -> int:
    """How many anchors the best occurrence of ``value`` in ``sentence`` has on their own sides, within
    :data:`offline.CONTEXT_REACH` tokens; -1 when the sentence does not hold ``value``."""
    keys, mine = _keys(sentence), [k for k in _keys(value) if k]
    if not mine:
        return -1
    reach, best = offline.CONTEXT_REACH, -1
    for i in range(len(keys) - len(mine) + 1):
        if keys[i: i + len(mine)] != mine:
            continue
        j = i + len(mine)
        on_left = set(keys[max(0, i - reach): i]) & left
        on_right = set(keys[j: j + reach]) & right
        best = max(best, len(on_left - set(mine)) + len(on_right - set(mine)))
    return best


def _candidates(slot: Slot, evidence: Sequence[str]) -> list[str]:
    """The distinct values of ``slot``'s shape in the evidence other than the slot's own."""
    seen: list[Slot] = []
    for sentence in evidence:
        for v in values(sentence):
            if shape(v) == shape(slot) and not _same(v.key, slot.key) and not any(_same(v.key, o.key) for o in seen):
                seen.append(v)
    return [v.text for v in seen]


def checks(claim: str, question: str | None, evidence: Sequence[str]) -> list[dict[str, Any]]:
    """The attachment rows of one claim against the sentences shown for it: one per displaced value,
    shaped as :func:`metrics.slots.check`'s rows (kind "attach"; ``chosen`` the value that stands better)."""
    rows: list[dict[str, Any]] = []
    shown_keys = {k for s in evidence for k in _keys(s) if k}
    for slot in slots_to_check(claim, question):
        left, right = anchors(claim, slot)
        n = len((left | right) & shown_keys)
        own = max((attachment(s, slot.text, left, right) for s in evidence), default=-1)
        if own < 0 or n == 0:
            continue
        rivals = [(max(attachment(s, c, left, right) for s in evidence), c) for c in _candidates(slot, evidence)]
        if not rivals:
            continue
        best, rival = max(rivals, key=lambda r: r[0])
        d = best - own
        if d <= 0:
            continue
        rows.append({"slot": slot.text, "kind": "attach", "cloze": f"{claim[: slot.start]}___{claim[slot.end:]}",
                     "options": [slot.text, rival], "chosen": rival, "p_claim": sigmoid(-SLOPE * d / n),
                     "displaced_by": d, "anchors": n})
    return rows
