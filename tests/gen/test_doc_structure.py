"""Evidence that follows a docs page's structure (gen.markdown_reader, gen.styles, gen.style_checks, gen.writer):
MyST admonitions are read; a list item is one evidence unit; a list behind a lead-in is shown whole and a
question about it takes all of it (or names its item); a warning's code is no recipe and an example's values
are no facts."""

from __future__ import annotations

import asyncio

import pytest
from ragsweep.gen.candidates import Candidate, candidates
from ragsweep.gen.documents import read_folder
from ragsweep.gen.style_checks import allowed, item_term, one_of_list, role_at, whole_list
from ragsweep.gen.structure import list_evidence, structured
from ragsweep.gen.styles import section_candidates
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter, WriteFailed
from ragsweep.metrics.llm import ScriptedLLM


def _folder(tmp_path, pages: dict[str, str]):
    folder = tmp_path / "d"
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return read_folder(folder)


def _candidates(doc, style):
    return section_candidates(doc, document_units(doc), style)


def _exact(doc, units):
    for u in units:
        assert doc.text[u.start:u.end] == u.text
        s, e = doc.layout.to_source(u.start, u.end)
        assert 0 <= s < e <= len(doc.layout.source)


# -- MyST directives --------------------------------------------------------------------------------------------

MYST = """# Moorings

Ferries tie up at numbered moorings along the quay wall of the old harbour.

::: {warning}
Nothing stops you from mooring two ferries at one ring, which tears the ring out of the wall.

For example, you could tie both ferries like this:

```python
quay.moor(ferry_a, ring=4)
quay.moor(ferry_b, ring=4)
```
:::

```{note}
:class: dropdown
A ring holds one ferry of up to forty tonnes in any weather.
```

```{literalinclude} ../examples/moor.py
:start-after: begin
```

```{doctest}
>>> quay.rings()
12
```
"""


def test_myst_admonitions_are_prose_blocks_of_their_kind(tmp_path):
    doc = _folder(tmp_path, {"moor.md": MYST}).get("moor.md")
    kinds = {b.info: doc.text[b.start:b.end] for b in doc.layout.blocks if b.kind == "admonition"}
    assert set(kinds) == {"warning", "note"}
    assert kinds["warning"].startswith("Nothing stops you") and "quay.moor(ferry_b, ring=4)" in kinds["warning"]
    assert kinds["note"] == "A ring holds one ferry of up to forty tonnes in any weather."
    # no directive marker, option line or included file's options is left in the text
    for gone in (":::", "{warning}", "{note}", ":class:", "literalinclude", ":start-after:"):
        assert gone not in doc.text
    # a doctest is code (Python), the warning's example too
    assert [b.info for b in doc.layout.of_kind("code")] == ["python", "python"]
    assert ">>> quay.rings()" in doc.text
    [include] = doc.layout.of_kind("include")
    assert include.info.startswith("literalinclude")
    # the note's sentence is prose a question can be drawn from, mapped back to its source line
    start = doc.text.index("A ring holds")
    s, e = doc.layout.to_source(start, start + 6)
    assert doc.layout.source[s:e] == "A ring"


# -- roles ------------------------------------------------------------------------------------------------------

def test_roles_come_from_the_blocks_text_sits_in(tmp_path):
    doc = _folder(tmp_path, {"moor.md": MYST}).get("moor.md")

    def at(phrase):
        return role_at(doc, doc.text.index(phrase), doc.text.index(phrase) + len(phrase))

    assert at("Ferries tie up") == "prose"
    assert at("Nothing stops you") == "warning"
    assert at("quay.moor(ferry_b") == "warning"  # a warning's code shows what not to do
    assert at("A ring holds") == "note"
    assert not allowed("warning", "code_answer") and not allowed("warning", "how_to")
    assert allowed("warning", "troubleshooting") and not allowed("example", "fact")


WARNED_CODE = """# Moorings

## Tying up

Ferries tie up at numbered moorings along the quay wall of the old harbour.

{body}
"""

_CODE = """To moor a ferry at a ring of the quay wall, call moor with its ring:

```python
quay.moor(ferry_a, ring=4)
```"""


