"""Evidence that follows a docs page's structure (issue #34): a list item is one unit, a list behind the sentence
that leads into it is shown whole, and a plain question is not drawn from an example's remark. Used by the
documentation styles (:mod:`gen.styles`) and, through :func:`structured`, by the plain ``single_hop`` stream of a
docs run.

Two rules read where a candidate's text stands, not how it is worded. What a page says right after a candidate's
text is shown too (:func:`with_following`): a page announces and then gives ("Different types can be used." ->
the types; an error's message -> its reason; a warning -> the fix), and a writer shown only the announcement
answers with it; a reference that still answers with the announcement is not kept (:func:`announced_unused`).
And a question of one table row names that row (:func:`unnamed_row`): "What secrets are required?" of one row of
a table of secrets asks for the table. A third reads a paragraph as one sentence group (:func:`cut_antecedent`):
evidence whose "this <noun>" or "such <noun>" refers back to a sentence of its paragraph that it leaves out was cut
from its group, and its reference resolves the phrase as it guesses ("Drug2cell performs such enrichment tests"
read as pathway enrichment when the sentence before sets drug-target enrichment against it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.documents import Corpus, Document
from ragsweep.gen.grounding import example_share
from ragsweep.gen.layout import Block
from ragsweep.gen.style_checks import allowed, leads_on, role_at
from ragsweep.gen.units import MAX_CHARS, Unit
from ragsweep.gen.wording import content_tokens
from ragsweep.metrics import content_words
from ragsweep.metrics.lexicon import QUESTION_STOP

#: A list shown whole after its lead-in (:func:`list_evidence`) has at most this many items and characters;
#: a longer one shows the one item alone.
_MAX_LIST_ITEMS = 10
_MAX_LIST_CHARS = 1600
#: What follows a candidate's text (:func:`following`) is shown when it is at most this long: a code block, a
#: table, a list's items (at most :data:`_MAX_FOLLOWING_ITEMS`). A longer one is not shown (a part of a list
#: would be read as all of it).
_MAX_FOLLOWING_CHARS = 1200
_MAX_FOLLOWING_ITEMS = 6


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


#: How a documentation site names the pages (or their folder) for the people who work on the product itself: the
#: names benchmarks/sdist_docs.py leaves out by file name, as a path's folder or file name starts.
#: Not "developer": a path names a page's readers only by a word that means work on the product itself;
#: "developer" names the readers of an API as often ("developer-interface.md", a plugin author's "developer
#: guide"), and the rule reads no page.
_PROJECT_PAGES = ("contributing", "contribute", "contributor", "development", "hacking")


def project_page(doc_id: str) -> bool:
    """Whether a page's path puts it among the pages for the product's own developers ("contributing/tests.md",
    "development/setup.md"): how to run the project's test suite is no question of a user of the product."""
    parts = [p.lower().replace("-", "_") for p in doc_id.split("/")]
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return any(p.startswith(_PROJECT_PAGES) for p in parts)


def for_users(corpus: Corpus, stream: Iterator[Candidate]) -> Iterator[Candidate]:
    """The candidates of ``stream`` that draw on no page of the product's own developers (:func:`project_page`)
    and on no page its site leaves out of its own page list (``metadata["unlisted"]``, :mod:`gen.site_nav`)."""
    def shown(doc_id: str) -> bool:
        doc = corpus.get(doc_id)
        return not project_page(doc_id) and not (doc is not None and doc.metadata.get("unlisted"))

    return (c for c in stream if all(shown(u.doc_id) for u in c.shown))


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
        if not allowed(role_at(doc, unit.start, unit.end), "fact") or example_share(doc, unit.start, unit.end) > 0.5:
            continue  # an example's remark, or a sentence that is mostly a "for example" clause: no fact of the product
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


def _first_sentence(doc: Document, start: int, end: int) -> tuple[Unit, ...]:
    """The first sentence of ``doc.text[start:end]`` as a unit (none when it is longer than a unit may be)."""
    text = doc.text[start:end]
    spans = sentence_spans(text)
    if not spans:
        return ()
    s, e = spans[0]
    return (Unit(doc.id, start + s, start + e, text[s:e], -1),) if e - s <= MAX_CHARS else ()


