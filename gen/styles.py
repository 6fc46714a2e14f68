"""Question styles of documentation, chosen by what a section holds.

People ask documentation how to do something, what an error means, which option does what, and for the code
that does it. A ``style`` (``styles=[...]``, :func:`gen.generate.variations`) is how a question is asked; the
four documentation styles below are not drawn at random like the free-text ones but chosen by a **cue** in a
section of a Markdown or HTML document (its :class:`~gen.layout.Layout`):

- ``how_to``: steps (two or more list items after a lead-in), or a sentence that says how ("To add a
  header, ...", "you can declare ... by ...");
- ``troubleshooting``: an error named (an exception such as ``HTTPException`` or ``ValidationError``, an error
  status such as 404 or 422) with its cause or its fix in the same or the next sentence; or a warning
  admonition's opening sentences (what to avoid, what goes wrong);
- ``option``: a parameter or setting named as code (``response_model_exclude_unset``, ``debug=True``,
  ``--reload``) with "parameter", "argument", "option", "setting", "flag" or "default"; or a table row;
- ``code_answer``: a code block (not a diagram, not a bare URL, not an output format) with the paragraph that
  leads into it and presents it as the way to do something (:func:`gen.style_checks.presents_code`). Its
  reference is the code itself (a console session's commands, its output dropped) and its evidence the whole
  block, fences included, as it stands in the text.

No style draws from a page or a section that is mostly links (a table of contents) or from a section with too
little prose (:mod:`gen.style_checks`): those candidates cost a model call and were rejected or wrong.

A cue sentence is shown with what its meaning depends on, all of it evidence (:func:`_standing`): the sentences
before one whose subject points back ("It raises ..."), the list, block or sentence that one leading on ("...
one of the following:") leads into, the lead-in of a list item's list; when that is not there, the sentence
draws nothing. It is never shown with a neighbour it does not need: a writer shown two unrelated sentences
joined them. A troubleshooting candidate also shows every other sentence of its section that names the same
error. The section titles a writer sees start with the document's name (:func:`document_name`).

Each style's candidates are ``single_hop`` candidates (one section) with :attr:`Candidate.style` set; the
``single_hop`` stream takes them in turn, so the set mixes the styles whose cues the corpus holds, and gives a
product's plain ones (style ``fact``) once its styled ones run out (``facts_on_docs``, :mod:`gen.docs_defaults`).
A writer says which styles it writes (``Writer.styles``); the generator reports the cues it found for a style the
writer does not write (``styles_not_written``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from ragsweep.gen.candidates import Candidate, round_robin
from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.documents import Corpus, Document
from ragsweep.gen.grounding import example_share, prohibits, states_reason
from ragsweep.gen.layout import Block
from ragsweep.gen.products import product_of
from ragsweep.gen.style_checks import (
    MIN_PROSE_WORDS,
    allowed,
    commands,
    error_names,
    explained_error,
    fence_language,
    leads_on,
    navigation,
    points_back,
    points_elsewhere,
    pointer_target,
    presents_code,
    prose_words,
    role_at,
    steps,
)
from ragsweep.gen.structure import block_unit as _block_unit
from ragsweep.gen.structure import item_titles, list_evidence, list_items
from ragsweep.gen.units import MAX_CHARS, MIN_CHARS, Unit

DOC_STYLES = ("how_to", "troubleshooting", "option", "code_answer")
#: What ``styles=[docs]`` stands for.
ALL_DOCS = "docs"
#: What each style needs a section to hold (the report's ``styles_not_written`` names them).
CUES = {
    "how_to": "steps (two or more list items after a lead-in) or a sentence that says how to do something",
    "troubleshooting": "an error named (an exception, an error status) with its cause or fix, or a warning",
    "option": "a parameter or setting named as code with 'parameter', 'option', 'setting', ...; or a table row",
    "code_answer": "a code block with a paragraph that leads into it as the way to do something",
}

# "you can ..." says how only with the means named: "by <doing>", or "with"/"using" a name that reads as code or a
# class ("using the CORSMiddleware", "with Depends()"); "you can put it in multiple files" says what, not how.
_HOW = re.compile(r"^(?:To|In order to) [a-z]+\b[^,.]{3,}, |\b[Yy]ou (?:can|could|need to|have to|should|must) "
                  r"(?:also |just |then |now )?[a-z]+\b.{8,}\b(?:by [a-z]+ing\b|(?:with|using) (?:the |a |an )?"
                  r"(?:[A-Z][a-z]+[A-Z]\w*|[A-Za-z]\w*(?:_\w+|\(\)|\.\w+)|[a-z]\w* (?:parameter|option|argument|"
                  r"function|class|decorator|command|setting|flag)))")
# A name that reads as code: snake_case, name=value, a --flag, or a dotted attribute (app.state)
_CODE_NAME = re.compile(r"(?<![\w/.])(?:--[a-z][\w-]+|[a-z]\w*_\w+(?:=\S+)?|[a-z]\w*=\S+|[a-z]\w*\.[a-z_]\w*)(?![\w/])")
_OPTION_WORD = re.compile(r"\b(?:parameters?|arguments?|options?|settings?|flags?|defaults?|configuration|"
                          r"config)\b", re.I)
_NOT_CODE_LANGUAGES = {"mermaid", "text", "txt", "plain"}
_MAX_CODE_CHARS = 1200
_MAX_STEPS = 6
_LIST_MARKER = re.compile(r"\s*(?:[-*+]|\d+[.)])?\s*")
#: How many sentences back a sentence that points back may look for what it points to.
_MAX_BACK = 3
#: A troubleshooting candidate shows at most this many units (the error's sentences and what they depend on).
_MAX_SHOWN = 8
#: File names that name no product: the folder above says what the page is of (``attrs/README.md``).
_NAMELESS_STEMS = {"readme", "index", "docs", "doc", "documentation", "src", "source", "content", "pages"}


def requested(styles: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the documentation styles asked for, in :data:`DOC_STYLES` order; the other styles, as given).
    ``docs`` asks for all four."""
    doc = {s for s in styles if s in DOC_STYLES} | (set(DOC_STYLES) if ALL_DOCS in styles else set())
    return tuple(s for s in DOC_STYLES if s in doc), tuple(s for s in styles if s not in DOC_STYLES and s != ALL_DOCS)