def test_a_warnings_code_is_no_code_answer(tmp_path):
    plain = _folder(tmp_path / "a", {"p.md": WARNED_CODE.format(body=_CODE)}).get("p.md")
    assert len(_candidates(plain, "code_answer")) == 1
    for warned in ("/// warning\n\n" + _CODE + "\n\n///", "::: {danger}\n" + _CODE + "\n:::",
                   '!!! note "Bad: do not do this"\n\n' + "\n".join("    " + line for line in _CODE.split("\n"))):
        doc = _folder(tmp_path / str(len(warned)), {"p.md": WARNED_CODE.format(body=warned)}).get("p.md")
        assert doc.layout.of_kind("code"), warned
        assert _candidates(doc, "code_answer") == [], warned


def test_a_warning_gives_a_what_to_avoid_question_without_its_example(tmp_path):
    said = "Nothing stops you from mooring two ferries at one ring, which tears the ring out of the wall."
    told = "Never moor two ferries at one ring, which tears the ring out of the wall."
    doc = _folder(tmp_path / "a", {"moor.md": MYST.replace(said, told)}).get("moor.md")
    found = [c for c in _candidates(doc, "troubleshooting")]
    # its opening sentence, up to the one that leads into the example of what not to do (not shown)
    assert [[u.text for u in c.shown] for c in found] == [[told]]
    assert found[0].warning
    # a warning that tells nobody not to do anything, and gives no reason, draws nothing: what to avoid would be
    # made up ("experimental, restricted in scope") or the opposite of what it recommends
    assert _candidates(_folder(tmp_path, {"moor.md": MYST}).get("moor.md"), "troubleshooting") == []
    # the same text outside a warning is no troubleshooting cue (no error named)
    plain = _folder(tmp_path / "b", {"moor.md": MYST.replace("::: {warning}\n", "").replace(":::\n\n```{note}", "```{note}")})
    assert _candidates(plain.get("moor.md"), "troubleshooting") == []


EXAMPLE = """# Tide tables

## Reading a table

A tide table lists the high and low waters of each day for one harbour of the coast.

```text
06:12  high  4.1 m
12:30  low   0.9 m
```

The harbour office prints a table like this one for every harbour on the coast.

In this example the high water stands 3.2 metres above the low water of the afternoon.
The harbour master of Port Calder publishes the tide table of the next month 14 days ahead.
"""


def test_a_sentence_about_the_example_shown_gives_no_fact(tmp_path):
    corpus = _folder(tmp_path, {"t.md": EXAMPLE})
    doc = corpus.get("t.md")
    units = {doc.id: document_units(doc)}
    plain = list(candidates(units, "single_hop", 0))
    asked = {c.shown[c.required[0]].text[:20] for c in plain}
    kept = {c.shown[c.required[0]].text[:20] for c in structured(corpus, iter(plain))}
    assert "In this example the " in asked and "In this example the " not in kept
    assert "The harbour master o" in kept
    # the same sentence with no code before it is about the product
    corpus = _folder(tmp_path / "b", {"t.md": EXAMPLE.replace("```text\n06:12  high  4.1 m\n12:30  low   0.9 m\n```\n", "")})
    doc = corpus.get("t.md")
    plain = list(candidates({doc.id: document_units(doc)}, "single_hop", 0))
    assert any(c.shown[c.required[0]].text.startswith("In this example") for c in structured(corpus, iter(plain)))


# -- list items -------------------------------------------------------------------------------------------------

LISTS = """# Retries

## Logged fields

When logging is switched on, every retry is logged at warning level with the following extra fields:

- `retry.callable`: The name of the decorated callable.
- `retry.num`: The number of the current retry.
  So, if your callable failed once, this is set to 1.
- `retry.wait`: The time the client waits before the next attempt (the wait_max setting caps it).

## Notes

Some notes on the retry client and the way it counts its attempts over time.

- `attempts`: How many attempts the client makes before it gives up, 3 by default.
  So, if you set it to three, the client gives up after the third failure.
"""


