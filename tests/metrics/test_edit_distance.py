"""The budgeted Levenshtein distance: exact where it was, certified bounds beyond the budget."""

from __future__ import annotations

import random

import numpy as np
import pytest
from ragsweep.metrics import edit_distance as ed
from ragsweep.metrics import lexical as lx

_WORDS = [f"w{i}" for i in range(300)] + ["the", "of", "a", "harbour", "Calder", "1963"]


def _numpy_levenshtein(a: str, b: str) -> int:
    """The row-by-row numpy implementation ragsweep used before the budget (the reference for exact values)."""
    if len(a) > len(b):
        a, b = b, a
    if not a:
        return len(b)
    bs = np.array([ord(c) for c in b])
    cols = np.arange(len(b) + 1)
    prev = cols.copy()
    for i, ch in enumerate(a, start=1):
        t = np.empty_like(prev)
        t[0] = i
        t[1:] = np.minimum(prev[:-1] + (bs != ord(ch)), prev[1:] + 1)
        prev = np.minimum.accumulate(t - cols) + cols
    return int(prev[-1])


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n_words))


def _mutate(rng: random.Random, text: str, rate: float) -> str:
    """Each character deleted, substituted or followed by an insertion with probability ``rate`` in all."""
    out = []
    for ch in text:
        r = rng.random()
        if r < rate / 3:
            continue
        out.append(rng.choice("abxyz ") if r < 2 * rate / 3 else ch)
        if 2 * rate / 3 <= r < rate:
            out.append(rng.choice("abc"))
    return "".join(out)


def test_ordinary_pairs_keep_their_exact_distance_and_similarity():
    rng = random.Random(7)
    for _ in range(1500):
        alphabet = rng.choice(["ab", "abc ", "Kitten sitting", "åß€😀 a"])
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        old = _numpy_levenshtein(a, b)
        assert ed.levenshtein(a, b) == old
        assert ed.bounded_levenshtein(a, b) == ed.EditDistance(old, old, "exact")
        result = lx.string_similarity(a, b)
        if b.strip():
            assert result.value == 1.0 - old / max(len(a), len(b))
            assert result.explanation == {"distance": old}


def test_long_ordinary_answers_stay_exact():
    rng = random.Random(3)
    a = _text(rng, 1500)
    b = _mutate(rng, a, 0.3)
    assert ed.bounded_levenshtein(a, b) == ed.EditDistance(_numpy_levenshtein(a, b), _numpy_levenshtein(a, b), "exact")


