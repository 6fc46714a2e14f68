"""The kind check: does a written question do what its kind says? Deterministic, no model.

A 1.5B writer files plain lookups as ``conditional`` and single-fact questions as ``multi_hop``; a
board that reports "multi-hop recall" on such a set measures single-hop recall twice. Each kind's
test reads the question, its reference and its evidence sentences (the units the writer was shown,
in order), on content words (:func:`metrics.offline.content_words`):

- ``multi_hop`` (two sentences): each sentence has words the other lacks (its *own* words); the
  reference draws on one sentence's own words and the question on the other's (a bridge: "Marie Curie
  was born in the capital of which country?" -> "Poland"), or the answer is yes/no and the question
  draws on both. "When was Marie Curie born?" -> "1867" uses one sentence and fails, and so do two
  questions in one ("Who curated the exhibition and what did Ines Marrow study?"). For a bridge
  candidate, the question must neither name the bridge entity nor ask for it ("What is the name of the
  town that received its charter in 1687?" -> "Port Calder" needs the second sentence only).
- ``comparative`` (two sentences): the question draws on both sentences' own words (it names both
  things compared) and has a comparison cue ("or", "than", "more", "first", "earlier", "taller", ...).
- ``conditional``: the question states a condition: "if", "unless", "provided", "in case", "only
  after", "whenever", "under what conditions", "in patients with", or a "when" clause that is not the
  question's wh-word ("What happens to X when Y?", "When a child is under 16, why ...?"; not "When was
  X born?", nor a quoted title: "When did 'When a Man Falls in Love' air?"); or its reference is the
  condition ("When are sailings cancelled?" -> "When the mean wind speed is above 45 knots").
- ``single_hop`` and ``unanswerable``: no test here (the absence gate checks the latter).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ragsweep.metrics import content_words

_YES_NO = re.compile(r"^\W*(?:yes|no)\b", re.I)
_TWO_QUESTIONS = re.compile(r"\band (?:what|who|whom|which|when|where|why|how)\b", re.I)
_COMPARE = re.compile(
    r"\b(?:or|than|versus|vs|both|between|same|more|most|less|least|fewer|fewest|first|before|after|differ\w*|"
    r"compar\w*|(?:earl|heav|busi|happ|wealth)i(?:er|est)|(?:tall|larg|bigg|small|high|low|long|short|old|young|new|"
    r"great|light|fast|slow|clos|farth|furth|wid|deep|rich|cheap|hott|cold|warm|strong|weak|lat|near|dens|steep|"
    r"quick|bright|dark|safe|loud|thick|thin)(?:er|est))\b", re.I)
# "more than 55 years", "over 40", "at least 3": an amount, not a comparison of two things.
_AMOUNT = re.compile(r"\b(?:(?:more|less|fewer|greater|higher|lower) than|over|under|at (?:least|most)|up to)\s+"
                     r"(?:\$|£|€)?\d[\d,.]*", re.I)
_CONDITION = re.compile(
    r"\b(?:if|unless|provided|in case|only after|only if|whenever|as long as|in the absence of|"
    r"under what (?:conditions?|circumstances)|in (?:patients|people|children|adults|cases) (?:with|who|under|over))\b",
    re.I)
_WHEN_CLAUSE = re.compile(r"(?<!^)\bwhen\b|^\s*when\b[^?]*,", re.I)
# A quoted title is not a condition: "When did the series 'When a Man Falls in Love' air?" (1.5B, HotpotQA).
_QUOTED = re.compile(r"(?<!\w)[\"“'‘][^\"“”'‘’]+[\"”'’](?!\w)")
# A reference that is the condition itself ("When are sailings cancelled?" -> "When the wind is above 45 knots").
_CONDITION_ANSWER = re.compile(r"^\W*(?:only )?(?:if|when|whenever|unless|provided|as long as|once|in case)\b", re.I)


def _own_words(sentences: Sequence[str]) -> list[set[str]]:
    """Per sentence, its content words that no other sentence has."""
    words = [set(content_words(s)) for s in sentences]
    return [w - set().union(*(o for j, o in enumerate(words) if j != i)) for i, w in enumerate(words)]


#: The kind check's tests, each a family of :mod:`gen.gates` (``gates.off`` switches one off):
#: name -> what a question that fails it does.
KIND_FAMILIES: dict[str, str] = {
    "kind_two_questions": "multi_hop, comparative: two questions joined by 'and'",
    "kind_bridge_named": "multi_hop bridge candidate: the question names the bridge entity or asks for it",
    "kind_one_sentence": "multi_hop: the question and its answer draw on one sentence only",
    "kind_names_both": "comparative: the question does not name both things compared",
    "kind_comparison_cue": "comparative: no comparison cue (_COMPARE)",
    "kind_condition": "conditional: neither the question nor its answer states a condition",
}


def kind_problems(kind: str, question: str, reference: str, sentences: Sequence[str],
                  bridge: str | None = None) -> list[tuple[str, str]]:
    """Every test of :data:`KIND_FAMILIES` that ``question`` fails as a ``kind`` question, in order, as
    (family, a short phrase); empty when it is of its kind. ``bridge``: the entity a multi_hop bridge
    candidate links its sentences by (:attr:`gen.candidates.Candidate.bridge`)."""
    q = set(content_words(question))
    found: list[tuple[str, str]] = []
    if kind == "multi_hop" and len(sentences) >= 2:
        if _TWO_QUESTIONS.search(question):
            found.append(("kind_two_questions", "two questions joined by 'and', not one that needs both sentences"))
        link = set(content_words(bridge or ""))
        if link and link <= set(content_words(reference)) | q:
            found.append(("kind_bridge_named", "the question names the bridge or asks for it, so one sentence "
                                               "answers it"))
        own = _own_words(sentences)
        a = set(content_words(reference))
        in_q = [bool(q & w) for w in own]
        in_a = [bool(a & w) for w in own]
        crosses = any(in_a[i] and in_q[j] for i in range(len(own)) for j in range(len(own)) if i != j)
        if not (crosses or (_YES_NO.match(reference) and all(in_q))):
            found.append(("kind_one_sentence", "the question and its answer draw on one sentence only"))
    elif kind == "comparative" and len(sentences) >= 2:
        if _TWO_QUESTIONS.search(question):
            found.append(("kind_two_questions", "two questions joined by 'and', not one comparison"))
        if not all(q & w for w in _own_words(sentences)):
            found.append(("kind_names_both", "the question does not name both things compared"))
        if not _COMPARE.search(_AMOUNT.sub(" ", question)):
            found.append(("kind_comparison_cue", "the question asks for no comparison"))
    elif kind == "conditional":
        bare = _QUOTED.sub("", question)
        if not (_CONDITION.search(bare) or _WHEN_CLAUSE.search(bare) or _CONDITION_ANSWER.match(reference)):
            found.append(("kind_condition", "neither the question nor its answer states a condition"))
    return found


def kind_problem(kind: str, question: str, reference: str, sentences: Sequence[str],
                 bridge: str | None = None, off: Collection[str] = ()) -> str | None:
    """Why ``question`` is not a ``kind`` question (a short phrase), or None when it is: the first of
    :func:`kind_problems` whose family is not in ``off``."""
    return next((why for family, why in kind_problems(kind, question, reference, sentences, bridge)
                 if family not in off), None)


def question_kind_problems(kind: str, question: str, sentences: Sequence[str],
                           bridge: str | None = None) -> list[tuple[str, str]]:
    """The tests of :func:`kind_problems` that ``question`` fails whatever its reference says, as (family, phrase):
    the comparative tests and "two questions" read the question alone; a multi_hop question that names its bridge
    fails with any reference, and so does one that holds none of either sentence's own words (no reference can
    make it cross from one sentence to the other). What a question written before its answer can be stopped on."""
    found = [(f, why) for f, why in kind_problems(kind, question, "", sentences, bridge) if f != "kind_one_sentence"]
    if kind == "multi_hop" and len(sentences) >= 2 and not any(
            set(content_words(question)) & w for w in _own_words(sentences)):
        found.append(("kind_one_sentence", "the question and its answer draw on one sentence only"))
    return [(f, why) for f, why in found if f != "kind_condition"]
