"""The ``llm=none`` backend: deterministic support checks, no model call.

A claim is one sentence of the text. Whether the contexts support it is estimated from evidence
a reader can check by hand:

- **numbers and dates**: every number in the claim (digits, or a number word up to twelve) must
  appear in the contexts; one that does not is the classic hallucination (a wrong year, count
  or amount);
- **names**: every capitalised word that is not the first word of the claim (people, places,
  titles) must appear in the contexts;
- **content overlap**: the share of the claim's content words -- after dropping stop words and
  the words it repeats from the question, which carry no new information -- found in the
  contexts (prefix match on 5 letters, so "retired"/"retirement" match), and the same share
  within the single best-matching context sentence (evidence must sit together, not be
  collected word by word across the article);
- **embedding cosine** (when an embedder is given): similarity of the claim to its best
  context sentence. Faithfulness gives it no weight (it measured worse than nothing on
  HaluEval); factual correctness uses it with ``cosine=True`` (the packaged MiniLM).

These combine in a logistic model, :data:`WEIGHTS`, fitted once on the ``tune`` half of the
human-labelled sets (``benchmarks/calibration_sets.py``), into P(supported) per claim.
A claim with no checkable content (a bare "yes") gets 0.5: no evidence either way.

Metrics built on it mirror the judged ones' formulas with P(supported) in place of a verdict:
faithfulness is the mean P(supported) of the answer's claims; factual correctness is the F1 of
the expected TP/FP/FN counts of the answer's sentences against the reference and back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ragsweep.metrics.errors import InputError
from ragsweep.metrics.lexicon import NUMBER_WORDS, STOP
from ragsweep.metrics.support import REMOVED, calibrate_rows, is_removed  # noqa: F401 - REMOVED re-exported
from ragsweep.metrics.values import MetricValue, one_side

_SENT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d[\d,]*(?:\.\d+)?")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")

#: Why a removed sentence (see :mod:`metrics.guard`) counts as unsupported.
REMOVED_REASON = "addressed the evaluator, not the question: removed before judging and counted as unsupported"

#: Logistic weights over the features of :func:`features` (intercept first), fitted by logistic
#: regression on the ``tune`` halves of HaluEval, QAGS and BEGIN (each set weighted equally), rounded.
#: ``numbers_ok`` is held at 1.0 as a rule: a number that is not in the contexts is the textbook
#: hallucination, though these sets rarely test it. The cosine gets no weight (and no embedding is
#: computed): HaluEval's hallucinations paraphrase their knowledge closely, so it misleads there.
#: ``detached`` (:func:`detached_anchors`) was chosen later on the same halves. The fits' figures:
#: ``benchmarks/results/2026-11-26-offline-comment-measurements.md``.
WEIGHTS: dict[str, float] = {
    "intercept": -5.6, "coverage": 2.8, "window": 2.8, "numbers_ok": 1.0, "names_ok": 0.5, "cosine": 0.0,
    "detached": -2.0,
}
#: For correctness (answer sentences against a long reference and back) the steep faithfulness
#: weights saturate; a gentler slope ranks RAGChecker's ``tune`` pairs better, and ``detached`` stays 0
#: (every negative weight lowered the correctness Pearson there).
CORRECTNESS_WEIGHTS: dict[str, float] = {
    "intercept": -2.0, "coverage": 2.0, "window": 2.0, "numbers_ok": 1.0, "names_ok": 1.0, "cosine": 0.0,
    "detached": 0.0,
}
#: Correctness evidence with the embedding cosine (``factual_correctness(cosine=True)``): a
#: paraphrase of a reference sentence shares few words with it but sits close to it in MiniLM's
#: space. Chosen on RAGChecker's ``tune`` half. Unlike faithfulness (where HaluEval's hallucinations
#: paraphrase their knowledge and the cosine misleads, see :data:`WEIGHTS`), a wrong answer here
#: rarely sits close to the reference.
CORRECTNESS_WEIGHTS_COSINE: dict[str, float] = {**CORRECTNESS_WEIGHTS, "intercept": -3.0, "cosine": 2.0}


class _EvidenceEmbedder:
    """The packaged MiniLM (int8 ONNX) with a bounded memo: the cosine weights above were fitted on
    its similarities, so the evidence always uses it, whatever embedder a sweep variant retrieves
    with (a metric must not move with the variant it compares). A reference's sentences are
    embedded once for every answer scored against it."""

    LIMIT = 50_000

    def __init__(self) -> None:
        self._model: Any = None
        self._memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._model is None:
            from ragsweep.metrics.embedding import OnnxMiniLM

            self._model = OnnxMiniLM()
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            if len(self._memo) + len(missing) > self.LIMIT:
                self._memo.clear()
            self._memo.update(zip(missing, np.asarray(self._model.embed(missing))))
        return np.stack([self._memo[t] for t in texts])


_EVIDENCE_EMBEDDER = _EvidenceEmbedder()


_ABBREV = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|Gen|Col|Lt|Sgt|Gov|Sen|Rep|Rev|vs|No|Inc|Co|Ltd|Corp)"
                     r"|(?:^|[\s.])[A-Z])\.$")

_MARKER = re.compile(r"^(?:\d{1,2}|[a-z]|[ivx]+)[.)]$|^[-*\u2022]$")  # a list item's number or bullet


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after . ! ? before a capital or digit, and at line breaks,
    but not after a title, an initial or a list number ("Mr. Burns", "J. R. R. Tolkien", "1. Use C").

    The claims of the no-LLM metrics and of the sentence judge. It is kept apart from the nupunkt
    splitter of ``gen`` (:func:`gen.chunking.sentence_spans`, whose spans chunking and question
    writing need) because the calibrated figures were fitted and measured with this one: with nupunkt
    in its place the sentence lists and the documented ``llm=none`` figures move
    (``benchmarks/results/2026-11-26-offline-comment-measurements.md``).
    """
    out: list[str] = []
    for piece in (s.strip() for s in _SENT.split(text or "")):
        if not piece:
            continue
        if out and (_ABBREV.search(out[-1]) or _MARKER.match(out[-1])):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _key(word: str) -> str:
    w = word.lower().strip("'-").removesuffix("'s")
    return w[:5] if w.isalpha() else w.replace(",", "")


