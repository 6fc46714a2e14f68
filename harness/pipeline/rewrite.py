"""Query rewriting: the ``query`` config group of ``ragsweep sweep``.

What a variant's retrieval searches with, from each sample's query (the question, or what
``conversation.query`` made of a conversation: the two compose):

- ``plain`` (default): the query itself.
- ``multi_query``: the sweep's ``llm`` writes ``n`` rephrasings (:data:`MULTI_QUERY`, one call per
  query); the query and each rephrasing are searched and their rankings fused by reciprocal-rank
  fusion (:func:`harness.lexical.rrf`, the fusion of hybrid retrieval).
- ``hyde``: the ``llm`` writes a short hypothetical passage that answers the query (:data:`HYDE`,
  Gao et al., 2022: "Precise Zero-Shot Dense Retrieval without Relevance Labels"); it is searched in
  place of the query: embedded for dense search (as a query), its words for BM25, both for hybrid.

Rewrites go through the LLM cache, keyed on the model, the prompt's name and version and the query,
so a repeated sweep (or another variant of the same queries) makes no call. A call that fails for
good leaves the query as it was (counted in ``failed``). The answerer still answers the query, not
its rewrite.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from ragsweep.metrics import InputError, JudgeError, Prompt, complete

log = logging.getLogger(__name__)

KINDS = ("plain", "multi_query", "hyde")


class RephraseInput(BaseModel):
    """A question and how many rephrasings to write."""

    question: str = Field(description="the user's question")
    n: int = Field(description="how many search queries to write")


class RephraseOutput(BaseModel):
    """Search queries that ask for what the question asks."""

    queries: list[str]


MULTI_QUERY: Prompt[RephraseInput, RephraseOutput] = Prompt(
    name="harness.multi_query",
    instruction=(
        "Write n different search queries for a search engine that look for the information the question asks "
        "for. Vary the wording: use synonyms, the terms a document that answers it would use, a more specific or "
        "a more general form. Keep every name, number and date of the question. Do not answer the question."
    ),
    input=RephraseInput,
    output=RephraseOutput,
    examples=(
        (RephraseInput(question="When did the Forth Bridge open?", n=3),
         RephraseOutput(queries=["Forth Bridge opening date", "year the Forth railway bridge was opened",
                                 "Forth Bridge inauguration 1890s Scotland"])),
    ),
    max_tokens=192,
)


class HydeInput(BaseModel):
    """A question."""

    question: str = Field(description="the user's question")


class HydeOutput(BaseModel):
    """A passage that answers it, as a document would."""

    passage: str


HYDE: Prompt[HydeInput, HydeOutput] = Prompt(
    name="harness.hyde",
    instruction=(
        "Write a short passage of two to four sentences, in the style of an encyclopedia article or a "
        "scientific abstract, that answers the question. It is used only to search for real documents, so "
        "state the facts as such a document would, with the terms it would use; when you do not know the "
        "answer, write a plausible one. No preamble."
    ),
    input=HydeInput,
    output=HydeOutput,
    examples=(
        (HydeInput(question="When did the Forth Bridge open?"),
         HydeOutput(passage="The Forth Bridge is a cantilever railway bridge across the Firth of Forth in "
                            "Scotland. Construction began in 1882 and the bridge was opened on 4 March 1890.")),
    ),
    max_tokens=200,
)


@dataclass
class RewriteStats:
    """What rewriting did: queries rewritten, calls that failed (query kept), seconds."""

    queries: int = 0
    failed: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "failed": self.failed, "seconds": round(self.seconds, 3)}


class QueryRewriter:
    """The ``query`` group: ``kind`` plain, multi_query (``n`` rephrasings, fused with ``rrf_k``) or hyde."""

    def __init__(self, kind: str = "plain", n: int = 3, rrf_k: float = 60.0) -> None:
        if kind not in KINDS:
            raise InputError(f"query must be one of {', '.join(KINDS)}, got {kind!r}")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InputError(f"query.n must be a positive integer, got {n!r}")
        self.kind, self.n, self.rrf_k = kind, n, float(rrf_k)
        self.stats = RewriteStats()

    @property
    def needs_llm(self) -> bool:
        return self.kind != "plain"

    def params(self) -> dict[str, Any]:
        """What names the variant (besides ``query=<kind>``)."""
        return {"n": self.n} if self.kind == "multi_query" else {}

    def rewrite(self, queries: Sequence[str], llm: Any) -> list[list[str]]:
        """Per query, the texts to search: ``[query]`` (plain), ``[query, rephrasing...]`` (multi_query)
        or ``[passage]`` (hyde)."""
        if self.kind == "plain":
            return [[q] for q in queries]
        if llm is None:
            raise InputError(f"query={self.kind} needs an LLM to rewrite the queries: llm=local, llm=local_small, "
                             "llm=openai ... (or query=plain)")
        t = time.perf_counter()
        concurrency = int(getattr(llm, "max_concurrency", 1) or 1)
        out = asyncio.run(self._all(queries, llm, concurrency))
        self.stats.queries += len(queries)
        self.stats.seconds += time.perf_counter() - t
        if self.stats.failed:
            log.warning("query=%s: %d of %d rewrites failed; those queries search as they are",
                        self.kind, self.stats.failed, len(queries))
        return out

    async def _all(self, queries: Sequence[str], llm: Any, concurrency: int) -> list[list[str]]:
        limit = asyncio.Semaphore(max(1, concurrency))

        async def one(query: str) -> list[str]:
            async with limit:
                try:
                    if self.kind == "hyde":
                        done = await complete(llm, HYDE, HydeInput(question=query))
                        passage = " ".join(str(done.parsed.passage).split())
                        return [passage or query]
                    done = await complete(llm, MULTI_QUERY, RephraseInput(question=query, n=self.n))
                except JudgeError as exc:
                    log.info("query rewrite failed: %s", exc)
                    self.stats.failed += 1
                    return [query]
            texts, seen = [query], {_key(query)}
            for q in done.parsed.queries:
                text = " ".join(str(q).split())
                if text and _key(text) not in seen and len(texts) <= self.n:
                    texts.append(text)
                    seen.add(_key(text))
            return texts

        return list(await asyncio.gather(*(one(q) for q in queries)))


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def rewriter(kind: str = "plain", n: int = 3, rrf_k: float = 60.0) -> QueryRewriter:
    """Build the ``query`` group's object from its config keys."""
    return QueryRewriter(kind, n, rrf_k)
