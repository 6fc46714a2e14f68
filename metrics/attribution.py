"""Citation metrics: does each context an answer cites support the sentence that cites it?

The sample's ``citations`` (:mod:`metrics.citations`) give, per answer sentence, the contexts it
cites (1-based). Support of a sentence by a set of passages is the faithfulness machinery restricted
to those passages: with a judge, :func:`metrics.judging.sentence_support` (the passage sentences
about it, picked by :class:`metrics.evidence.EvidencePool`, one ``claim_check`` call and its slot
checks); with ``llm=none``, the calibrated number, name and word evidence of
:func:`metrics.offline.judge_claims`. A set supports a sentence when P(supported) >= 0.5.

ALCE (Gao et al. 2023, "Enabling Large Language Models to Generate Text with Citations"):

- ``citation_recall`` = |sentences supported by the union of their cited passages| / |sentences|;
  a sentence that cites nothing counts as unsupported.
- ``citation_precision`` = |relevant citations| / |citations|. A citation is irrelevant when its
  sentence is not supported by all its citations together, or when its passage alone does not
  support the sentence AND the sentence's other citations support it without it.
- ``citation_f1`` = 2PR / (P + R).
- ``cited_evidence`` (model-free): |citing sentences that cite a context overlapping the test set's
  evidence (a span, or a document judged relevant)| / |citing sentences|.

An answer that cites nothing at all is explicit, never a silent NaN: its recall and F1 are ``ok`` 0
(ALCE's definition: no sentence is supported by its citations; F1 is 0 whatever precision would be)
with ``no_citations: true`` in the explanation; its precision and ``cited_evidence`` are
``undefined`` with the reason "the answer cites no context" (there is no citation to be precise
about). A marker that names no context is an invalid citation: it counts in precision's
denominator as irrelevant and cites nothing for recall.

Cost: each distinct (sentence, passage set) is judged once per judge and reused by every metric
and every sample that asks again (ALCE's checks overlap: a single citation's "alone" check is its
sentence's joint check). The explanation counts ``checks`` (judged here) and ``reused``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from ragsweep.metrics import offline
from ragsweep.metrics.judging import sentence_support
from ragsweep.metrics.spec import MetricSpec
from ragsweep.metrics.support import calibrate_rows
from ragsweep.metrics.values import MetricValue

NO_CITATIONS = "the answer cites no context"
OFFLINE = "support from the calibrated number, name and word evidence of the cited passages (no LLM)"


class _Verdicts:
    """Support verdicts of one judge, by (sentence, passages): each judged once, in flight
    once (a second metric asking for the same pair waits for the first's answer)."""

    LIMIT = 20_000

    def __init__(self) -> None:
        self.done: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.flight: dict[tuple[Any, ...], asyncio.Future[dict[str, Any]]] = {}

    async def get(self, judge: Any, sentence: str, passages: tuple[str, ...]) -> tuple[dict[str, Any], bool]:
        """The support row and whether it was reused."""
        key = (sentence, passages)
        if key in self.done:
            return self.done[key], True
        loop = asyncio.get_running_loop()
        waiting = self.flight.get(key)
        if waiting is not None and waiting.get_loop() is loop and not waiting.done():
            return await asyncio.shield(waiting), True
        future = self.flight[key] = loop.create_future()
        try:
            row = await _support(judge, sentence, passages)
        except BaseException as exc:  # a failed check is asked again by the next metric, not reused
            self.flight.pop(key, None)
            future.set_exception(exc)
            future.exception()  # retrieved, so asyncio does not log it as never awaited
            raise
        if len(self.done) >= self.LIMIT:
            self.done.clear()
        self.done[key] = row
        self.flight.pop(key, None)
        future.set_result(row)
        return row, False


_BY_JUDGE: weakref.WeakKeyDictionary[Any, _Verdicts] = weakref.WeakKeyDictionary()
_NO_JUDGE = _Verdicts()


def _verdicts(judge: Any) -> _Verdicts:
    if judge is None:
        return _NO_JUDGE
    try:
        return _BY_JUDGE.setdefault(judge, _Verdicts())
    except TypeError:  # a judge that cannot be weakly referenced gets no reuse across metrics
        return _Verdicts()


async def _support(judge: Any, sentence: str, passages: tuple[str, ...]) -> dict[str, Any]:
    # The cited passages alone must support the sentence (ALCE: the passages entail it). The question is
    # not evidence: with its words taken as given, "Gin and Paloma are both based on tequila [2]" passes
    # on a passage that names one of them.
    if not passages:
        return {"p_supported": 0.0, "verdict": "not_supported", "evidence": "no passage cited"}
    if judge is None:
        rows = calibrate_rows(offline.judge_claims([sentence], list(passages), None), None)
    else:
        rows = await sentence_support(judge, None, [sentence], list(passages))
    row = rows[0]
    return {"p_supported": round(float(row["p_supported"]), 4),
            "verdict": "supported" if row["p_supported"] >= 0.5 else "not_supported",
            "evidence": row.get("evidence", row.get("reason", "")), "shown": row.get("shown")}


class _Checker:
    """Support checks for one sample, counting what was judged and what was reused."""

    def __init__(self, judge: Any, contexts: Sequence[str]) -> None:
        self.judge, self.contexts = judge, contexts
        self.memo = _verdicts(judge)
        self.checks = self.reused = 0

    async def supported(self, sentence: str, cites: Sequence[int]) -> dict[str, Any]:
        passages = tuple(self.contexts[k - 1] for k in sorted(set(cites)))
        row, reused = await self.memo.get(self.judge, sentence, passages)
        self.reused += reused
        self.checks += not reused
        return row


def _cited(citations: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[int], list[int]]]:
    return [(str(c["sentence"]), [int(k) for k in c.get("cites") or ()], [int(k) for k in c.get("invalid") or ()])
            for c in citations]