def content_words(text: str) -> list[str]:
    """Lower-cased words that carry content (stop words dropped), as 5-letter prefix keys."""
    return [k for k in map(_content_key, _TOKEN.findall(text or "")) if k is not None]


@lru_cache(maxsize=1 << 16)  # a text repeats its words: whole documents go through here
def _content_key(tok: str) -> str | None:
    """The key of one token, or None for a stop word or a single letter."""
    low = tok.lower()
    if low in NUMBER_WORDS:
        return NUMBER_WORDS[low]
    return _key(tok) if low not in STOP and len(low) > 1 or tok[0].isdigit() else None


def script_grams(text: str) -> set[str]:
    """Character bigrams of ``text``'s letters outside the Latin script (a lone letter as itself): the
    content a sentence in Chinese, Japanese, Thai, Greek or Arabic carries, where :func:`content_words`
    (Latin words and numbers) finds none. Empty for Latin text."""
    other = "".join(c for c in text or "" if c.isalpha() and not c.isascii() and not ("\u00c0" <= c <= "\u024f"))
    if len(other) == 1:
        return {other}
    return {other[i:i + 2] for i in range(len(other) - 1)}


def numbers(text: str) -> set[str]:
    """The numbers in ``text``: digit runs without thousands separators, and number words."""
    found = {m.group(0).replace(",", "").rstrip(".") for m in _NUMBER.finditer(text or "")}
    found |= {NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", (text or "").lower()) if w in NUMBER_WORDS
              and w not in ("one", "zero")}  # "one of", "no one": too often not a number
    return found


def names(text: str) -> set[str]:
    """Capitalised words after the first word of each sentence (names, places, titles), as keys."""
    out = set()
    for sent in sentences(text):
        toks = _TOKEN.findall(sent)
        for tok in toks[1:]:
            if tok[0].isupper() and tok.lower() not in STOP and tok.lower() not in NUMBER_WORDS:
                out.add(_key(tok))
    return out


