"""Does a generated test set pick the right *generation* set-up? ``validity.py --kind generation`` (issue #35).

On HotpotQA (``../shared/data/hotpot``: people's questions; people's answers are HaluEval's
``right_answer`` for the same question, ``../shared/data/halueval``, matched by the question's text),
a fixed list of generation variants runs over ONE retriever, BM25 on 128-character chunks: BM25 is
among people's best retrievers on this corpus (its crowd questions share most words with their
passages), it needs no embedding model, and holding retrieval fixed at a strong set-up leaves the
answerer, K and the context as the only things that differ. Chunks of 128 characters (about a
sentence; a passage is ~340) are what makes ``context=window`` (each hit with one chunk on each side)
pass on more than ``context=chunks``.

Each variant answers people's questions and the questions of a generated set (written as
``validity.py`` writes them, cached in ``--testsets``), and each answer is scored the same way against
its set's reference: SQuAD token F1 and exact match (``metrics.lexical``), and with ``--judge`` the
judged ``answer_correctness`` (one judge call per answer or more: off by default). The agreement of
the two system rankings is printed exactly as for retrieval (``validity.agreement_row``: Kendall tau,
tau_AP, Spearman, people's winner on the generated board, the split-half ceiling), with bootstrap
intervals. Every model call is cached in ``--cache``/llm.sqlite, so a rerun costs only the statistics.

    python benchmarks/validity.py --kind generation --quick     # smoke check: 4 + 4 questions, minutes
    python benchmarks/validity.py --kind generation             # the full run: 50 + 50 questions, ~2 h
    python benchmarks/validity.py --kind generation --judge local_small   # + judged answer_correctness
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import validity as v

LEXICAL = ("token_f1", "exact_match")
JUDGED = "answer_correctness"
ANSWERERS = ("extractive", "local_small", "local")
CONTEXTS = ("chunks", "window")
CHUNK = 128          # characters per chunk (no overlap): about one sentence of a ~340-character passage
NEIGHBOURS = 1       # context=window: the hit and one chunk on each side
FULL_N, QUICK_N = 50, 4


@dataclass(frozen=True)
class GenVariant:
    """One generation set-up over the fixed retriever: who answers, how many contexts it is passed
    (``k``) and whether each is the chunk found or its window."""

    answerer: str
    k: int
    context: str = "chunks"

    def __post_init__(self) -> None:
        if self.answerer not in ANSWERERS or self.context not in CONTEXTS or self.k < 1:
            raise ValueError(f"bad generation variant {self}")

    @property
    def name(self) -> str:
        return f"{self.answerer} K={self.k}" + ("" if self.context == "chunks" else f" {self.context}")


def generation_variants() -> list[GenVariant]:
    """The fixed list (chosen before any figure was seen): each answerer at K = 1, 3, 8 on chunks and at
    K = 3 on windows. SmolLM2-135M is not in it: no packaged GGUF or ``conf/llm`` entry exists for it."""
    return [GenVariant(a, k, c) for a in ANSWERERS for k, c in ((1, "chunks"), (3, "chunks"), (8, "chunks"),
                                                                (3, "window"))]


# ----------------------------------------------------------------------------- people's answers

def people_answers(questions: Sequence[tuple[str, str]], halueval: Path) -> list[str]:
    """HaluEval's ``right_answer`` (HotpotQA's gold answer) for each (query id, text), matched by the
    question's text (stripped). A question found in no row, or in rows that disagree, is an InputError."""
    from ragsweep.metrics.errors import InputError

    answers: dict[str, set[str]] = {}
    with halueval.open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                answers.setdefault(str(row["question"]).strip(), set()).add(str(row["right_answer"]).strip())
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InputError(f"{halueval}: line {line_no}: need a JSON object with question and "
                                 f"right_answer ({exc})") from exc
    out = []
    for qid, text in questions:
        found = answers.get(text.strip())
        if not found:
            raise InputError(f"{halueval}: no row has the question of query {qid!r} ({text.strip()[:80]!r})")
        if len(found) > 1 or not next(iter(found)):
            raise InputError(f"{halueval}: query {qid!r} has {len(found)} different right_answer values {sorted(found)}")
        out.append(next(iter(found)))
    return out


# ----------------------------------------------------------------------------- scoring (pure)

def lexical_scores(answers: Sequence[str | None], references: Sequence[str], metric: str) -> np.ndarray:
    """Per question, ``metric`` (token_f1 or exact_match) of the answer against its reference. A missing
    answer (the model call failed for good) scores 0, as a wrong one; an empty reference is an error."""
    from ragsweep.metrics.lexical import exact_match, token_f1

    fn = {"token_f1": token_f1, "exact_match": exact_match}[metric]
    if len(answers) != len(references):
        raise ValueError(f"{len(answers)} answers but {len(references)} references")
    out = np.zeros(len(answers))
    for i, (a, r) in enumerate(zip(answers, references)):
        if not r.strip():
            raise ValueError(f"question {i}: empty reference")
        out[i] = 0.0 if a is None else fn(a, r).value
    return out