def _item_run(doc: Document, blocks: list[Block], first: Block) -> tuple[Unit, ...]:
    """The items of the list that ``first`` opens (nested items inside theirs), when there are at most
    :data:`_MAX_FOLLOWING_ITEMS` and :data:`_MAX_FOLLOWING_CHARS` characters of them; else none."""
    run = [first]
    for b in blocks:
        if b.start < run[-1].end:
            continue  # before the run's last item, or nested in it
        if b.kind != "list_item" or doc.text[run[-1].end:b.start].strip():
            break
        run.append(b)
    if len(run) > _MAX_FOLLOWING_ITEMS or run[-1].end - run[0].start > _MAX_FOLLOWING_CHARS:
        return ()
    return tuple(block_unit(doc, b) for b in run)


def following(doc: Document, last: Unit) -> tuple[Unit, ...]:
    """What a reader meets right after ``last`` on its page: the next sentence of its paragraph (list item,
    admonition); when ``last`` ends its block, the next block of the page (a list: its items; a code block or a
    table: whole; a paragraph: whole when short, else its first sentence), never past a heading. Nothing after
    a table row or a code line (the rest of its block is not about it), nor what is too long to show."""
    assert doc.layout is not None
    blocks = sorted((b for b in doc.layout.blocks if b.kind != "include"), key=lambda b: (b.start, b.start - b.end))
    hosts = [b for b in blocks if b.kind != "heading" and b.start <= last.start < b.end]
    if not hosts:
        return ()
    host = min(hosts, key=lambda b: b.end - b.start)
    if doc.text[last.end:host.end].strip():
        if host.kind in ("paragraph", "list_item", "admonition"):
            return _first_sentence(doc, last.end, host.end)
        return ()
    nxt = next((b for b in blocks if b.start >= max(last.end, host.end)), None)
    if nxt is None or nxt.kind == "heading":
        return ()
    if nxt.kind == "list_item":
        return _item_run(doc, blocks, nxt)
    if nxt.kind in ("code", "table", "html"):
        return (block_unit(doc, nxt),) if nxt.end - nxt.start <= _MAX_FOLLOWING_CHARS else ()
    if nxt.end - nxt.start <= MAX_CHARS:
        return (block_unit(doc, nxt),)
    return _first_sentence(doc, nxt.start, nxt.end)


def with_following(corpus: Corpus, stream: Iterator[Candidate]) -> Iterator[Candidate]:
    """The ``single_hop`` candidates of ``stream`` on pages with a layout shown with what follows their text
    (:func:`following`), after it and not required: the writer may answer from it, and a reference that needs it
    takes it into its evidence (:func:`gen.drafts._widen_evidence`). What follows that leads on in its turn
    (:func:`gen.style_checks.leads_on`) comes with what it leads into, or is left out. A code answer's candidate
    passes as it is (its answer is its block), and so does every other."""
    for cand in stream:
        last = max(cand.shown, key=lambda u: u.end) if cand.shown else None
        doc = corpus.get(last.doc_id) if last is not None and last.doc_id in corpus else None
        if (cand.kind != "single_hop" or cand.style == "code_answer" or doc is None or doc.layout is None
                or last is None or len(cand.doc_ids) != 1):
            yield cand
            continue
        extra = following(doc, last)
        if extra and leads_on(extra[-1].text):
            # what follows announces in its turn ("Split the test by phase:"): shown with what it announces, or
            # not at all (an announcement alone is what a writer answers with)
            extra = (*extra, *after) if (after := following(doc, extra[-1])) else extra[:-1]
        extra = tuple(u for u in extra if not any(u.start < s.end and s.start < u.end for s in cand.shown))
        if not cand.style:
            # a plain fact is about the product: a code block or an example after its text shows what one use
            # chose (an example class's field, its argument), which a writer shown it takes for the product's.
            # What announced it is left out with it, and a text that itself announces it draws no plain fact.
            kept = tuple(u for u in extra if role_at(doc, u.start, u.end) not in ("code", "example"))
            if len(kept) < len(extra):
                if leads_on(last.text) and not kept:
                    continue
                while kept and leads_on(kept[-1].text):
                    kept = kept[:-1]
            extra = kept
        yield replace(cand, shown=(*cand.shown, *extra)) if extra else cand