def document_name(doc: Document) -> str:
    """What a page is the documentation of, as its author names it: the front matter's title, the first
    level-1 heading, or the file's name (the folder's for ``README.md``, ``index.md``, ...)."""
    title = str(doc.metadata.get("title") or "").strip()
    if title:
        return title
    if doc.layout is not None:
        h1 = next((b.info.strip() for b in doc.layout.blocks if b.kind == "heading" and b.level == 1 and b.info.strip()),
                  "")
        if h1:
            return h1
    path = PurePosixPath(doc.id)
    parts = [p for p in (path.stem, *(q.name for q in path.parents)) if p and p.lower() not in _NAMELESS_STEMS]
    return parts[0] if parts else path.stem


def named_path(doc: Document, path: tuple[str, ...]) -> tuple[str, ...]:
    """The titles over a section, led by the document's name (:func:`document_name`) when they do not start with
    it: a README whose headings are "Usage" and "Errors" says of what product only in its title or file name,
    and a question that names no product is not self-contained."""
    name = document_name(doc)
    return path if path and path[0] == name else (name, *path)


def code_body(text: str) -> str:
    """A fenced code block's code: the text between its fence lines (the block itself when it has none)."""
    lines = text.strip("\n").split("\n")
    if len(lines) >= 2 and lines[0].lstrip().startswith(("```", "~~~")) and lines[-1].strip().startswith(("```", "~~~")):
        return "\n".join(lines[1:-1])
    return text


def code_reference(text: str) -> str:
    """A code answer's reference: the code of the fenced block ``text`` (a console session's commands only)."""
    return commands(code_body(text), fence_language(text))


def _is_code(doc: Document, block: Block) -> bool:
    body = code_body(doc.text[block.start:block.end]).strip()
    if block.info.lower() in _NOT_CODE_LANGUAGES or not body or len(body) > _MAX_CODE_CHARS:
        return False
    return "\n" in body or " " in body  # a bare URL or one word is no code to ask for


