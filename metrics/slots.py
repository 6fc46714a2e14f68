"""Slot checks: for each number and name a claim asserts, what do its evidence sentences give there?

A claim can hold every word of its evidence and still be wrong: "the tower is 906 metres tall" when
906 metres is the height of the hall beside it. Asking a judge "is this supported?" invites a yes
(every word is there); asking it to *fill the blank* -- "The tower is ___ metres tall", choosing among
the values the evidence holds, without being shown the claim's own -- makes it read which value
belongs to which thing (QA-based checking, as in QAGS, Wang et al. 2020, and QAFactEval, Fabbri et
al. 2022; here extractive by construction: the options are spans of the evidence).

A slot is checked only when the question is open: the claim's value is among the evidence's values
of its kind and there is at least one other. A value the evidence does not hold is left to the
word evidence of :mod:`metrics.offline` (a missing number already sinks a claim), and a value that is
the only one of its kind has nothing to be confused with.

The judge answers with one letter; P(claim's value) is read from the letter's log-probability,
renormalised over the options offered (as :func:`metrics.judging.verdict_probability` does for yes/no).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ragsweep.metrics import offline
from ragsweep.metrics.llm.base import LLM
from ragsweep.metrics.prompts import CLAIM_CHECK, SLOT_LETTERS, CheckInput, complete
from ragsweep.metrics.support import logit, sigmoid, slot_penalty

#: Most slots checked per claim (numbers first, then names not given by the question).
MAX_SLOTS = 3
NOT_STATED = "not stated"

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_NAME = re.compile(r"(?<![\w'\-])[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*)*")


@dataclass(frozen=True)
class Slot:
    """One value of a claim: its text, its comparison key, its kind and where it stands."""

    text: str
    key: str
    kind: str  # "number" | "name"
    start: int
    end: int


def _number_key(text: str) -> str:
    return text.replace(",", "").rstrip(".")


def _name_parts(text: str) -> list[tuple[str, int, int]]:
    """Capitalised runs in ``text`` with their leading stop words dropped ("The Neikouth Tower" ->
    "Neikouth Tower"), as (text, start, end); a run of stop words only is none."""
    out = []
    for m in _NAME.finditer(text):
        words = [(w.group(0), m.start() + w.start()) for w in re.finditer(r"\S+", m.group(0))]
        while words and words[0][0].lower() in offline.STOP:
            words.pop(0)
        if words:
            begin, end = words[0][1], words[-1][1] + len(words[-1][0])
            out.append((text[begin:end], begin, end))
    return out


def _sentence_starts(text: str) -> set[int]:
    starts = {0}
    for m in re.finditer(r"[.!?]\s+", text):
        starts.add(m.end())
    return starts


def values(text: str) -> list[Slot]:
    """The numbers and names of ``text`` in order. A name is a run of capitalised words; a single
    capitalised word that opens a sentence is a name only when it is capitalised elsewhere too (so
    "Designed by ..." is not one, "Curie won ..." is when "Curie" recurs)."""
    slots = [Slot(m.group(0).rstrip(".,"), _number_key(m.group(0)), "number", m.start(), m.start()
                  + len(m.group(0).rstrip(".,"))) for m in _NUMBER.finditer(text)]
    starts = _sentence_starts(text)
    parts = _name_parts(text)
    inner = {w for name, b, _ in parts if b not in starts for w in name.split()}
    for name, b, e in parts:
        if b in starts and " " not in name and name not in inner:
            continue
        slots.append(Slot(name, name.lower(), "name", b, b + len(name)))
    return sorted(slots, key=lambda s: s.start)


def _same(a: str, b: str) -> bool:
    """Two keys name the same value: equal, or one name's words within the other's ("Tespaerkstead" and
    "the city of Tespaerkstead" are one place; "Neikouth" and "Neikouth Tower" one tower)."""
    if a == b:
        return True
    wa, wb = a.split(), b.split()
    return bool(wa) and bool(wb) and (set(wa) <= set(wb) or set(wb) <= set(wa)) and not a.isdigit()


def shape(slot: Slot) -> str:
    """The kind of value a slot holds, read from its form: a name, a year (four digits from 1000 to
    2199, no separator), or another number. A blank's options are values of its shape only: a
    height is never offered for a year's blank."""
    if slot.kind == "name":
        return "name"
    return "year" if re.fullmatch(r"1\d{3}|2[01]\d{2}", slot.text) else "number"