@dataclass(frozen=True)
class Evidence:
    """Why a claim is judged supported or not: the features and what is missing."""

    claim: str
    new_words: int
    coverage: float
    window: float
    numbers_ok: float
    names_ok: float
    cosine: float
    missing_words: tuple[str, ...]
    missing_numbers: tuple[str, ...]
    missing_names: tuple[str, ...]
    best_sentence: str
    detached: float = 0.0
    detached_from: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def vector(self) -> list[float]:
        return [self.coverage, self.window, self.numbers_ok, self.names_ok, self.cosine, self.detached]


FEATURES = ("coverage", "window", "numbers_ok", "names_ok", "cosine", "detached")

#: How far (in tokens) a number or name reaches for the words it is attached to: in the claim
#: (its neighbours) and in the contexts (where they must reappear beside it).
CLAIM_REACH, CONTEXT_REACH = 5, 8


def _tokens(text: str) -> list[tuple[str, str, str]]:
    """``(key, kind, token)`` per token: kind "number", "name" (a capitalised word after a sentence's first
    word), "initial" (a capitalised first word), "word" (another content word) or "stop"; keys as in
    :func:`content_words`."""
    out: list[tuple[str, str, str]] = []
    for sent in sentences(text) or [text or ""]:
        for i, tok in enumerate(_TOKEN.findall(sent)):
            low = tok.lower()
            if tok[0].isdigit():
                out.append((_key(tok).rstrip("."), "number", tok))
            elif low in NUMBER_WORDS:
                out.append((NUMBER_WORDS[low], "number" if low not in ("one", "zero") else "stop", tok))
            elif low in STOP or len(low) < 2:
                out.append((low, "stop", tok))
            elif tok[0].isupper():
                out.append((_key(tok), "name" if i > 0 else "initial", tok))
            else:
                out.append((_key(tok), "word", tok))
    return out


def detached_anchors(claim: str, index: ContextIndex) -> tuple[int, list[tuple[str, tuple[str, ...]]]]:
    """The claim's numbers and names that occur in the contexts but never beside the words they
    are attached to in the claim -- a swapped fact ("lit in 1903" when the contexts say the lighthouse
    was lit in 1871 and a bridge opened in 1903).

    Anchors are the claim's numbers and names (a capitalised first word counts when the contexts
    use it as a name). An anchor's neighbours are the lower-case content words within
    :data:`CLAIM_REACH` tokens of it in the claim (not other numbers or names). It is checkable when it and at least one neighbour occur
    in the contexts; it is attached when some occurrence has a neighbour within
    :data:`CONTEXT_REACH` tokens. Returns the number checkable and the detached ones with their
    neighbours.
    """
    toks = _tokens(claim)
    checkable, detached = 0, []
    seen: set[str] = set()
    for i, (key, kind, tok) in enumerate(toks):
        if kind == "initial" and key in index.names:
            kind = "name"
        if kind not in ("number", "name") or key in seen or key not in index.positions:
            continue
        seen.add(key)
        near = {k: t for k, kd, t in toks[max(0, i - CLAIM_REACH): i + CLAIM_REACH + 1]
                if kd == "word" and t[0].islower() and k in index.words}
        if not near:
            continue
        checkable += 1
        if not any(set(near) & index.around(pos) for pos in index.positions[key]):
            detached.append((tok, tuple(dict.fromkeys(near.values()))))
    return checkable, detached


class ContextIndex:
    """The contexts prepared once for many claims: word keys, numbers, sentence keys, embeddings."""

    def __init__(self, contexts: Sequence[str], embedder: Any = None, weights: dict[str, float] | None = None) -> None:
        text = "\n".join(contexts)
        self.words = set(content_words(text))
        self.numbers = numbers(text)
        self.names = names(text)
        self.sentences = [s for c in contexts for s in sentences(c)] or [text]
        self.sentence_words = [set(content_words(s)) for s in self.sentences]
        self.sentence_grams = [script_grams(s) for s in self.sentences]
        self.grams = set().union(*self.sentence_grams)
        # Token stream for the relation check, sentences kept apart by a gap wider than the reach:
        # a fact is stated within a sentence ("It was lit in 1871" still ties 1871 to "lit").
        self.stream: list[str] = []
        for sent in self.sentences:
            self.stream += [k for k, _, _ in _tokens(sent)] + [""] * (CONTEXT_REACH + 1)
        self.positions: dict[str, list[int]] = {}
        for pos, key in enumerate(self.stream):
            self.positions.setdefault(key, []).append(pos)
        # No cosine weight: skip the embedding cost.
        self.embedder = embedder if (WEIGHTS if weights is None else weights)["cosine"] else None
        self._vectors: np.ndarray | None = None

    def around(self, pos: int) -> set[str]:
        """The keys within :data:`CONTEXT_REACH` tokens of a position of :attr:`stream`."""
        return set(self.stream[max(0, pos - CONTEXT_REACH): pos + CONTEXT_REACH + 1])

    def vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = np.asarray(self.embedder.embed(self.sentences))
        return self._vectors


