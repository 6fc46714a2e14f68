"""Metrics that need no LLM: string overlap, edit distance, and embedding similarity.

Each metric scores one sample and returns a :class:`~metrics.values.MetricValue`; averaging and
confidence intervals happen later (``metrics.values.summarise``). Conventions shared by all:

- A missing (None) input never reaches these functions: the runner marks the sample
  ``undefined``. A blank *reference* is ``undefined`` too (there is nothing to compare with).
- A blank *answer* is scored, not skipped: it shares nothing with the reference and so scores
  0 (SQuAD's rule for empty token lists aside). Skipping it would raise the mean as a system
  starts answering nothing.
- Word tokens for BLEU and ROUGE-L are ``\\w+`` runs of the lower-cased text (punctuation
  dropped), as the ``rouge-score`` package tokenises without stemming.
- Edit distances compare raw strings (case and punctuation count), as Ragas' non-LLM string
  similarity does. They are exact up to a cost budget and certified bounds beyond it
  (:mod:`metrics.edit_distance`); an explanation says ``approximate`` when a bound was used.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from rapidfuzz.distance import LCSseq

from ragsweep.metrics.edit_distance import (  # noqa: F401 - levenshtein re-exported
    EditDistance,
    bounded_indel,
    bounded_levenshtein,
    levenshtein,
    token_strings,
)
from ragsweep.metrics.spec import MetricSpec
from ragsweep.metrics.values import MetricValue

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
_WORD = re.compile(r"\w+")
BLEU_EPSILON = 0.1  # Chen & Cherry (2014) method 1, with NLTK's default epsilon


def normalise(text: str) -> str:
    """SQuAD v1.1 answer normalisation: lower-case, drop punctuation, drop a/an/the, squeeze spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def words(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens (the BLEU and ROUGE-L tokeniser)."""
    return _WORD.findall(text.lower())


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences (exact, bit-parallel)."""
    return int(LCSseq.similarity(a, b)) if a and b else 0


def word_lcs(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """Lower and upper bound of ``lcs_length(a, b)``: equal (exact) up to the budget of
    :mod:`metrics.edit_distance`, certified bounds beyond (from the insert/delete distance's)."""
    coded = token_strings(a, b)
    if coded is None:  # more distinct words than code points: exact, whatever it costs
        exact = lcs_length(a, b)
        return exact, exact
    d = bounded_indel(*coded)
    total = len(a) + len(b)
    return (total - d.distance) // 2, (total - d.lower) // 2


def _similarity(a: str, b: str) -> tuple[float, EditDistance]:
    """``1 - d(a, b) / max(|a|, |b|)`` (1 for two empty strings) and the distance it was made from."""
    dist = bounded_levenshtein(a, b)
    longest = max(len(a), len(b))
    return (1.0 if longest == 0 else 1.0 - dist.distance / longest), dist


def _blank(reference: str) -> MetricValue | None:
    return MetricValue.undefined("empty reference") if not reference.strip() else None


def exact_match(answer: str, reference: str) -> MetricValue:
    """SQuAD exact match: 1 if ``normalise(answer) == normalise(reference)`` else 0. Higher is better."""
    if (bad := _blank(reference)) is not None:
        return bad
    a, r = normalise(answer), normalise(reference)
    return MetricValue.ok(float(a == r), answer_normalised=a, reference_normalised=r)


def token_f1(answer: str, reference: str) -> MetricValue:
    """SQuAD v1.1 token F1 on normalised, whitespace-split tokens.

    common = |multiset(answer) ∩ multiset(reference)|, P = common/|answer|, R = common/|reference|,
    F1 = 2PR/(P+R); 0 when common = 0. If either token list is empty, F1 = 1 when both are, else 0.
    """
    if (bad := _blank(reference)) is not None:
        return bad
    a, r = normalise(answer).split(), normalise(reference).split()
    if not a or not r:
        return MetricValue.ok(float(a == r), common=0, answer_tokens=len(a), reference_tokens=len(r))
    common = sum((Counter(a) & Counter(r)).values())
    if common == 0:
        return MetricValue.ok(0.0, common=0, answer_tokens=len(a), reference_tokens=len(r))
    p, rec = common / len(a), common / len(r)
    return MetricValue.ok(2 * p * rec / (p + rec), precision=p, recall=rec, common=common)


def bleu(answer: str, reference: str) -> MetricValue:
    """Sentence BLEU-4 (Papineni et al. 2002) against one reference, smoothed with method 1 of Chen & Cherry (2014).

    BLEU = BP * exp(sum_{n=1..4} 1/4 * log p_n), where p_n is the clipped n-gram precision
    (matches / max(1, answer n-grams)). Method 1 replaces a zero match count by epsilon = 0.1,
    so p_n = 0.1 / max(1, answer n-grams). BP = 1 if c > r else exp(1 - r/c) (c, r: answer and
    reference lengths in words). No unigram match, or an empty answer -> 0. This equals NLTK's
    ``sentence_bleu(..., smoothing_function=SmoothingFunction().method1)`` on the same tokens.
    Range [0, 1], higher is better.
    """
    if (bad := _blank(reference)) is not None:
        return bad
    cand, ref = words(answer), words(reference)
    c, r = len(cand), len(ref)
    precisions, matches = [], []
    for n in range(1, 5):
        cand_ngrams = Counter(tuple(cand[i:i + n]) for i in range(c - n + 1))
        ref_ngrams = Counter(tuple(ref[i:i + n]) for i in range(r - n + 1))
        hit = sum((cand_ngrams & ref_ngrams).values())
        total = max(1, sum(cand_ngrams.values()))
        matches.append(hit)
        precisions.append((hit if hit else BLEU_EPSILON) / total)
    if c == 0 or matches[0] == 0:
        return MetricValue.ok(0.0, matches=matches, answer_words=c, reference_words=r)
    bp = 1.0 if c > r else math.exp(1 - r / c)
    score = bp * math.exp(sum(0.25 * math.log(p) for p in precisions))
    return MetricValue.ok(score, precisions=precisions, brevity_penalty=bp, matches=matches)


def rouge_l(answer: str, reference: str) -> MetricValue:
    """ROUGE-L F-measure (Lin 2004) on word tokens, beta = 1 (as the ``rouge-score`` package).

    P = LCS/|answer|, R = LCS/|reference|, F = 2PR/(P+R); 0 when LCS = 0. Range [0, 1]. Beyond the exact
    budget (:func:`word_lcs`) the LCS is a lower bound: the explanation says ``approximate``, with both bounds.
    """
    if (bad := _blank(reference)) is not None:
        return bad
    a, r = words(answer), words(reference)
    lcs, high = word_lcs(a, r)
    bounds = {} if lcs == high else {"approximate": True, "lcs_bounds": [lcs, high],
                                     "f_bounds": [_f(lcs, len(a), len(r)), _f(high, len(a), len(r))]}
    if lcs == 0:
        return MetricValue.ok(0.0, lcs=0, answer_words=len(a), reference_words=len(r), **bounds)
    p, rec = lcs / len(a), lcs / len(r)
    return MetricValue.ok(2 * p * rec / (p + rec), precision=p, recall=rec, lcs=lcs, **bounds)


def _f(lcs: int, n: int, m: int) -> float:
    return 2 * lcs / (n + m) if lcs else 0.0  # 2PR/(P+R) with P = lcs/n, R = lcs/m


def string_similarity(answer: str, reference: str) -> MetricValue:
    """Normalised Levenshtein similarity: 1 - d(answer, reference) / max(|answer|, |reference|), in characters.

    Exact up to the cost budget of :func:`metrics.edit_distance.bounded_levenshtein` (pairs up to ~158 KB a
    side, or a longer answer within a few per cent of its reference); beyond it a lower bound of the
    similarity, with ``approximate`` and both bounds in the explanation.
    """
    if (bad := _blank(reference)) is not None:
        return bad
    sim, dist = _similarity(answer, reference)
    return MetricValue.ok(sim, **dist.explain(max(len(answer), len(reference))))


def _matches(items: Sequence[str], against: Sequence[str], threshold: float) -> list[dict[str, Any]]:
    """For each item, its best similarity among ``against`` and whether it reaches ``threshold``.

    Beyond the exact budget (:mod:`metrics.edit_distance`) the similarity is a lower bound: the entry says
    ``approximate`` and gives the upper bound, and a match is only claimed when the lower bound reaches it."""
    out = []
    for item in items:
        sims = [_similarity(item, other) for other in against]
        best = max(range(len(sims)), key=lambda i: sims[i][0])
        sim, dist = sims[best]
        entry = {"best": best, "similarity": sim, "match": sim >= threshold}
        if dist.approximate:  # a lower bound of the similarity: say so, with the upper one
            entry.update(approximate=True, similarity_upper=1.0 - dist.lower / max(len(item), len(against[best])))
        out.append(entry)
    return out


def non_llm_context_recall(contexts: Sequence[str], reference_contexts: Sequence[str], *,
                           threshold: float = 0.5) -> MetricValue:
    """Share of reference contexts matched by some retrieved context (Ragas ``NonLLMContextRecall``).

    recall = |{g in reference_contexts : max_c sim(c, g) >= threshold}| / |reference_contexts|,
    with sim the normalised Levenshtein similarity. No reference context -> undefined; nothing
    retrieved -> 0. Range [0, 1], higher is better.
    """
    if not reference_contexts:
        return MetricValue.undefined("no reference contexts")
    if not contexts:
        return MetricValue.ok(0.0, retrieved=0, reference=len(reference_contexts))
    per_ref = _matches(reference_contexts, contexts, threshold)
    hits = sum(m["match"] for m in per_ref)
    return MetricValue.ok(hits / len(reference_contexts), threshold=threshold, reference_contexts=per_ref)


def non_llm_context_precision(contexts: Sequence[str], reference_contexts: Sequence[str], *,
                              threshold: float = 0.5) -> MetricValue:
    """Average precision of the retrieved contexts (Ragas ``NonLLMContextPrecisionWithReference``).

    v_k = 1 when retrieved context k (rank order) has sim >= threshold with some reference
    context. AP = sum_k (precision@k * v_k) / sum_k v_k, with precision@k = sum_{i<=k} v_i / k.
    As in Ragas the denominator is the number of relevant *retrieved* contexts, and AP = 0 when
    none is relevant. Nothing retrieved or no reference context -> undefined. Higher is better.
    """
    if not reference_contexts:
        return MetricValue.undefined("no reference contexts")
    if not contexts:
        return MetricValue.undefined("no retrieved contexts")
    per_ctx = _matches(contexts, reference_contexts, threshold)
    hits, total = 0, 0.0
    for k, m in enumerate(per_ctx, start=1):
        if m["match"]:
            hits += 1
            total += hits / k
    return MetricValue.ok(total / hits if hits else 0.0, threshold=threshold, contexts=per_ctx)


def answer_semantic_similarity(answer: str, reference: str, *, embedder: Any,
                               threshold: float | None = None) -> MetricValue:
    """Cosine similarity of the embedder's vectors of answer and reference (Ragas ``SemanticSimilarity``).

    cos = u.v / (|u| |v|), clipped to [-1, 1]. With ``threshold`` set the score is binary:
    1 if cos >= threshold else 0. A blank answer scores 0 (an embedding of nothing is noise).
    """
    if (bad := _blank(reference)) is not None:
        return bad
    if not answer.strip():
        return MetricValue.ok(0.0, reason="empty answer")
    u, v = np.asarray(embedder.embed([answer, reference]), dtype=np.float64)
    cos = float(np.clip(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)), -1.0, 1.0))
    if threshold is None:
        return MetricValue.ok(cos, cosine=cos)
    return MetricValue.ok(float(cos >= threshold), cosine=cos, threshold=threshold)


