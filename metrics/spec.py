"""What a metric is and what it reads: the types every metric family and the catalogue share.

A leaf module: the families (``metrics/retrieval.py``, ``metrics/lexical.py``, ...) import
:class:`MetricSpec` from here, and ``metrics/catalogue.py`` joins their tables, so no family ever
imports the catalogue.

A metric's public name may carry its parameter after ``@`` (``ndcg@10``, ranx's convention):
:func:`parse_name` splits it, the spec of the base name (``ndcg``) says what the parameter is
called (``param="k"``) and gives direction, inputs and defaults for every value of it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ragsweep.metrics.errors import InputError
from ragsweep.metrics.values import MetricValue

Span = tuple[str, int, int]
"""``(doc_id, start, end)``: a half-open character range of one document."""

#: The fields a sample can carry (``ragsweep score`` maps the usual column names onto the first five;
#: runs of a sweep or an application fill the retrieval ones).
FIELDS = ("question", "answer", "contexts", "reference", "reference_contexts",
          "retrieved", "top_k", "evidence", "qrels", "n_relevant", "citations")


@dataclass(frozen=True)
class RagSample:
    """One RAG interaction to score. Missing fields are None (not empty strings).

    Attributes:
        id: The test sample's id.
        question, answer, contexts, reference, reference_contexts: As in Ragas' single-turn sample.
        retrieved: The ranked retrieval, best first, as spans of the corpus: ``(doc_id, start, end)``.
            It may run deeper than what the pipeline passes on (a top-K sweep searches once).
        top_k: How many retrieved items the pipeline passes on (its K); None: all of ``retrieved``.
        evidence: Gold evidence spans (span-based relevance).
        qrels: Document-level judgements ``{doc_id: grade}`` (BEIR); used instead of ``evidence``.
        n_relevant: Size of the judged-relevant set in span mode: the items of this chunking that
            overlap the evidence (recall, MAP and nDCG divide by it).
        history: In a conversation, the turns before ``question`` (its last user turn), oldest first
            (``{"role", "content"}``, :mod:`metrics.conversation`); None for a single question.
        references: Every reference answer when the input gives several (``ground_truths``); then
            ``reference`` is them joined by blank lines, and a metric whose spec says
            ``best_reference`` scores each and keeps the best (:mod:`metrics.scoring`).
    """

    id: str
    question: str | None = None
    answer: str | None = None
    contexts: tuple[str, ...] | None = None
    reference: str | None = None
    reference_contexts: tuple[str, ...] | None = None
    retrieved: tuple[Span, ...] | None = None
    top_k: int | None = None
    evidence: tuple[Span, ...] | None = None
    qrels: Mapping[str, int] | None = None
    n_relevant: int | None = None
    history: tuple[Mapping[str, Any], ...] | None = None
    references: tuple[str, ...] | None = None
    citations: tuple[Mapping[str, Any], ...] | None = None

    def get(self, name: str) -> Any:
        return getattr(self, name)


MetricFn = Callable[..., "MetricValue | Awaitable[MetricValue]"]


@dataclass(frozen=True)
class MetricSpec:
    """What a metric is: its function, the sample fields it reads, and what it needs to run.

    Attributes:
        name: The public name (``"faithfulness"``, ``"ndcg"``; with ``param``, ``"ndcg@10"`` once bound).
        fn: The metric function. It takes the sample fields named in ``inputs`` and ``optional`` as
            keyword arguments, plus ``judge=`` when ``needs_judge``, ``embedder=`` when
            ``needs_embedder``, and its options; it returns a MetricValue or an awaitable of one.
        inputs: Sample fields passed to ``fn`` by name; a sample lacking one is ``undefined``.
        optional: Sample fields passed by name when the sample has them and as None when not
            (faithfulness uses the question when there is one; QAGS summaries have none).
        needs_judge: Takes ``judge=`` (an LLM).
        needs_embedder: Takes ``embedder=``.
        embeds: With ``needs_embedder``, which of the metric's options make it embed (given its options, after
            the user's); None: it always does. A metric that embeds only in one method does not load an
            embedder for the others (:meth:`uses_embedder`).
        higher_is_better: Direction, for leaderboards, comparisons and thresholds.
        value_range: The values the metric can take, for checking thresholds.
        offline: What the metric does with ``llm=none`` ("" when it needs no LLM at all).
        offline_fn: The deterministic stand-in run when there is no judge (``metrics/offline.py``);
            None leaves the metric ``undefined`` without a judge. It takes the same inputs, an
            optional ``embedder=``, and those of the metric's options it names.
        description: One line for listings and the docs' metric table.
        options: Default keyword options (overridable from config ``metric_options.<name>``).
        param: The option a name's ``@value`` sets (``"k"`` for ``ndcg@10``); None: no parameter.
        family: Which family the metric belongs to (``retrieval``, ``lexical``, ...), for listings.
        scores_unanswerable: The metric scores samples whose reference is the unanswerable marker
            (``metrics/refusal.py``) itself; any other metric reading ``reference`` is ``undefined``
            on them, since there is no answer to compare with.
        reads_history: In a conversation, a judged metric that reads the question gets the earlier
            turns with it (:func:`metrics.conversation.with_history`); False: the last user turn alone.
        best_reference: With several references, the metric compares the answer with each and keeps
            the best score (SQuAD's EM / F1, multi-reference ROUGE); False: it reads them all joined
            as one reference (claim and context recall: every reference's facts count).
        citations: Per answer sentence, the contexts it cites (:mod:`metrics.citations`):
            ``{"sentence", "cites": [1-based context numbers], "invalid": [numbers naming none]}``;
            ``answer`` then holds the answer with its markers stripped. None: the answer's citations
            were not read (an answerer or application that does not cite).
    """

    name: str
    fn: MetricFn
    inputs: tuple[str, ...]
    optional: tuple[str, ...] = ()
    needs_judge: bool = False
    needs_embedder: bool = False
    higher_is_better: bool = True
    value_range: tuple[float, float] = (0.0, 1.0)
    offline: str = ""
    offline_fn: MetricFn | None = None
    description: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    param: str | None = None
    family: str = ""
    scores_unanswerable: bool = False
    reads_history: bool = True
    best_reference: bool = False
    embeds: Callable[[Mapping[str, Any]], bool] | None = None

    def uses_embedder(self, options: Mapping[str, Any] | None = None) -> bool:
        """Whether the metric embeds with ``options`` (its defaults when None): ``embedder=`` is then required."""
        if not self.needs_embedder:
            return False
        return self.embeds is None or bool(self.embeds({**self.options, **(options or {})}))

    def __post_init__(self) -> None:
        unknown = (set(self.inputs) | set(self.optional)) - set(FIELDS)
        if unknown:
            raise ValueError(f"metric {self.name}: unknown inputs {sorted(unknown)}")

    def bind(self, value: str) -> MetricSpec:
        """This spec with its parameter set from the text after ``@`` (``ndcg`` + ``"10"`` -> ``ndcg@10``)."""
        if self.param is None:
            raise InputError(f"metric {self.name} takes no parameter, so {self.name}@{value} means nothing")
        try:
            number = int(value)
        except ValueError:
            raise InputError(f"{self.name}@{value}: {self.param} must be a whole number") from None
        if number < 1:
            raise InputError(f"{self.name}@{value}: {self.param} must be >= 1")
        return replace(self, name=f"{self.name}@{number}", options={**self.options, self.param: number})


_NAME = re.compile(r"^(?P<base>[a-z][a-z0-9_]*)(?:@(?P<param>[^@\s]+))?$")


def parse_name(name: str) -> tuple[str, str | None]:
    """Split a public metric name into its base and parameter text: ``"ndcg@10"`` -> ``("ndcg", "10")``."""
    m = _NAME.match(name.strip())
    if m is None:
        raise InputError(f"{name!r} is not a metric name (expected e.g. faithfulness or ndcg@10)")
    return m["base"], m["param"]