def _own_blocks(doc: Document) -> Iterator[list[Block]]:
    """Each section's own blocks (up to the next heading of any level), in order; the blocks before the first
    heading count as a section too."""
    assert doc.layout is not None
    current: list[Block] = []
    for b in doc.layout.blocks:
        if b.kind == "heading":
            if current:
                yield current
            current = []
        elif b.kind != "include":
            current.append(b)
    if current:
        yield current


def _lead_in(doc: Document, blocks: list[Block], i: int) -> tuple[Unit, ...] | None:
    """The paragraph just before ``blocks[i]`` in its section, as a unit, after the paragraph before it when it
    opens by pointing back ("This is done with:"; :func:`gen.style_checks.points_back`); None when another block
    comes first, or the paragraph it points back to is not there."""
    if not (i > 0 and blocks[i - 1].kind in ("paragraph", "admonition")):
        return None
    lead = _block_unit(doc, blocks[i - 1])
    if not points_back(lead.text):
        return (lead,)
    if i > 1 and blocks[i - 2].kind == "paragraph" and not leads_on(doc.text[blocks[i - 2].start:blocks[i - 2].end]):
        return _block_unit(doc, blocks[i - 2]), lead
    return None


def _adjacent(sentences: list[Unit], j: int, k: int) -> bool:
    return 0 <= j < len(sentences) and 0 <= k < len(sentences) and sentences[k].index == sentences[j].index + k - j


def _block_at(blocks: list[Block], pos: int) -> int | None:
    """The index of the block of ``blocks`` that holds clean offset ``pos``."""
    return next((i for i, b in enumerate(blocks) if b.start <= pos < b.end), None)


def _what_follows(doc: Document, blocks: list[Block], sentences: list[Unit], j: int) -> tuple[Unit, ...] | None:
    """What sentence ``j`` leads into: the next sentence of its paragraph, or, when it ends the paragraph, the
    block after it in the section (a list: its items, up to :data:`_MAX_STEPS`; a code block, a table, a short
    paragraph). None when that is not there or too long to show: the candidate is then not drawn."""
    u = sentences[j]
    i = _block_at(blocks, u.start)
    if i is None:
        return None
    if doc.text[u.end:blocks[i].end].strip():  # more of the paragraph after it
        return (sentences[j + 1],) if _adjacent(sentences, j, j + 1) and sentences[j + 1].end <= blocks[i].end else None
    assert doc.layout is not None
    # what stands next in the document, not in the section's own blocks: an include directive there ("{* file *}",
    # the code the sentence leads into, pulled in from elsewhere) is nothing the text can show
    after = [b for b in doc.layout.blocks if b.start >= blocks[i].end]
    if not after or after[0].kind not in ("list_item", "code", "table", "paragraph", "admonition"):
        return None
    nxt = after[0]
    if nxt.kind == "list_item":
        k = 0
        while k < len(after) and after[k].kind == "list_item":
            k += 1
        return tuple(_block_unit(doc, b) for b in after[:k]) if k <= _MAX_STEPS else None
    if nxt.kind in ("code", "table") or (nxt.kind in ("paragraph", "admonition") and nxt.end - nxt.start <= MAX_CHARS):
        return (_block_unit(doc, nxt),)
    return None


def _standing(doc: Document, blocks: list[Block], sentences: list[Unit], j: int) -> tuple[Unit, ...] | None:
    """Sentence ``j`` with what its meaning depends on (:func:`gen.style_checks.points_back`: the sentences
    before it back to one that does not point back, at most :data:`_MAX_BACK`; :func:`gen.style_checks.leads_on`:
    what it leads into), in text order; None when that cannot be shown (a sentence before is no unit or leads
    into this one's list; nothing follows)."""
    u = sentences[j]
    i = _block_at(blocks, u.start)
    if i is not None and blocks[i].kind == "list_item":
        # an item of a list means what the lead-in of its list says it is ("The client retries on:"): the item
        # whole, the lead-in and the rest of the list (list_evidence); without a lead-in, nothing is drawn
        got = list_evidence(doc, u)
        if got is None or not got[2]:
            return None
        return got[0]
    else:
        first = j
        # "It raises X if ... It raises Y if ...": back over the sentences that point back too, to one that names it
        while points_back(sentences[first].text):
            if (j - first >= _MAX_BACK or not _adjacent(sentences, first - 1, first)
                    or leads_on(sentences[first - 1].text)):
                return None
            first -= 1
        shown: tuple[Unit, ...] = tuple(sentences[first:j + 1])
    if leads_on(u.text):
        after = _what_follows(doc, blocks, sentences, j)
        if after is None:
            return None
        shown += after
    return shown


