"""Run records: what a pipeline did with each test question. Runs are the hand-off to every metric.

A sweep job (or ``ragsweep run`` on an application) writes one :class:`RunSample` per test
question into ``runs.jsonl``: the question and its ground truth, the ranked retrieval as searched
(the job's deepest K) and the answer at each top-K. Every metric, retrieval or judged, is scored
from these records through :func:`RunSample.rag_sample`, so a finished sweep can be rescored with
new metrics without retrieving again (``ragsweep rescore``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragsweep.metrics import InputError, RagSample, Span


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk, located in its source document.

    ``same_as`` is set when the document is a copy of another (corpus option ``duplicates=equal``): the
    span of the original that this chunk's text stands for (for a sweep, the original's chunk with the
    most of it). Relevance is judged on it, so a copy is as relevant as its original and a group of
    copies is found once (see ``harness/pipeline/relevance.py``).

    ``hit`` is set when the span is a context expansion (``context=window|parent``): the ``(start, end)``
    of the chunk the search found inside it; a budget that cuts the span keeps the hit.
    """

    chunk_id: str
    doc_id: str
    start: int
    end: int
    score: float
    text: str | None
    same_as: Span | None = None
    hit: tuple[int, int] | None = None

    @property
    def span(self) -> Span:
        return (self.doc_id, self.start, self.end)

    @property
    def judged_span(self) -> Span:
        """The span relevance is judged on: the original's when this is a copy, else its own."""
        return self.same_as if self.same_as is not None else self.span


@dataclass(frozen=True)
class Cut:
    """What a variant passes on from a ranking: its first ``top_k`` items, or items until a budget is filled.

    A budget counts characters (``unit="chars"``) or WordPiece tokens of the packaged MiniLM tokenizer
    (``unit="tokens"``, bert-base-uncased's vocabulary). Items are passed on in rank order while they
    fit; the first one that does not fit is cut to fill the budget exactly, so variants compared at
    one budget pass on the same amount of text whatever their chunk size.
    """

    kind: str
    value: int
    unit: str = "chars"

    def __post_init__(self) -> None:
        if self.kind not in ("top_k", "budget") or self.unit not in ("chars", "tokens"):
            raise InputError(f"bad cut {self.kind}={self.value} {self.unit}")
        if isinstance(self.value, bool) or not isinstance(self.value, int) or self.value < 1:
            raise InputError(f"retriever.{self.kind} must be a positive integer, got {self.value!r}")

    @property
    def label(self) -> str:
        return f"{self.kind}={self.value}"

    def params(self) -> dict[str, Any]:
        return {"top_k": self.value} if self.kind == "top_k" else {"budget": self.value, "budget_unit": self.unit}

    @classmethod
    def of(cls, variant: Mapping[str, Any]) -> Cut:
        """The cut of a summary's variant record (``top_k`` or ``budget`` in it or in its params)."""
        params = {**variant.get("params", {}), **variant}
        if params.get("budget") is not None:
            return cls("budget", int(params["budget"]), str(params.get("budget_unit", "chars")))
        return cls("top_k", int(params["top_k"]))

    def passed(self, retrieved: tuple[Retrieved, ...]) -> tuple[Retrieved, ...]:
        """The items this cut passes on (the last one cut to the budget)."""
        if self.kind == "top_k":
            return retrieved[:self.value]
        out: list[Retrieved] = []
        left = self.value
        for r in retrieved:
            if left <= 0:
                break
            size = _size(r, self.unit)
            if size <= left:
                out.append(r)
                left -= size
                continue
            skip, chars = _kept(r, left, self.unit)
            same = None if r.same_as is None else (r.same_as[0], min(r.same_as[1] + skip, r.same_as[2]),
                                                   min(r.same_as[2], r.same_as[1] + skip + chars))
            out.append(Retrieved(r.chunk_id, r.doc_id, r.start + skip, r.start + skip + chars, r.score,
                                 None if r.text is None else r.text[skip:skip + chars], same, r.hit))
            break
        return tuple(out)


