"""Run records: what a pipeline did with each test question. Runs are the hand-off to every metric.

A sweep job (or, later, ``ragsweep run`` on an application) writes one :class:`RunSample` per test
question into ``runs.jsonl``: the question and its ground truth, the ranked retrieval as searched
(the job's deepest K) and the answer at each top-K. Every metric, retrieval or judged, is scored
from these records through :func:`RunSample.rag_sample`, so a finished sweep can be rescored with
new metrics without retrieving again (``ragsweep rescore``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragsweep.metrics.errors import InputError
from ragsweep.metrics.spec import RagSample, Span


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk, located in its source document."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    score: float
    text: str | None

    @property
    def span(self) -> Span:
        return (self.doc_id, self.start, self.end)


@dataclass(frozen=True)
class RunSample:
    """One test question run through one pipeline variant.

    Attributes:
        sample_id: The test sample's id.
        variant: The run's name (a sweep job's parameters, without top_k).
        retrieved: The ranked retrieval as searched, best first (deep enough for every top-K).
        answers: The answer at each top-K (``{k: answer}``); empty without an answerer.
        question, reference: The test sample's question and reference answer (None when absent).
        evidence: Gold evidence spans; ``evidence_texts`` their texts.
        qrels: Document judgements (BEIR), instead of evidence.
        n_relevant: Items of this variant's chunking that overlap the evidence (span relevance).
    """

    sample_id: str
    variant: str
    retrieved: tuple[Retrieved, ...]
    answers: Mapping[int, str | None] = field(default_factory=dict)
    question: str | None = None
    reference: str | None = None
    evidence: tuple[Span, ...] | None = None
    evidence_texts: tuple[str, ...] | None = None
    qrels: Mapping[str, int] | None = None
    n_relevant: int | None = None

    def rag_sample(self, top_k: int) -> RagSample:
        """What a metric sees of this run when the pipeline passes on its first ``top_k`` items."""
        passed = self.retrieved[:top_k]
        texts = [r.text for r in passed]
        return RagSample(
            id=self.sample_id, question=self.question, answer=self.answers.get(top_k),
            contexts=tuple(texts) if all(t is not None for t in texts) else None,  # type: ignore[arg-type]
            reference=self.reference or None, reference_contexts=self.evidence_texts or None,
            retrieved=tuple(r.span for r in self.retrieved), top_k=top_k, evidence=self.evidence,
            qrels=self.qrels, n_relevant=self.n_relevant)

    def to_dict(self, keep_text: bool = True) -> dict[str, Any]:
        rows = [asdict(r) for r in self.retrieved]
        if not keep_text:
            for r in rows:
                r.pop("text")
        return {"sample_id": self.sample_id, "variant": self.variant, "question": self.question,
                "reference": self.reference,
                "evidence": None if self.evidence is None else [list(s) for s in self.evidence],
                "evidence_texts": None if self.evidence_texts is None else list(self.evidence_texts),
                "qrels": None if self.qrels is None else dict(self.qrels), "n_relevant": self.n_relevant,
                "answers": {str(k): a for k, a in self.answers.items()}, "retrieved": rows}

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], where: str = "") -> RunSample:
        try:
            retrieved = tuple(Retrieved(r["chunk_id"], r["doc_id"], int(r["start"]), int(r["end"]),
                                        float(r["score"]), r.get("text")) for r in row["retrieved"])
            evidence = row.get("evidence")
            texts = row.get("evidence_texts")
            return cls(str(row["sample_id"]), str(row["variant"]), retrieved,
                       {int(k): a for k, a in (row.get("answers") or {}).items()},
                       row.get("question"), row.get("reference"),
                       None if evidence is None else tuple((str(d), int(s), int(e)) for d, s, e in evidence),
                       None if texts is None else tuple(texts), row.get("qrels"), row.get("n_relevant"))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: not a run record ({type(exc).__name__}: {exc})") from exc


def read_runs(path: str | Path) -> list[RunSample]:
    """The run records of ``runs.jsonl``; a record that does not parse is an InputError naming its line."""
    from ragsweep.gen.documents import iter_jsonl

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no run records (runs.jsonl) here")
    return [RunSample.from_dict(row, f"{path}, line {n}") for n, row in iter_jsonl(path)]
