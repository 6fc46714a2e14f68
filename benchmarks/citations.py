"""Citation metrics against people: per-sentence support by the cited passages (ALCE citation recall) and
per-citation relevance (ALCE citation precision), on the hand-labelled set ``citation_labels.json``.

No public set of human citation judgements is reachable here (``../shared/data`` holds none; ALCE's
human evaluation and TREC RAG's support assessments are downloads), so the set is 134 answer sentences
written over HotpotQA dev questions of ``../shared/data/hotpot`` and labelled by hand before any scoring
(see the file's ``about``). It is split by question into ``tune`` and ``report`` halves; figures for the
docs come from ``report``.

    python benchmarks/citations.py --llm none                    # seconds
    RAGSWEEP_CACHE_DIR=/tmp/cache-cite python benchmarks/citations.py --llm none local --threads 1

Agreement: accuracy and Cohen's kappa of the metric's verdicts with the labels, with 95% intervals from
a bootstrap over questions (a question's sentences are resampled together: they share contexts).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))

from ragsweep.metrics.attribution import citation_rows  # noqa: E402
from ragsweep.metrics.citations import parse_answer  # noqa: E402

LABELS = Path(__file__).with_name("citation_labels.json")
#: Answers a real model wrote (:func:`generate`), labelled by hand after they were written.
REAL_LABELS = Path(__file__).with_name("citation_labels_real.json")
DATA = ROOT.parent / "shared" / "data" / "hotpot"
MODELS = {"local": "qwen2.5-coder-1.5b-instruct-q4_k_m", "local_small": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
#: How far on the distractor context is taken from (context [3]: the first paragraph of that item's knowledge).
DISTRACTOR_OFFSET = 7


def load(path: Path = LABELS) -> list[dict[str, Any]]:
    """The labelled items with their question, contexts and parsed citations."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    if spec["items"] and "contexts" in spec["items"][0]:
        return load_real(spec, path)
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "corpus.jsonl").open(encoding="utf-8"))}
    queries = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "queries_dev.jsonl").open(encoding="utf-8"))}
    qrels = dict(line.split()[:2] for line in (DATA / "qrels_dev.tsv").read_text().splitlines()[1:])
    items = spec["items"]
    paragraphs = []
    for item in items:
        text = corpus[qrels[item["id"]]]
        cut = text.index(item["second_starts"])
        paragraphs.append((text[:cut].strip(), text[cut:].strip()))
    out = []
    for i, (item, (first, second)) in enumerate(zip(items, paragraphs)):
        distractor = paragraphs[(i + DISTRACTOR_OFFSET) % len(items)][0]
        contexts = [first, second, distractor]
        answer = " ".join(s["text"] for s in item["sentences"])
        parsed = parse_answer(answer, len(contexts))
        if len(parsed.sentences) != len(item["sentences"]):
            raise ValueError(f"{item['id']}: {len(parsed.sentences)} sentences parsed, "
                             f"{len(item['sentences'])} labelled")
        out.append({**item, "question": queries[item["id"]].strip(), "contexts": contexts,
                    "citations": [c.to_dict() for c in parsed.sentences]})
    return out


#: The two paragraphs of a HotpotQA knowledge text are joined with no space: "...century.First for Women ...".
_JOIN = re.compile(r"(?<=[a-z0-9)\]\"'][.!?])(?=[A-Z\"])")
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset("a an and the of in on at to for by with from is was were are be been which what who whom whose "
                  "when where how did does do that this these those or as it its his her their he she they".split())
#: The first question of the real-answer set: the hand-written set uses dev0-dev44.
REAL_FIRST = 45


def split_knowledge(text: str) -> tuple[str, str] | None:
    """The knowledge's two paragraphs, or None when the join is not found exactly once."""
    cuts = [m.start() for m in _JOIN.finditer(text)]
    return (text[:cuts[0]].strip(), text[cuts[0]:].strip()) if len(cuts) == 1 else None


def _words(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP}


