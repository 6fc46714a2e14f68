"""How a sweep job's variant is named: the parameters that set it apart (the parts it uses and no
others), and the leaderboard name made from them. Names must stay stable across releases: a
board compares runs by them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.gen import build
from ragsweep.harness.pipeline.conversation import query_mode
from ragsweep.harness.records import Cut
from ragsweep.harness.runs import uses_embedder

#: The config groups that make up a sweep job's pipeline, each named on the board by its choice.
GROUPS = ("corpus", "chunker", "embedder", "retrieval", "index")


def _choice_params(cfg: DictConfig, choices: Mapping[str, str], group: str, default: str) -> dict[str, Any]:
    """``rerank`` / ``query`` and the settings that apply, when not the default (names stay as they were)."""
    choice = choices.get(group)
    if not choice or choice == default or group not in cfg:
        return {}
    shown = build(cfg[group], group).params()
    return {group: choice, **{f"{group}.{k}": v for k, v in shown.items()}}


def embedder_use(cfg: DictConfig, answerer: Any, specs: list[Any]) -> str | None:
    """What a job's embedder serves: ``retrieval`` (dense or hybrid search), ``answers`` (BM25 search
    with an answerer that embeds -- extractive picks sentences by cosine -- or a metric that does, such
    as answer similarity), or None (nothing embeds)."""
    mode = cfg.retrieval.get("mode", "dense") if "retrieval" in cfg else "dense"
    if mode != "bm25":
        return "retrieval"
    node = cfg.metrics.get("options") if "metrics" in cfg else None
    options = OmegaConf.to_container(node) if node is not None else {}
    if getattr(answerer, "embedder", None) is not None or uses_embedder(specs, options):  # type: ignore[arg-type]
        return "answers"
    return None


def variant_params(cfg: DictConfig, choices: Mapping[str, str], cut: Cut, conversations: bool = False,
                   embedder: str | None = "retrieval") -> dict[str, Any]:
    """The parameters that name a variant: group choices, the chunk size/overlap, fusion settings, the
    query rewriting and reranking (when not plain / none), the query of a conversation (when the test
    set has conversations), and K.

    A part the variant does not use is not named: BM25 search has no index, and no ``embedder``; when its
    embedder serves only the answers and their metrics (``embedder="answers"``, :func:`embedder_use`) it is
    named ``answer_embedder``, so a board does not read as if BM25 searched by embeddings."""
    params: dict[str, Any] = {g: choices.get(g) for g in GROUPS if choices.get(g)}
    if embedder != "retrieval" and "embedder" in params:
        named = params.pop("embedder")
        if embedder == "answers":
            params["answer_embedder"] = named
    mode = cfg.retrieval.get("mode", "dense") if "retrieval" in cfg else "dense"
    if mode == "bm25":
        params.pop("index", None)  # BM25 searches no FAISS index
    for key in ("size", "overlap"):
        if key in cfg.chunker:
            params[f"chunker.{key}"] = cfg.chunker[key]
    if mode == "hybrid":
        params["retrieval.fusion"] = cfg.retrieval.fusion
        key = "rrf_k" if cfg.retrieval.fusion == "rrf" else "alpha"
        params[f"retrieval.{key}"] = cfg.retrieval[key]
    context = choices.get("context")
    if context and context != "chunks" and "context" in cfg:  # the default leaves names as they were
        params["context"] = context
        shown = build(cfg.context, "context").params()  # the settings that apply (no size for by=paragraph)
        params.update({f"context.{k}": v for k, v in shown.items() if k not in ("name", "splitter")})
    params.update(_choice_params(cfg, choices, "query", "plain"))
    params.update(_choice_params(cfg, choices, "rerank", "none"))
    if "answerer" in cfg and cfg.answerer is not None and cfg.answerer.get("cite"):  # uncited names stay as they were
        params["answerer.cite"] = True
    if conversations:
        params["conversation.query"] = query_mode(cfg.get("conversation"))
    params.update(cut.params())
    return params


def variant_name(params: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items() if k != "corpus")
