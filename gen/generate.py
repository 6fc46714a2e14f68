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
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

import numpy as np

from ragsweep.gen.absence import AbsenceCheck, CorpusWords
from ragsweep.gen.candidates import Candidate, candidates
from ragsweep.gen.docs_defaults import AFTER_STYLES
from ragsweep.gen.documents import Corpus
from ragsweep.gen.drafts import Gating, Passed
from ragsweep.gen.products import Turns, by_product
from ragsweep.gen.gates import GateConfig, QuestionStop
from ragsweep.gen.report import Report
from ragsweep.gen.query_form import claim_passed
from ragsweep.gen.reword import RewordConfig, reword_passed
from ragsweep.gen.roundtrip import round_trip
from ragsweep.gen.schedule import Schedule, kind_quotas
from ragsweep.gen.structure import for_users, structured, with_following
from ragsweep.gen.supported import evidence_support
from ragsweep.gen.styles import cue_counts, interleave, requested, style_candidates
from ragsweep.gen.testset import UNANSWERABLE_KIND, TestSample
from ragsweep.gen.units import Unit, corpus_units, names_subject, topic_of, unit_topics
from ragsweep.gen.wording import DuplicateFilter
from ragsweep.gen.writer import Draft, WriteFailed, Writer
from ragsweep.metrics import LLM, InputError, JudgeError, Usage

log = logging.getLogger(__name__)


@dataclass
class GenConfig:
    """What to generate (see ``conf/gen.yaml`` for meanings and defaults)."""

    n: int
    kinds: Sequence[tuple[str, float]] = (("single_hop", 1.0),)
    seed: int = 0
    personas: Sequence[str] = ()
    styles: Sequence[str] = ()
    facts_on_docs: str = AFTER_STYLES  # or "mixed" (gen.docs_defaults.FACTS_ON_DOCS)
    max_docs: int | None = None
    min_sentence_chars: int = 40
    max_attempts: int | None = None
    concurrency: int = 1
    batch: int | None = None  # candidates written per round before their round trips (None: concurrency)
    max_tries_per_sample: int | None = None  # a kind gives up after this many candidates per sample of its quota
    gates: GateConfig = field(default_factory=GateConfig)
    reword: RewordConfig = field(default_factory=RewordConfig)  # a question reworded off its evidence's words
    form: str = "question"  # the queries' form (gen.query_form): "question", or "claim" stated by the writer's model
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


def generate(corpus: Corpus, writer: Writer, cfg: GenConfig, *,
             embed: Callable[[list[str]], np.ndarray] | None = None, judge: LLM | None = None,
             progress: bool = False) -> Result:
    """Write up to ``cfg.n`` gated samples from ``corpus``.

    ``judge`` answers each question that passed the other gates from its evidence alone, when
    ``cfg.gates.roundtrip`` is on (:mod:`gen.roundtrip`); None: no round trip.
    """
    return asyncio.run(agenerate(corpus, writer, cfg, embed=embed, judge=judge, progress=progress))


def variations(cand: Candidate, cfg: GenConfig) -> tuple[str | None, str | None]:
    """(persona, style) for a candidate: a seeded choice, or None when none is configured. A candidate chosen
    for a documentation style by what its section holds keeps that style (:mod:`gen.styles`)."""
    out: list[str | None] = []
    for what, options in (("persona", cfg.personas), ("style", requested(cfg.styles)[1])):
        h = int(hashlib.sha256(f"{cfg.seed}:{what}:{cand.key}".encode()).hexdigest()[:8], 16)
        out.append(options[h % len(options)] if options else None)
    return out[0], cand.style or out[1]


def _sampled_units(corpus: Corpus, writer: Writer, cfg: GenConfig) -> dict[str, list[Unit]]:
    """The sentence units of the seeded sample of documents (only those the writer reads, at most ``max_docs``)."""
    doc_ids = [d.id for d in corpus.documents]
    random.Random(cfg.seed).shuffle(doc_ids)  # the seeded sample of documents
    readable = getattr(writer, "readable", None)  # optional: a writer that reads only some documents (English)
    if readable is not None:
        doc_ids = readable(corpus, doc_ids)
    if cfg.max_docs:
        doc_ids = doc_ids[: cfg.max_docs]
    return corpus_units(corpus, doc_ids, cfg.min_sentence_chars)


def _kind_mix(writer: Writer, cfg: GenConfig) -> list[tuple[str, float]]:
    """The configured kinds the writer writes, with their weights; a clear error when none is left."""
    mix = [(k, w) for k, w in cfg.kinds if k in writer.kinds and w > 0]
    dropped = [k for k, w in cfg.kinds if w > 0 and k not in writer.kinds]
    if dropped:
        log.warning("the %s writer writes %s only: ignoring %s", writer.backend, ", ".join(writer.kinds),
                    ", ".join(dropped))
    if not mix:
        raise InputError(f"no question kind left to write: {writer.backend} writes {', '.join(writer.kinds)}")
    return mix