def _kept(r: Retrieved, left: int, unit: str) -> tuple[int, int]:
    """(characters skipped, characters kept) of an item cut to ``left`` chars or tokens.

    A chunk keeps its beginning. An expanded context (``r.hit``) keeps the part from its hit on, moved
    back when the span ends first, so the budget never cuts away the chunk that was found.
    """
    if unit == "chars":
        skip = 0 if r.hit is None else max(0, min(r.hit[0], r.end - left) - r.start)
        return skip, left
    text = _text(r)
    if r.hit is None:
        return 0, _token_chars(text, left)
    offsets = _tokenizer().encode(text, add_special_tokens=False).offsets
    if not offsets or left <= 0:
        return 0, 0
    first = next((i for i, (s, _) in enumerate(offsets) if s >= r.hit[0] - r.start), len(offsets))
    first = max(0, min(first, len(offsets) - left))
    skip = offsets[first][0]
    return skip, offsets[min(first + left, len(offsets)) - 1][1] - skip


def _text(r: Retrieved) -> str:
    if r.text is None:
        raise InputError("a token budget needs the chunk texts: the run was written with output.keep_text=false")
    return r.text


_TOKENIZER: list[Any] = []


def _tokenizer() -> Any:
    if not _TOKENIZER:
        from ragsweep.metrics import load_tokenizer

        _TOKENIZER.append(load_tokenizer())
    return _TOKENIZER[0]


def _size(r: Retrieved, unit: str) -> int:
    if unit == "chars":
        return r.end - r.start
    return len(_tokenizer().encode(_text(r), add_special_tokens=False).ids)


def _token_chars(text: str, n_tokens: int) -> int:
    """How many characters of ``text`` its first ``n_tokens`` WordPiece tokens cover."""
    offsets = _tokenizer().encode(text, add_special_tokens=False).offsets
    return offsets[min(n_tokens, len(offsets)) - 1][1] if offsets and n_tokens > 0 else 0


