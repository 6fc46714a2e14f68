"""Reranking the first-stage ranking: the ``rerank`` config group of ``ragsweep sweep``.

- ``none`` (default): the first-stage ranking is passed on as it is.
- ``llm``: a pointwise LLM reranker on the sweep's ``llm``. Each of the top ``top_n`` candidates of a
  query gets one call (:data:`RELEVANCE`) asking whether the passage is relevant to the question;
  P(relevant) is read from the verdict token's top log-probabilities,
  P = p(yes) / (p(yes) + p(no)) (:func:`metrics.judging.verdict_probability`, at the first position
  whose most likely token is a verdict: under a JSON grammar, earlier positions list tokens the
  grammar never allows). A backend without log-probabilities gives the written verdict as 1 or 0,
  counted in ``hard_verdicts``. Calls go through the LLM cache (prompt name and version in the key).
  The passage is untrusted: flagged sentences are removed first (:func:`metrics.guard.clean`) and
  it travels inside ``<passage>`` tags under the data rule, like every judge input.
- ``cross_encoder``: a cross-encoder from a local folder (``rerank.model``): an ONNX export
  (``model.onnx`` + ``tokenizer.json``; inputs ``input_ids``, ``attention_mask`` and optionally
  ``token_type_ids``; output logits) run with onnxruntime, or a sentence-transformers folder through
  ``CrossEncoder`` when that package (and torch) is installed.

Every reranker reorders the top ``top_n`` by its score, ties kept in first-stage order, and leaves
the rest after them as they were; it runs on the chunks found, before a ``context`` expands them,
so every K, budget and context option passes on the reranked order. With ``fuse: rrf`` the top
``top_n`` are ordered instead by reciprocal-rank fusion of the reranker's order with the first
stage's (:func:`fused`), for a reranker that is weaker than the first stage on the corpus: a small
LLM judging SciFact claims moved the right abstract down from the top (docs/how-to/context-rerank-rewrite.md: Reranking).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from ragsweep.harness.records import Retrieved
from ragsweep.metrics import InputError, JudgeError, Logprobs, Prompt, clean, complete, verdict_probability

FUSE = ("none", "rrf")  # rerank.fuse: the reranker's order alone, or fused with the first stage's

log = logging.getLogger(__name__)


class RelevanceInput(BaseModel):
    """A question and one retrieved passage."""

    question: str = Field(description="the user's question")
    passage: str = Field(description="one retrieved passage")


class RelevanceOutput(BaseModel):
    """Whether the passage is relevant to the question."""

    relevant: Literal["yes", "no"]


RELEVANCE: Prompt[RelevanceInput, RelevanceOutput] = Prompt(
    name="harness.rerank_relevance",
    instruction=(
        "Decide whether a retrieved passage is relevant to a question. Answer yes when the passage holds "
        "information that answers the question or directly helps to answer it, no when it does not (a passage "
        "on the same topic that does not bear on what is asked is not relevant). Judge only what the passage "
        "says about the question."
    ),
    input=RelevanceInput,
    output=RelevanceOutput,
    examples=(
        (RelevanceInput(question="When did the Forth Bridge open?",
                        passage="The Forth Bridge, a cantilever railway bridge in Scotland, opened on 4 March 1890."),
         RelevanceOutput(relevant="yes")),
        (RelevanceInput(question="When did the Forth Bridge open?",
                        passage="The Forth is a river in Scotland that flows east into the North Sea."),
         RelevanceOutput(relevant="no")),
    ),
    max_tokens=16,  # {"relevant": "yes"}
)


def _norm(token: str) -> str:
    return token.strip().strip('"').strip().lower()


def relevance_probability(logprobs: Logprobs | None, verdict: str) -> tuple[float, bool]:
    """P(relevant) of one call, and whether it came from log-probabilities.

    Read at the first position where the verdict tokens (``yes`` and ``no``, any case, quotes and spaces
    stripped) together outweigh every other token listed, renormalised over the two. Without such a
    position, the written verdict as 1 or 0.
    """
    for position in logprobs or []:
        verdicts = sum(math.exp(lp) for tok, lp in position.items() if _norm(tok) in ("yes", "no"))
        others = max((math.exp(lp) for tok, lp in position.items() if _norm(tok) not in ("yes", "no")), default=0.0)
        if verdicts > others:
            p = verdict_probability(position, "yes", "no")
            if p is not None:
                return p, True
    return (1.0 if verdict == "yes" else 0.0), False


def truncate(text: str, max_chars: int | None) -> str:
    """``text`` cut to at most ``max_chars`` characters at a word boundary (None: whole)."""
    if max_chars is None or len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars // 2 else cut).rstrip() + " …"


def reorder(scores: Sequence[float | None], n: int) -> list[int]:
    """The new order of a ranking of ``n`` items whose first ``len(scores)`` were scored: scored items
    by score (ties, and unscored items last among them, in first-stage order), then the rest as they were."""
    head = sorted(range(len(scores)), key=lambda j: (scores[j] is None, -round(scores[j] or 0.0, 9), j))
    return head + list(range(len(scores), n))


def fused(scores: Sequence[float | None], rrf_k: float = 60.0) -> list[float]:
    """Reciprocal-rank fusion of the first-stage order (position j) with the reranker's order over the
    scored head: 1 / (rrf_k + first-stage rank) + 1 / (rrf_k + reranker rank), ranks from 1; an unscored
    item gets the first-stage term only. Sorting the head by it (ties in first-stage order) is
    ``rerank.fuse=rrf``: a weak reranker can move a passage but not bury the first stage's best."""
    by_reranker = reorder(scores, len(scores))
    rank = {j: r for r, j in enumerate(by_reranker, start=1)}
    return [1.0 / (rrf_k + j + 1) + (1.0 / (rrf_k + rank[j]) if s is not None else 0.0)
            for j, s in enumerate(scores)]