def _merged(*parts: tuple[Unit, ...]) -> tuple[Unit, ...]:
    """The units of ``parts`` once each, in text order, a unit that lies within another (a sentence of a
    paragraph shown whole) left out."""
    units = sorted({(u.start, u.end): u for p in parts for u in p}.values(), key=lambda u: (u.start, -u.end))
    out: list[Unit] = []
    for u in units:
        if not out or u.end > out[-1].end:
            out.append(u)
    return tuple(out)


def _warnings(doc: Document, blocks: list[Block], sentences: list[Unit]) -> Iterator[Candidate]:
    """A warning (:func:`gen.style_checks.role_at`: a warning, danger, caution ... admonition) says what to avoid
    or what goes wrong: its opening sentences, up to one that leads into what follows (a warning's example,
    which shows what not to do and is not shown), at most :data:`_MAX_BACK` + 1, for "What should I avoid when
    ...?". A warning that opens by pointing back, or whose first sentence leads on, draws nothing; nor does one
    whose shown sentences neither tell the reader not to do something (:func:`gen.grounding.prohibits`) nor give
    a reason (then it is asked why): what to avoid must be something the warning says to avoid."""
    for b in blocks:
        if b.kind != "admonition" or role_at(doc, b.start, b.end) != "warning":
            continue
        inside = [u for u in sentences if b.start <= u.start and u.end <= b.end]
        shown: list[Unit] = []
        for k, u in enumerate(inside):
            if leads_on(u.text) or len(shown) > _MAX_BACK or (k and not _adjacent(inside, k - 1, k)):
                break
            shown.append(u)
        texts = [u.text for u in shown]
        # asked what to avoid (no reason given: gen.writer) only when it says not to do something, else nothing
        # to ask: "experimental, restricted in scope" or "we recommend kopf for more" names nothing to avoid
        if (shown and not points_back(shown[0].text) and doc.text[b.start:shown[0].start].strip() == ""
                and (any(prohibits(t) for t in texts) or states_reason(texts, conditions=False))):
            yield Candidate("single_hop", tuple(shown), tuple(range(len(shown))), style="troubleshooting",
                            warning=True)


def _troubleshooting(doc: Document, blocks: list[Block], sentences: list[Unit]) -> Iterator[Candidate]:
    """An error named with its cause or fix: that sentence, or the error's sentence and the next that explains
    it, each with what it depends on (:func:`_standing`), and every other sentence of the section that names the
    same error: a section that gives several causes of one error makes "What causes it?" ask for all of them."""
    texts = [u.text for u in sentences]
    for j, u in enumerate(sentences):
        k = explained_error(texts, j)
        if k is None or (k != j and not _adjacent(sentences, j, k)):
            continue
        parts = [_standing(doc, blocks, sentences, j)] + ([_standing(doc, blocks, sentences, k)] if k != j else [])
        if any(p is None for p in parts):
            continue
        named = error_names(u.text)
        for m, other in enumerate(sentences):
            if m not in (j, k) and named & error_names(other.text):
                parts.append(_standing(doc, blocks, sentences, m) or (other,))
        shown = _merged(*parts)  # type: ignore[arg-type]
        if len(shown) <= _MAX_SHOWN:
            yield Candidate("single_hop", shown, tuple(range(len(shown))), style="troubleshooting")