_AR = ("answer", "reference")
_CTX = ("contexts", "reference_contexts")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("exact_match", exact_match, _AR, best_reference=True,
               description="answer equals the reference after SQuAD normalisation (0/1)"),
    MetricSpec("token_f1", token_f1, _AR, best_reference=True, description="SQuAD token F1 of answer vs reference"),
    MetricSpec("bleu", bleu, _AR, best_reference=True, description="sentence BLEU-4, Chen & Cherry smoothing 1"),
    MetricSpec("rouge_l", rouge_l, _AR, best_reference=True, description="ROUGE-L F1 (longest common word subsequence)"),
    MetricSpec("string_similarity", string_similarity, _AR, best_reference=True,
               description="1 - Levenshtein distance / longer length, answer vs reference"),
    MetricSpec("non_llm_context_recall", non_llm_context_recall, _CTX, options={"threshold": 0.5},
               description="share of reference contexts matched by a retrieved one (string similarity)"),
    MetricSpec("non_llm_context_precision", non_llm_context_precision, _CTX, options={"threshold": 0.5},
               description="average precision of retrieved contexts matching a reference one"),
    MetricSpec("answer_semantic_similarity", answer_semantic_similarity, _AR, best_reference=True, needs_embedder=True,
               options={"threshold": None}, value_range=(-1.0, 1.0),  # a cosine
               description="cosine of answer and reference embeddings (binary with a threshold)"),
)