@dataclass
class RerankStats:
    """What reranking did and cost: queries, candidates scored, failures, fallbacks, seconds."""

    queries: int = 0
    candidates: int = 0
    failed: int = 0
    hard_verdicts: int = 0
    guarded: int = 0
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"queries": self.queries, "candidates": self.candidates, "failed": self.failed,
               "hard_verdicts": self.hard_verdicts, "guarded": self.guarded, "seconds": round(self.seconds, 3)}
        return {**out, **self.extra}


class Reranker:
    """The ``rerank`` group's interface; this base class is ``rerank=none`` (keeps the order)."""

    kind = "none"
    needs_llm = False

    def __init__(self, top_n: int = 20, fuse: str = "none", rrf_k: float = 60.0) -> None:
        if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
            raise InputError(f"rerank.top_n must be a positive integer, got {top_n!r}")
        if fuse not in FUSE:
            raise InputError(f"rerank.fuse must be one of {', '.join(FUSE)}, got {fuse!r}")
        if isinstance(rrf_k, bool) or not isinstance(rrf_k, (int, float)) or not 0 <= rrf_k < math.inf:
            raise InputError(f"rerank.rrf_k must be a number >= 0, got {rrf_k!r}")
        self.top_n, self.fuse, self.rrf_k = top_n, fuse, float(rrf_k)
        self.stats = RerankStats()

    def _fuse_params(self) -> dict[str, Any]:
        """``fuse`` / ``rrf_k`` in a variant's name only when fusing (names of plain reranking stay as they were)."""
        return {"fuse": self.fuse, "rrf_k": self.rrf_k} if self.fuse != "none" else {}

    @property
    def active(self) -> bool:
        return self.kind != "none"

    def params(self) -> dict[str, Any]:
        """What names the variant (besides ``rerank=<kind>``)."""
        return {}

    def score(self, questions: Sequence[str], passages: Sequence[Sequence[str]]) -> list[list[float | None]]:
        """A score per candidate passage of each question (higher: more relevant; None: not scored)."""
        return [[None] * len(p) for p in passages]

    def __call__(self, questions: Sequence[str], found: Sequence[Sequence[Retrieved]]) -> list[tuple[list[int], list[float]]]:
        """Per query, the new order of its ranking and each item's score in that order (a reranked item
        scores its reranker's score; the rest keep their first-stage score)."""
        t = time.perf_counter()
        passages = [[r.text or "" for r in got[: self.top_n]] for got in found]
        scores = self.score(questions, passages)
        out = []
        for got, sc in zip(found, scores):
            if self.fuse == "rrf" and any(v is not None for v in sc):
                f = fused(sc, self.rrf_k)
                order = reorder(f, len(got))
                out.append((order, [f[j] if j < len(f) else got[j].score for j in order]))
                continue
            order = reorder(sc, len(got))
            out.append((order, [sc[j] if j < len(sc) and sc[j] is not None else got[j].score for j in order]))
        self.stats.queries += len(found)
        self.stats.candidates += sum(len(p) for p in passages)
        self.stats.seconds += time.perf_counter() - t
        return out