def _sentence_candidates(style: str, doc: Document, blocks: list[Block], sentences: list[Unit]) -> Iterator[Candidate]:
    """The cue sentences of ``style``, each alone or with what it depends on (:func:`_standing`): never a
    neighbour it does not need, which the writer would join to it ("two unrelated sentences")."""
    if style == "troubleshooting":
        yield from _troubleshooting(doc, blocks, sentences)
        yield from _warnings(doc, blocks, sentences)
        return
    pattern = _HOW if style == "how_to" else None
    for j, u in enumerate(sentences):
        hit = (pattern.search(u.text) if pattern is not None
               else _CODE_NAME.search(u.text) and _OPTION_WORD.search(u.text))
        shown = _standing(doc, blocks, sentences, j) if hit else None
        if shown is None or style == "option" and example_share(doc, u.start, u.end) > 0.5:
            # an option's values are the product's: a cue that is mostly a "for example" clause leads into what
            # one use chose (the plain-fact rule of gen.structure.structured, on the option's own sentence)
            continue
        items = list_items(doc, shown)
        # a cue inside an item: the list is shown whole after its lead-in, the same for each of its items (one
        # candidate); the lead-in is required, and the items the answer takes (gen.writer.list_answer). A cue
        # that leads into a list asks about all of it.
        inside = any(shown[k].start <= u.start and u.end <= shown[k].end for k in items)
        required = (0,) if inside else tuple(range(len(shown)))
        yield Candidate("single_hop", shown, required, style=style, items=items)


def block_sentences(doc: Document) -> list[Unit]:
    """The sentences of a structured document's prose blocks (paragraphs, list items without their marker,
    admonitions), each cut within its block, as units; ``index`` counts every sentence, kept or not, so two
    units are neighbours only when nothing stands between them. The document's units
    (:func:`gen.units.document_units`) come from a splitter run over the whole text, which joins a lead-in that
    ends with a colon to the list after it ("... one of the following:\n\n- a card\n- a code"): that lead-in
    would be no unit, and could never be shown with its list."""
    assert doc.layout is not None
    out: list[Unit] = []
    count = 0
    prose = [b for b in doc.layout.blocks if b.kind in ("paragraph", "list_item")]
    for b in doc.layout.blocks:
        if b.kind not in ("paragraph", "list_item", "admonition"):
            continue
        if b.kind == "admonition" and any(b.start <= p.start and p.end <= b.end for p in prose):
            continue  # its paragraphs and items are read as themselves: each sentence once
        text = doc.text[b.start:b.end]
        skip = _LIST_MARKER.match(text).end() if b.kind == "list_item" else 0  # type: ignore[union-attr]
        for s, e in sentence_spans(text[skip:]):
            t = text[skip + s:skip + e]
            count += 1
            if (MIN_CHARS <= len(t) <= MAX_CHARS and len(t.split()) >= 6 and t[0].isalnum()
                    and "\n" not in t.strip()):
                out.append(Unit(doc.id, b.start + skip + s, b.start + skip + e, t, count))
    return out


