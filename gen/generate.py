"""The generation loop: candidates -> writer -> gates -> round trip -> test samples, until ``n`` or exhaustion.

Deterministic for a seed: documents and candidates come in a seeded order, candidates are
written in fixed-size batches and gated in that order, so the same seed (and the same model
outputs, which the LLM cache replays) gives the same test set. An interrupted run therefore
resumes where it stopped: every call it already made is answered from the cache.

The cheap gates come first: only a question that passed every deterministic gate (and the
duplicate gate) costs a round-trip call (:mod:`gen.roundtrip`). A batch's writes go first and its
round trips after them, so a model that keeps one prompt's prefix in its cache switches prompts
once per batch, not once per candidate.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ragsweep.gen.absence import AbsenceCheck, CorpusWords, unspecific
from ragsweep.gen.candidates import Candidate, candidates
from ragsweep.gen.documents import Corpus, Span
from ragsweep.gen.followup import check_follow_up
from ragsweep.gen.gates import (
    DuplicateFilter,
    GateConfig,
    Report,
    check_sample,
    content_tokens,
    kind_quotas,
    lexical_overlap,
    support_ratio,
)
from ragsweep.gen.roundtrip import agreement, answer_from_evidence
from ragsweep.gen.testset import FOLLOW_UP_KIND, KINDS, UNANSWERABLE_KIND, TestSample
from ragsweep.gen.units import Unit, corpus_units, names_subject, unit_topics
from ragsweep.gen.writer import Draft, WriteFailed, Writer
from ragsweep.metrics import LLM, UNANSWERABLE, InputError, JudgeError, Usage, declines

log = logging.getLogger(__name__)


@dataclass
class GenConfig:
    """What to generate (see ``conf/gen.yaml`` for meanings and defaults)."""

    n: int
    kinds: Sequence[tuple[str, float]] = (("single_hop", 1.0),)
    seed: int = 0
    personas: Sequence[str] = ()
    styles: Sequence[str] = ()
    max_docs: int | None = None
    min_sentence_chars: int = 40
    max_attempts: int | None = None
    concurrency: int = 1
    batch: int | None = None  # candidates written per round before their round trips (None: concurrency)
    max_tries_per_sample: int | None = None  # a kind gives up after this many candidates per sample of its quota
    gates: GateConfig = field(default_factory=GateConfig)
    # A top-up (``append_to``): the set's questions join the duplicate gate, its candidates are not redrawn.
    known_questions: Sequence[str] = ()
    known_candidates: frozenset[str] = frozenset()


@dataclass
class Result:
    samples: list[TestSample]
    report: Report
    seconds: float
    usage: Usage
    attempts: int


def check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"n must be a positive integer (how many samples to write), got {n!r}")
    return n


def _variations(cand: Candidate, cfg: GenConfig) -> tuple[str | None, str | None]:
    """(persona, style) for a candidate: a seeded choice, or None when none is configured."""
    out: list[str | None] = []
    for what, options in (("persona", cfg.personas), ("style", cfg.styles)):
        h = int(hashlib.sha256(f"{cfg.seed}:{what}:{cand.key}".encode()).hexdigest()[:8], 16)
        out.append(options[h % len(options)] if options else None)
    return out[0], out[1]


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


class _Schedule:
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


def generate(corpus: Corpus, writer: Writer, cfg: GenConfig, *,
             embed: Callable[[list[str]], np.ndarray] | None = None, judge: LLM | None = None,
             progress: bool = False) -> Result:
    """Write up to ``cfg.n`` gated samples from ``corpus``.

    ``judge`` answers each question that passed the other gates from its evidence alone, when
    ``cfg.gates.roundtrip`` is on (:mod:`gen.roundtrip`); None: no round trip.
    """
    return asyncio.run(agenerate(corpus, writer, cfg, embed=embed, judge=judge, progress=progress))


async def agenerate(corpus: Corpus, writer: Writer, cfg: GenConfig, *,
                    embed: Callable[[list[str]], np.ndarray] | None = None, judge: LLM | None = None,
                    progress: bool = False) -> Result:
    """See :func:`generate`."""
    from tqdm import tqdm

    started = time.perf_counter()
    n = check_n(cfg.n)
    doc_ids = [d.id for d in corpus.documents]
    random.Random(cfg.seed).shuffle(doc_ids)  # the seeded sample of documents
    readable = getattr(writer, "readable", None)  # optional: a writer that reads only some documents (English)
    if readable is not None:
        doc_ids = readable(corpus, doc_ids)
    if cfg.max_docs:
        doc_ids = doc_ids[: cfg.max_docs]
    units = corpus_units(corpus, doc_ids, cfg.min_sentence_chars)
    # Each unit's topic, shown to the writer beside its sentence: its document's, or its own article's in a
    # document that glues several together (gen.units.unit_topics).
    topics = {(u.doc_id, u.start): t for d, us in units.items() for u, t in zip(us, unit_topics(corpus.get(d), us))}
    mix = [(k, w) for k, w in cfg.kinds if k in writer.kinds and w > 0]
    dropped = [k for k, w in cfg.kinds if w > 0 and k not in writer.kinds]
    if dropped:
        log.warning("the %s writer writes %s only: ignoring %s", writer.backend, ", ".join(writer.kinds),
                    ", ".join(dropped))
    if not mix:
        raise InputError(f"no question kind left to write: {writer.backend} writes {', '.join(writer.kinds)}")
    prepare = getattr(writer, "prepare", None)  # optional: a writer that learns from the corpus's sentences
    if prepare is not None:
        prepare(units, tuple(cfg.styles))
    # The absence gate of unanswerable questions reads the whole corpus (not only the sampled documents).
    # So does the specificity gate: no other document may hold all of a question's words.
    need_absence = any(k == UNANSWERABLE_KIND for k, _ in mix)
    words = CorpusWords(corpus) if cfg.gates.specific or need_absence else None
    absence = (AbsenceCheck(corpus, embed, cover=cfg.gates.absent_cover, max_cosine=cfg.gates.absent_cosine,
                            words=words) if need_absence else None)
    report = Report(requested=n)
    # A top-up does not draw again the candidates its set's questions were written from.
    streams = {k: (c for c in candidates(units, k, cfg.seed, topics, cfg.gates.named_subject)
                   if c.key not in cfg.known_candidates) for k, _ in mix}
    unnamed = sum(not names_subject(u.text) for us in units.values() for u in us)
    report.units = {"sentences": sum(map(len, units.values())), "unnamed_subject": unnamed,
                    "left_out": unnamed if cfg.gates.named_subject else 0, **getattr(writer, "left_out", {})}
    max_attempts = cfg.max_attempts or 20 * n + 50
    schedule = _Schedule(kind_quotas(n, mix), streams, report, cfg.max_tries_per_sample, max_attempts)
    dups = DuplicateFilter(embed, cfg.gates.dup_cosine)
    known = list(cfg.known_questions)
    for question, vec in zip(known, embed(known) if embed is not None and known else [None] * len(known)):
        dups.add(question, vec)
    samples: list[TestSample] = []
    usage, attempts, stopped = Usage(), 0, False
    bar = tqdm(total=n, desc="gen", unit="q", disable=not progress, dynamic_ncols=True)

    roundtrip = judge if cfg.gates.roundtrip else None
    limiter = asyncio.Semaphore(max(1, cfg.concurrency))  # calls in flight, writes and round trips alike

    async def attempt(cand: Candidate) -> Draft | WriteFailed:
        async with limiter:
            try:
                shown_topics = [topics[u.doc_id, u.start] for u in cand.shown]
                return await writer.write(cand, shown_topics, *_variations(cand, cfg))
            except WriteFailed as exc:
                return exc

    async def check(passed: _Passed) -> _Passed:
        async with limiter:
            return await _round_trip(passed, roundtrip, cfg.gates.roundtrip_min_f1, cfg.gates.roundtrip_hops)

    while len(samples) < n and not stopped:
        batch: list[Candidate] = []
        while len(batch) < max(1, cfg.batch or cfg.concurrency):
            cand = schedule.next()
            if cand is None:
                break
            batch.append(cand)
        if not batch:
            break
        drafts = await asyncio.gather(*(attempt(c) for c in batch))
        passed: list[_Passed] = []  # through every deterministic gate, in candidate order
        for cand, draft in zip(batch, drafts):
            if len(samples) + len(passed) >= n:
                break
            attempts += 1
            report.tried_by_kind[cand.kind] = report.tried_by_kind.get(cand.kind, 0) + 1
            if attempts >= max_attempts:
                stopped = True
            if isinstance(draft, WriteFailed):
                report.reject("write_failed", {"candidate": cand.key, "error": str(draft)[:300]}, cand.kind)
            else:
                usage = usage + draft.usage
                ok = _gate(draft, cand, corpus, cfg, writer, dups, report, absence, words, units, topics)
                if ok is not None:
                    passed.append(ok)
            if stopped:
                break
        # The round trips, only for questions every cheap gate let through (an unanswerable one is asked of the
        # sentences its writer was shown, and must not be answered from them).
        if roundtrip is not None:
            passed = list(await asyncio.gather(*(check(p) for p in passed)))
        for p in passed:
            usage = usage + p.usage
            if p.outcome is not None:
                report.count_roundtrip(p.outcome)
            if p.reason is not None:
                dups.discard(p.sample.question)
                report.reject(p.reason, p.example, p.sample.kind)
                continue
            report.accept(p.sample.kind, p.sample.provenance.get("overlap"))
            samples.append(replace(p.sample, id=f"gen-{len(samples) + 1:04d}"))
        bar.n = len(samples)
        bar.set_postfix(accepted=report.accepted, rejected=report.n_rejected, refresh=False)
        bar.refresh()
    bar.close()
    if stopped and len(samples) < n:
        report.exhausted.append(f"(stopped after max_attempts={max_attempts})")
    if warning := report.overlap()["warning"]:
        log.warning(warning)
    return Result(samples, report, time.perf_counter() - started, usage, attempts)


@dataclass
class _Passed:
    """A sample through the deterministic gates, waiting for its round trip."""

    sample: TestSample
    example: dict[str, Any]             # what the report keeps if it is rejected after all
    texts: tuple[str, ...]              # its evidence sentences
    reason: str | None = None           # set by the round trip when it disagrees or fails
    outcome: str | None = None          # the round trip's: "agreed", why it disagreed, or "failed"
    usage: Usage = field(default_factory=Usage)


def _trip_failed(p: _Passed, exc: JudgeError) -> _Passed:
    """``p`` rejected because its round-trip call failed (the error is kept in the report's example)."""
    return replace(p, reason="roundtrip_failed", outcome="failed",
                   example={**p.example, "roundtrip_error": str(exc)[:300]})


async def _round_trip(p: _Passed, judge: LLM | None, min_f1: float, hops: bool = True) -> _Passed:
    """Answer ``p``'s question from its evidence with ``judge`` and compare with its reference.

    ``hops``: a multi_hop or comparative question that agrees is asked again of each evidence sentence
    alone; when one sentence alone gives the reference, the question does not need the other (a single-hop shortcut,
    Min et al., ACL 2019: "Compositional questions do not necessitate multi-hop reasoning") and is
    rejected as ``one_sentence_answers``."""
    if judge is None or not p.texts:
        return p
    if p.sample.kind == UNANSWERABLE_KIND:
        return await _round_trip_unanswerable(p, judge)
    # A follow-up turn leaves its subject to the conversation: ask its standalone form (gen.followup).
    info = p.sample.provenance.get("follow_up")
    question = str(info.get("standalone") or p.sample.question) if isinstance(info, dict) else p.sample.question
    try:
        done = await answer_from_evidence(judge, question, p.texts)
    except JudgeError as exc:
        return _trip_failed(p, exc)
    answer = str(done.parsed.answer).strip()
    verdict = agreement(answer, p.sample.reference, min_f1)
    trip: dict[str, Any] = {"answer": answer[:200], **verdict.to_dict()}
    usage, reason, outcome = done.usage, None if verdict.agree else "roundtrip_disagrees", verdict.reason or "agreed"
    if verdict.agree and hops and p.sample.kind in ("multi_hop", "comparative") and len(p.texts) >= 2:
        alone = []
        for text in p.texts:
            try:
                one = await answer_from_evidence(judge, question, [text])
            except JudgeError as exc:
                return _trip_failed(p, exc)
            usage = usage + one.usage
            alone.append(str(one.parsed.answer).strip())
        trip["alone"] = [a[:200] for a in alone]
        if any(agreement(a, p.sample.reference, min_f1).agree for a in alone):
            reason, outcome = "one_sentence_answers", "one_sentence_answers"
    sample = replace(p.sample, provenance={**p.sample.provenance, "roundtrip": trip})
    if reason is None and (longer := _fuller_name(answer, p.sample.reference, p.texts)):
        # "The Untold Story" -> "M.S. Dhoni: The Untold Story": the evidence's whole name, not a part of it.
        sample = replace(sample, reference=longer,
                         provenance={**sample.provenance, "reference_written": p.sample.reference})
    return replace(p, sample=sample, example={**p.example, "roundtrip": trip}, usage=usage,
                   reason=reason, outcome=outcome)


async def _round_trip_unanswerable(p: _Passed, judge: LLM) -> _Passed:
    """An unanswerable question asked of the sentences its writer was shown (``p.texts``): when the model answers
    it from them instead of saying they do not, they do answer it, and it is rejected as ``answer_in_corpus``
    ("What is the distance between Brierfield railway station and Burnley Central railway station?", written
    from "Brierfield railway station ... is 2+1/4 mi east of Burnley Central railway station": 5 of its 7 words
    in that document, below ``gates.absent_cover``, so the word check let it through)."""
    try:
        done = await answer_from_evidence(judge, p.sample.question, p.texts)
    except JudgeError as exc:
        return _trip_failed(p, exc)
    answer = str(done.parsed.answer).strip()
    trip = {"answer": answer[:200], "declined": declines(answer) is not None}
    reason, outcome = (None, "agreed") if trip["declined"] else ("answer_in_corpus", "answered_unanswerable")
    sample = replace(p.sample, provenance={**p.sample.provenance, "roundtrip": trip})
    return replace(p, sample=sample, example={**p.example, "roundtrip": trip}, usage=done.usage, reason=reason,
                   outcome=outcome)


def _fuller_name(answer: str, reference: str, texts: Sequence[str]) -> str | None:
    """The round trip's answer when it is the reference's name in full: it holds the reference, is at most
    eight words, stands verbatim in the evidence, and the reference is a name (a capitalised word); else None."""
    answer, reference = answer.strip().rstrip("."), reference.strip().rstrip(".")
    if (len(answer) <= len(reference) or len(answer.split()) > 8 or not re.search(r"\b[A-Z]", reference)
            or reference.lower().removeprefix("the ") not in answer.lower() or not any(answer in t for t in texts)):
        return None
    return answer


def _widen_evidence(draft: Draft, cand: Candidate, min_support: float) -> Draft:
    """A reference its evidence does not hold but the sentences the writer was shown do: the writer
    answered from a shown sentence it did not mark as used (a 1.5B often answers from the context
    sentence before the one asked about). Its evidence gains the shown sentences that hold reference
    words, in shown order, when they bring its support to ``min_support``; otherwise it is unchanged
    (and the answerability gate rejects it)."""
    text = " ".join(u.text for u in draft.evidence)
    if support_ratio(draft.reference, text) >= min_support:
        return draft
    ref = set(content_tokens(draft.reference))
    have = {(u.doc_id, u.start) for u in draft.evidence}
    extra = [u for u in cand.shown if (u.doc_id, u.start) not in have and ref & set(content_tokens(u.text))]
    widened = tuple(u for u in cand.shown if (u.doc_id, u.start) in have or u in extra)
    if not extra or support_ratio(draft.reference, " ".join(u.text for u in widened)) < min_support:
        return draft
    return replace(draft, evidence=widened, provenance={**draft.provenance, "evidence_widened": len(extra)})


#: A sentence that refers to something without naming it in full: a pronoun, or an opening "The <noun>".
_REFERS = re.compile(r"^The [a-z]|\b(?:[Ii]t|[Ii]ts|[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Tt]hey|[Tt]heir)\b")


def _bare(name: str) -> str:
    """A name compared loosely: lower case, without a leading article or trailing punctuation."""
    return re.sub(r"^(?:the|a|an)\s+", "", name.strip().strip(".,;:\"'").lower())


def _name_topic(draft: Draft, units: dict[str, list[Unit]], topics: dict[tuple[str, int], str],
                min_support: float) -> Draft:
    """A reference that is its sentence's topic (its document's subject, or its article's in a document that glues
    several), asked of a sentence that calls the subject by part of its name, a pronoun or "The <noun>" ("Vance
    ordered the low streets ... evacuated" -> "Who ordered ...?" -> "Teodora Vance"; "The company runs two routes
    ..." -> "Calder Ferries"): the evidence gains the first sentence of that topic that names the subject in
    full, so the reference stands in its evidence. Otherwise the draft is unchanged (and the answerability
    gate rejects it)."""
    if support_ratio(draft.reference, " ".join(u.text for u in draft.evidence)) >= min_support:
        return draft
    ref = _bare(draft.reference)
    if not ref:
        return draft
    for unit in draft.evidence:
        topic = topics.get((unit.doc_id, unit.start), "")
        if _bare(topic) != ref:
            continue
        words = {w for w in re.findall(r"[A-Z][\w'’-]{2,}", topic)} - {"The"}
        if not (_REFERS.search(unit.text) or words & set(re.findall(r"[A-Z][\w'’-]{2,}", unit.text))):
            continue
        naming = next((u for u in units.get(unit.doc_id, ())
                       if topics.get((u.doc_id, u.start)) == topic and ref in u.text.lower()), None)
        if naming is None or naming in draft.evidence:
            continue
        order = {d: i for i, d in enumerate(dict.fromkeys(u.doc_id for u in draft.evidence))}
        evidence = tuple(sorted((*draft.evidence, naming), key=lambda u: (order[u.doc_id], u.start)))
        return replace(draft, evidence=evidence, provenance={**draft.provenance, "evidence_named": True})
    return draft


def _gate(draft: Draft, cand: Candidate, corpus: Corpus, cfg: GenConfig, writer: Writer,
          dups: DuplicateFilter, report: Report, absence: AbsenceCheck | None = None,
          words: CorpusWords | None = None, units: dict[str, list[Unit]] | None = None,
          topics: dict[tuple[str, int], str] | None = None) -> _Passed | None:
    """The deterministic gates (and the absence gate) in order; None when one rejected the draft.
    A draft that passes joins the duplicate gate at once, so the next of its batch is checked against it."""
    unanswerable = cand.kind == UNANSWERABLE_KIND
    if unanswerable:  # whatever the writer said: no evidence, and the one reference
        draft = replace(draft, reference=UNANSWERABLE, evidence=())
    else:
        draft = _widen_evidence(draft, cand, cfg.gates.min_support)
        if units is not None:
            draft = _name_topic(draft, units, topics or {}, cfg.gates.min_support)
    evidence = tuple(Span(u.doc_id, u.start, u.end) for u in draft.evidence)
    # The share of the question's content words found in its evidence documents (gates.evidence_overlap).
    docs = dict.fromkeys(u.doc_id for u in draft.evidence)
    overlap = lexical_overlap(draft.question, [corpus.get(d).text for d in docs if d in corpus]) if docs else None
    sample = TestSample(
        id="", question=draft.question, reference=draft.reference,
        evidence=evidence, kind=cand.kind,
        provenance={"backend": writer.backend, "model": writer.model_id, "prompt": writer.prompt_version,
                    "seed": cfg.seed, "candidate": cand.key, **({"bridge": cand.bridge} if cand.bridge else {}),
                    **{k: v for k, v in zip(("persona", "style"), _variations(cand, cfg)) if v},
                    **({"overlap": round(overlap.share, 3)} if overlap is not None else {}), **draft.provenance},
        quotes=tuple(u.text for u in draft.evidence))
    example = {"candidate": cand.key, "question": draft.question, "reference": draft.reference,
               "overlap": sample.provenance.get("overlap")}
    if cand.kind == FOLLOW_UP_KIND:  # the pair's gates; the sample gets its conversation (gen.followup)
        sample, reason = check_follow_up(sample, corpus, cfg.gates)
    else:
        reason = check_sample(sample, corpus, cfg.gates)
    if (reason is None and words is not None and cfg.gates.specific and sample.evidence
            and cand.kind != FOLLOW_UP_KIND):  # a follow-up's second turn leaves its subject to the first
        if (other := unspecific(draft.question, set(docs), words)) is not None:
            reason, example["unspecific_doc"] = "unspecific", other
    if reason is None and unanswerable and absence is not None:
        verdict = absence.check(draft.question)
        example["absence"] = {**verdict.to_dict(), "check": verdict.check}
        reason = verdict.reason
        sample = replace(sample, provenance={**sample.provenance, "absence": verdict.to_dict()})
    vec = None
    if reason is None:
        reason, vec = dups.check(draft.question)
    if reason is not None:
        report.reject(reason, example, cand.kind)
        return None
    dups.add(draft.question, vec)
    # An unanswerable question has no evidence: its round trip reads the sentences its writer was shown.
    texts = tuple(u.text for u in (cand.shown if unanswerable else draft.evidence))
    return _Passed(sample, example, texts)
