"""Where a question and its reference take their values from, checked without a model call.

A writer sees a prompt (its instruction and worked examples) and the text it asks about. What it writes must come
from the text: a value, a name or an identifier that the prompt holds and the text does not was copied from the
prompt (a status code named in an instruction's sample question, the examples' made-up product or setting), and
one that neither holds was made up (:func:`leaks`, :func:`unseen_values`). The check needs no list of the
prompt's words: it reads them from the prompt itself, so it holds whatever a prompt is changed to say.

A question must also ask what its text answers: "why ..." and "what causes ..." need a text that gives a reason
or a condition something happens under, "what happens if ..." one that says what follows (:func:`unstated_ask`);
a warning that only says what not to do answers "what should I avoid ...?", not "why".

And a value the text gives only as an example (a URL or host, a name in a ``for example`` clause, a placeholder
such as ``foo`` or ``my_app``, text inside an example admonition or a code block) is no fact of the product: a
reference whose answer is such a value is refused (:func:`example_answer`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from ragsweep.gen.documents import Document
from ragsweep.gen.style_checks import gives_fix, role_at
from ragsweep.metrics import content_words

# A word, a number, or a name joined by code punctuation ("harbour.toml", "grace_minutes", "07:30", a URL).
_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w.:/@=+#%~?&-]*[\w/])?")
_JOINED = re.compile(r"\w[_.:/@=]\w")


def _value(token: str) -> bool:
    """A token that reads as a value: it holds a digit, code punctuation between word characters, or a capital
    after its first letter (``BerthConflictError``, ``CLI``)."""
    return any(c.isdigit() for c in token) or bool(_JOINED.search(token)) or any(c.isupper() for c in token[1:])


def _distinctive(token: str, first: bool) -> bool:
    """A value, or a capitalised content word that does not open a sentence or an item (a name). An acronym of
    letters alone ("CLI", "API") is the field's common vocabulary, not a value of one prompt."""
    if not content_words(token) or (token.isalpha() and token.isupper()):
        return False
    return _value(token) or (not first and token[0].isupper())


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, whether it opens the text, a sentence, an item or a quote) for each token of ``text``."""
    out = []
    for m in _TOKEN.finditer(text):
        before = text[:m.start()].rstrip()
        out.append((m.group(0).rstrip(".:"), not before or not (before[-1].isalnum() or before[-1] in ",;")))
    return out


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, BaseModel):
        yield from _strings(value.model_dump())
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def prompt_terms(instruction: str, examples: Sequence[tuple[Any, Any]] = ()) -> frozenset[str]:
    """The distinctive tokens (lower-cased) of a prompt's instruction and of its examples' text fields: what a
    question copied from the prompt would hold. Numbers outside text fields (an example's ``used=[2, 3]``) are
    not the prompt's wording and are left out."""
    texts = [instruction, *(s for pair in examples for s in _strings(pair))]
    return frozenset(t.lower() for text in texts for t, first in _tokens(text) if _distinctive(t, first))


def leaks(text: str, terms: frozenset[str], seen: str) -> list[str]:
    """The tokens of ``text`` (a question or a reference) that the prompt holds (``terms``,
    :func:`prompt_terms`) and what the writer was shown (``seen``: the text, its titles, its product) does not."""
    low = seen.lower()
    return [t for t, _ in _tokens(text) if t.lower() in terms and t.lower() not in low and content_words(t)
            and not (t.isalpha() and t.isupper())]


def unseen_values(text: str, seen: str) -> list[str]:
    """The values of ``text`` (numbers, identifiers, code names: :func:`_value`) that ``seen`` does not hold:
    detail a reference adds to its evidence."""
    low = seen.lower()
    return [t for t, _ in _tokens(text) if _value(t) and content_words(t) and t.lower() not in low]


_CODE_TOKEN = re.compile(r"(?<![\w])_*[A-Za-z0-9](?:[\w.:/@=+#%~?&-]*[\w/])?")
# camelCase: a lower-case letter right before a capital ("activateInitialState"); "McDonald" opens with a capital
_CAMEL = re.compile(r"^[a-z]+[A-Z]")


def unseen_names(question: str, seen: str) -> list[str]:
    """The code names of ``question`` (a name joined by code punctuation, ``case_tags``, ``mkdocs.yml``, or in
    camelCase) that ``seen`` (the question's pages and product names) does not hold as a whole token: a subject
    the writer made up from the names around it ("``@case_tags``" from an item on ``has_tag`` and
    ``@with_case_tags``, which holds ``case_tags`` only inside a longer name)."""
    out = []
    # A name may open with underscores (``__init__``, ``_private``): they are part of it, so it is looked up whole.
    for m in _CODE_TOKEN.finditer(question.replace("`", " ")):
        token = m.group(0).rstrip(".:").rstrip("()")
        if not (_JOINED.search(token) or _CAMEL.match(token)) or not content_words(token):
            continue
        if not re.search(rf"(?<![\w]){re.escape(token)}(?![\w])", seen, re.I):
            out.append(token)
    return out


# "Why ...?", "What causes ...?", "What is the reason ...?": the text must give a reason or a condition.
_WHY = re.compile(r"^\W*(?:why\b|what (?:causes|caused|is the (?:cause|reason))\b|for what reason\b)", re.I)
# "What happens if ...?", "What goes wrong ...?": the text must say what follows.
_WHAT_HAPPENS = re.compile(r"^\W*what (?:happens|will happen|would happen|can happen|goes wrong|can go wrong)\b", re.I)
_REASON = re.compile(r"\b(?:because|since|due to|caused by|so that|otherwise|as a result|the reason|(?:which|this|"
                     r"that|it) means|results? in|leads? to|causes?|in order to)\b", re.I)
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|once)\b", re.I)
_MODAL = re.compile(r"\b(?:will|would|won't|may|might|could|can(?:not|'t)?)\b", re.I)
# An instruction not to do something states no reason by itself: "Never pass X when Y."
_PROHIBITION = re.compile(r"\b(?:don't|do not|never|avoid|must not|mustn't|should not|shouldn't)\b", re.I)