async def citation_rows(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str],
                        question: str | None = None, *, judge: Any = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Per sentence: its citations, whether their union supports it, and per citation whether it is
    relevant (ALCE); with the sample's check counts. ``question`` is read for no verdict: a citation
    must support its sentence on its own, words the sentence takes from the question included."""
    check = _Checker(judge, contexts)
    n = len(contexts)

    async def one(sentence: str, cites: list[int], invalid: list[int]) -> dict[str, Any]:
        cites = [k for k in cites if 1 <= k <= n]
        invalid = [*invalid, *(k for k in cites if not 1 <= k <= n)]
        row: dict[str, Any] = {"sentence": sentence, "cites": cites, "invalid": invalid}
        if not cites:
            row.update(supported=False, p_supported=0.0, why="cites no context", citations=[
                {"context": k, "relevant": False, "why": "names no context"} for k in invalid])
            return row
        joint = await check.supported(sentence, cites)
        row.update(supported=joint["verdict"] == "supported", p_supported=joint["p_supported"],
                   evidence=joint["evidence"], shown=joint.get("shown"))
        verdicts = []
        for k in cites:
            if not row["supported"]:
                verdicts.append({"context": k, "relevant": False, "why": "its sentence is not supported by its "
                                 "citations together"})
                continue
            alone = joint if len(cites) == 1 else await check.supported(sentence, [k])
            if alone["verdict"] == "supported":
                verdicts.append({"context": k, "relevant": True, "why": "supports the sentence alone",
                                 "p_alone": alone["p_supported"]})
                continue
            rest = await check.supported(sentence, [j for j in cites if j != k])
            needed = rest["verdict"] != "supported"
            verdicts.append({"context": k, "relevant": needed, "p_alone": alone["p_supported"],
                             "p_without": rest["p_supported"],
                             "why": "needed: the other citations do not support the sentence without it" if needed
                             else "not needed: the other citations support the sentence without it"})
        verdicts += [{"context": k, "relevant": False, "why": "names no context"} for k in invalid]
        row["citations"] = verdicts
        return row

    rows = [await one(*c) for c in _cited(citations)]
    return rows, {"checks": check.checks, "reused": check.reused}


def _backend(judge: Any) -> str:
    return "none" if judge is None else str(getattr(judge, "model_id", "judge"))


async def citation_recall(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str], question: str | None = None,
                          *, judge: Any = None) -> MetricValue:
    """Share of answer sentences supported by the union of their cited passages (ALCE citation recall).

    Range [0, 1], higher is better. A sentence without a valid citation is unsupported; an answer that
    cites nothing is 0 with ``no_citations``. No sentence -> undefined.
    """
    if not citations:
        return MetricValue.undefined("no sentence in the answer", sentences=[])
    rows, counts = await citation_rows(citations, contexts, question, judge=judge)
    supported = sum(r["supported"] for r in rows)
    extra = {"no_citations": True, "reason": NO_CITATIONS} if not any(r["cites"] or r["invalid"] for r in rows) else {}
    return MetricValue.ok(supported / len(rows), supported=supported, total=len(rows), backend=_backend(judge),
                          **counts, **extra, sentences=rows)


def _precision(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    marks = [c for r in rows for c in r.get("citations", ())]
    return sum(c["relevant"] for c in marks), len(marks)


async def citation_precision(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str],
                             question: str | None = None, *, judge: Any = None) -> MetricValue:
    """Share of citations that are relevant (ALCE citation precision; see the module docstring).

    Range [0, 1], higher is better. Invalid markers count as irrelevant citations. No citation at
    all -> undefined ("the answer cites no context").
    """
    if not citations:
        return MetricValue.undefined("no sentence in the answer", sentences=[])
    rows, counts = await citation_rows(citations, contexts, question, judge=judge)
    relevant, total = _precision(rows)
    if total == 0:
        return MetricValue.undefined(NO_CITATIONS, no_citations=True, sentences=rows)
    return MetricValue.ok(relevant / total, relevant=relevant, citations=total, backend=_backend(judge),
                          **counts, sentences=rows)


async def citation_f1(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str], question: str | None = None,
                      *, judge: Any = None) -> MetricValue:
    """Harmonic mean of citation precision and recall: 2PR / (P + R); 0 when both are 0.

    Range [0, 1], higher is better. An answer that cites nothing is 0 (its recall is 0) with
    ``no_citations``. No sentence -> undefined.
    """
    if not citations:
        return MetricValue.undefined("no sentence in the answer", sentences=[])
    rows, counts = await citation_rows(citations, contexts, question, judge=judge)
    recall = sum(r["supported"] for r in rows) / len(rows)
    relevant, total = _precision(rows)
    if total == 0:
        return MetricValue.ok(0.0, recall=0.0, precision=None, no_citations=True, reason=NO_CITATIONS,
                              backend=_backend(judge), **counts, sentences=rows)
    precision = relevant / total
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return MetricValue.ok(f1, recall=recall, precision=precision, backend=_backend(judge), **counts, sentences=rows)


def _overlaps(span: Sequence[Any], evidence: Sequence[Sequence[Any]]) -> bool:
    doc, start, end = span
    return any(doc == d and start < e and s < end for d, s, e in evidence)


def cited_evidence(citations: Sequence[Mapping[str, Any]], retrieved: Sequence[Sequence[Any]],
                   evidence: Sequence[Sequence[Any]] | None = None, qrels: Mapping[str, int] | None = None) -> MetricValue:
    """Share of citing sentences that cite a context overlapping the test set's evidence (no model).

    A cited context (``retrieved[k - 1]``, the k-th context returned) is evidence when its span
    overlaps a gold evidence span, or, for a corpus judged by documents (BEIR qrels), when its
    document is judged relevant. Range [0, 1], higher is better. No citing sentence -> undefined.
    """
    if evidence is None and qrels is None:
        return MetricValue.undefined("no evidence spans or document judgements to compare citations with")
    rows = []
    for sentence, cites, invalid in _cited(citations):
        cites = [k for k in cites if 1 <= k <= len(retrieved)]
        if not cites:
            continue
        hits = [k for k in cites if (_overlaps(retrieved[k - 1], evidence) if evidence is not None
                                     else (qrels or {}).get(str(retrieved[k - 1][0]), 0) > 0)]
        rows.append({"sentence": sentence, "cites": cites, "evidence_cited": hits, "ok": bool(hits)})
    if not rows:
        return MetricValue.undefined(NO_CITATIONS, no_citations=True)
    good = sum(r["ok"] for r in rows)
    return MetricValue.ok(good / len(rows), citing=len(rows), on_evidence=good, sentences=rows)


async def _offline(fn: Any, citations: Sequence[Mapping[str, Any]], contexts: Sequence[str],
                   question: str | None = None) -> MetricValue:
    return await fn(citations, contexts, question, judge=None)


async def citation_recall_offline(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str],
                                  question: str | None = None) -> MetricValue:
    return await _offline(citation_recall, citations, contexts, question)


async def citation_precision_offline(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str],
                                     question: str | None = None) -> MetricValue:
    return await _offline(citation_precision, citations, contexts, question)


async def citation_f1_offline(citations: Sequence[Mapping[str, Any]], contexts: Sequence[str],
                              question: str | None = None) -> MetricValue:
    return await _offline(citation_f1, citations, contexts, question)


_C = ("citations", "contexts")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("citation_recall", citation_recall, _C, optional=("question",), needs_judge=True,
               offline_fn=citation_recall_offline, offline=OFFLINE, reads_history=False,
               description="share of answer sentences supported by the union of their cited contexts (ALCE)"),
    MetricSpec("citation_precision", citation_precision, _C, optional=("question",), needs_judge=True,
               offline_fn=citation_precision_offline, offline=OFFLINE, reads_history=False,
               description="share of citations that support their sentence or are needed for it (ALCE)"),
    MetricSpec("citation_f1", citation_f1, _C, optional=("question",), needs_judge=True,
               offline_fn=citation_f1_offline, offline=OFFLINE, reads_history=False,
               description="harmonic mean of citation precision and recall"),
    MetricSpec("cited_evidence", cited_evidence, ("citations", "retrieved"), optional=("evidence", "qrels"),
               description="share of citing sentences that cite a context overlapping the gold evidence"),
)