def test_a_list_items_continuation_line_is_never_evidence_alone(tmp_path):
    corpus = _folder(tmp_path, {"r.md": LISTS})
    doc = corpus.get("r.md")
    line = next(u for u in document_units(doc) if u.text.startswith("So, if your callable"))
    shown, at, items = list_evidence(doc, line)
    # behind a lead-in: the lead-in and every item, the unit's item whole (its lead term included)
    assert shown[0].text.endswith("the following extra fields:")
    assert items == (1, 2, 3) and at == 2
    assert shown[at].text.startswith("- retry.num: The number") and shown[at].text.endswith("set to 1.")
    _exact(doc, shown)
    # an item with no lead-in into its list: the item whole, alone
    other = next(u for u in document_units(doc) if u.text.startswith("So, if you set it"))
    shown, at, items = list_evidence(doc, other)
    assert len(shown) == 1 and items == () and item_term(shown[0].text) == "attempts"
    assert shown[0].text.endswith("after the third failure.")
    # the plain stream: every candidate of a continuation line now shows its item whole
    plain = list(candidates({doc.id: document_units(doc)}, "single_hop", 0))
    assert any(c.shown[c.required[0]].text.startswith("So,") for c in plain)
    after = list(structured(corpus, iter(plain)))
    assert not any(u.text.startswith("So,") for c in after for u in c.shown)
    # a writer that questions one sentence (the rule writer's cloze) drops the continuation line instead
    one = list(structured(corpus, iter(plain), whole=False))
    first = [c for c in plain if not c.shown[c.required[0]].text.startswith("So,")]
    assert [c.key for c in one] == [c.key for c in first]


def test_one_item_of_a_list_asked_as_a_whole_is_caught():
    items = ["- retry.callable: The name of the decorated callable.",
             "- retry.num: The number of the current retry.",
             "- retry.wait: The time the client waits before the next attempt."]
    assert one_of_list("Which extra fields does the retry client log?", "retry.num", items)
    assert not one_of_list("Which extra fields does the retry client log?", "retry.callable, retry.num and retry.wait",
                           items)
    assert whole_list("retry.callable, retry.num and retry.wait", items)
    assert not one_of_list("What does the retry.num field of the retry log hold?", "the number of the current retry",
                           items)
    assert not one_of_list("At what level does the retry client log a retry?", "warning level", items)


def _list_candidate(tmp_path) -> Candidate:
    doc = _folder(tmp_path, {"r.md": LISTS}).get("r.md")
    [cand] = [c for c in _candidates(doc, "option") if c.section[-1] == "Logged fields"]
    return cand


def test_the_writer_refuses_one_item_for_a_whole_list_and_widens_the_evidence(tmp_path):
    cand = _list_candidate(tmp_path)
    assert cand.items == (1, 2, 3) and cand.required == (0,)

    def writer(question, answer, used):
        return LLMWriter(ScriptedLLM(lambda m, s: {"question": question, "answer": answer, "used": used}))

    with pytest.raises(WriteFailed, match="whole list"):
        asyncio.run(writer("Which extra fields does the Retries client log at warning level?", "retry.num",
                           [3]).write(cand, ["Retries"], None, "option"))
    whole = asyncio.run(writer("Which extra fields does the Retries client log at warning level?",
                               "retry.callable, retry.num and retry.wait", [1, 2]).write(cand, ["Retries"], None,
                                                                                         "option"))
    assert whole.evidence == cand.shown
    named = asyncio.run(writer("What does the retry.num field hold in the Retries log?",
                               "The number of the current retry", [1]).write(cand, ["Retries"], None, "option"))
    assert [u.text[:11] for u in named.evidence] == [cand.shown[0].text[:11], "- retry.num"]


def test_a_myst_code_block_s_options_are_not_its_code(tmp_path):
    page = """# Quay

To ring the bell of a quay, call ring:

```{code-block} python
:caption: bell.py
:emphasize-lines: 2

import quay
quay.ring(bell=3)
```
"""
    doc = _folder(tmp_path, {"bell.md": page}).get("bell.md")
    [code] = doc.layout.of_kind("code")
    text = doc.text[code.start:code.end]
    assert code.info == "python" and ":caption:" not in doc.text and ":emphasize-lines:" not in doc.text
    assert "import quay\nquay.ring(bell=3)" in text
    start = doc.text.index("import quay")  # the code still maps to its own source line
    s, e = doc.layout.to_source(start, start + len("import quay"))
    assert doc.layout.source[s:e] == "import quay"