@dataclass(frozen=True)
class RunSample:
    """One test question run through one pipeline variant.

    Attributes:
        sample_id: The test sample's id.
        variant: The run's name (a sweep job's parameters, without top_k).
        retrieved: The ranked retrieval as searched, best first (deep enough for every top-K).
        answers: The answer under each cut (``{"top_k=5": answer, "budget=2000": ...}``); empty
            without an answerer.
        question, reference: The test sample's question and reference answer (None when absent).
        evidence: Gold evidence spans; ``evidence_texts`` their texts.
        qrels: Document judgements (BEIR), instead of evidence.
        n_relevant: Items of this variant's chunking that overlap the evidence (span relevance).
        status: ``ok``, or ``error`` when the application call failed for good (``ragsweep run``):
            every metric of an error row is ``error`` with ``error`` as its reason.
        error: Why the call failed (None when ok).
        latency_ms: Wall time of the application call that produced the answer (``ragsweep run``).
        usage: Tokens the application reported (``{"prompt_tokens": .., "completion_tokens": ..}``).
        raw: The application's raw response (JSON-able), kept as evidence.
        located: Per retrieved item, how its context string was found in the corpus
            (``{"method": exact | normalised | fuzzy | unlocated, "score": .., ...}``); None for a sweep.
        history: In a conversation, the turns before ``question`` (its last user turn); None otherwise.
        query: What a sweep searched with when it is not the question (``conversation.query``:
            the history joined, or a condensed question); None: the question.
        rewrites: What a sweep searched with besides or instead of the query (``query=multi_query``:
            the rephrasings; ``hyde``: the hypothetical passage); None: the query alone.
        kind: The test sample's kind (``single_hop``, ``multi_hop``, ``unanswerable``, ...), so that a
            board or the question explorer can be read by kind; None in records written before it.
        citations: Per cut, the answer's sentences with the contexts each cites
            (``[{"sentence", "cites", "invalid"}, ...]``, :mod:`ragsweep.metrics.citations`); the answer
            under that cut is then stored with its markers stripped. None: the answers were not read
            for citations (an answerer or application that does not cite).
    """

    sample_id: str
    variant: str
    retrieved: tuple[Retrieved, ...]
    answers: Mapping[str, str | None] = field(default_factory=dict)
    question: str | None = None
    reference: str | None = None
    evidence: tuple[Span, ...] | None = None
    evidence_texts: tuple[str, ...] | None = None
    qrels: Mapping[str, int] | None = None
    n_relevant: int | None = None
    status: str = "ok"
    error: str | None = None
    latency_ms: float | None = None
    usage: Mapping[str, int] | None = None
    raw: Any = None
    located: tuple[Mapping[str, Any], ...] | None = None
    history: tuple[Mapping[str, Any], ...] | None = None
    query: str | None = None
    rewrites: tuple[str, ...] | None = None
    kind: str | None = None
    citations: Mapping[str, list[Mapping[str, Any]]] | None = None

    def rag_sample(self, cut: Cut) -> RagSample:
        """What a metric sees of this run when the pipeline passes on what ``cut`` keeps."""
        passed = cut.passed(self.retrieved)
        texts = [r.text for r in passed]
        # A top-K variant keeps the deep ranking (qrels collapse chunks to documents before cutting
        # at K documents); a budget variant's ranking is what it passes on.
        ranking, top_k = (self.retrieved, cut.value) if cut.kind == "top_k" else (passed, None)
        return RagSample(
            id=self.sample_id, question=self.question, answer=self.answers.get(cut.label),
            contexts=tuple(texts) if all(t is not None for t in texts) else None,  # type: ignore[arg-type]
            reference=self.reference or None, reference_contexts=self.evidence_texts or None,
            retrieved=tuple(r.judged_span for r in ranking), top_k=top_k, evidence=self.evidence,
            qrels=self.qrels, n_relevant=self.n_relevant, history=self.history or None,
            citations=None if self.citations is None or self.citations.get(cut.label) is None
            else tuple(self.citations[cut.label]))

    def to_dict(self, keep_text: bool = True) -> dict[str, Any]:
        rows = [asdict(r) for r in self.retrieved]
        for r in rows:
            if not keep_text:
                r.pop("text")
            if r["same_as"] is None:  # records of corpora without copies keep their old form
                r.pop("same_as")
            else:
                r["same_as"] = list(r["same_as"])
            if r["hit"] is None:  # records without context expansion keep their old form
                r.pop("hit")
            else:
                r["hit"] = list(r["hit"])
        return {"sample_id": self.sample_id, "variant": self.variant, "question": self.question,
                "reference": self.reference,
                "evidence": None if self.evidence is None else [list(s) for s in self.evidence],
                "evidence_texts": None if self.evidence_texts is None else list(self.evidence_texts),
                "qrels": None if self.qrels is None else dict(self.qrels), "n_relevant": self.n_relevant,
                "answers": dict(self.answers), "retrieved": rows, **self._conversation_fields(),
                **self._application_fields(), **({} if self.kind is None else {"kind": self.kind}),
                **({} if self.citations is None else {"citations": {k: [dict(c) for c in v]
                                                                    for k, v in self.citations.items()}})}

    def _conversation_fields(self) -> dict[str, Any]:
        """History and rewritten query, when there are (records of single questions keep their old form)."""
        out: dict[str, Any] = {}
        if self.history:
            out["history"] = [dict(t) for t in self.history]
        if self.query is not None:
            out["query"] = self.query
        if self.rewrites:
            out["rewrites"] = list(self.rewrites)
        return out

    def _application_fields(self) -> dict[str, Any]:
        """The fields of an application run (``ragsweep run``); absent from a sweep's records."""
        out: dict[str, Any] = {}
        if self.status != "ok" or self.error is not None:
            out.update(status=self.status, error=self.error)
        for key in ("latency_ms", "usage", "raw"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.located is not None:
            out["located"] = [dict(m) for m in self.located]
        return out

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], where: str = "") -> RunSample:
        try:
            retrieved = tuple(Retrieved(r["chunk_id"], r["doc_id"], int(r["start"]), int(r["end"]),
                                        float(r["score"]), r.get("text"), _span_of(r.get("same_as")),
                                        None if r.get("hit") is None else (int(r["hit"][0]), int(r["hit"][1])))
                              for r in row["retrieved"])
            evidence = row.get("evidence")
            texts = row.get("evidence_texts")
            return cls(str(row["sample_id"]), str(row["variant"]), retrieved,
                       {str(k): a for k, a in (row.get("answers") or {}).items()},
                       row.get("question"), row.get("reference"),
                       None if evidence is None else tuple((str(d), int(s), int(e)) for d, s, e in evidence),
                       None if texts is None else tuple(texts), row.get("qrels"), row.get("n_relevant"),
                       str(row.get("status") or "ok"), row.get("error"), row.get("latency_ms"), row.get("usage"),
                       row.get("raw"),
                       None if row.get("located") is None else tuple(dict(m) for m in row["located"]),
                       tuple(dict(t) for t in row["history"]) if row.get("history") else None, row.get("query"),
                       tuple(row["rewrites"]) if row.get("rewrites") else None,
                       None if row.get("kind") is None else str(row["kind"]),
                       None if row.get("citations") is None else {str(k): [dict(c) for c in v]
                                                                  for k, v in row["citations"].items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: not a run record ({type(exc).__name__}: {exc})") from exc


def cite_answers(answers: Sequence[str | None], n_contexts: Sequence[int | None],
                 given: Sequence[Sequence[Mapping[str, Any]] | None] | None = None,
                 always: bool = False) -> tuple[list[str | None], list[list[dict[str, Any]] | None] | None]:
    """The answers of one variant read for citations: (answers with markers stripped, citations per answer).

    An answer's citations are the structured list ``given`` for it, else its inline markers
    (:func:`ragsweep.metrics.citations.parse_answer`, indexing its ``n_contexts`` contexts). When no
    answer of the variant cites anything (and not ``always``: an answerer asked to cite), the answers
    come back as they were and the citations as None, so a variant that never cites has no citation
    metrics rather than a column of zeros. A missing answer has no citations (None).
    """
    from ragsweep.metrics import CitedSentence, parse_answer, strip_markers

    given = list(given) if given is not None else [None] * len(answers)
    stripped: list[str | None] = []
    cited: list[list[dict[str, Any]] | None] = []
    anything = False
    for answer, n, listed in zip(answers, n_contexts, given):
        if answer is None:
            stripped.append(None)
            cited.append(None if listed is None else [dict(c) for c in listed])
            anything = anything or listed is not None
            continue
        parsed = parse_answer(answer, n)
        stripped.append(parsed.answer if listed is None else strip_markers(answer))
        if listed is not None:
            rows = [CitedSentence.from_dict(c) for c in listed]
            cited.append([c.to_dict() for c in rows])
            anything = True
        else:
            cited.append([c.to_dict() for c in parsed.sentences])
            anything = anything or parsed.cites_anything
    if not (anything or always):
        return list(answers), None
    return stripped, cited


def _span_of(value: Any) -> Span | None:
    if value is None:
        return None
    doc, start, end = value
    return (str(doc), int(start), int(end))


def read_runs(path: str | Path) -> list[RunSample]:
    """The run records of ``runs.jsonl``; a record that does not parse is an InputError naming its line."""
    from ragsweep.gen import iter_jsonl

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no run records (runs.jsonl) here")
    return [RunSample.from_dict(row, f"{path}, line {n}") for n, row in iter_jsonl(path)]