def real_contexts(n_questions: int, n_distractors: int = 2) -> list[dict[str, Any]]:
    """Questions from dev{REAL_FIRST} on whose knowledge splits cleanly, each with its two paragraphs and
    the ``n_distractors`` paragraphs of other knowledge texts sharing most words with the question (what a
    word-matching retriever would add), shuffled by a seed per question and numbered [1]..[k]."""
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "corpus.jsonl").open(encoding="utf-8"))}
    queries = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "queries_dev.jsonl").open(encoding="utf-8"))}
    qrels = dict(line.split()[:2] for line in (DATA / "qrels_dev.tsv").read_text().splitlines()[1:])
    pool = [(kid, para) for kid, text in sorted(corpus.items()) for para in (split_knowledge(text) or ())]
    pool_words = [_words(para) for _, para in pool]
    out: list[dict[str, Any]] = []
    for i in range(REAL_FIRST, 10_000):
        qid = f"dev{i}"
        if len(out) == n_questions or qid not in qrels:
            break
        gold = split_knowledge(corpus[qrels[qid]])
        if gold is None:
            continue
        question = queries[qid].strip()
        q = _words(question)
        rng = random.Random(qid)
        tie = [rng.random() for _ in pool]
        ranked = sorted((j for j, (kid, _) in enumerate(pool) if kid != qrels[qid]),
                        key=lambda j: (-len(q & pool_words[j]), tie[j]))
        picked = [("gold", gold[0]), ("gold", gold[1])]
        for j in ranked:  # one paragraph per knowledge text: two would often be one distractor's halves
            if len(picked) == 2 + n_distractors:
                break
            if all(s != f"distractor:{pool[j][0]}" for s, _ in picked):
                picked.append((f"distractor:{pool[j][0]}", pool[j][1]))
        rng.shuffle(picked)
        out.append({"question_id": qid, "question": question, "contexts": [c for _, c in picked],
                    "sources": [s for s, _ in picked]})
    return out


def fresh_first() -> int:
    """The first dev question after the last one either labelled set uses (a fresh set takes every
    question from here on, none skipped)."""
    used = [i.get("question_id", i["id"]) for path in (LABELS, REAL_LABELS)
            for i in json.loads(path.read_text(encoding="utf-8"))["items"]]
    return max(int(q.removeprefix("dev")) for q in used) + 1


def retrieved_contexts(n_questions: int, k: int = 4, first: int | None = None) -> list[dict[str, Any]]:
    """``n_questions`` dev questions from ``first`` (default :func:`fresh_first`) on, in order, each with
    the ``k`` documents BM25 ranks first for it over the whole HotpotQA corpus, numbered [1]..[k] in rank
    order: what a lexical retriever hands an application, the gold document there or not (``sources``
    names each document, ``gold`` the question's). BM25 is the harness's ``retrieval=bm25`` with its
    defaults (:class:`BM25Spec`). A knowledge text whose two paragraphs the corpus glues together
    ("...century.First for Women") gets a space there: real documents have one, and a sentence
    splitter should not be measured on the conversion's slip."""
    import tempfile

    from ragsweep.harness.pipeline.retrieval import BM25Spec

    corpus = [(r["_id"], r["text"]) for r in map(json.loads, (DATA / "corpus.jsonl").open(encoding="utf-8"))]
    queries = {r["_id"]: r["text"] for r in map(json.loads, (DATA / "queries_dev.jsonl").open(encoding="utf-8"))}
    qrels = dict(line.split()[:2] for line in (DATA / "qrels_dev.tsv").read_text().splitlines()[1:])
    texts = [" ".join(split_knowledge(t) or (t,)).strip() for _, t in corpus]
    spec = BM25Spec()
    start = fresh_first() if first is None else first
    qids = [f"dev{i}" for i in range(start, start + n_questions) if f"dev{i}" in queries]
    with tempfile.TemporaryDirectory() as folder:
        spec.build(texts, Path(folder))
        _, ids = spec.search(BM25Spec.load(Path(folder)), [queries[q].strip() for q in qids], k)
    return [{"question_id": q, "question": queries[q].strip(), "contexts": [texts[j] for j in row if j >= 0],
             "sources": [corpus[j][0] for j in row if j >= 0], "gold": qrels.get(q)} for q, row in zip(qids, ids)]


def answerer_llm(model: str, threads: int) -> Any:
    """The packaged model as the sweep's ``llm=local`` builds it (cached under ``RAGSWEEP_CACHE_DIR``)."""
    from ragsweep.metrics.llm import factory

    cache = os.environ.get("RAGSWEEP_CACHE_DIR")
    return factory.local(MODELS.get(model, model), threads=threads, cache=bool(cache), cache_dir=cache)