def test_a_near_copy_beyond_the_budget_is_exact_through_the_band():
    rng = random.Random(1)
    a = _text(rng, 2000)
    b = _mutate(rng, a, 0.002)
    exact = ed.levenshtein(a, b)
    got = ed.bounded_levenshtein(a, b, cells=len(a) * len(b) // 20)
    assert (got.method, got.distance, got.lower, got.approximate) == ("banded", exact, exact, False)


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.2, 0.6])
@pytest.mark.parametrize("insert_words", [0, 40, 400])
def test_beyond_the_budget_the_bounds_hold_the_exact_distance(rate, insert_words):
    rng = random.Random(f"{rate}:{insert_words}")
    a = _text(rng, 3000)
    b = _mutate(rng, a, rate)
    b = b[:len(b) // 3] + _text(rng, insert_words) + b[len(b) // 3:]
    exact = ed.levenshtein(a, b)
    got = ed.bounded_levenshtein(a, b, cells=len(a) * len(b) // 30)
    assert got.lower <= exact <= got.distance
    if got.method == "pieces":
        assert got.lower > len(a) * len(b) // 30 // (2 * max(len(a), len(b)))  # the failed band is a lower bound
    if rate <= 0.05:  # the pieces follow the inserted paragraph: the upper bound stays tight
        assert got.distance <= exact * 1.05


def test_unrelated_texts_get_a_tight_upper_bound():
    rng = random.Random(11)
    a, b = _text(rng, 3000), _text(rng, 1800)
    exact = ed.levenshtein(a, b)
    got = ed.bounded_levenshtein(a, b, cells=len(a) * len(b) // 30)
    assert got.approximate and got.method == "pieces"
    assert got.lower <= exact <= got.distance <= exact * 1.05
    assert got.lower >= len(a) - len(b)


def test_the_count_bound():
    # "aab" -> "abb": one 'a' removed, one 'b' added: one substitution at least (and at most)
    assert ed._count_bound("aab", "abb") == 1
    assert ed._count_bound("abc", "cba") == 0
    assert ed._count_bound("", "xyz") == 3


def test_string_similarity_says_when_it_is_a_bound(monkeypatch):
    rng = random.Random(5)
    answer = _text(rng, 600)
    reference = _mutate(rng, answer, 0.3)
    monkeypatch.setattr(ed, "EXACT_CELLS", len(answer) * len(reference) // 10)
    result = lx.string_similarity(answer, reference)
    exact = 1.0 - ed.levenshtein(answer, reference) / max(len(answer), len(reference))
    e = result.explanation
    assert result.status == "ok" and e["approximate"] is True and e["method"] == "pieces"
    low, high = e["similarity_bounds"]
    assert result.value == low <= exact <= high
    assert e["distance_bounds"][1] == e["distance"]


def test_context_recall_marks_an_approximate_match(monkeypatch):
    rng = random.Random(9)
    context = _text(rng, 600)
    reference = _mutate(rng, context, 0.3)
    monkeypatch.setattr(ed, "EXACT_CELLS", len(context) * len(reference) // 10)
    result = lx.non_llm_context_recall([context, "unrelated"], [reference], threshold=0.5)
    entry = result.explanation["reference_contexts"][0]
    assert entry["approximate"] is True and entry["best"] == 0
    assert entry["similarity"] <= entry["similarity_upper"]
    assert result.value == float(entry["similarity"] >= 0.5)


def test_chance_recurrences_in_unrelated_text_do_not_move_the_cuts():
    # a dozen words: every 16-character stretch of one text recurs somewhere in the other by chance
    rng = random.Random(2)
    few = ["harbour", "ferry", "tide", "route", "bridge", "island", "market", "gauge", "crew", "cargo", "the", "of"]
    a = " ".join(rng.choice(few) for _ in range(9000))
    b = " ".join(rng.choice(few) for _ in range(9000))
    exact = ed.levenshtein(a, b)
    got = ed.bounded_levenshtein(a, b, cells=len(a) * len(b) // 30)
    assert got.method == "pieces" and exact <= got.distance <= exact * 1.05


def _numpy_lcs(a, b) -> int:
    """ROUGE-L's row-by-row numpy LCS as it was before the budget (the reference for exact values)."""
    if not a or not b:
        return 0
    ids: dict[str, int] = {}
    bs = np.array([ids.setdefault(w, len(ids)) for w in b])
    prev = np.zeros(len(b) + 1, dtype=np.int64)
    for w in a:
        cand = prev.copy()
        if w in ids:
            match = np.flatnonzero(bs == ids[w]) + 1
            cand[match] = prev[match - 1] + 1
        prev = np.maximum.accumulate(cand)
    return int(prev[-1])


def test_ordinary_word_sequences_keep_their_exact_lcs_and_rouge_l():
    rng = random.Random(8)
    for _ in range(800):
        a = " ".join(rng.choice(_WORDS[:6]) for _ in range(rng.randint(0, 30)))
        b = " ".join(rng.choice(_WORDS[:6]) for _ in range(rng.randint(1, 30)))
        wa, wb = lx.words(a), lx.words(b)
        old = _numpy_lcs(wa, wb)
        assert lx.lcs_length(wa, wb) == old and lx.word_lcs(wa, wb) == (old, old)
        result = lx.rouge_l(a, b)
        assert result.explanation["lcs"] == old and "approximate" not in result.explanation
        if old:
            p, r = old / len(wa), old / len(wb)
            assert result.value == 2 * p * r / (p + r)


def test_word_tokens_as_code_points_keep_the_lcs():
    a, b = ["the", "ferry", "left", "the", "quay"], ["a", "ferry", "left", "quay", "the"]
    sa, sb = ed.token_strings(a, b)
    assert len(sa) == 5 and sa[0] == sa[3] and ed.bounded_indel(sa, sb).distance == 5 + 5 - 2 * 3


@pytest.mark.parametrize("rate", [0.02, 0.3])
def test_indel_bounds_hold_beyond_the_budget(rate):
    rng = random.Random(f"indel:{rate}")
    a = _text(rng, 2500)
    b = _mutate(rng, a, rate)
    exact = ed.Indel.distance(a, b)
    got = ed.bounded_indel(a, b, cells=len(a) * len(b) // 30)
    assert got.approximate and got.lower <= exact <= got.distance <= exact * 1.05
    assert got.lower >= ed._count_bound(a, b, indel=True) >= ed._count_bound(a, b)


def test_rouge_l_says_when_its_lcs_is_a_bound(monkeypatch):
    rng = random.Random(4)
    answer = _text(rng, 700)
    reference = _mutate(rng, answer, 0.3)
    wa, wr = lx.words(answer), lx.words(reference)
    monkeypatch.setattr(ed, "EXACT_CELLS", len(wa) * len(wr) // 10)
    result = lx.rouge_l(answer, reference)
    e, exact = result.explanation, _numpy_lcs(wa, wr)
    assert e["approximate"] is True and e["lcs_bounds"][0] == e["lcs"] <= exact <= e["lcs_bounds"][1]
    assert result.value == pytest.approx(e["f_bounds"][0]) and e["f_bounds"][0] <= 2 * exact / (len(wa) + len(wr))


def test_a_paragraph_longer_than_two_pieces_is_followed_past_chance_recurrences():
    rng = random.Random(6)
    few = ["harbour", "ferry", "tide", "route", "bridge", "island", "market", "gauge", "crew", "cargo", "the", "of"]
    a = " ".join(rng.choice(few) for _ in range(9000))
    b = a[:20_000] + " ".join(rng.choice(few) for _ in range(1000)) + a[20_000:]  # ~6,000 characters inserted
    cells = len(a) * len(b) // 40  # pieces of ~1,500 characters
    exact = ed.levenshtein(a, b)
    assert ed.bounded_levenshtein(a, b, cells=cells).distance <= exact * 1.02