def evidence(claim: str, index: ContextIndex, question: str | None = None,
             vector: np.ndarray | None = None) -> Evidence:
    """The features of one claim against prepared contexts (``vector``: the claim's embedding, when
    the caller embedded its claims in one batch)."""
    given = set(content_words(question or ""))
    new = [w for w in dict.fromkeys(content_words(claim)) if w not in given]
    words, sentence_words = index.words, index.sentence_words
    if not new:
        # No Latin content word: a sentence in another script is checked by its character bigrams, so
        # it is not passed as "nothing checkable" (0.5) whatever it says.
        new = sorted(script_grams(claim) - script_grams(question or ""))
        words, sentence_words = index.grams, index.sentence_grams
    missing = [w for w in new if w not in words]
    coverage = 1 - len(missing) / len(new) if new else 1.0
    best, window = 0, 0.0
    if new:
        for i, sw in enumerate(sentence_words):
            share = sum(w in sw for w in new) / len(new)
            if share > window:
                best, window = i, share
    else:
        window = 1.0
    nums = numbers(claim) - numbers(question or "")
    miss_nums = sorted(n for n in nums if n not in index.numbers)
    claim_names = names(claim) - given
    miss_names = sorted(n for n in claim_names if n not in index.words)
    cosine = 0.0
    if index.embedder is not None:
        v = np.asarray(index.embedder.embed([claim]))[0] if vector is None else vector
        sims = index.vectors() @ v
        cosine = float(sims.max())
        if not new:
            best = int(sims.argmax())
    checkable, detached = detached_anchors(claim, index)
    return Evidence(claim, len(new), coverage, window, 0.0 if miss_nums else 1.0,
                    1 - len(miss_names) / len(claim_names) if claim_names else 1.0, cosine,
                    tuple(missing), tuple(miss_nums), tuple(miss_names), index.sentences[best],
                    len(detached) / checkable if checkable else 0.0, tuple(detached))


def probability(ev: Evidence, weights: dict[str, float] | None = None) -> float:
    """P(supported) of a claim from its evidence (:data:`WEIGHTS` by default); 0.5 when the claim has
    nothing checkable."""
    if ev.new_words == 0:
        return 0.5
    weights = WEIGHTS if weights is None else weights
    z = weights["intercept"] + sum(weights.get(f, 0.0) * x for f, x in zip(FEATURES, ev.vector()))
    return 1 / (1 + math.exp(-z))


