"""Targets for pipelines built with LangChain or LlamaIndex, given by import path (optional extras).

``target=langchain target.runnable=my_chain:chain`` runs a LangChain Runnable (LCEL chain) on each
question; ``target=llamaindex target.query_engine=my_index:engine`` a LlamaIndex query engine. The
object at the path may also be a factory function: it is called once with ``target.params`` as
keyword arguments, so ``target.params.top_k=2,5`` builds two versions of the pipeline. (A Runnable
given directly receives ``target.params`` as its ``configurable`` fields.)

Neither framework is imported here until a target is built: ``pip install 'ragsweep[langchain]'``
or ``'ragsweep[llamaindex]'`` only for the one you use.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragsweep.harness.app.replies import Reply, TargetError, cited_sentences, context_score, context_text, jsonable
from ragsweep.harness.app.targets import Target, import_object
from ragsweep.metrics import InputError

log = logging.getLogger(__name__)


def is_runnable(obj: Any) -> bool:
    """A LangChain Runnable (duck-typed: ``ainvoke`` and ``invoke``)."""
    return callable(getattr(obj, "ainvoke", None)) and callable(getattr(obj, "invoke", None))


def is_query_engine(obj: Any) -> bool:
    """A LlamaIndex query engine (duck-typed: ``aquery`` and ``query``)."""
    return callable(getattr(obj, "aquery", None)) and callable(getattr(obj, "query", None))


def _resolve(spec: Any, params: Mapping[str, Any], check: Any, what: str) -> tuple[Any, bool]:
    """The pipeline object and whether ``params`` were used to build it (a factory was called)."""
    if spec is None:
        raise InputError(f"which pipeline? {what}=module:name")
    obj = import_object(spec, what) if isinstance(spec, str) else spec
    if check(obj):
        return obj, False
    if callable(obj) and not inspect.isclass(obj):
        built = obj(**params)
        if check(built):
            return built, True
    raise InputError(f"{what}={spec!r} is neither the pipeline nor a function returning one")


def last_turn_only(target: Target, history: Sequence[Mapping[str, Any]]) -> None:
    """Warn once that a conversation sample reaches this pipeline as its last turn alone."""
    if history and not getattr(target, "_warned_history", False):
        target._warned_history = True  # type: ignore[attr-defined]
        log.warning("target=%s gets the last turn of each conversation only (no history); wrap the pipeline in "
                    "a target=python function with a history= parameter to pass it", target.kind)


def _label(spec: Any) -> str:
    return spec if isinstance(spec, str) else f"{type(spec).__module__}:{type(spec).__qualname__}"


def _usage(message: Any) -> dict[str, int] | None:
    """LangChain's ``usage_metadata`` (input/output tokens) as prompt/completion tokens."""
    meta = getattr(message, "usage_metadata", None)
    if not isinstance(meta, Mapping):
        return None
    out = {"prompt_tokens": meta.get("input_tokens"), "completion_tokens": meta.get("output_tokens")}
    return {k: int(v) for k, v in out.items() if isinstance(v, int)} or None