def section_candidates(doc: Document, units: Sequence[Unit], style: str) -> list[Candidate]:
    """The ``style`` candidates of one document, section by section (none for a document without a layout).
    A document without ``units`` (none of its sentences can be questioned) has none; the cue sentences are
    its prose blocks' own (:func:`block_sentences`)."""
    if not units:
        return []
    if doc.layout is None:
        return []
    if navigation(doc, doc.layout.blocks):
        return []
    found: list[Candidate] = []
    all_sentences = block_sentences(doc)
    for blocks in _own_blocks(doc):
        # a code answer's prose is its lead-in, checked on its own (presents_code)
        if navigation(doc, blocks) or (style != "code_answer" and prose_words(doc, blocks) < MIN_PROSE_WORDS):
            continue
        out: list[Candidate] = []
        lo, hi = blocks[0].start, blocks[-1].end
        sentences = [u for u in all_sentences if lo <= u.start and u.end <= hi]
        if style == "code_answer":
            for i, b in enumerate(blocks):
                lead = _lead_in(doc, blocks, i) if b.kind == "code" and _is_code(doc, b) else None
                if lead is not None and presents_code(lead[-1].text, b.info) and code_reference(doc.text[b.start:b.end]):
                    out.append(Candidate("single_hop", (*lead, _block_unit(doc, b)), (len(lead),), style=style))
        elif style == "how_to":
            out.extend(_steps(doc, blocks))
        elif style == "option":
            out.extend(_table_rows(doc, blocks))
        if style != "code_answer":
            out.extend(c for c in _sentence_candidates(style, doc, blocks, sentences)
                       if not any(points_elsewhere(doc, u.start, u.end) for u in c.shown if u.index >= 0))
        path = named_path(doc, doc.layout.section_path(lo))
        seen: set[tuple[tuple[int, int], ...]] = set()
        # what the text is for (a warning's code is no recipe; an example's values no facts): every required unit;
        # a code block a sentence leads into is that sentence's (its role is the sentence's)
        out = [c for c in out if all(role == "code" and style != "code_answer" or allowed(role, style)
                                     for role in (role_at(doc, c.shown[k].start, c.shown[k].end) for k in c.required))]
        for c in out:  # a list item is a block and a sentence: one candidate of it, not two
            spans = tuple((u.start, u.end) for u in c.shown)
            if spans not in seen:
                seen.add(spans)
                pointers = tuple((k, t) for k, u in enumerate(c.shown)
                                 if (t := pointer_target(doc, u.start, u.end)) is not None)
                # a tab's title is a heading of its text: what sets it apart from the tab beside it
                tabs = item_titles(doc, min(u.start for u in c.shown), max(u.end for u in c.shown))
                found.append(replace(c, section=(*path, *tabs), product=product_of(doc), pointers=pointers))
    return found


def _steps(doc: Document, blocks: list[Block]) -> Iterator[Candidate]:
    """A lead-in paragraph and the list items right after it (two to :data:`_MAX_STEPS`)."""
    i = 0
    while i < len(blocks):
        j = i
        while j < len(blocks) and blocks[j].kind == "list_item":
            j += 1
        lead = _lead_in(doc, blocks, i) if j - i >= 2 else None
        items = tuple(_block_unit(doc, b) for b in blocks[i:min(j, i + _MAX_STEPS)])
        if lead is not None and steps(lead[-1].text, [u.text.lstrip("-*0123456789. ") for u in items]):
            yield Candidate("single_hop", (*lead, *items), tuple(range(len(lead), len(lead) + len(items))),
                            style="how_to")
        i = max(j, i + 1)


def _table_rows(doc: Document, blocks: list[Block]) -> Iterator[Candidate]:
    """Each body row of a table (``a | b`` lines of the clean text) with the table's header row."""
    for b in blocks:
        if b.kind != "table":
            continue
        text, start = doc.text[b.start:b.end], b.start
        lines = []
        for line in text.split("\n"):
            if line.strip() and " | " in line:
                lines.append(Unit(doc.id, start, start + len(line), line, -1))
            start += len(line) + 1
        for row in lines[1:]:
            yield Candidate("single_hop", (lines[0], row), (1,), style="option")


def style_candidates(corpus: Corpus, units: dict[str, list[Unit]], style: str, seed: int) -> Iterator[Candidate]:
    """Every ``style`` candidate of the documents that have units, in a seeded order, documents round-robin."""
    rng = random.Random(f"{seed}:style:{style}")
    order = sorted(units)
    rng.shuffle(order)
    per_doc = {}
    for doc_id in order:
        found = section_candidates(corpus.get(doc_id), units[doc_id], style)
        rng.shuffle(found)
        per_doc[doc_id] = found
    return (c for _, c in round_robin(per_doc, order))


def interleave(streams: Sequence[Iterator[Candidate]]) -> Iterator[Candidate]:
    """One candidate of each stream in turn, a stream that runs out left behind."""
    live = list(streams)
    while live:
        for stream in list(live):
            cand = next(stream, None)
            if cand is None:
                live.remove(stream)
            else:
                yield cand


def cue_counts(corpus: Corpus, units: dict[str, list[Unit]], styles: Sequence[str]) -> dict[str, int]:
    """How many candidates the sampled documents hold for each of ``styles``."""
    return {s: sum(len(section_candidates(corpus.get(d), us, s)) for d, us in units.items()) for s in styles}