#: The styles whose answer is what a page gives after it says what to do: the command, the code.
_DOING_STYLES = ("how_to", "code_answer")


def announced_unused(corpus: Corpus, cand: Candidate, evidence: tuple[Unit, ...], reference: str,
                     style: str | None) -> tuple[str, Unit | None]:
    """Whether a reference answers with an announcement when what it announces was shown: the last unit of
    ``evidence`` leads into what follows it (:func:`gen.style_checks.leads_on`: it ends with a colon), or, for a
    how-to or code question, is followed by a code block, and that next unit (:func:`following`) was shown to the
    writer and is not in the evidence. ("... add the environment names to the command:" answered "add the
    environment names to the command", the command in the block after it.) Read from where the units stand,
    not from their words, but for one test: a reference that holds words of that next unit which its evidence
    does not took them from it, and the unit joins its evidence. Returns ("", None) when the reference stands,
    ("widen", unit) when the unit joins its evidence, ("announced", unit) when it is only announced."""
    if not evidence or cand.kind != "single_hop":
        return "", None
    last = max(evidence, key=lambda u: u.end)
    doc = corpus.get(last.doc_id) if last.doc_id in corpus else None
    if doc is None or doc.layout is None or any(u.doc_id != last.doc_id for u in evidence):
        return "", None
    if style == "code_answer" or any(b.kind == "code" and b.start <= last.start < b.end for b in doc.layout.blocks):
        return "", None  # a code block announces nothing, whatever its last line ends with
    nxt = following(doc, last)
    if not nxt:
        return "", None
    after = nxt[0]
    code = any(b.kind == "code" and b.start == after.start for b in doc.layout.blocks)
    if not (leads_on(last.text) or (style in _DOING_STYLES and code)):
        return "", None
    shown = next((u for u in cand.shown if u.doc_id == after.doc_id and u.start == after.start), None)
    if shown is None or any(u.doc_id == shown.doc_id and u.start == shown.start for u in evidence):
        return "", None
    have = set(content_tokens(" ".join(u.text for u in evidence)))
    if set(content_tokens(reference)) & (set(content_tokens(shown.text)) - have):
        return "widen", shown
    return "announced", shown


def _words(text: str) -> list[str]:
    """The words of ``text``, lower case."""
    return re.findall(r"[a-z0-9]+", text.lower())


def unnamed_row(cand: Candidate, question: str) -> bool:
    """Whether ``question``, of a candidate whose one required unit is a table row (``option`` style: the header
    row and one body row, :func:`gen.styles._table_rows`), leaves out a content word of the row's key, its first
    cell that holds any: "What secrets are required?" of the ``GALAXY_TOKEN`` row asks what the table answers
    whole; "... host iteration and ad-hoc modules?" names the row "Host iteration / ad-hoc modules in pytest"."""
    if cand.style != "option" or len(cand.required) != 1 or len(cand.shown) < 2:
        return False
    row = cand.shown[cand.required[0]]
    if row.index != -1 or " | " not in row.text or "\n" in row.text.strip():
        return False
    cells = [c for c in (_words(cell) for cell in row.text.strip().strip("|").split("|")) if c]
    if not cells:
        return False
    # its content words ("in", "the" left out), or the key itself when it is one of those (a channel named "a")
    key = [w for w in cells[0] if w not in QUESTION_STOP] or cells[0]
    asked = set(_words(question))
    return not all(w in asked for w in key)


#: A demonstrative determiner and the word after it ("this internal representation", "these classes", "such
#: enrichment tests"): a noun phrase that names again what an earlier sentence named. Grammar, not wording: the
#: closed class of English demonstratives ("that" is left out: as often a relative pronoun or a conjunction).
_DEMONSTRATIVE = re.compile(r"\b(?:[Tt]his|[Tt]hese|[Tt]hose|[Ss]uch)\s+([A-Za-z][\w-]*)")


def _host(doc: Document, pos: int) -> Block | None:
    """The smallest block of ``doc`` that holds ``pos`` and is no heading or include."""
    assert doc.layout is not None
    hosts = [b for b in doc.layout.blocks if b.kind not in ("heading", "include") and b.start <= pos < b.end]
    return min(hosts, key=lambda b: b.end - b.start) if hosts else None


