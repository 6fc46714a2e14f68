"""Human-labelled sets for calibrating the judged metrics, and how agreement with people is measured.

Each loader turns one set in ``../shared/data`` into :class:`RagSample` items plus the human labels,
and knows which statistic the field reports for it:

- HaluEval QA: the right and the hallucinated answer to each question, the knowledge as the only
  context. Pairwise accuracy (right scored above hallucinated; ties half) and ROC-AUC.
- QAGS (CNN/DM, XSum): each summary sentence against its article, labelled by the majority of three
  crowd votes: sentence ROC-AUC; whole summaries against the share of "yes" votes: Spearman.
- BEGIN (WoW, CMU-DoG, Topical-Chat): a response against its knowledge snippet, "Fully attributable"
  as the positive class: ROC-AUC.
- RAGChecker meta-evaluation: two responses per query with a reference answer; the two annotators'
  labels (-2..2, how much better response 2 is) averaged; Pearson and Spearman of
  score(response 2) - score(response 1) with the label, for correctness and completeness.

Rows are split once, by a hash of their id, into ``tune`` and ``heldout`` halves: prompts and
thresholds may be tuned on ``tune`` only, and docs/trust/judged-metrics.md reports ``heldout``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsweep.metrics.agreement import expected_calibration_error, pairwise_accuracy, pearson, roc_auc, spearman
from ragsweep.metrics.catalogue import RagSample
from ragsweep.metrics.errors import InputError

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@dataclass
class CalibrationSet:
    """Samples to score with ``metric`` and a function from their scores to agreement statistics.

    ``labels``: each sample's binary human label (supported or not), for the sets that have one:
    what calibration is fitted on (``benchmarks/calibrate.py --fit``) and checked against.
    """

    name: str
    metric: str
    samples: list[RagSample]
    evaluate: Callable[[Mapping[str, float]], dict[str, float]]
    labels: Mapping[str, bool] = field(default_factory=dict)


def calibration_stats(scores: Mapping[str, float], labels: Mapping[str, bool]) -> dict[str, float]:
    """How far the scores can be read as probabilities: the mean score of the texts people judged
    supported and of those they did not, and the expected calibration error (10 bins)."""
    ids = [i for i in labels if i in scores]
    yes = [scores[i] for i in ids if labels[i]]
    no = [scores[i] for i in ids if not labels[i]]
    out: dict[str, float] = {}
    if yes:
        out["mean_supported"] = sum(yes) / len(yes)
    if no:
        out["mean_unsupported"] = sum(no) / len(no)
    if ids:
        out["ece"] = expected_calibration_error([scores[i] for i in ids], [labels[i] for i in ids])
    return out


def split_of(set_name: str, row_id: str) -> str:
    """``tune`` or ``heldout``, fixed forever by a hash of the row's id."""
    return "tune" if hashlib.sha256(f"{set_name}:{row_id}".encode()).digest()[0] % 2 == 0 else "heldout"


def _pick(rows: list[tuple[str, Any]], set_name: str, split: str, n: int | None, seed: int) -> list[tuple[str, Any]]:
    chosen = [r for r in rows if split == "all" or split_of(set_name, r[0]) == split]
    if n is not None and n < len(chosen):
        chosen = random.Random(seed).sample(chosen, n)
        chosen.sort(key=lambda r: r[0])
    return chosen


def _safe(stat: Callable[..., float], *args: Any) -> float | None:
    try:
        return stat(*args)
    except ValueError:  # one class only, or a constant score vector: reported as missing, not NaN
        return None


def _file(root: Path, *parts: str) -> Path:
    path = root.joinpath(*parts)
    if not path.is_file():
        raise InputError(f"{path}: human-labelled data not found (expected ../shared/data beside the project)")
    return path