def judge_claims(claims: Sequence[str], contexts: Sequence[str], question: str | None = None,
                 embedder: Any = None, weights: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """Each claim with P(supported), a hard verdict (p >= 0.5) and the evidence behind it."""
    index = ContextIndex(contexts, embedder, weights)
    # One embedding batch for all the claims, not one model call per claim.
    vectors = (np.asarray(index.embedder.embed(list(claims))) if index.embedder is not None and claims
               else [None] * len(claims))
    rows = []
    for claim, vector in zip(claims, vectors):
        if is_removed(claim):  # text addressed to the evaluator (metrics.guard): in the answer, supports nothing
            rows.append({"claim": claim, "p_supported": 0.0, "verdict": "not_supported", "reason": REMOVED_REASON,
                         "best_sentence": "", "features": {}})
            continue
        ev = evidence(claim, index, question, vector)
        p = probability(ev, weights)
        reason = []
        if ev.missing_numbers:
            reason.append(f"numbers not in the contexts: {', '.join(ev.missing_numbers)}")
        if ev.missing_names:
            reason.append(f"names not in the contexts: {', '.join(ev.missing_names)}")
        if ev.missing_words:
            reason.append(f"{len(ev.missing_words)} of {ev.new_words} new words not in the contexts")
        for anchor, near in ev.detached_from:
            reason.append(f"{anchor} is in the contexts but never beside {', '.join(near)}")
        rows.append({"claim": claim, "p_supported": p, "verdict": "supported" if p >= 0.5 else "not_found",
                     "reason": "; ".join(reason) or "all its words, numbers and names are in the contexts",
                     "best_sentence": ev.best_sentence,
                     "features": {f: round(x, 4) for f, x in zip(FEATURES, ev.vector())}})
    return rows


def faithfulness(question: str, answer: str, contexts: Sequence[str], *, embedder: Any = None,
                 check: Any = None) -> MetricValue:
    """Mean P(supported) of the answer's sentences against the contexts (no LLM); ``check(rows,
    question, contexts)``, when given, may lower rows before calibration (the unit checks of
    :mod:`metrics.slots`, which this module cannot import).

    Range [0, 1], higher is better. No sentence -> undefined.
    """
    claims = sentences(answer)
    if not claims:
        return MetricValue.undefined("no claims extracted from the answer", claims=[])
    rows = judge_claims(claims, contexts, question, embedder)
    if check is not None:
        rows = check(rows, question, contexts)
    calibrate_rows(rows, None)
    value = sum(r["p_supported"] for r in rows) / len(rows)
    return MetricValue.ok(value, backend="none", total=len(rows), claims=rows)


def _expected_counts(a_rows: list[dict[str, Any]], r_rows: list[dict[str, Any]]) -> tuple[float, float, float]:
    tp = sum(r["p_supported"] for r in a_rows)
    fp = len(a_rows) - tp
    fn = sum(1 - r["p_supported"] for r in r_rows)
    return tp, fp, fn


_SOURCE = r"(?:context|text|passages?|excerpts?|documents?|sources?|articles?|content|information|search results?)"
_NEGATED = (r"(?:(?:is|are|was|were) not (?:\w+ly )?(?:mentioned|stated|provided|specified|discussed|given|addressed"
            r"|included|found|available|indicated)"
            r"|(?:no|not enough|insufficient) (?:\w+ )?(?:mention|information|details?|data|evidence)"
            r"|(?:not|n't) (?:possible|able) to (?:determine|answer|tell|say)"
            r"|cannot (?:be )?(?:determined?|answered?|found|tell|say))")
#: A sentence that declines to answer because its sources do not say: "The context does not
#: mention the price", "X is not stated in the provided text", "I don't know". The source must be
#: the subject of the denial, or named after it ("in the provided excerpts"), so "rules that are
#: not stated in the rule book" is not one.
ABSTAIN = re.compile(
    rf"(?i)\b{_SOURCE}(?: \w+){{0,2}} (?:does|do|did) ?n[o']t (?:\w+ly )?(?:mention|state|provide|specify|discuss"
    rf"|contain|include|say|address|give|offer|indicate)"
    rf"|^(?=.*\b{_NEGATED})(?=.*\b(?:in|from|by|on|to) the (?:\w+ )?{_SOURCE}\b)"  # anchored: linear time
    r"|\bI (?:do not|don't) know\b|\bunable to (?:determine|answer|find)|\bcannot (?:determine|answer)\b")
_POLARITY = re.compile(r"^\W*(yes|no)\b(?!\s+(?:one|longer|matter|doubt)\b)", re.IGNORECASE)


def polarity(text: str) -> str | None:
    """"yes" or "no" when ``text`` opens with that answer ("No, there are none." -> "no"), else None."""
    m = _POLARITY.match(text or "")
    return m.group(1).lower() if m else None


def _correctness_checks(answer: str, reference: str, a_rows: list[dict[str, Any]],
                        r_rows: list[dict[str, Any]]) -> None:
    """Two checks the word evidence cannot make, applied in place:

    - an answer sentence that declines to answer (:data:`ABSTAIN`) states nothing the reference
      supports: P(supported) = 0, whatever words it repeats from the question;
    - an answer that opens with "yes" where the reference opens with "no" (or the reverse) has its
      first sentence contradicted, and the reference's first sentence (its yes/no) is not given.

    On RAGChecker's ``tune`` half, each lifted the correctness Pearson of the evidence alone (F1:
    0.489 -> 0.551 with both; abstentions and yes/no each about half of it).
    """
    for row in a_rows:
        if ABSTAIN.search(row["claim"]):
            row.update(p_supported=0.0, verdict="not_found",
                       reason="declines to answer (says its sources do not give it); the reference does")
    ref_yes_no, answer_yes_no = polarity(reference), polarity(answer)
    if ref_yes_no and answer_yes_no and ref_yes_no != answer_yes_no and a_rows:
        reason = f"answers {answer_yes_no!r} where the reference answers {ref_yes_no!r}"
        a_rows[0].update(p_supported=0.0, verdict="contradicted", reason=reason)
        if r_rows:
            r_rows[0].update(p_supported=0.0, verdict="not_found", reason=reason)


def factual_correctness(answer: str, reference: str, *, mode: str = "f1", beta: float = 1.0,
                        question: str | None = None, cosine: bool = False, **_: Any) -> MetricValue:
    """Precision, recall or F-beta of the answer's sentences against the reference and back (no LLM).

    TP = sum of P(answer sentence supported by the reference), FP = answer sentences - TP,
    FN = sum of 1 - P(reference sentence supported by the answer); then the judged formula.
    With ``question``, words both texts repeat from it count neither for nor against a sentence
    (as in faithfulness: restating the question is no evidence). Chosen on RAGChecker's ``tune``
    half (correctness Pearson of the F1: 0.47 -> 0.49); held out, correctness 0.39 -> 0.45 and
    completeness (read from the recall) 0.55 -> 0.59. Then :func:`_correctness_checks`: an
    answer sentence that declines to answer counts as unsupported, and a yes/no that contradicts
    the reference's contradicts its first sentence (``tune`` 0.49 -> 0.55).

    ``cosine=True`` adds each sentence's embedding cosine to its best sentence on the other side
    (the packaged MiniLM, :data:`CORRECTNESS_WEIGHTS_COSINE`; ``tune`` F-0.5 0.575 -> 0.595).
    """
    if not isinstance(cosine, bool):
        raise InputError(f"factual_correctness cosine must be true or false, got {cosine!r}")
    if not reference.strip():
        return MetricValue.undefined("empty reference")
    embedder, weights = (_EVIDENCE_EMBEDDER, CORRECTNESS_WEIGHTS_COSINE) if cosine else (None, CORRECTNESS_WEIGHTS)
    a_rows = judge_claims(sentences(answer), [reference], question, embedder, weights)
    r_rows = judge_claims(sentences(reference), [answer], question, embedder, weights)
    _correctness_checks(answer, reference, a_rows, r_rows)
    tp, fp, fn = _expected_counts(a_rows, r_rows)
    precision = tp / (tp + fp) if a_rows else None
    recall = tp / (tp + fn) if r_rows and tp + fn > 0 else (0.0 if r_rows else None)
    evidence_ = {"backend": "none", "mode": mode, "cosine": cosine, "precision": precision, "recall": recall,
                 "answer_claims": a_rows, "reference_claims": r_rows}
    side = one_side(mode, precision, recall, evidence_)
    if side is not None:
        return side
    if precision is None and recall is None:
        return MetricValue.undefined("no claims extracted from the answer or the reference", **evidence_)
    if tp <= 0:
        return MetricValue.ok(0.0, **evidence_)
    p, r = tp / (tp + fp), tp / (tp + fn)
    b2 = beta * beta
    return MetricValue.ok((1 + b2) * p * r / (b2 * p + r), beta=beta, **evidence_)


def context_recall(question: str, contexts: Sequence[str], reference: str, *, embedder: Any = None) -> MetricValue:
    """Mean P(supported by the contexts) of the reference's sentences (no LLM)."""
    if not reference.strip():
        return MetricValue.undefined("empty reference")
    claims = sentences(reference)
    rows = judge_claims(claims, contexts, question, embedder)
    if not rows:
        return MetricValue.undefined("no claims extracted from the reference", claims=[])
    return MetricValue.ok(sum(r["p_supported"] for r in rows) / len(rows), backend="none", claims=rows)