def cut_antecedent(corpus: Corpus, evidence: tuple[Unit, ...]) -> tuple[str, str] | None:
    """A demonstrative noun phrase of ``evidence`` whose antecedent is a sentence of its own paragraph (list item,
    admonition) that the evidence leaves out: the phrase's noun ("these classes") is not in the evidence before
    it, and the last sentence of the block before it that holds the noun ("Every kind of part has its own class")
    is outside the evidence. Such evidence is part of a sentence group, and what the phrase means stands in the
    part left out. Returns (the phrase, the antecedent sentence), or None. Read from where the sentences stand: a
    phrase that refers across a paragraph (to a section's subject, named in its heading) is not checked, nor a
    code block, nor a page without a layout."""
    spans = [(u.doc_id, u.start, u.end) for u in evidence]

    def inside(doc_id: str, pos: int) -> bool:
        return any(d == doc_id and s <= pos < e for d, s, e in spans)

    for unit in evidence:
        doc = corpus.get(unit.doc_id) if unit.doc_id in corpus else None
        if doc is None or doc.layout is None:
            continue
        for m in _DEMONSTRATIVE.finditer(unit.text):
            noun = set(content_words(m.group(1)))
            pos = unit.start + m.start()
            block = _host(doc, pos)
            if not noun or block is None or block.kind == "code" or block.start >= pos:
                continue
            before = " ".join(doc.text[s:min(e, pos)] for d, s, e in spans if d == doc.id and s < pos)
            if noun & set(content_words(before)):
                continue  # named earlier in the evidence itself
            for s, e in reversed(sentence_spans(doc.text[block.start:pos])):
                s, e = block.start + s, block.start + e
                if not inside(doc.id, s) and noun & set(content_words(doc.text[s:e])):
                    return m.group(0), doc.text[s:e]
    return None


def _row_items(doc: Document) -> list[Block]:
    """The titled admonitions of ``doc`` that are items of a row: another of the same kind stands right before or
    after it with only blank space between (tabs, cards: ``tab: pip`` beside ``tab: conda``). Read from where the
    blocks stand, not from their names: a lone titled note is no item."""
    assert doc.layout is not None
    titled = sorted((b for b in doc.layout.blocks if b.kind == "admonition" and b.info.partition(":")[2].strip()),
                    key=lambda b: b.start)

    def kind(b: Block) -> str:
        return b.info.partition(":")[0].strip().lower()

    items = set()
    for a in titled:
        # the box right after this one (a box nested in this one starts before its end and is not it)
        b = next((x for x in titled if x.start >= a.end), None)
        if b is not None and kind(a) == kind(b) and not doc.text[a.end:b.start].strip():
            items.update({(a.start, a.end, a.info), (b.start, b.end, b.info)})
    return [b for b in titled if (b.start, b.end, b.info) in items]


def item_titles(doc: Document, start: int, end: int) -> tuple[str, ...]:
    """The titles of the row items (:func:`_row_items`) that hold ``[start, end)``, outermost first: what sets a
    tab apart from the tab beside it, which a writer shown the tab's text alone cannot tell ("Production (S3)")."""
    if doc.layout is None:
        return ()
    held = [b for b in _row_items(doc) if b.start <= start and end <= b.end]
    return tuple(b.info.partition(":")[2].strip() for b in sorted(held, key=lambda b: (b.start, -b.end)))


def unnamed_item(corpus: Corpus, evidence: tuple[Unit, ...], question: str) -> str | None:
    """The title of a row item (a tab, a card) that holds all of ``evidence`` when ``question`` holds none of its
    content words: "How do I change storage backends?" of the "Local" tab of two asks what the row answers whole,
    as :func:`unnamed_row` finds of a table row. None when the evidence is in no row item or the question names it."""
    docs = {u.doc_id for u in evidence}
    if len(docs) != 1 or (doc_id := next(iter(docs))) not in corpus:
        return None
    doc = corpus.get(doc_id)
    titles = item_titles(doc, min(u.start for u in evidence), max(u.end for u in evidence))
    asked = set(_words(question))
    for title in titles:
        words = [w for w in _words(title) if w not in QUESTION_STOP] or _words(title)
        if words and not asked & set(words):
            return title
    return None