def halueval(root: Path = SHARED_DATA, split: str = "heldout", n: int | None = 40, seed: int = 0) -> CalibrationSet:
    """HaluEval QA: faithfulness of the right vs the hallucinated answer, knowledge as context."""
    with _file(root, "halueval", "qa_public.jsonl").open(encoding="utf-8") as fh:
        rows = [(f"h{i}", json.loads(line)) for i, line in enumerate(fh) if line.strip()]
    samples = []
    for rid, row in _pick(rows, "halueval", split, n, seed):
        for kind, answer in (("right", row["right_answer"]), ("halluc", row["hallucinated_answer"])):
            samples.append(RagSample(f"{rid}.{kind}", row["question"], answer, (row["knowledge"],),
                                     row["right_answer"]))

    def evaluate(scores: Mapping[str, float]) -> dict[str, float]:
        ids = sorted({s.id.rsplit(".", 1)[0] for s in samples})
        pairs = [(scores[f"{i}.right"], scores[f"{i}.halluc"]) for i in ids
                 if f"{i}.right" in scores and f"{i}.halluc" in scores]
        out = {"n_pairs": float(len(pairs))}
        if pairs:
            out["pairwise_acc"] = pairwise_accuracy([p[0] for p in pairs], [p[1] for p in pairs])
            auc = _safe(roc_auc, [x for p in pairs for x in p], [True, False] * len(pairs))
            if auc is not None:
                out["roc_auc"] = auc
        return out | calibration_stats(scores, labels)

    labels = {s.id: s.id.endswith(".right") for s in samples}
    return CalibrationSet("halueval", "faithfulness", samples, evaluate, labels)


def qags(root: Path = SHARED_DATA, split: str = "heldout", n: int | None = 40, seed: int = 0) -> CalibrationSet:
    """QAGS: sentence-level faithfulness against the article (majority of 3 votes)."""
    rows = []
    for corpus in ("cnndm", "xsum"):
        with _file(root, "qags", f"mturk_{corpus}.jsonl").open(encoding="utf-8") as fh:
            rows += [(f"{corpus}{i}", json.loads(line)) for i, line in enumerate(fh) if line.strip()]
    samples, label, summary_of = [], {}, {}
    for rid, row in _pick(rows, "qags", split, n, seed):
        for j, sent in enumerate(row["summary_sentences"]):
            votes = [r["response"] == "yes" for r in sent["responses"]]
            sid = f"{rid}.s{j}"
            samples.append(RagSample(sid, None, sent["sentence"], (row["article"],)))
            label[sid] = sum(votes) / len(votes)
            summary_of[sid] = rid

    def evaluate(scores: Mapping[str, float]) -> dict[str, float]:
        ids = [s for s in label if s in scores]
        out = {"n_sentences": float(len(ids))}
        auc = _safe(roc_auc, [scores[s] for s in ids], [label[s] > 0.5 for s in ids])
        if auc is not None:
            out["sentence_roc_auc"] = auc
        # Summary level: the mean sentence score against the share of "yes" votes.
        by_summary: dict[str, list[str]] = {}
        for s in ids:
            by_summary.setdefault(summary_of[s], []).append(s)
        means = [sum(scores[s] for s in v) / len(v) for v in by_summary.values()]
        human = [sum(label[s] for s in v) / len(v) for v in by_summary.values()]
        rho = _safe(spearman, means, human)
        if rho is not None:
            out["summary_spearman"] = rho
        return out | calibration_stats(scores, binary)

    binary = {s: v > 0.5 for s, v in label.items()}
    return CalibrationSet("qags", "faithfulness", samples, evaluate, binary)