def prohibits(sentence: str) -> bool:
    """Whether a sentence tells the reader not to do something ("Do not edit it by hand", "never pass ..."): what
    a "what should I avoid ...?" question needs its answer drawn from. A warning that says something is
    experimental, or recommends another tool, names nothing to avoid, and a writer asked what to avoid makes up
    the thing or inverts the recommendation."""
    return _PROHIBITION.search(sentence) is not None


def _descriptive(sentence: str) -> bool:
    """Whether a sentence says what is so or what happens, not what the reader should (not) do."""
    return not gives_fix(sentence) and not prohibits(sentence)


def states_reason(sentences: Sequence[str], conditions: bool = True) -> bool:
    """Whether the text gives a reason: a causal link ("because", "due to", "otherwise", "which means") or, with
    ``conditions``, the condition something happens under ("X stops with an error if two jobs share a slot");
    "When X, never do Y" is an instruction and gives none. A warning's conditions say when to take care, not
    why (``conditions=False``)."""
    return any(_REASON.search(s) or (conditions and _CONDITION.search(s) and _descriptive(s)) for s in sentences)


def states_consequence(sentences: Sequence[str], conditions: bool = True) -> bool:
    """Whether the text says what follows from something: a reason (:func:`states_reason`), or a statement of
    what will, may or can happen ("Large uploads will block the event loop")."""
    return (states_reason(sentences, conditions) or any(_MODAL.search(s) and _descriptive(s) for s in sentences)
            or any(_CONDITION.search(s) and _descriptive(s) for s in sentences))


