"""Non-LLM metrics on hand-computed cases (exact values worked out in the comments)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ragsweep.metrics import lexical as lx
from ragsweep.metrics.catalogue import catalogue


def _naive_levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j - 1] + (ca != cb), prev[j] + 1, cur[j - 1] + 1))
        prev = cur
    return prev[-1]


def _naive_lcs(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def test_vectorised_dynamic_programs_match_the_textbook_recurrences():
    rng = random.Random(0)
    for _ in range(500):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        assert lx.levenshtein(a, b) == _naive_levenshtein(a, b)
        assert lx.lcs_length(list(a), list(b)) == _naive_lcs(a, b)


def test_levenshtein_kitten_sitting():
    assert lx.levenshtein("kitten", "sitting") == 3  # k->s, e->i, +g
    assert lx.string_similarity("kitten", "sitting").value == pytest.approx(1 - 3 / 7)
    assert lx.string_similarity("same", "same").value == 1.0


def test_exact_match_normalises_like_squad():
    assert lx.exact_match("The Cat!", "cat").value == 1.0
    assert lx.exact_match("a cat", "the dog").value == 0.0


def test_token_f1_squad_example():
    # "cat sat on mat" vs "cat on mat" after normalisation: common 3, P = 3/4, R = 1, F1 = 6/7
    r = lx.token_f1("The cat sat on the mat.", "A cat on a mat")
    assert r.value == pytest.approx(6 / 7)
    assert r.explanation["common"] == 3
    assert lx.token_f1("dog", "cat").value == 0.0
    assert lx.token_f1("the", "a").value == 1.0  # both normalise to nothing: SQuAD scores 1


def test_rouge_l_lin_2004_example():
    # LCS("police kill the gunman", "police killed the gunman") = police the gunman = 3: P = R = F = 3/4
    assert lx.rouge_l("police kill the gunman", "police killed the gunman").value == pytest.approx(0.75)
    # LCS = "the gunman" = 2 -> F = 1/2
    assert lx.rouge_l("the gunman kill police", "police killed the gunman").value == pytest.approx(0.5)
    assert lx.rouge_l("", "police").value == 0.0


def test_bleu_identical_brevity_and_smoothing():
    assert lx.bleu("the cat sat on the mat", "the cat sat on the mat").value == pytest.approx(1.0)
    # every precision 1, c = 6 < r = 7 -> BP = exp(1 - 7/6)
    assert lx.bleu("the cat sat on the mat", "the cat sat on the mat today").value == \
        pytest.approx(math.exp(1 - 7 / 6))
    # two words: p3 = p4 = 0 matches -> 0.1 / max(1, 0) under method 1; BLEU = (1*1*0.1*0.1)^(1/4)
    assert lx.bleu("a b", "a b").value == pytest.approx(math.sqrt(0.1))
    assert lx.bleu("x y z w", "a b c d").value == 0.0  # no unigram match
    assert lx.bleu("", "a b c d").value == 0.0


# Reference contexts A, B, C; retrieved [R1 ~ A (sim 0.97), X (sim < 0.3 to all), R2 == B].
REFS = ("Paris is the capital of France.", "The Seine flows through Paris.",
        "France borders Spain and Italy.")
RETRIEVED = ("Paris is the capital of France", "Bananas are rich in potassium.",
             "The Seine flows through Paris.")


def test_non_llm_context_precision_is_average_precision():
    # verdicts [1, 0, 1]: AP = (1/1 + 2/3) / 2 = 5/6
    r = lx.non_llm_context_precision(RETRIEVED, REFS)
    assert r.value == pytest.approx(5 / 6)
    assert [c["match"] for c in r.explanation["contexts"]] == [True, False, True]
    assert lx.non_llm_context_precision(RETRIEVED[1:2], REFS).value == 0.0
    # a stricter threshold drops R1 (sim 0.968): verdicts [0, 0, 1] -> AP = (1/3) / 1
    assert lx.non_llm_context_precision(RETRIEVED, REFS, threshold=0.99).value == pytest.approx(1 / 3)


def test_non_llm_context_recall_is_share_of_references_found():
    assert lx.non_llm_context_recall(RETRIEVED, REFS).value == pytest.approx(2 / 3)  # A, B found; C not
    assert lx.non_llm_context_recall((), REFS).value == 0.0  # nothing retrieved finds nothing


def test_undefined_instead_of_exceptions_or_nan():
    for fn in (lx.exact_match, lx.token_f1, lx.bleu, lx.rouge_l, lx.string_similarity):
        r = fn("an answer", "  ")
        assert r.status == "undefined" and r.value is None and "reference" in r.explanation["reason"]
    assert lx.non_llm_context_recall(RETRIEVED, ()).status == "undefined"
    assert lx.non_llm_context_precision(RETRIEVED, ()).status == "undefined"
    assert lx.non_llm_context_precision((), REFS).explanation["reason"] == "no retrieved contexts"


class _FixedEmbedder:
    def embed(self, texts, *, progress=False):
        return np.array([[1.0, 0.0], [0.6, 0.8]])[: len(texts)]


def test_answer_semantic_similarity_is_cosine_and_binary_with_threshold():
    assert lx.answer_semantic_similarity("a", "b", embedder=_FixedEmbedder()).value == pytest.approx(0.6)
    assert lx.answer_semantic_similarity("a", "b", embedder=_FixedEmbedder(), threshold=0.5).value == 1.0
    assert lx.answer_semantic_similarity("a", "b", embedder=_FixedEmbedder(), threshold=0.7).value == 0.0
    assert lx.answer_semantic_similarity(" ", "b", embedder=_FixedEmbedder()).value == 0.0


def test_answer_semantic_similarity_with_the_packaged_model():
    from ragsweep.metrics.embedding import OnnxMiniLM

    model = OnnxMiniLM()
    same = lx.answer_semantic_similarity("Paris is in France.", "Paris is in France.", embedder=model)
    near = lx.answer_semantic_similarity("Paris is in France.", "Paris lies in France.", embedder=model)
    far = lx.answer_semantic_similarity("Paris is in France.", "Bananas are yellow.", embedder=model)
    assert same.value == pytest.approx(1.0, abs=1e-5)
    assert 1.0 >= same.value > near.value > far.value


def test_specs_are_in_the_catalogue_with_their_inputs():
    table = catalogue()
    assert {s.name for s in lx.SPECS} <= set(table)
    assert table["rouge_l"].inputs == ("answer", "reference")
    assert table["non_llm_context_recall"].options == {"threshold": 0.5}
    assert table["answer_semantic_similarity"].needs_embedder
    assert not any(s.needs_judge for s in lx.SPECS)