def options_for(slot: Slot, evidence: Sequence[str], claim: str = "") -> list[str] | None:
    """The distinct values of ``slot``'s shape in the evidence, when the question is open (the claim's
    value among them and another beside it); else None. A value the rest of the claim already states
    is no option for its blank ("___ succeeded Besset Vourkwae" is not filled by Besset Vourkwae)."""
    others_in_claim = [v.key for v in values(claim) if (v.start, v.end) != (slot.start, slot.end)]
    seen: list[Slot] = []
    for sentence in evidence:
        for v in values(sentence):
            if shape(v) != shape(slot) or any(_same(v.key, s.key) for s in seen):
                continue
            if not _same(v.key, slot.key) and any(_same(v.key, k) for k in others_in_claim):
                continue
            seen.append(v)
    if not any(_same(slot.key, s.key) for s in seen) or len(seen) < 2:
        return None
    mine = next(s for s in seen if _same(slot.key, s.key))
    others = [s for s in seen if s is not mine][: len(SLOT_LETTERS) - 2]
    joined = " ".join(evidence)  # options in the order the evidence gives them
    return sorted([mine.text, *(s.text for s in others)], key=lambda t: joined.find(t) % (len(joined) + 1))


def slots_to_check(claim: str, question: str | None) -> list[Slot]:
    """The claim's values worth a check, at most :data:`MAX_SLOTS`: its numbers, then its names the
    question does not give; the question's names too when the claim relates names and has fewer than
    two of its own (who succeeded whom: a reversal swaps names the question holds)."""
    asked = {s.key for s in values(question or "")}
    mine = values(claim)
    names = [s for s in mine if s.kind == "name"]
    out = [s for s in mine if s.kind == "number" and s.key not in asked]
    out += [s for s in names if not any(_same(s.key, a) for a in asked)]
    if len(names) >= 2 and len(out) < 2:
        out += [s for s in names if s not in out]
    return sorted(out[:MAX_SLOTS], key=lambda s: s.start)


def cloze(claim: str, slot: Slot) -> str:
    return f"{claim[: slot.start]}___{claim[slot.end:]}"


def _letter_probabilities(logprobs: Any, letters: Sequence[str]) -> dict[str, float] | None:
    """P(letter) at the first position that lists one of ``letters`` among its top tokens,
    renormalised over them; None without such a position."""
    for position in logprobs or []:
        if not position:
            continue
        probs: dict[str, float] = {}
        for token, lp in position.items():
            t = token.strip().strip('"').strip()
            if t in letters:
                probs[t] = probs.get(t, 0.0) + math.exp(lp)
        if probs:
            floor = math.exp(min(position.values()))
            full = {letter: probs.get(letter, floor) for letter in letters}
            total = sum(full.values())
            return {k: v / total for k, v in full.items()}
    return None


async def check(judge: LLM, claim: str, question: str | None, evidence: Sequence[str]) -> list[dict[str, Any]]:
    """The slot checks of one claim against its evidence sentences: per open slot, the options, the
    judge's choice and P(the claim's value). Slots with no open question are not asked."""
    rows: list[dict[str, Any]] = []
    for slot in slots_to_check(claim, question):
        options = options_for(slot, evidence, claim)
        if options is None:
            continue
        offered = [*options, NOT_STATED]
        letters = SLOT_LETTERS[: len(offered)]
        text = "\n".join(f"{letter}: {value}" for letter, value in zip(letters, offered))
        done = await complete(judge, CLAIM_CHECK, CheckInput(passages=list(evidence), question=question,
                                                             statement=cloze(claim, slot), options=text),
                              logprobs=True)
        chosen = done.parsed.answer if done.parsed is not None else None
        mine = letters[next(i for i, o in enumerate(options) if _same(slot.key, _key_of(o, slot.kind)))]
        probs = _letter_probabilities(done.logprobs, letters)
        if probs is None and chosen in letters:
            probs = {letter: float(letter == chosen) for letter in letters}
        chosen_value = offered[letters.index(chosen)] if chosen in letters else None
        # A reply that names no option offered says nothing about the slot: p_claim None, no effect.
        rows.append({"slot": slot.text, "kind": slot.kind, "cloze": cloze(claim, slot), "options": offered,
                     "chosen": chosen_value, "p_claim": None if probs is None else probs[mine]})
    return rows


def _key_of(text: str, kind: str) -> str:
    return _number_key(text) if kind == "number" else text.lower()


#: A claim's unit word and the contexts' words around the same number name the same thing when MiniLM
#: puts them at least this close ("people" and "spectators", "staff" and "employees"). Word similarity
#: does not separate units well (months and years sit close), so the bar only keeps clear mismatches
#: ("per cent" against "mmHg", "patients" against "pairs"); the judge and the slot checks see the rest.
SAME_UNIT = 0.45

_UNIT_TOKEN = re.compile(r"%|[A-Za-z][A-Za-z'\-]*|\d+(?:,\d{3})*(?:\.\d+)?|[^\w\s]")
_PERCENT = re.compile(r"\bper\s?cent\b|\bpercent\b|%", re.IGNORECASE)