def _gating(corpus: Corpus, writer: Writer, cfg: GenConfig, mix: Sequence[tuple[str, float]],
            units: dict[str, list[Unit]], topics: dict[tuple[str, int], str],
            embed: Callable[[list[str]], np.ndarray] | None, report: Report) -> Gating:
    """The gates of the run, with the set's known questions already in the duplicate gate (a top-up)."""
    # The absence gate of unanswerable questions reads the whole corpus (not only the sampled documents).
    # So does the specificity gate: no other document may hold all of a question's words.
    need_absence = any(k == UNANSWERABLE_KIND for k, _ in mix)
    words = CorpusWords(corpus) if cfg.gates.specific or need_absence else None
    absence = (AbsenceCheck(corpus, embed, cover=cfg.gates.absent_cover, max_cosine=cfg.gates.absent_cosine,
                            words=words) if need_absence else None)
    dups = DuplicateFilter(embed, cfg.gates.dup_cosine)
    known = list(cfg.known_questions)
    for question, vec in zip(known, embed(known) if embed is not None and known else [None] * len(known)):
        dups.add(question, vec)
    return Gating(corpus, cfg.gates, cfg.seed, writer, dups, report, absence, words, units, topics)


def _streams(corpus: Corpus, writer: Writer, cfg: GenConfig, mix: Sequence[tuple[str, float]],
             units: dict[str, list[Unit]], topics: dict[tuple[str, int], str],
             report: Report, turns: Turns) -> dict[str, Iterator[Candidate]]:
    """Each kind's candidates. With documentation styles asked for, the single_hop stream gives their candidates
    (in turn, :func:`gen.styles.interleave`) before its own plain ones, or takes them in turn with its own
    (``facts_on_docs: mixed``); a style the writer does not write is left out, and
    how many candidates its cue gave goes into the report (``styles_not_written``). A top-up does not draw
    again the candidates its set's questions were written from."""
    plain = {k: candidates(units, k, cfg.seed, topics, cfg.gates.named_subject) for k, _ in mix}
    asked = requested(cfg.styles)[0]
    if asked and "single_hop" in plain:
        writes = [s for s in asked if s in getattr(writer, "styles", ())]
        report.styles_not_written = {s: n for s, n in cue_counts(corpus, units, [s for s in asked if s not in writes])
                                     .items() if n}
        if report.styles_not_written:
            log.warning("the %s writer does not write %s questions (%s candidates found); a model writes them: "
                        "llm=local", writer.backend, ", ".join(report.styles_not_written),
                        ", ".join(f"{s} {n}" for s, n in report.styles_not_written.items()))
        # the plain questions of a docs corpus read its structure too: a list item whole, no fact from an example
        whole = getattr(writer, "shows_items", False)
        # ... and ask what a user of the product would: no question of a contributing page, nor of one the site
        # does not list
        facts = structured(corpus, plain["single_hop"], whole)
        styled = [style_candidates(corpus, units, s, cfg.seed) for s in writes]
        # Plain facts come after the styled candidates by default: on the hand-read docs sets they were right and
        # worth asking least often of any style (gen.docs_defaults). by_product below keeps a product's own order,
        # so each product's facts wait for its styled candidates to run out, not for every product's.
        plain["single_hop"] = for_users(corpus, chain(interleave(styled), facts) if cfg.facts_on_docs == AFTER_STYLES
                                        else interleave([facts, *styled]))
        if whole:  # a writer of questions from several sentences is shown what follows its text (the answer may)
            plain["single_hop"] = with_following(corpus, plain["single_hop"])
    # a folder of several products: the product with fewest questions next (over every kind), so the few pages
    # of a small one get questions too and one whose candidates pass easily does not take the set
    return {k: by_product(corpus, (c for c in stream if c.key not in cfg.known_candidates), turns)
            for k, stream in plain.items()}


def _next_batch(schedule: Schedule, size: int) -> list[Candidate]:
    batch: list[Candidate] = []
    while len(batch) < size and (cand := schedule.next()) is not None:
        batch.append(cand)
    return batch