def unstated_ask(question: str, sentences: Sequence[str], conditions: bool = True) -> str | None:
    """What a question asks that its text does not state ("why", "what happens"), or None; ``conditions``: as
    :func:`states_reason` takes it."""
    if _WHY.match(question) and not states_reason(sentences, conditions):
        return "why"
    if _WHAT_HAPPENS.match(question) and not states_consequence(sentences, conditions):
        return "what happens"
    return None


_EXAMPLE_CLAUSE = re.compile(r"\b(?:for example|for instance|e\.g\.|such as|as an example)\b[^.;)\n]*", re.I)
# A host reserved for examples (RFC 2606, RFC 6761), the local machine or an IP address, with any scheme, port and
# path around it: no product's own address.
_ADDRESS = re.compile(r"(?<![\w.])(?:[a-z][a-z+]*://)?(?:[\w.-]+@)?(?:localhost|(?:\d{1,3}\.){3}\d{1,3}|"
                      r"(?:[\w-]+\.)*example(?:\.(?:com|org|net))?|(?:[\w-]+\.)+(?:test|invalid|local))"
                      r"(?::\d+)?(?:/[^\s)\]>\"'`]*)?(?![\w-])", re.I)
_PLACEHOLDER = re.compile(r"^(?:foo|bar|baz|qux|quux|spam|eggs|(?:my|your)[_-]\w+|(?:my|your)(?:app|project|"
                          r"package|module|service|bucket|user|name|host|domain|token|key|secret|password)s?)$", re.I)


def _example_regions(doc: Document, start: int, end: int, code_is_example: bool) -> list[tuple[int, int]]:
    """Absolute ranges of ``doc.text[start:end]`` that are example text: addresses, ``for example`` clauses,
    and the parts in an example admonition (or a code block, unless the code is the answer)."""
    text = doc.text[start:end]
    spans = [(start + m.start(), start + m.end()) for p in (_ADDRESS, _EXAMPLE_CLAUSE) for m in p.finditer(text)]
    if doc.layout is not None:
        for b in doc.layout.blocks:
            if b.end <= start or b.start >= end or b.end <= b.start:
                continue
            lo, hi = max(b.start, start), min(b.end, end)
            role = role_at(doc, lo, hi)
            if role == "example" or (role == "code" and code_is_example):
                spans.append((lo, hi))
    return spans


def example_share(doc: Document, start: int, end: int) -> float:
    """The share of ``doc.text[start:end]``'s characters that are example text (:func:`_example_regions`, code
    included): "For example Google Kubernetes Engine provides 14 months of support" is nearly all example."""
    if end <= start:
        return 0.0
    covered = 0
    at = start
    for lo, hi in sorted(_example_regions(doc, start, end, True)):
        lo = max(lo, at)
        if hi > lo:
            covered += hi - lo
            at = hi
    return covered / (end - start)


def example_answer(question: str, reference: str, evidence: Sequence[tuple[Document, int, int]],
                   code_is_example: bool = True) -> list[str]:
    """The example-only values a reference answers with, when they are its answer: the reference's values (and
    placeholders) that stand in the evidence only inside example text (:func:`_example_regions`), when the
    reference without them says nothing its question does not. [] when the reference is fine."""
    regions = [(doc, r) for doc, s, e in evidence for r in _example_regions(doc, s, e, code_is_example)]
    found = []
    for token, _ in _tokens(reference):
        if not (_value(token) or _PLACEHOLDER.match(token)):
            continue
        places = [(doc, s + m.start(), s + m.end()) for doc, s, e in evidence
                  for m in re.finditer(re.escape(token), doc.text[s:e], re.I)]
        if places and all(any(d is doc and lo <= a and b <= hi for d, (lo, hi) in regions) for doc, a, b in places):
            found.append(token)
    if not found:
        return []
    rest = reference
    for token in found:
        rest = re.sub(re.escape(token), " ", rest, flags=re.I)
    return found if not set(content_words(rest)) - set(content_words(question)) else []