def score_matrix(answers: Mapping[str, Sequence[str | None]], references: Sequence[str], names: Sequence[str],
                 score: Callable[[Sequence[str | None], Sequence[str]], np.ndarray]) -> np.ndarray:
    """(questions x variants) scores, the columns in the order of ``names``."""
    missing = [n for n in names if n not in answers]
    if missing:
        raise ValueError(f"no answers for {missing}")
    return np.column_stack([score(answers[n], references) for n in names]) if names else np.zeros((len(references), 0))


# ----------------------------------------------------------------------------- answering

def contexts(corpus: Any, cache: Any, questions: Sequence[str], variants: Sequence[GenVariant]) -> dict[str, list[list[str]]]:
    """Variant name -> per question the texts passed on: one BM25 search per context mode, at the
    largest K, cut to each variant's K (as the sweep scores every K from one ranking)."""
    from ragsweep.gen.chunking import RecursiveChunker
    from ragsweep.harness.pipeline.context import Chunks, Window
    from ragsweep.harness.pipeline.index import IndexSpec
    from ragsweep.harness.pipeline.pipeline import Pipeline
    from ragsweep.harness.pipeline.retrieval import retrieval

    depth = max(x.k for x in variants)
    found: dict[str, list[list[str]]] = {}
    for mode in sorted({x.context for x in variants}):
        context = Window(NEIGHBOURS, "chunks") if mode == "window" else Chunks()
        pipe = Pipeline(corpus, RecursiveChunker(CHUNK, 0), v._embedder("minilm"), IndexSpec(), cache,
                        retrieval=retrieval("bm25"), context=context)
        found[mode] = [[r.text for r in got] for got in pipe.search(list(questions), depth)]
    return {x.name: [texts[:x.k] for texts in found[x.context]] for x in variants}


def answer_sets(sets: Mapping[str, Sequence[str]], passed: Mapping[str, Mapping[str, list[list[str]]]],
                variants: Sequence[GenVariant], llm_for: Callable[[str], Any], embedder: Any) -> dict[str, dict[str, list[str | None]]]:
    """Set -> variant -> answers. Answerers are built one at a time (one model in memory), as the sweep
    builds them (``harness.pipeline.answerers``); every LLM call goes through the cache."""
    from ragsweep.harness.pipeline.answerers import ExtractiveAnswerer, LLMAnswerer

    out: dict[str, dict[str, list[str | None]]] = {s: {} for s in sets}
    for who in ANSWERERS:
        mine = [x for x in variants if x.answerer == who]
        if not mine:
            continue
        llm = None if who == "extractive" else llm_for(who)
        answerer = ExtractiveAnswerer(embedder=embedder) if llm is None else LLMAnswerer(llm)
        for x in mine:
            t = time.perf_counter()
            for s, questions in sets.items():
                out[s][x.name] = list(answerer.answer_all(list(questions), passed[s][x.name]))
            print(f"    {x.name:24s} {time.perf_counter() - t:7.1f} s", file=sys.stderr, flush=True)
        del answerer, llm
        gc.collect()
    return out


def judged_scores(answers: Sequence[str | None], references: Sequence[str], judge: Any, embedder: Any) -> np.ndarray:
    """``answer_correctness`` per question (Ragas' 0.75 x factual F1 + 0.25 x similarity). A missing answer,
    or one the metric leaves undefined (no claim to check), scores 0, as a wrong answer does."""
    from ragsweep.metrics.correctness import answer_correctness

    async def run() -> list[Any]:
        return list(await asyncio.gather(*(answer_correctness(a, r, judge=judge, embedder=embedder)
                                           for a, r in zip(answers, references) if a is not None)))

    values = iter(asyncio.run(run()))
    return np.array([0.0 if a is None else (next(values).value or 0.0) for a in answers])


# ----------------------------------------------------------------------------- the run

