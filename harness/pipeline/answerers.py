"""Reference answerers: turn a question and its top-K retrieved chunks into an answer.

- ``extractive`` (default, no LLM): the ``max_sentences`` sentences of the retrieved chunks closest
  to the question by embedding cosine, in reading order. Deterministic and fast: it measures what
  the retriever hands an answerer, not a model's wording.
- ``llm``: the shared ``llm`` object answers from the numbered contexts (one call per question and K;
  cached, so a repeated sweep makes no call). With ``cite=true`` it is asked to cite the contexts it
  uses with ``[n]`` markers; the sweep reads them (:func:`ragsweep.harness.records.cite_answers`) and
  scores the citation metrics, so citing is a sweep axis like any other.

Both implement ``answer_all(questions, contexts_per_question) -> list[str]``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragsweep.gen import sentence_spans
from ragsweep.metrics import Embedder


class ExtractiveAnswerer:
    """Best-matching sentences of the contexts, by cosine to the question."""

    name = "extractive"

    def __init__(self, max_sentences: int = 2, embedder: Embedder | None = None, llm: Any = None) -> None:
        self.max_sentences = max_sentences
        # The sweep passes its memoising, disk-cached embedder, so the sentences that every K re-reads
        # are embedded once. `llm` is accepted (all answerers share one signature) and unused.
        self.embedder = embedder

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "max_sentences": self.max_sentences}

    def answer_all(self, questions: Sequence[str], contexts: Sequence[Sequence[str]]) -> list[str]:
        if self.embedder is None:
            raise ValueError("ExtractiveAnswerer needs an embedder")
        per_q = [[(ci, s, c[s:e]) for ci, c in enumerate(ctxs) for s, e in sentence_spans(c)] for ctxs in contexts]
        unique = sorted({text for sents in per_q for _, _, text in sents})
        if not unique:
            return ["" for _ in questions]
        index = {t: i for i, t in enumerate(unique)}
        sent_vecs = self.embedder.embed(unique)
        q_vecs = self.embedder.embed(list(questions))
        answers = []
        for qv, sents in zip(q_vecs, per_q):
            if not sents:
                answers.append("")
                continue
            sims = sent_vecs[[index[t] for _, _, t in sents]] @ qv
            # Highest cosine first; ties by position, so the choice never depends on set order.
            best = sorted(np.argsort(-sims, kind="stable")[: self.max_sentences])
            answers.append(" ".join(sents[i][2] for i in best))
        return answers


ANSWER_INSTRUCTION = (
    "Answer the question using only the numbered contexts. Be brief: one or two sentences. "
    "If the contexts do not contain the answer, say \"I don't know.\""
)


CITE_EXAMPLE = "The bridge opened in 1932 [2]."
CITE_INSTRUCTION = (
    "Answer the question using only the numbered contexts. Be brief: one to three sentences. "
    "End every sentence with the number of each context that supports it, in square brackets, "
    f"like this: \"{CITE_EXAMPLE}\" or \"... [1][3].\" Cite only contexts that state what "
    "the sentence says. If the contexts do not contain the answer, say \"I don't know.\""
)


def without_example(answer: str) -> str | None:
    """A cited answer without the instruction's example sentence, which a small model sometimes copies in as a
    sentence of its own; it is never an answer. None when nothing else is left (a missing answer, recorded as
    such). Any example gets copied, a worked one tied to its own question too, so the copy is taken out rather
    than the example changed."""
    if CITE_EXAMPLE not in answer:
        return answer.strip()
    return " ".join(answer.replace(CITE_EXAMPLE, " ").split()) or None


class LLMAnswerer:
    """The shared ``llm`` answers from the numbered contexts (``cite``: with ``[n]`` markers)."""

    name = "llm"

    def __init__(self, llm: Any = None, max_tokens: int = 160, embedder: Any = None, cite: bool = False) -> None:
        if llm is None:
            from ragsweep.metrics import InputError

            raise InputError("answerer=llm needs a model: add llm=local, llm=local_small or llm=openai")
        self.llm, self.max_tokens, self.cite = llm, max_tokens, bool(cite)

    def params(self) -> dict[str, Any]:
        out = {"name": self.name, "model": getattr(self.llm, "model_id", str(self.llm)), "max_tokens": self.max_tokens}
        if self.cite:  # the default leaves the names of earlier variants as they were
            out["cite"] = True
        return out

    async def _answer(self, question: str, contexts: Sequence[str]) -> str | None:
        from ragsweep.metrics import JudgeError, PromptId

        numbered = "\n\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts)) or "(no context)"
        messages = [{"role": "system", "content": CITE_INSTRUCTION if self.cite else ANSWER_INSTRUCTION},
                    {"role": "user", "content": f"Contexts:\n{numbered}\n\nQuestion: {question}\nAnswer:"}]
        prompt = PromptId("answerer.llm_cite", "1") if self.cite else PromptId("answerer.llm", "1")
        try:
            done = await self.llm.complete(messages, prompt=prompt, max_tokens=self.max_tokens)
        except JudgeError:  # recorded as a missing answer; its metrics say so instead of crashing the job
            return None
        return without_example(done.text) if self.cite else done.text.strip()

    def answer_all(self, questions: Sequence[str], contexts: Sequence[Sequence[str]]) -> list[str | None]:
        async def run() -> list[str | None]:
            return list(await asyncio.gather(*(self._answer(q, c) for q, c in zip(questions, contexts))))

        return asyncio.run(run())


def no_answerer(**_: Any) -> None:
    """``answerer=none``: the sweep scores retrieval only."""
    return None