def generate(n_questions: int, llm: Any, out: Path, retrieved: int | None = None) -> None:
    """Answers of the sweep's cited answerer (``answerer=llm answerer.cite=true``, ``llm`` its model) over
    :func:`real_contexts`, with their sentences as :func:`parse_answer` reads them and empty labels;
    split by question (alternating) into ``tune`` and ``report`` before anyone labels them. With
    ``retrieved``, over that many BM25 documents per question (:func:`retrieved_contexts`) instead, every
    answer in ``report``: a fresh set is for reporting, nothing is tuned on it."""
    from ragsweep.harness.pipeline.answerers import LLMAnswerer

    answerer = LLMAnswerer(llm, cite=True)
    items = real_contexts(n_questions) if retrieved is None else retrieved_contexts(n_questions, retrieved)
    answers = answerer.answer_all([i["question"] for i in items], [i["contexts"] for i in items])
    for k, (item, answer) in enumerate(zip(items, answers)):
        parsed = parse_answer(answer, len(item["contexts"]))
        split = "report" if retrieved is not None else "tune" if k % 2 == 0 else "report"
        item.update(id=f"{item['question_id']}:{answerer.params()['model']}", split=split,
                    answer=answer,
                    sentences=[{**c.to_dict(), "supported": None, "relevant": [None] * len(c.cites)}
                               for c in parsed.sentences])
    spec = {"about": "", "answerer": answerer.params(), "items": items}
    out.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def load_real(spec: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """The items of a real model's labelled answers (:func:`generate`): the answer parsed again, so the
    labels are checked against the sentences and citations the metric reads."""
    out = []
    for item in spec["items"]:
        parsed = parse_answer(item["answer"], len(item["contexts"]))
        got = [(c.sentence, list(c.cites)) for c in parsed.sentences]
        want = [(s["sentence"], list(s["cites"])) for s in item["sentences"]]
        if got != want:
            raise ValueError(f"{path.name}, {item['id']}: the answer parses to {got}, labelled {want}")
        for k, s in enumerate(item["sentences"]):
            if not isinstance(s["supported"], bool) or len(s["relevant"]) != len(s["cites"]) \
                    or not all(isinstance(r, bool) for r in s["relevant"]):
                raise ValueError(f"{path.name}, {item['id']}, sentence {k}: not labelled")
        out.append({**item, "sentences": [{**s, "text": s["sentence"]} for s in item["sentences"]],
                    "citations": [c.to_dict() for c in parsed.sentences]})
    return out


def first_answers(items: list[dict[str, Any]], n: int | None) -> list[dict[str, Any]]:
    """The first ``n`` items (answers) in file order, all of them when ``n`` is None: a run stopped half
    way replays its cached calls for exactly these."""
    return items if n is None else items[:n]


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two binary label vectors (0 when both are constant and equal: no information)."""
    po = float(np.mean(a == b))
    pe = float(np.mean(a) * np.mean(b) + (1 - np.mean(a)) * (1 - np.mean(b)))
    return 0.0 if pe == 1 else (po - pe) / (1 - pe)


def agreement(pairs: list[tuple[int, bool, bool]], n_resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Accuracy and kappa of (question, human, metric) pairs, with question-level bootstrap intervals."""
    groups = sorted({g for g, _, _ in pairs})
    by_group = {g: [(h, m) for gg, h, m in pairs if gg == g] for g in groups}
    human = np.array([h for _, h, _ in pairs], dtype=float)
    metric = np.array([m for _, _, m in pairs], dtype=float)
    rng = np.random.default_rng(seed)
    accs, kappas = [], []
    for _ in range(n_resamples):
        picked = [x for g in rng.choice(groups, size=len(groups)) for x in by_group[g]]
        h = np.array([p[0] for p in picked], dtype=float)
        m = np.array([p[1] for p in picked], dtype=float)
        accs.append(float(np.mean(h == m)))
        kappas.append(kappa(h, m))
    return {"n": len(pairs), "questions": len(groups), "human_positive": float(np.mean(human)),
            "metric_positive": float(np.mean(metric)), "accuracy": float(np.mean(human == metric)),
            "accuracy_ci": [float(np.percentile(accs, 2.5)), float(np.percentile(accs, 97.5))],
            "kappa": kappa(human, metric),
            "kappa_ci": [float(np.percentile(kappas, 2.5)), float(np.percentile(kappas, 97.5))]}


def build_judge(backend: str, threads: int) -> Any:
    if backend == "none":
        return None
    from ragsweep.metrics.llm import CachedLLM, LocalLLM, Meter

    llm: Any = LocalLLM(MODELS.get(backend, backend), n_ctx=4096, n_threads=threads)
    cache = os.environ.get("RAGSWEEP_CACHE_DIR")
    if cache:
        Path(cache).mkdir(parents=True, exist_ok=True)
        llm = CachedLLM(llm, Path(cache) / "llm.sqlite")
    return Meter(llm)


async def score(items: list[dict[str, Any]], judge: Any) -> list[dict[str, Any]]:
    out = []
    for item in items:
        rows, counts = await citation_rows(item["citations"], item["contexts"], item["question"], judge=judge)
        out.append({"id": item["id"], "rows": rows, **counts})
    return out


def compare(items: list[dict[str, Any]], scored: list[dict[str, Any]], split: str) -> dict[str, Any]:
    sentences, citing, citations, mistakes = [], [], [], []
    group = {q: g for g, q in enumerate(dict.fromkeys(i.get("question_id", i["id"]) for i in items))}
    for item, got in zip(items, scored):
        if split not in ("all", item["split"]):
            continue
        g = group[item.get("question_id", item["id"])]  # two answerers' answers to one question resample together
        for label, row in zip(item["sentences"], got["rows"]):
            sentences.append((g, bool(label["supported"]), bool(row["supported"])))
            if row["cites"]:  # a sentence citing nothing is unsupported for both: it agrees by definition
                citing.append(sentences[-1])
            if bool(label["supported"]) != bool(row["supported"]):
                mistakes.append(f"{item['id']}: {label['text']} (human {label['supported']}, "
                                f"metric p={row['p_supported']})")
            valid = [c for c in row.get("citations", []) if c["why"] != "names no context"]
            for human, c in zip(label["relevant"], valid):
                citations.append((g, bool(human), bool(c["relevant"])))
    return {"recall_verdicts": agreement(sentences), "recall_verdicts_citing": agreement(citing),
            "precision_verdicts": agreement(citations),
            "disagreements": mistakes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", nargs="+", default=["none"], help="none, local (the 1.5B), local_small (the 0.5B)")
    parser.add_argument("--split", default="report", choices=("tune", "report", "all"),
                        help="the half to score; all: every answer (a set that is all for reporting)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument("--out", help="write the figures as JSON here")
    parser.add_argument("--generate", type=int, metavar="N",
                        help="write N questions' cited answers by --model to --labels (unlabelled) and stop")
    parser.add_argument("--retrieved", type=int, metavar="K",
                        help="with --generate: the contexts are the question's top K BM25 documents over the "
                             "HotpotQA corpus, from the first question neither labelled set uses")
    parser.add_argument("--model", default="local", help="the answerer's model for --generate (local, local_small)")
    parser.add_argument("--labels", type=Path, default=LABELS,
                        help=f"the labelled set: {LABELS.name} (hand-written answers) or {REAL_LABELS.name} "
                             "(a real model's answers)")
    parser.add_argument("--answers", type=int, metavar="N",
                        help="score only the split's first N answers, in file order (a shorter run with a "
                             "judge; its figures are for those answers only)")
    args = parser.parse_args()
    if args.generate:
        generate(args.generate, answerer_llm(args.model, args.threads), args.labels, args.retrieved)
        return
    try:
        items = load(args.labels)
    except FileNotFoundError:
        parser.error(f"--labels {args.labels}: no such file")
    except json.JSONDecodeError as exc:
        parser.error(f"--labels {args.labels}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})")
    except (KeyError, TypeError, AttributeError) as exc:
        parser.error(f"--labels {args.labels}: not a labels file (a labelled item lacks {exc}; see the "
                     "layout of benchmarks/citation_labels_real.json)")
    report: dict[str, Any] = {"split": args.split, "backends": {}}
    for backend in args.llm:
        judge = build_judge(backend, args.threads)
        chosen = first_answers([i for i in items if args.split in ("all", i["split"])], args.answers)
        started = time.perf_counter()
        scored = asyncio.run(score(chosen, judge))
        seconds = time.perf_counter() - started
        figures = compare(chosen, scored, args.split)
        cost = judge.snapshot().to_dict() if judge is not None else {}
        figures.update(seconds=round(seconds, 1), checks=sum(s["checks"] for s in scored),
                       reused=sum(s["reused"] for s in scored), llm=cost)
        report["backends"][backend] = figures
        for kind in ("recall_verdicts", "recall_verdicts_citing", "precision_verdicts"):
            f = figures[kind]
            print(f"{backend:12s} {args.split:6s} {kind:22s} n={f['n']:3d} acc={f['accuracy']:.3f} "
                  f"[{f['accuracy_ci'][0]:.3f}, {f['accuracy_ci'][1]:.3f}] kappa={f['kappa']:.3f} "
                  f"[{f['kappa_ci'][0]:.3f}, {f['kappa_ci'][1]:.3f}] human+={f['human_positive']:.2f} "
                  f"metric+={f['metric_positive']:.2f}")
        print(f"{backend:12s} checks={figures['checks']} reused={figures['reused']} seconds={figures['seconds']} "
              f"llm={cost}")
        for line in figures["disagreements"]:
            print("   ", line)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