_DEFAULT = re.compile(r"\bdefault(?:s|ed)?\b", re.I)
#: How English states what holds when nothing is given, besides the word "default": the closed set of its
#: conditionals and fallbacks ("unless told otherwise", "if omitted", "if no port is given", "falls back to").
_FALLBACK = re.compile(r"\bdefault(?:s|ed)?\b|\bunless\b|\botherwise\b|\bomit(?:s|ted)?\b|\bfalls? back\b|"
                       r"\b(?:if|when)\s+(?:not|no|none)\b|\bnot (?:given|set|specified|provided|passed)\b", re.I)


def unstated_default(reference: str, evidence: Sequence[tuple[Document, int, int]], question: str = "") -> bool:
    """Whether a reference calls something a default, or its question asks for one, that its evidence states only
    in example text or not at all: a value read off an example's argument ("ignore_revision (True by default)"
    from a block that passes ``ignore_revision=True``) is what that example chose, not what the product does
    unless told, and the answer to "What is the default value of X?" from a page that lists X's values without
    naming one the default is made up, whatever words the reference uses ("None"). The evidence's text outside
    its example regions (:func:`_example_regions`, code included) must say "default" too; for a default only the
    question asks for, it may say instead what holds when nothing is given (:data:`_FALLBACK`: "listens on port
    7311 unless told otherwise"), as the reference did not claim the word."""
    if _DEFAULT.search(reference):
        said = _DEFAULT
    elif _DEFAULT.search(question):
        said = _FALLBACK
    else:
        return False
    for doc, start, end in evidence:
        regions = sorted(_example_regions(doc, start, end, True))
        at, prose = start, []
        for lo, hi in regions:
            if lo > at:
                prose.append(doc.text[at:lo])
            at = max(at, hi)
        prose.append(doc.text[at:end])
        if said.search(" ".join(prose)):
            return False
    return True


def claims_pointed(question: str, reference: str, used: Sequence[str], pointers: Sequence[tuple[int, str]],
                   names: str = "") -> str | None:
    """The link of a pointer sentence that a reference misuses, else None. ``used`` holds a pointer sentence
    ("See the installation instructions to run models on CPU"; ``pointers``: its index in ``used`` and its link
    text). The text says where something is, not what it is, so the reference either

    - leans on the sentence (shares more words with it than with the other used text) without naming all of
      its link's words: "Install the model on CPU" claims what only the linked page could say; or
    - names the link for a question that asks for none of what the sentence says the link is for: "Be sure to
      check the [Usage] section to understand how to work with it" answers "where do I learn to work with it",
      not "where is the full example" (the page's own title). ``names``: the product's and titles' words,
      which the question shares with every text of its page."""
    ref = set(content_words(reference))
    own = set(content_words(question)) - set(content_words(names))
    pointed = {k for k, _ in pointers}
    rest = set(content_words(" ".join(t for k, t in enumerate(used) if k not in pointed)))
    for k, target in pointers:
        if k >= len(used):
            continue
        link = set(content_words(target))
        sentence = set(content_words(used[k]))
        if not link <= ref:
            if len(ref & sentence) > len(ref & rest):
                return target
        elif not own & (sentence - link):
            return target
    return None


def asks_earlier_step(question: str, lead: Sequence[str], code: str, names: str) -> bool:
    """Whether a code answer's question asks for what an earlier sentence of its lead-in says rather than what
    the sentence introducing the block does: the lead-in ``lead`` is read in order and its last sentence leads
    into ``code``. "First import the model into the Model Store. Install the dependencies:" followed by
    ``pip install ...`` answers "how do I install the dependencies", not "how do I import the model": the
    question's own words (not ``names``: the product's and the titles') hit only the earlier sentences."""
    if len(lead) < 2:
        return False
    own = set(content_words(question)) - set(content_words(names))
    cue = set(content_words(lead[-1])) | set(content_words(code))
    earlier = set(content_words(" ".join(lead[:-1]))) - cue
    return bool(own & earlier) and not own & cue