class LangChainTarget(Target):
    """A LangChain Runnable: ``ainvoke(question)`` (or ``{input_key: question}``).

    Its output may be a string, a message, or a mapping holding the answer under ``answer_key`` and
    the retrieved Documents under ``contexts_key`` (the usual
    ``RunnableParallel(context=retriever, question=...).assign(answer=...)`` shape), and a
    per-sentence source list under ``citations_key`` (``[{"text", "sources": [...]}]``, a source being a
    Document's number from ``citation_base``, its id or its text); inline ``[n]`` markers in the answer
    are read either way.
    """

    kind = "langchain"

    def __init__(self, runnable: Any, params: Mapping[str, Any] | None = None, input_key: str | None = None,
                 answer_key: str = "answer", contexts_key: str = "context", citations_key: str | None = "citations",
                 citation_base: int = 1, **_: Any) -> None:
        self.spec, self.params = runnable, dict(params or {})
        self.input_key, self.answer_key, self.contexts_key = input_key, answer_key, contexts_key
        self.citations_key, self.citation_base = citations_key or None, int(citation_base)
        self.runnable, self._built = _resolve(runnable, self.params, is_runnable, "target.runnable")

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "runnable": _label(self.spec), "params": self.params, "input_key": self.input_key,
                "answer_key": self.answer_key, "contexts_key": self.contexts_key}

    def label(self) -> str:
        return _label(self.spec)

    async def call(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Reply:
        last_turn_only(self, history)
        given = question if self.input_key is None else {self.input_key: question}
        config = None if self._built or not self.params else {"configurable": self.params}
        out = await self.runnable.ainvoke(given, config=config)
        if isinstance(out, Mapping):
            if self.answer_key not in out:
                raise TargetError(f"the chain's output has no {self.answer_key!r} (keys: {sorted(out)})",
                                  retryable=False, raw=jsonable(out))
            message, items = out[self.answer_key], out.get(self.contexts_key)
            given = out.get(self.citations_key) if self.citations_key else None
        else:
            message, items, given = out, None, None
        answer = message if isinstance(message, str) else getattr(message, "content", None)
        if not isinstance(answer, str):
            raise TargetError(f"cannot read an answer from a {type(message).__name__}", retryable=False,
                              raw=jsonable(out))
        contexts = None if items is None else [context_text(d) for d in items]
        scores = None if items is None else [context_score(d) for d in items]
        cited = None if given is None else cited_sentences(jsonable(given), items, self.citation_base,
                                                            f"the chain's {self.citations_key!r}")
        return Reply(answer, contexts, scores if scores and all(s is not None for s in scores) else None,  # type: ignore[arg-type]
                     _usage(message), jsonable(out), cited)


#: What LlamaIndex's ``CitationQueryEngine`` puts before each source node's text ("Source 3:\n...");
#: its answer's ``[3]`` markers index the nodes by it, and the corpus does not hold it.
_SOURCE_LABEL = re.compile(r"^\s*Source (\d+):\s*\n?")


def source_label(text: str) -> tuple[str, int | None]:
    """A node's text without its ``Source n:`` label, and n (None when it has none)."""
    m = _SOURCE_LABEL.match(text)
    return (text[m.end():], int(m.group(1))) if m else (text, None)


class LlamaIndexTarget(Target):
    """A LlamaIndex query engine: ``aquery(question)``; the answer is ``response.response`` and the
    contexts the text of ``response.source_nodes``, in their order. A ``CitationQueryEngine``'s
    ``Source n:`` labels are taken off the node texts (so they are found in the corpus), and when they
    do not number the nodes 1, 2, ... in order, its ``[n]`` markers are renumbered to the nodes'
    places."""

    kind = "llamaindex"

    def __init__(self, query_engine: Any, params: Mapping[str, Any] | None = None, **_: Any) -> None:
        self.spec, self.params = query_engine, dict(params or {})
        self.engine, built = _resolve(query_engine, self.params, is_query_engine, "target.query_engine")
        if self.params and not built:
            raise InputError("target.params need a factory: target.query_engine=module:function_returning_an_engine")

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "query_engine": _label(self.spec), "params": self.params}

    def label(self) -> str:
        return _label(self.spec)

    async def call(self, question: str, sample_id: str, history: Sequence[Mapping[str, Any]] = ()) -> Reply:
        last_turn_only(self, history)
        response = await self.engine.aquery(question)
        answer = getattr(response, "response", None)
        if answer is None and isinstance(response, str):
            answer = response
        nodes = list(getattr(response, "source_nodes", None) or [])
        labelled = [source_label(context_text(n)) for n in nodes]
        contexts = [t for t, _ in labelled]
        labels = [k for _, k in labelled]
        if answer is not None and all(k is not None for k in labels) and labels != list(range(1, len(labels) + 1)):
            answer = renumber(str(answer), {k: i for i, k in enumerate(labels, start=1)})  # type: ignore[misc]
        scores = [context_score(n) for n in nodes]
        raw = {"response": None if answer is None else str(answer),
               "source_nodes": [{"text": t, "score": s, "id": getattr(getattr(n, "node", None), "node_id", None)}
                                for t, s, n in zip(contexts, scores, nodes)]}
        return Reply(None if answer is None else str(answer), contexts,
                     scores if scores and all(s is not None for s in scores) else None, None, raw)  # type: ignore[arg-type]


def renumber(answer: str, places: Mapping[int, int]) -> str:
    """``answer`` with each ``[n]`` marker's numbers mapped by ``places`` (a number it lacks becomes 0: invalid)."""
    from ragsweep.metrics import CITATION_MARKER, marker_numbers

    return CITATION_MARKER.sub(lambda m: "[" + ", ".join(str(places.get(k, 0)) for k in marker_numbers(m.group(0))) + "]", answer)
