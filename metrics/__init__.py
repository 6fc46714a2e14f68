"""The metric catalogue, the judge and embedder interfaces, prompts and statistics.

This is the package's face: other packages (``gen``, ``harness``, the API) import only the names in
``__all__``, as ``from ragsweep.metrics import name`` (``tests/test_imports.py`` checks it). The modules
behind them are internal. A name loads its module on first use, so importing one stays cheap. A name
that is also a module's name is given another one here (``metric_catalogue``): a loaded submodule
would shadow it.
"""

from __future__ import annotations

from typing import Any

from ragsweep.metrics.face import attribute

#: name -> ``module`` (the name is the module's attribute) or ``module:attribute``, relative to this package.
_FACE = {
    # errors: bad input (exit 2), judge failures, exit codes, keeping secrets out of logs and files
    "EXIT_BAD_INPUT": "errors", "EXIT_NOT_SCORED": "errors", "EXIT_SOME_FAILED": "errors", "REDACTED": "errors",
    "CommandExit": "errors", "InputError": "errors", "JudgeError": "errors", "fail": "errors",
    "holds_key_format": "errors",
    "looks_like_key": "errors", "register_config_secrets": "errors", "register_secret": "errors",
    "scrub": "errors", "scrub_all": "errors", "url_password": "errors",
    # spec and catalogue: the metric table (names carry their parameter: ndcg@10) and the sample it reads
    "FIELDS": "spec", "MetricSpec": "spec", "RagSample": "spec", "Span": "spec", "parse_name": "spec",
    "metric_catalogue": "catalogue:catalogue", "family_order": "catalogue", "higher_is_better": "catalogue",
    "resolve": "catalogue",
    # aliases: the metric names other tools use
    "METRIC_ALIASES": "aliases", "alias_note": "aliases", "canonical": "aliases",
    # scoring, values, staging: one scoring path from samples to per-sample values and summaries
    "EMPTY_ANSWERS": "scoring", "check_thresholds": "scoring", "metric_kwargs": "scoring", "outcome": "scoring",
    "score_samples": "scoring", "summary_rows": "scoring",
    "MetricValue": "values", "ScoredSample": "values", "summarise": "values",
    "is_path_problem": "staging", "staged": "staging",
    # stats: paired tests and interval widths for the board
    "holm": "stats", "paired_bootstrap_diff": "stats", "paired_permutation_test": "stats",
    "questions_needed": "stats",
    # retrieval: span relevance shared by the rank metrics and the explorer
    "credit_once": "retrieval", "span_gains": "retrieval",
    # conversation: transcripts of multi-turn samples
    "role": "conversation", "split": "conversation", "transcript": "conversation", "turn_index": "conversation",
    "turn_summary": "conversation",
    # refusal: answers that decline, questions meant to have no answer
    "UNANSWERABLE": "refusal", "declines": "refusal", "is_unanswerable": "refusal",
    # citations: the contexts each answer sentence cites, read from markers or a source list
    "CITATION_MARKER": "citations:MARKER", "CitedSentence": "citations", "marker_numbers": "citations",
    "parse_answer": "citations", "strip_markers": "citations", "structured_citations": "citations:structured",
    # offline (no LLM) text measures the generator reuses
    "STOP": "lexicon", "content_words": "offline", "numbers": "offline",
    # ... and the citation metrics' llm=none support check, which gen.citing reuses for reference citations
    "judge_claims": "offline", "offline_sentences": "offline:sentences", "calibrate_rows": "support",
    # the judge's parts the reranker (and the generator's reword check) reuse
    "clean": "guard", "verdict_probability": "judging", "verdict_probabilities": "judging",
    # embedders
    "Embedder": "embedding", "OnnxMiniLM": "embedding", "load_tokenizer": "embedding",
    # the LLM interface, its meter, dry runs, and building one
    "LLM": "llm.base", "Completion": "llm.base", "Logprobs": "llm.base", "PromptId": "llm.base",
    "Usage": "llm.base", "WordBias": "llm.base", "supports_bias": "llm.base", "supports_stop": "llm.base",
    "CompactReply": "llm.base", "supports_lines": "llm.base", "as_lines": "llm.lines",
    "LLMCost": "llm.meter", "Meter": "llm.meter",
    "DryRunEmbedder": "llm.dryrun", "DryRunLLM": "llm.dryrun", "dry_run_report": "llm.dryrun",
    "concurrency_of": "llm.factory", "local_llm": "llm.factory:local", "openai_llm": "llm.factory:openai",
    # typed prompts: one definition each, asked through complete()
    "Prompt": "prompts.core", "complete": "prompts.core", "lines_prompt": "prompts.core",
}

#: Two modules are faces of their own: the word lists (``from ragsweep.metrics.lexicon import STOP``) and the
#: loader of a package face (:mod:`ragsweep.metrics.face`, which ``ragsweep.gen`` uses too).
__all__ = sorted([*_FACE, "face", "lexicon"])


def __getattr__(name: str) -> Any:
    return attribute(__name__, _FACE, name)