def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options only ``--kind generation`` reads (the statistics' options are validity.py's)."""
    g = ap.add_argument_group("--kind generation")
    g.add_argument("--quick", action="store_true",
                   help=f"smoke check: {QUICK_N} people's and {QUICK_N} generated questions (minutes, not a result)")
    g.add_argument("--judge", choices=["none", "local", "local_small"], default="none",
                   help="also judged answer_correctness with this model (one or more calls per answer)")
    g.add_argument("--answers", type=Path, default=v.DATA / "halueval" / "qa_public.jsonl",
                   help="HaluEval QA rows holding people's answers (right_answer) to the hotpot questions")


def run(args: argparse.Namespace) -> None:
    import ragsweep
    from ragsweep.gen.documents import read_beir
    from ragsweep.gen.testset import read_testset
    from ragsweep.harness.cache import Cache
    from ragsweep.harness.pipeline.conversation import queries

    n = QUICK_N if args.quick else (args.n or FULL_N)
    writer = args.writer[0]
    cache, folder = Cache(args.cache), args.testsets or args.cache / "validity"
    threads = int(os.environ.get("RAGSWEEP_THREADS", "2"))
    corpus_dir = v.DATA / "hotpot"
    corpus = read_beir(corpus_dir, split=args.split)
    assert corpus.queries is not None
    people = corpus.queries[:n]
    refs = {"human": people_answers([(q.id, q.text) for q in people], args.answers)}
    sets = {"human": [q.text for q in people]}
    # The generated set is written (or reused) exactly as the retrieval benchmark's; its references are read back.
    (_, judged), _, path = v.synthetic_set(corpus, corpus_dir.name, writer, n, args.seed, folder, args.gen)
    samples = [s for s in read_testset(path) if s.evidence]
    label = " ".join([writer, *args.gen])
    # A follow-up is asked with the turns before it, as the sweep asks it by default (conversation.query=history).
    sets[label], refs[label] = queries(samples, "history"), [s.reference for s in samples]
    overlap = {"human": v.set_overlap(sets["human"], v.relevant_texts(
                   corpus, [{d: float(g) for d, g in corpus.qrels[q.id].items()} for q in people])),  # type: ignore[index]
               label: v.set_overlap([s.question for s in samples], v.relevant_texts(corpus, judged))}

    variants = generation_variants()
    names = [x.name for x in variants]
    t0 = time.perf_counter()
    passed = {s: contexts(corpus, cache, qs, variants) for s, qs in sets.items()}
    llms: dict[str, Any] = {}

    def llm_for(who: str) -> Any:
        if who not in llms:
            llms[who] = getattr(ragsweep.llm, who)(threads=threads, cache_dir=str(args.cache))
        return llms.pop(who) if who != args.judge else llms[who]

    embedder = v._embedder("minilm")
    print(f"hotpot: {n} people's and {len(sets[label])} generated questions, {len(variants)} variants:",
          file=sys.stderr, flush=True)
    answers = answer_sets(sets, passed, variants, llm_for, embedder)
    asked = sum(map(len, sets.values()))
    timing = [f"answers: {time.perf_counter() - t0:.1f} s ({len(variants)} variants x {asked} questions; cached calls are free)"]
    scores = {s: {m: score_matrix(answers[s], refs[s], names, lambda a, r, m=m: lexical_scores(a, r, m))
                  for m in LEXICAL} for s in sets}
    metrics = list(LEXICAL)
    if args.judge != "none":
        t = time.perf_counter()
        judge = llm_for(args.judge)
        for s in sets:
            scores[s][JUDGED] = score_matrix(answers[s], refs[s], names,
                                             lambda a, r: judged_scores(a, r, judge, embedder))
        metrics.append(JUDGED)
        timing.append(f"judged {JUDGED} ({args.judge}): {time.perf_counter() - t:.1f} s")
    text = "\n".join(report(names, scores, metrics, label, args, overlap) + [""] + [f"- {t}" for t in timing] +
                     [f"- generated set: {path}", "- missing answers (scored 0): " + ", ".join(
                         f"{s} {sum(a is None for x in answers[s].values() for a in x)}" for s in sets)])
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


def report(names: Sequence[str], scores: Mapping[str, Mapping[str, np.ndarray]], metrics: Sequence[str], label: str,
           args: argparse.Namespace, overlap: Mapping[str, tuple[float, float]]) -> list[str]:
    """The board (every variant's mean and rank per set and metric) and one agreement row per metric,
    the retrieval table's columns; a metric on which a set (or every split of people's) ties every variant
    gets a row saying so."""
    lines = ["**hotpot** generation variants over BM25 (rec128 chunks); mean over questions, rank in brackets\n",
             *v.board_table(names, scores, metrics), "", *v.HEADER]
    both = (f"{overlap['human'][0]:.2f} / {overlap[label][0]:.2f} "
            f"({overlap['human'][1]:.1f} / {overlap[label][1]:.1f})")
    for m in metrics:
        human, synthetic = scores["human"][m], scores[label][m]
        try:
            row = v.agreement_row("hotpot", m, label, human, synthetic, names, args, both, (), "generation")
        except (v.TiedRanking, ValueError) as exc:  # ValueError: every split-half tied (0/1 scores, few questions)
            row = (f"| hotpot | generation ({len(names)}) | {m} | {label} | {len(human)} / {len(synthetic)} | "
                   f"– ({exc}) |" + "  |" * (v.COLUMNS - 6))
        print(row, flush=True)
        lines.append(row)
    return lines
