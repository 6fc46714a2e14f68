"""Evidence that follows a docs page's structure (issue #34): a list item is one unit, a list behind the sentence
that leads into it is shown whole, and a plain question is not drawn from an example's remark. Used by the
documentation styles (:mod:`gen.styles`) and, through :func:`structured`, by the plain ``single_hop`` stream of a
docs run."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.documents import Corpus, Document
from ragsweep.gen.layout import Block
from ragsweep.gen.style_checks import allowed, leads_on, role_at
from ragsweep.gen.units import MAX_CHARS, Unit

#: A list shown whole after its lead-in (:func:`list_evidence`) has at most this many items and characters;
#: a longer one shows the one item alone.
_MAX_LIST_ITEMS = 10
_MAX_LIST_CHARS = 1600


def block_unit(doc: Document, block: Block) -> Unit:
    # A block is no sentence: index -1 keeps it out of every "adjacent sentence" test.
    return Unit(doc.id, block.start, block.end, doc.text[block.start:block.end], -1)


def _cue_before(doc: Document, first: Block) -> Unit | None:
    """The sentence right before a list that leads into it (:func:`gen.style_checks.leads_on`: "... includes the
    following extra fields:"), as a unit (the paragraph when it is short, else its last sentence); None when a
    list has no such lead-in."""
    assert doc.layout is not None
    before = [b for b in doc.layout.blocks if b.end <= first.start and b.kind != "include"]
    if not before:
        return None
    prev = max(before, key=lambda b: (b.end, -b.start))
    if prev.kind != "paragraph" or doc.text[prev.end:first.start].strip():
        return None
    text = doc.text[prev.start:prev.end]
    if prev.end - prev.start > MAX_CHARS:
        spans = sentence_spans(text)
        if not spans:
            return None
        s, e = spans[-1]
        unit = Unit(doc.id, prev.start + s, prev.start + e, text[s:e], -1)
    else:
        unit = block_unit(doc, prev)
    return unit if leads_on(unit.text) else None


def list_evidence(doc: Document, unit: Unit) -> tuple[tuple[Unit, ...], int, tuple[int, ...]] | None:
    """What a unit inside a list item stands on: the whole item (its lead term, every line of it and the items
    nested in it; never a continuation line alone: "So, if your callable failed once, this is set to 1." means
    nothing without "stamina.retry_num: The number of the current retry."), and, when the list follows a
    sentence that leads into it ("... includes the following extra fields:"), that sentence and every item of the list, so a
    question about the list sees all of it. Returns (units to show, the index of the unit's item among them,
    the indexes of the list's items when the list is shown whole, else ``()``); None when ``unit`` is in no
    list item. A list longer than :data:`_MAX_LIST_ITEMS` items or :data:`_MAX_LIST_CHARS` characters shows the
    item alone."""
    if doc.layout is None:
        return None
    items = [b for b in doc.layout.blocks if b.kind == "list_item"]
    holding = [b for b in items if b.start <= unit.start and unit.end <= b.end]
    if not holding:
        return None
    # the outermost item: a nested item ("You can set its URL with docs_url") means what its parent item says
    # ("Swagger UI: served at /docs")
    item = max(holding, key=lambda b: b.end - b.start)

    def parent(b: Block) -> tuple[int, int] | None:
        outer = [p for p in items if p.start <= b.start and b.end <= p.end and p is not b]
        p = min(outer, key=lambda p: p.end - p.start, default=None)
        return None if p is None else (p.start, p.end)

    mine = parent(item)
    peers = sorted((b for b in items if parent(b) == mine), key=lambda b: b.start)
    k = next(n for n, b in enumerate(peers) if b is item)
    lo = hi = k
    while lo > 0 and not doc.text[peers[lo - 1].end:peers[lo].start].strip():
        lo -= 1
    while hi + 1 < len(peers) and not doc.text[peers[hi].end:peers[hi + 1].start].strip():
        hi += 1
    run = peers[lo:hi + 1]
    own = block_unit(doc, item)
    cue = _cue_before(doc, run[0])
    if (cue is None or len(run) < 2 or len(run) > _MAX_LIST_ITEMS
            or cue.end - cue.start + sum(b.end - b.start for b in run) > _MAX_LIST_CHARS):
        return (own,), 0, ()
    return (cue, *(block_unit(doc, b) for b in run)), 1 + k - lo, tuple(range(1, len(run) + 1))


def structured(corpus: Corpus, stream: Iterator[Candidate], whole: bool = True) -> Iterator[Candidate]:
    """The plain ``single_hop`` candidates of ``stream`` read with their page's structure: one whose sentence is
    inside a list item shows the item whole (and the list after its lead-in, :func:`list_evidence`); one whose
    sentence is an example's (:func:`gen.style_checks.role_at`: its values are samples) is dropped. Other
    candidates (other kinds, styled ones, documents without a layout) pass as they are. With ``whole`` False
    (a writer that questions one sentence, the rule writer's cloze) an item is not shown whole: a sentence that
    continues an item ("So, ... this is set to 1.") is dropped, the item's first sentence passes as it is."""
    for cand in stream:
        unit = cand.shown[cand.required[0]] if cand.required else None
        doc = corpus.get(unit.doc_id) if unit is not None and cand.kind == "single_hop" and not cand.style else None
        if doc is None or doc.layout is None or unit is None:
            yield cand
            continue
        if not allowed(role_at(doc, unit.start, unit.end), "fact"):
            continue
        got = list_evidence(doc, unit)
        if got is None:
            yield cand
        elif not whole:
            item = got[0][got[1]]
            if not doc.text[item.start:unit.start].strip(" \n-*+0123456789.)"):
                yield cand
        else:
            shown, at, items = got
            yield replace(cand, shown=shown, required=(at,), items=items)


def list_items(doc: Document, shown: tuple[Unit, ...]) -> tuple[int, ...]:
    """The indexes of ``shown`` that are whole items of one list shown after its lead-in (two or more)."""
    assert doc.layout is not None
    spans = {(b.start, b.end) for b in doc.layout.blocks if b.kind == "list_item"}
    found = tuple(i for i, u in enumerate(shown) if (u.start, u.end) in spans)
    return found if len(found) >= 2 and found[0] > 0 else ()