class LLMReranker(Reranker):
    """Pointwise relevance by the sweep's LLM, P(relevant) from the verdict's log-probabilities."""

    kind = "llm"
    needs_llm = True

    def __init__(self, llm: Any = None, top_n: int = 20, max_chars: int | None = 1200,
                 fuse: str = "none", rrf_k: float = 60.0) -> None:
        super().__init__(top_n, fuse, rrf_k)
        if max_chars is not None and (isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1):
            raise InputError(f"rerank.max_chars must be a positive integer or null, got {max_chars!r}")
        self.llm, self.max_chars = llm, max_chars

    def params(self) -> dict[str, Any]:
        return {"top_n": self.top_n, "max_chars": self.max_chars, **self._fuse_params()}

    def score(self, questions: Sequence[str], passages: Sequence[Sequence[str]]) -> list[list[float | None]]:
        if self.llm is None:
            raise InputError("rerank=llm needs an LLM: llm=local, llm=local_small, llm=openai ... (or rerank=none)")
        concurrency = int(getattr(self.llm, "max_concurrency", 1) or 1)
        return asyncio.run(self._score_all(questions, passages, concurrency))

    async def _score_all(self, questions: Sequence[str], passages: Sequence[Sequence[str]],
                         concurrency: int) -> list[list[float | None]]:
        limit = asyncio.Semaphore(max(1, concurrency))

        async def one(question: str, passage: str) -> float | None:
            cleaned = clean(truncate(passage, self.max_chars), "passage")
            if cleaned.findings:
                self.stats.guarded += 1
            async with limit:
                try:
                    done = await complete(self.llm, RELEVANCE, RelevanceInput(question=question, passage=cleaned.text),
                                          logprobs=True)
                except JudgeError as exc:
                    log.info("rerank call failed: %s", exc)
                    self.stats.failed += 1
                    return None
            p, from_logprobs = relevance_probability(done.logprobs, done.parsed.relevant)
            if not from_logprobs:
                self.stats.hard_verdicts += 1
            return p

        # Calls in query order, so a backend that keeps the previous prompt's KV cache reuses the
        # instruction and question prefix across a query's candidates.
        flat = await asyncio.gather(*(one(q, p) for q, ps in zip(questions, passages) for p in ps))
        out, i = [], 0
        for ps in passages:
            out.append(list(flat[i:i + len(ps)]))
            i += len(ps)
        if self.stats.failed:
            log.warning("rerank: %d of %d calls failed; those passages follow the scored ones",
                        self.stats.failed, len(flat))
        return out