@lru_cache(maxsize=4096)  # every claim of an answer reads the same passages
def _unit_tokens(text: str) -> tuple[tuple[str, str], ...]:
    """``text`` as (key, word) tokens, punctuation included (a number that ends a sentence has no unit):
    the key lower-case, a plural's "s" dropped ("metres" and "metre" are one unit), and "%", "per cent"
    and "percent" one token."""
    out = []
    for tok in _UNIT_TOKEN.findall(_PERCENT.sub(" percent ", text)):
        low = tok.lower()
        out.append((low[:-1] if low.isalpha() and len(low) > 3 and low.endswith("s") else low, tok))
    return tuple(out)


def _is_unit(key: str) -> bool:
    return key.isalpha() and len(key) > 1 and key not in offline.STOP


def unit_checks(claim: str, question: str | None, passages: Sequence[str], embedder: Any = None) -> list[dict[str, Any]]:
    """Numbers of ``claim`` that the contexts state, but only of something else: "58 per cent" where
    every 58 of the contexts is "58 mmHg", "4,311 pairs" where it is "4,311 patients".

    The word right after the claim's number is what it counts or measures. The contexts agree when
    that word, or one :data:`SAME_UNIT`-close to it in ``embedder``'s space, stands within three words
    of one of their occurrences of the number. Asked only of numbers that are not year-shaped and when
    every occurrence in the contexts is itself followed by a word, so a bare "in 1925" tells nothing.
    Deterministic (no judge call); rows shaped as :func:`check`'s, kind "unit"."""
    asked = {_number_key(m.group(0)) for m in _NUMBER.finditer(question or "")}
    ctx = [_unit_tokens(p) for p in passages]
    rows: list[dict[str, Any]] = []
    toks = _unit_tokens(claim)
    for i in range(len(toks) - 1):
        (key, word), (unit, unit_word) = toks[i], toks[i + 1]
        if not key[0].isdigit() or _number_key(key) in asked or not _is_unit(unit) \
                or re.fullmatch(r"1\d{3}|2[01]\d{2}", key):
            continue
        near: dict[str, str] = {}
        after: list[str | None] = []
        for other in ctx:
            for j, (k, _) in enumerate(other):
                if k[0].isdigit() and _number_key(k) == _number_key(key):
                    near.update((k2, w2) for k2, w2 in (*other[max(0, j - 3): j], *other[j + 1: j + 4]) if _is_unit(k2))
                    after.append(other[j + 1][1] if j + 1 < len(other) and _is_unit(other[j + 1][0]) else None)
        if not after or None in after or unit in near:
            continue
        if embedder is not None:
            vecs = np.asarray(embedder.embed([unit_word, *near.values()]))
            if float((vecs[1:] @ vecs[0]).max()) >= SAME_UNIT:
                continue
        said = f"{word} {after[0]}"
        rows.append({"slot": f"{word} {unit_word}", "kind": "unit", "cloze": f"{word} ___", "options": [said],
                     "chosen": said, "p_claim": UNIT_MISMATCH})
    return rows


#: P(the claim's value) a unit mismatch stands for in :func:`metrics.judging.slot_penalty`.
UNIT_MISMATCH = 0.05


def mismatches(slots: Sequence[dict[str, Any]]) -> str:
    """What an explanation adds for the slots the evidence fills with another value."""
    wrong = [s for s in slots if s["p_claim"] is not None and s["p_claim"] < 0.5 and s["chosen"] not in (None, s["slot"])]
    return "".join(f"; for {s['cloze']!r} the evidence gives {s['chosen']!r}, not {s['slot']!r}" for s in wrong)


def confirmations(slots: Sequence[dict[str, Any]]) -> str:
    """What an explanation adds for a claim its slots confirm (:func:`metrics.support.slot_confirmation`)."""
    return "".join(f"; for {s['cloze']!r} the evidence gives {s['slot']!r}, as the claim says (P {s['p_claim']:.2f})"
                   for s in slots if s["kind"] in ("number", "name") and s["p_claim"] is not None)


def with_units(rows: list[dict[str, Any]], question: str | None, passages: Sequence[str]) -> list[dict[str, Any]]:
    """The deterministic evidence's rows (:func:`metrics.offline.judge_claims`) with their unit checks:
    a claim whose number the contexts give of something else loses what :func:`metrics.judging.slot_penalty`
    takes for it, and its reason says which. Used where no judge is asked (``llm=none``)."""
    for row in rows:
        units = unit_checks(row["claim"], question, passages, offline._EVIDENCE_EMBEDDER)
        row["slots"] = units
        if units and row.get("p_supported", 0.0) > 0.0:
            row["p_supported"] = sigmoid(logit(row["p_supported"]) + slot_penalty(units))
            row["reason"] = row.get("reason", "") + mismatches(units)
            row["verdict"] = "supported" if row["p_supported"] >= 0.5 else "not_found"
    return rows
