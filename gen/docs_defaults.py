"""What ``styles: auto`` and ``kinds_on_docs`` make of a run on documentation (issue #34).

A folder of Markdown or HTML pages is what most people point a RAG generator at, and the questions its users ask
are how-to, troubleshooting, option and code questions (:mod:`gen.styles`). So ``styles: auto`` (the default)
asks an LLM writer for the documentation styles (``docs``) when most of the corpus's documents were parsed with a
layout (headings, code blocks), and for no style otherwise.

On such a run the other kinds spend the run without writing anything: the 1.5B writer's multi-hop, comparative,
conditional, unanswerable and follow-up candidates on documentation folders were refused, one after the other,
until the schedule gave each kind up (:class:`gen.schedule.Schedule` needs about six failures a kind before it may
conclude, and five kinds are thirty candidates, each a write and most a round trip). A schedule that gave up
sooner would still spend those first candidates on every run, and would give up a kind that is merely slow on a
corpus it suits. So ``kinds_on_docs: styles`` (the default) writes ``single_hop`` only -- the kind the styles'
candidates take turns with -- on a run with documentation styles, unless ``kinds`` was changed from
``conf/gen.yaml``'s values; ``kinds_on_docs: as_set`` keeps ``kinds`` as they are, and so does any change to them.

``gates.specific: auto`` (the default) is off on a model writer's run with documentation styles and on otherwise. The gate refuses
a question all of whose content words another document holds, so that a question says which document it asks
about. On a product's documentation the other pages of the product hold the words of the questions its users ask
("How do I view a PDF file in JupyterLab?" refused for a page that mentions viewing, PDF and files): it was the
first refusal of every docs run, and on a hand-read tune set the questions it refused read as well as the ones
they replaced, at fewer calls a question (``benchmarks/results/2026-11-27-docs-s44.md``).

``facts_on_docs: after_styles`` (the default) gives a product's styled candidates (how-to, troubleshooting, option,
code answer) before its plain facts, which are written only when the product's styled candidates run out; ``mixed``
lets them take turns. On the hand-read held-out sets, plain facts were the style least often self-contained with a
right reference, and least often worth asking (``benchmarks/results/2026-11-28-docs-facts-after-styles.md``): a
plain fact has no cue, it is any sentence, so it is what a page's less askable text (a decision record, a
governance note) gives. A folder with few styled sections still reaches its ``n`` on facts.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from ragsweep.gen.documents import Corpus
from ragsweep.gen.styles import ALL_DOCS, requested
from ragsweep.metrics import InputError

#: The value of ``styles`` that is resolved from the corpus.
AUTO = "auto"
#: ``kinds_on_docs``: ``styles`` (single_hop only, the styles ride on it) or ``as_set``.
KINDS_ON_DOCS = ("styles", "as_set")
#: ``facts_on_docs``: a product's plain facts after its styled candidates, or taking turns with them.
AFTER_STYLES = "after_styles"
FACTS_ON_DOCS = (AFTER_STYLES, "mixed")
#: Above this share of documents parsed with a layout, a corpus is documentation.
MIN_LAYOUT_SHARE = 0.5


def is_documentation(corpus: Corpus) -> bool:
    """Whether most of the corpus's documents were parsed with a layout (Markdown, HTML)."""
    docs = corpus.documents
    return bool(docs) and sum(d.layout is not None for d in docs) / len(docs) > MIN_LAYOUT_SHARE


def default_kinds() -> dict[str, float]:
    """``kinds`` as ``conf/gen.yaml`` sets them."""
    conf = OmegaConf.load(Path(__file__).resolve().parents[1] / "conf" / "gen.yaml")
    return dict(OmegaConf.to_container(conf.kinds))  # type: ignore[arg-type]


def resolved_styles(styles: Any, corpus: Corpus, llm_writer: bool) -> list[str]:
    """``styles`` with ``auto`` resolved: ``[docs]`` for an LLM writer on documentation, else nothing (the rule
    writer keeps its plain questions: its only documentation style is code_answer, asked for by name)."""
    if styles is None:
        return []
    if isinstance(styles, str):
        if styles != AUTO:
            raise InputError(f"styles must be a list of styles, or {AUTO}, got {styles!r}")
        return [ALL_DOCS] if llm_writer and is_documentation(corpus) else []
    return [str(s) for s in styles]


def for_corpus(cfg: DictConfig, corpus: Corpus, llm_writer: bool) -> tuple[DictConfig, dict[str, Any]]:
    """``cfg`` with ``styles`` resolved and, on a run with documentation styles and ``kinds_on_docs: styles``,
    ``kinds`` set to single_hop when they are ``conf/gen.yaml``'s; with what was decided, for the report."""
    mode = cfg.get("kinds_on_docs", "styles")
    if mode not in KINDS_ON_DOCS:
        raise InputError(f"kinds_on_docs must be one of {', '.join(KINDS_ON_DOCS)}, got {mode!r}")
    styles = resolved_styles(cfg.get("styles"), corpus, llm_writer)
    out = copy.deepcopy(cfg)
    with open_dict(out):
        out.styles = styles
    decided: dict[str, Any] = {"styles": styles} if cfg.get("styles") == AUTO else {}
    if cfg.get("gates") is not None and cfg.gates.get("specific") == AUTO:
        docs = llm_writer and bool(requested(styles)[0])  # measured with a model writer only
        with open_dict(out):
            out.gates.specific = not docs
        if docs:
            decided["gates.specific"] = False
    kinds = OmegaConf.to_container(cfg.kinds)
    if (requested(styles)[0] and mode == "styles" and llm_writer and kinds == default_kinds()
            and kinds.get("single_hop", 0) > 0):  # type: ignore[union-attr]
        with open_dict(out):
            out.kinds = {"single_hop": 1.0}
        decided["kinds"] = {"single_hop": 1.0}
    return out, decided