class CrossEncoderReranker(Reranker):
    """A local cross-encoder: an ONNX export run with onnxruntime, or a sentence-transformers folder."""

    kind = "cross_encoder"

    def __init__(self, model: str, top_n: int = 20, max_length: int = 512, batch_size: int = 16,
                 fuse: str = "none", rrf_k: float = 60.0) -> None:
        super().__init__(top_n, fuse, rrf_k)
        path = Path(str(model)).expanduser()
        if not path.is_dir():
            raise InputError(f"rerank.model={model}: no such folder (an ONNX cross-encoder: model.onnx + "
                             "tokenizer.json, or a sentence-transformers folder)")
        onnx_file = path / "model.onnx" if (path / "model.onnx").is_file() else path / "onnx" / "model.onnx"
        self.onnx = onnx_file if onnx_file.is_file() else None
        if self.onnx is None and not (path / "config.json").is_file():
            raise InputError(f"rerank.model={model}: neither model.onnx (with tokenizer.json) nor a "
                             "sentence-transformers folder (config.json) is in it")
        if self.onnx is not None and not (path / "tokenizer.json").is_file():
            raise InputError(f"rerank.model={model}: model.onnx needs tokenizer.json beside it")
        self.path, self.max_length, self.batch_size = path, int(max_length), int(batch_size)
        self._model: Any = None

    def params(self) -> dict[str, Any]:
        return {"model": self.path.name, "top_n": self.top_n, **self._fuse_params()}

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        if self.onnx is not None:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            try:
                tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
                session = ort.InferenceSession(str(self.onnx), providers=["CPUExecutionProvider"])
            except Exception as exc:  # a corrupt export: name the folder
                raise InputError(f"rerank.model={self.path}: cannot load the ONNX cross-encoder ({exc})") from exc
            tok.enable_truncation(self.max_length)
            tok.enable_padding()
            self._model = ("onnx", tok, session, {i.name for i in session.get_inputs()})
        else:
            try:
                from sentence_transformers import CrossEncoder
            except ImportError as exc:
                raise InputError(f"rerank.model={self.path} is a sentence-transformers folder: it needs "
                                 "pip install torch sentence-transformers (or export it to ONNX: model.onnx + "
                                 "tokenizer.json)") from exc
            self._model = ("st", CrossEncoder(str(self.path), max_length=self.max_length, local_files_only=True))
        return self._model

    def _scores(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        model = self._load()
        if model[0] == "st":
            return np.asarray(model[1].predict(pairs, batch_size=self.batch_size), dtype=np.float64).reshape(len(pairs), -1)[:, -1]
        _, tok, session, names = model
        out = []
        for lo in range(0, len(pairs), self.batch_size):
            enc = tok.encode_batch(pairs[lo:lo + self.batch_size])
            feed = {"input_ids": np.asarray([e.ids for e in enc], dtype=np.int64),
                    "attention_mask": np.asarray([e.attention_mask for e in enc], dtype=np.int64)}
            if "token_type_ids" in names:
                feed["token_type_ids"] = np.asarray([e.type_ids for e in enc], dtype=np.int64)
            logits = np.asarray(session.run(None, {k: v for k, v in feed.items() if k in names})[0], dtype=np.float64)
            # One logit per pair, or two classes (not relevant, relevant): their difference orders alike.
            logits = logits.reshape(len(enc), -1)
            out.append(logits[:, 0] if logits.shape[1] == 1 else logits[:, -1] - logits[:, 0])
        return np.concatenate(out) if out else np.zeros(0)

    def score(self, questions: Sequence[str], passages: Sequence[Sequence[str]]) -> list[list[float | None]]:
        pairs = [(q, p) for q, ps in zip(questions, passages) for p in ps]
        flat = self._scores(pairs).tolist() if pairs else []
        self.stats.extra["pairs"] = self.stats.extra.get("pairs", 0) + len(pairs)
        out, i = [], 0
        for ps in passages:
            out.append([None if math.isnan(s) else float(s) for s in flat[i:i + len(ps)]])
            i += len(ps)
        return out


def none(llm: Any = None, **_: Any) -> Reranker:
    """``rerank=none``."""
    return Reranker()


def llm(llm: Any = None, top_n: int = 20, max_chars: int | None = 1200, fuse: str = "none",
        rrf_k: float = 60.0) -> LLMReranker:
    """``rerank=llm``: the sweep passes its ``llm`` (metered) as ``llm``."""
    return LLMReranker(llm, top_n, max_chars, fuse, rrf_k)


def cross_encoder(model: str, top_n: int = 20, max_length: int = 512, batch_size: int = 16,
                  llm: Any = None, fuse: str = "none", rrf_k: float = 60.0) -> CrossEncoderReranker:
    """``rerank=cross_encoder``: ``model`` a local folder (``llm`` accepted and unused)."""
    del llm
    return CrossEncoderReranker(model, top_n, max_length, batch_size, fuse, rrf_k)
