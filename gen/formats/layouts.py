"""Which tool wrote a table, told by its columns, and what each of its columns means.

A layout names the columns that mark it, which column feeds each sample field
(``question, answer, contexts, reference, reference_contexts``), which columns hold lists, and
how a list cell that is not a literal joins its items (:mod:`gen.formats.cells`). Column names
match whatever their case and with spaces or hyphens for underscores (``Expected Output`` is
``expected_output``).

==================  ==========================================  ========================================
layout              marked by                                   fields
==================  ==========================================  ========================================
``ragas_0.1_test``  ``question`` + ``evolution_type`` or         question, ground_truth -> reference,
                    ``episode_done`` (Ragas 0.1 TestDataset)    contexts -> reference_contexts
``ragas``           ``user_input`` (Ragas 0.2+)                 the usual names (:data:`USUAL`); a plain
                                                                list cell is ``;``-separated
``ragas_once``      ``question``, ``messages`` or               the same
                    ``conversation`` (ragas_once, Ragas 0.1)
``deepeval``        ``input`` (test cases and goldens)          input, actual_output -> answer,
                                                                retrieval_context -> contexts,
                                                                expected_output -> reference,
                                                                context -> reference_contexts; a plain
                                                                list cell is ``|``-separated (DeepEval's
                                                                own CSV)
``llamaindex``      ``query`` (LabelledRagDataset examples)     query, response, contexts,
                                                                reference_answer, reference_contexts
``arcadia_qa``      ``q`` + ``a`` (arcadia's QA test data)      q -> question, a -> reference,
                                                                chunk_content -> the one reference context
==================  ==========================================  ========================================

A table marked by none of these is still read when it has one of the usual column names (say
only ``contexts`` and ``reference_contexts``); one with none of them is an error that names the
layouts understood and the columns seen.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The usual column names of each sample field (ragas_once, Ragas 0.1 and 0.2), in the order looked for.
USUAL: dict[str, tuple[str, ...]] = {
    "question": ("question", "user_input", "messages", "conversation"),
    "answer": ("answer", "response"),
    "contexts": ("contexts", "retrieved_contexts"),
    "reference": ("reference", "ground_truth", "ground_truths"),
    "reference_contexts": ("reference_contexts",),
}
_USUAL_LISTS = frozenset({"contexts", "retrieved_contexts", "reference_contexts", "ground_truths"})


@dataclass(frozen=True)
class Layout:
    """A table layout.

    Attributes:
        name: What messages call it.
        marks: Sets of (normalised) column names; a table holding every column of one set has this layout.
        fields: Sample field -> the column names that feed it, the first present winning.
        lists: The columns whose cells are lists.
        delimiter: What joins the items of a list cell that is not a literal; None: such a cell is one item.
    """

    name: str
    marks: tuple[frozenset[str], ...]
    fields: Mapping[str, tuple[str, ...]]
    lists: frozenset[str]
    delimiter: str | None = None


LAYOUTS: tuple[Layout, ...] = (
    Layout("ragas_0.1_test", (frozenset({"question", "evolution_type"}), frozenset({"question", "episode_done"})),
           {"question": ("question",), "reference": ("ground_truth",), "reference_contexts": ("contexts",)},
           frozenset({"contexts"})),
    Layout("ragas", (frozenset({"user_input"}),), USUAL, _USUAL_LISTS, ";"),
    Layout("ragas_once", (frozenset({"question"}), frozenset({"messages"}), frozenset({"conversation"})),
           USUAL, _USUAL_LISTS, ";"),
    Layout("deepeval", (frozenset({"input"}),),
           {"question": ("input",), "answer": ("actual_output",), "contexts": ("retrieval_context",),
            "reference": ("expected_output",), "reference_contexts": ("context",)},
           frozenset({"retrieval_context", "context"}), "|"),
    Layout("llamaindex", (frozenset({"query"}),),
           {"question": ("query",), "answer": ("response",), "contexts": ("contexts",),
            "reference": ("reference_answer",), "reference_contexts": ("reference_contexts",)},
           frozenset({"contexts", "reference_contexts"})),
    Layout("arcadia_qa", (frozenset({"q", "a"}),),
           {"question": ("q",), "reference": ("a",), "reference_contexts": ("chunk_content",)}, frozenset()),
)
#: A table with some usual column but no mark: read with the usual names, plain list cells ``;``-separated.
FALLBACK = Layout("columns", (), USUAL, _USUAL_LISTS, ";")

_SEP = re.compile(r"[\s\-]+")


def normal(column: str) -> str:
    """A column name as layouts match it: trimmed, lower case, spaces and hyphens as underscores."""
    return _SEP.sub("_", column.strip().lower())


def understood() -> str:
    """The layouts understood, for messages."""
    return "; ".join(f"{layout.name} ({' or '.join('+'.join(sorted(m)) for m in layout.marks)})"
                     for layout in LAYOUTS)


def detect(columns: Iterable[str]) -> Layout | None:
    """The layout of a table with these columns; None when no column means anything to us."""
    names = {normal(c) for c in columns}
    for layout in LAYOUTS:
        if any(mark <= names for mark in layout.marks):
            return layout
    if names & {n for names_ in USUAL.values() for n in names_}:
        return FALLBACK
    return None