def _prepare(corpus: Corpus, writer: Writer, cfg: GenConfig, embed: Callable[[list[str]], np.ndarray] | None,
             max_attempts: int) -> tuple[Report, Gating, Schedule, dict[tuple[str, int], str], Turns]:
    """A run's report, gates, schedule of candidates, each sampled unit's topic, and the products' turns."""
    units = _sampled_units(corpus, writer, cfg)
    # Each unit's topic, shown to the writer beside its sentence: its document's, or its own article's in a
    # document that glues several together (gen.units.unit_topics).
    topics = {(u.doc_id, u.start): t for d, us in units.items() for u, t in zip(us, unit_topics(corpus.get(d), us))}
    mix = _kind_mix(writer, cfg)
    prepare = getattr(writer, "prepare", None)  # optional: a writer that learns from the corpus's sentences
    if prepare is not None:
        prepare(units, requested(cfg.styles)[1])
    report = Report(requested=cfg.n)
    gating = _gating(corpus, writer, cfg, mix, units, topics, embed, report)
    turns = Turns()
    streams = _streams(corpus, writer, cfg, mix, units, topics, report, turns)
    unnamed = sum(not names_subject(u.text) for us in units.values() for u in us)
    report.units = {"sentences": sum(map(len, units.values())), "unnamed_subject": unnamed,
                    "left_out": unnamed if cfg.gates.named_subject else 0, **getattr(writer, "left_out", {})}
    schedule = Schedule(kind_quotas(cfg.n, mix), streams, report, cfg.max_tries_per_sample, max_attempts)
    return report, gating, schedule, topics, turns


async def agenerate(corpus: Corpus, writer: Writer, cfg: GenConfig, *,
                    embed: Callable[[list[str]], np.ndarray] | None = None, judge: LLM | None = None,
                    progress: bool = False) -> Result:
    """See :func:`generate`."""
    from tqdm import tqdm

    started = time.perf_counter()
    n = check_n(cfg.n)
    max_attempts = cfg.max_attempts or 20 * n + 50
    report, gating, schedule, topics, turns = _prepare(corpus, writer, cfg, embed, max_attempts)
    if hasattr(writer, "stop_for"):  # an LLM writer: stop writing a question the question gates reject
        writer.stop_for = _question_stop(gating)
    samples: list[TestSample] = []
    usage, attempts, stopped = Usage(), 0, False
    bar = tqdm(total=n, desc="gen", unit="q", disable=not progress, dynamic_ncols=True)

    roundtrip = judge if cfg.gates.roundtrip else None
    limiter = asyncio.Semaphore(max(1, cfg.concurrency))  # calls in flight, writes and round trips alike

    async def attempt(cand: Candidate) -> Draft | WriteFailed:
        async with limiter:
            try:
                # a block (gen.styles) is no sentence unit: its document's topic
                shown_topics = [topics.get((u.doc_id, u.start)) or topic_of(corpus.get(u.doc_id)) for u in cand.shown]
                return await writer.write(cand, shown_topics, *variations(cand, cfg))
            except WriteFailed as exc:
                return exc

    async def check(passed: Passed) -> Passed:
        async with limiter:
            return await _reword_and_round_trip(passed, writer, roundtrip, gating, cfg, judge)

    write_calls = 0 if getattr(writer, "llm", None) is None else 1  # the rule writer calls no model
    report.time("setup", time.perf_counter() - started)
    while len(samples) < n and not stopped:
        clock = time.perf_counter()
        batch = _next_batch(schedule, max(1, cfg.batch or cfg.concurrency))
        if not batch:
            break
        drafts = await asyncio.gather(*(attempt(c) for c in batch))
        clock = _lap(report, "write", clock)
        passed: list[Passed] = []  # through every deterministic gate, in candidate order
        for cand, draft in zip(batch, drafts):
            if len(samples) + len(passed) >= n:
                break
            attempts += 1
            report.tried_by_kind[cand.kind] = report.tried_by_kind.get(cand.kind, 0) + 1
            if attempts >= max_attempts:
                stopped = True
            if isinstance(draft, WriteFailed):
                report.reject(draft.reason, {"candidate": cand.key, "error": str(draft)[:300]}, cand.kind)
                report.spend(draft.reason, write_calls, 0)
            else:
                usage = usage + draft.usage
                if (ok := gating.gate(draft, cand, variations(cand, cfg))) is not None:
                    passed.append(ok)
                else:
                    report.spend(str(report.last_reason), write_calls, draft.usage.completion_tokens)
            if stopped:
                break
        clock = _lap(report, "gates", clock)
        # The round trips, only for questions every cheap gate let through (an unanswerable one is asked of the
        # sentences its writer was shown, and must not be answered from them).
        if (roundtrip is not None or cfg.reword.bias is not None or cfg.form == "claim"
                or (judge is not None and cfg.gates.evidence_support is not None)):
            passed = list(await asyncio.gather(*(check(p) for p in passed)))
            _lap(report, "roundtrip", clock)
        usage = usage + _settle(passed, gating, samples, write_calls, turns)
        bar.n = len(samples)
        bar.set_postfix(accepted=report.accepted, rejected=report.n_rejected, refresh=False)
        bar.refresh()
    bar.close()
    report.tried_by_product = dict(sorted(turns.given.items()))
    if stopped and len(samples) < n:
        report.exhausted.append(f"(stopped after max_attempts={max_attempts})")
    if warning := report.overlap()["warning"]:
        log.warning(warning)
    return Result(samples, report, time.perf_counter() - started, usage, attempts)