def begin(root: Path = SHARED_DATA, split: str = "heldout", n: int | None = 80, seed: int = 0) -> CalibrationSet:
    """BEGIN: is the response fully attributable to its knowledge snippet?"""
    rows = []
    for part in ("wow", "cmu", "tc"):
        with _file(root, "begin", f"begin_dev_{part}.tsv").open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            rows += [(f"{part}{i}", r) for i, r in enumerate(reader)]
    samples, label = [], {}
    for rid, row in _pick(rows, "begin", split, n, seed):
        samples.append(RagSample(rid, row["message"], row["response"], (row["knowledge"],)))
        label[rid] = row["begin_label"].strip() == "Fully attributable"

    def evaluate(scores: Mapping[str, float]) -> dict[str, float]:
        ids = [s for s in label if s in scores]
        auc = _safe(roc_auc, [scores[s] for s in ids], [label[s] for s in ids])
        return {"n": float(len(ids)), **({"roc_auc": auc} if auc is not None else {})} | calibration_stats(scores, label)

    return CalibrationSet("begin", "faithfulness", samples, evaluate, label)


def ragchecker(root: Path = SHARED_DATA, split: str = "heldout", n: int | None = 40, seed: int = 0,
               metric: str = "factual_correctness") -> CalibrationSet:
    """RAGChecker meta-evaluation: score differences against averaged pairwise human labels."""
    data = json.loads(_file(root, "ragchecker", "human_labeled_data.json").read_text(encoding="utf-8"))
    by_instance: dict[str, list[dict[str, Any]]] = {}
    for row in data:
        by_instance.setdefault(str(row["instance_id"]), []).append(row)
    rows = sorted(by_instance.items(), key=lambda r: int(r[0]))
    samples, labels = [], {}
    for rid, annotations in _pick(rows, "ragchecker", split, n, seed):
        first = annotations[0]
        for m in ("model1", "model2"):
            samples.append(RagSample(f"r{rid}.{m}", first["query"], first[m]["response"], None, first["gt_answer"]))
        labels[rid] = {k: sum(a[k] for a in annotations) / len(annotations)
                       for k in ("correctness_label", "completeness_label")}

    def evaluate(scores: Mapping[str, float]) -> dict[str, float]:
        ids = [r for r in labels if f"r{r}.model1" in scores and f"r{r}.model2" in scores]
        diff = [scores[f"r{r}.model2"] - scores[f"r{r}.model1"] for r in ids]
        out = {"n_pairs": float(len(ids))}
        for k, short in (("correctness_label", "correctness"), ("completeness_label", "completeness")):
            human = [labels[r][k] for r in ids]
            for stat_name, stat in (("pearson", pearson), ("spearman", spearman)):
                value = _safe(stat, diff, human)
                if value is not None:
                    out[f"{short}_{stat_name}"] = value
        return out

    return CalibrationSet("ragchecker", metric, samples, evaluate)


def ragchecker_own_scores(root: Path = SHARED_DATA, split: str = "heldout", n: int | None = 40,
                          seed: int = 0) -> dict[str, float]:
    """RAGChecker's own scores (its Llama-3-70B checker, ``baseline_ragchecker.json``) on the same
    pairs, measured exactly as ours: its correctness score against the correctness label, its
    completeness score against the completeness label. The anchor under our protocol (labels of
    the two annotators averaged); the paper's 0.497 / 0.607 were computed its own way."""
    path = _file(root, "ragchecker", "baseline_ragchecker.json")
    cs = ragchecker(root, split, n, seed)
    keys = (("correctness_label", "correctness"), ("completeness_label", "completeness"))
    try:
        own = {str(r["instance_id"]): r for r in json.loads(path.read_text(encoding="utf-8"))}
        scores = {key: {s.id: float(own[s.id[1:].split(".")[0]][s.id.split(".")[1]]["ragchecker"][key])
                        for s in cs.samples} for key, _ in keys}
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not RAGChecker's baseline scores ({type(exc).__name__}: {exc})") from exc
    out: dict[str, float] = {}
    for key, short in keys:
        stats = cs.evaluate(scores[key])
        out["n_pairs"] = stats["n_pairs"]
        out.update({k: v for k, v in stats.items() if k.startswith(short)})
    return out


LOADERS: dict[str, Callable[..., CalibrationSet]] = {
    "halueval": halueval, "qags": qags, "begin": begin, "ragchecker": ragchecker,
}
