"""Locating context strings in a corpus whose text was re-encoded after the contexts were cut
(or before): the fuzzy span must start where the context starts and end where it ends."""

from __future__ import annotations

import pytest
from ragsweep.gen.documents import Corpus, Document
from ragsweep.harness.app.locate import Locator

# Our own essay-like paragraphs, written for this test; quotes, dashes and double spaces on purpose.
PARAGRAPHS = [
    ("Then -- as now -- 'hacking' meant -- to us -- something else. We wrote programs in Fortran on punch "
    "cards, typed them up, and handed the deck to the operator, who would run it and return a printout the "
    "next day."),
    ("\"I was puzzled by the machine,\" she said -- \"I couldn't see what to do with it.\" In retrospect there "
    "was not much anyone could have done with it: the only input was data on punched cards, and we had none."),
    ("With small computers, everything changed. Now you could have a computer sitting in front of you, on a "
    "desk, that answered your keystrokes as it ran. \"It's a real one,\" my father said -- 'a real one' -- "
    "when he bought it in about 1980."),
]


def reencode(text: str) -> str:
    """What a converter does to a text: curly quotes, em dashes, non-breaking spaces after full stops."""
    out = text.replace(" -- ", "\u2014").replace("'", "\u2019")
    quoted = out.split('"')
    out = "".join(part + ("\u201c" if i % 2 == 0 else "\u201d") for i, part in enumerate(quoted[:-1])) + quoted[-1]
    return out.replace(". ", ".\u00a0", 2)


def corpus_of(paragraphs: list[str]) -> tuple[Corpus, str]:
    text = "A preface of a few words.\n\n" + "\n\n".join(paragraphs)
    return Corpus([Document("essay.txt", text), Document("other.txt", "Boats, harbours and piers.")], "t"), text


@pytest.mark.parametrize("source_of, context_of", [(reencode, lambda p: p), (lambda p: p, reencode)],
                         ids=["source-re-encoded", "contexts-re-encoded"])
@pytest.mark.parametrize("i", range(len(PARAGRAPHS)))
def test_a_fuzzy_span_starts_and_ends_where_the_context_does(source_of, context_of, i):
    corpus, text = corpus_of([source_of(p) for p in PARAGRAPHS])
    paragraph = source_of(PARAGRAPHS[i])
    context = "  \u00a0" + context_of(PARAGRAPHS[i]) + "\n"  # the application's whitespace at both ends
    where = Locator(corpus).locate(context)
    assert where.method == "fuzzy" and where.doc_id == "essay.txt" and where.score >= 0.9
    start = text.index(paragraph)
    assert (where.start, where.end) == (start, start + len(paragraph)), text[where.start:where.end]


def test_an_unrelated_prefix_does_not_stretch_the_span():
    corpus, text = corpus_of(PARAGRAPHS)
    context = "[source 3] " + reencode(PARAGRAPHS[0][:150])
    where = Locator(corpus, fuzzy_threshold=0.8).locate(context)
    assert where.method == "fuzzy"
    assert where.start == text.index(PARAGRAPHS[0])  # not into the preface before it