async def _reword_and_round_trip(passed: Passed, writer: Writer, roundtrip: LLM | None, gating: Gating,
                                 cfg: GenConfig, judge: LLM | None = None) -> Passed:
    """What a sample through every cheap gate meets next: the reword pass with the writer's model (:mod:`gen.reword`;
    only now, so that no call is spent on a question the gates reject), the judge's support check of its reference
    (:mod:`gen.supported`: one-token verdicts, cheaper than the round trip's written answer, so it goes first), then
    its round trip; last, with ``form: claim``, the checked question and answer stated as a claim
    (:mod:`gen.query_form`)."""
    rewording = getattr(writer, "llm", None) if cfg.reword.bias is not None else None
    if rewording is not None:
        passed = await reword_passed(rewording, passed, gating, cfg.reword)
    passed = await support_gate(passed, judge, cfg.gates.evidence_support)
    if roundtrip is not None and passed.reason is None:
        passed = await round_trip(passed, roundtrip, cfg.gates.roundtrip_min_f1, cfg.gates.roundtrip_hops)
    if cfg.form == "claim":
        passed = await claim_passed(getattr(writer, "llm", None), passed, gating, cfg.reword.bias)
    return passed


async def support_gate(p: Passed, judge: LLM | None, min_p: float | None) -> Passed:
    """``p`` rejected as ``judge_unsupported`` when its evidence (``p.headed``) supports its reference below
    ``min_p``; unchanged when the gate is off, ``p`` is out of its scope (no ``headed``) or already rejected.
    A failed judge call rejects it as ``support_failed``, as a failed round trip does."""
    if judge is None or min_p is None or not p.headed or p.reason is not None:
        return p
    try:
        got = await evidence_support(judge, p.sample.question, p.sample.reference, p.headed)
    except JudgeError as exc:
        return replace(p, reason="support_failed", calls=p.calls + 1,
                       example={**p.example, "support_error": str(exc)[:300]})
    verdict = got.to_dict()
    sample = replace(p.sample, provenance={**p.sample.provenance, "evidence_support": verdict["p"]})
    reason = "judge_unsupported" if got.value is None or got.value < min_p else None
    return replace(p, sample=sample, reason=reason, calls=p.calls + got.calls, usage=p.usage + got.usage,
                   example={**p.example, "support": verdict})


def _question_stop(gating: Gating) -> Callable[[Candidate], QuestionStop | None]:
    """Per candidate, the rule that ends a write whose question :func:`gen.gates.question_reason` rejects. None for
    a candidate of a product the gates may name in its question (``gates.product``): the question they check
    is then not the one written."""
    stop = QuestionStop(gating.gates)
    return lambda cand: None if gating.products.of(cand.doc_ids) else stop


def _lap(report: Report, stage: str, since: float) -> float:
    """Add the seconds since ``since`` to ``stage`` in the report; return the time now."""
    now = time.perf_counter()
    report.time(stage, now - since)
    return now


def _settle(passed: Sequence[Passed], gating: Gating, samples: list[TestSample], write_calls: int = 1,
            turns: Turns | None = None) -> Usage:
    """The round trips' verdicts: each sample they let through is numbered and joins ``samples`` (and counts for
    its product in ``turns``), each one they turned down leaves the duplicate gate and is counted in the report,
    with what it cost (``write_calls``: the model calls a write made). Returns what the round trips used."""
    usage = Usage()
    for p in passed:
        usage = usage + p.usage
        gating.report.spend(p.reason or "accepted", write_calls + p.calls,
                            p.written.completion_tokens + p.usage.completion_tokens)
        if p.outcome is not None:
            gating.report.count_roundtrip(p.outcome)
        if p.reason is not None:
            gating.dups.discard(p.sample.question)
            gating.report.reject(p.reason, p.example, p.sample.kind)
            continue
        gating.report.accept(p.sample.kind, p.sample.provenance.get("overlap"), p.sample.provenance.get("style"))
        samples.append(replace(p.sample, id=f"gen-{len(samples) + 1:04d}"))
        if turns is not None:
            turns.accept(p.sample.provenance.get("candidate"))
    return usage
