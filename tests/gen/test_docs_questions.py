"""Questions written from a documentation folder hold no markup: the writers only ever see clean text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ragsweep

FASTAPI = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs-fastapi"
# What the rule writer put into questions when it read the pages as written (12 of 15 hand-read questions):
# HTML tags, emphasis, inline code marks, link targets, include directives, admonition markers, heading anchors.
MARKUP = re.compile(r"<[a-zA-Z/][^>]*>|\*\*|(?<!\w)\*\w|`|\]\(|\[\w|\{\*|\*\}|///|\{ ?#")


@pytest.mark.skipif(not FASTAPI.is_dir(), reason="../shared/data/docs-fastapi not present")
def test_rule_writer_writes_no_markup_from_markdown_docs():
    ts = ragsweep.generate(str(FASTAPI), n=30, gates={"embed": False})
    assert len(ts.samples) >= 20
    texts = []
    for s in ts.samples:
        texts += [s.question or "", s.reference or ""] + [t.get("content", "") for t in s.conversation or []]
        for span in s.evidence:  # evidence is clean text, and maps back to the page as written
            doc = ts.corpus.get(span.doc_id)
            start, end = doc.layout.to_source(span.start, span.end)
            words = re.findall(r"\w+", doc.text[span.start:span.end])
            assert words[0] in doc.layout.source[start:end] and words[-1] in doc.layout.source[start:end]
    bad = [t for t in texts if MARKUP.search(t)]
    assert not bad, bad[:5]


def test_markup_pattern_catches_what_the_raw_pages_gave():
    before = ["And don't worry about underscores in your variables, **what** will take care of converting them?",
              "As FastAPI is based on Starlette and implements the <abbr title=\"what\">ASGI</abbr> specification?",
              "To ensure they are triggered, use `what` from [florimondmanca/asgi-lifespan](https://x.y/z)?",
              "There are some extra features to handle security apart from the ones covered in the [what?"]
    assert all(MARKUP.search(q) for q in before)
    assert not MARKUP.search("By default, what uses strict Content-Type header checking for JSON request bodies?")
