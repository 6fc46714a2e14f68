"""Documentation-style evidence that stands on its own (gen.styles, gen.style_checks): a cue sentence that points
back or leads on is shown with what it depends on, or not drawn; the product is named; a fix is an instruction;
an option cue is one sentence; "what causes" sees every sentence that names the error."""

from __future__ import annotations

import asyncio

import pytest
from ragsweep.gen.documents import read_folder
from ragsweep.gen.style_checks import gives_fix, leads_on, points_back
from ragsweep.gen.styles import document_name, section_candidates
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter, WriteFailed, names_its_place
from ragsweep.metrics.llm import ScriptedLLM


def _page(tmp_path, text: str, name: str = "p.md"):
    folder = tmp_path / "d"
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return read_folder(folder).get(name)


def _candidates(doc, style):
    return section_candidates(doc, document_units(doc), style)


def _exact(doc, cand):
    """Every shown unit is its own clean-text span and maps back into the source file."""
    for u in cand.shown:
        assert doc.text[u.start:u.end] == u.text
        s, e = doc.layout.to_source(u.start, u.end)
        assert 0 <= s < e <= len(doc.layout.source)


LEADS = """# Quayside

## Signing in

You can sign in to the quay office by using one of the following:

- a harbour card issued by the harbour master
- a one-time code sent to the skipper's phone

## Tides

The tide table is read every morning by the quay staff before the first departure.
You can shift a departure to the next tide by using the tide_shift option, as shown below.
"""


def test_a_sentence_that_leads_into_a_list_is_shown_with_the_list(tmp_path):
    doc = _page(tmp_path, LEADS)
    found = [c for c in _candidates(doc, "how_to") if c.section[-1] == "Signing in"]
    assert len(found) == 1
    shown = [u.text for u in found[0].shown]
    assert shown[0].endswith("one of the following:")
    assert [t.lstrip("- ") for t in shown[1:]] == ["a harbour card issued by the harbour master",
                                                  "a one-time code sent to the skipper's phone"]
    assert found[0].required == (0, 1, 2)  # the list is evidence, not context
    _exact(doc, found[0])


def test_a_sentence_that_leads_into_nothing_is_not_drawn(tmp_path):
    doc = _page(tmp_path, LEADS)  # "as shown below" ends its section: nothing below to show
    assert not any(c.section[-1] == "Tides" for s in ("how_to", "option") for c in _candidates(doc, s))
    # the same sentence with what it leads into after it is drawn with it
    doc = _page(tmp_path, LEADS + "\n```toml\ntide_shift = 1\n```\n")
    found = [c for c in _candidates(doc, "option") if c.section[-1] == "Tides"]
    assert len(found) == 1 and found[0].shown[-1].text.startswith("```toml")
    _exact(doc, found[0])


TROUBLE = """# Quayside

## Planning

Quay plan books a berth for every departure of the day from the route files.
It raises a BerthConflictError if two departures of the day claim the same berth.
Quay plan also reads the tide table of the harbour before it books any berth.
It raises a BerthConflictError if a berth is dry at low tide when a departure is due.

## Retries

Quayside retries a booking that the harbour office refused with a 503 error.
The client waits a few seconds between attempts to avoid overwhelming the harbour office.

## Locks

It raises a LockTimeoutError when another skipper holds the lock of the quay for too long.
"""


def test_an_error_sentence_that_points_back_is_shown_with_the_sentence_it_points_to(tmp_path):
    doc = _page(tmp_path, TROUBLE)
    found = [c for c in _candidates(doc, "troubleshooting") if c.section[-1] == "Planning"]
    assert found
    for c in found:
        texts = [u.text for u in c.shown]
        assert texts[0].startswith("Quay plan books")  # what "It" is
        assert c.required == tuple(range(len(c.shown)))
        _exact(doc, c)
    # "It raises ..." opening its section points to nothing shown: not drawn
    assert not any(c.section[-1] == "Locks" for c in _candidates(doc, "troubleshooting"))


def test_what_causes_an_error_sees_every_sentence_of_the_section_that_names_it(tmp_path):
    doc = _page(tmp_path, TROUBLE)
    found = [c for c in _candidates(doc, "troubleshooting") if c.section[-1] == "Planning"]
    causes = [u.text for u in found[0].shown if "BerthConflictError" in u.text]
    assert len(causes) == 2  # both causes, whichever sentence drew the candidate
    assert len(found) == 1  # one candidate, not one per cause


def test_a_purpose_clause_is_no_fix(tmp_path):
    assert not gives_fix("The client waits a few seconds between attempts to avoid overwhelming the office.")
    assert gives_fix("To avoid it, pass a shorter timeout to the client.")
    assert gives_fix("Make sure the route file exists before you run quay plan.")
    assert gives_fix("You need to release the lock first.")
    assert not gives_fix("Read on.")
    doc = _page(tmp_path, TROUBLE)  # "Retries": a 503 error with no cause and a purpose clause after it
    assert not any(c.section[-1] == "Retries" for c in _candidates(doc, "troubleshooting"))


def test_pointing_back_and_leading_on():
    assert points_back("This includes the 429 and 503 responses.")
    assert points_back("These errors are retried.")
    assert not points_back("It is easy to add a route.")  # an empty "it"
    assert not points_back("Items are booked in order.")
    assert leads_on("Use one of the following:")
    assert leads_on("The options are listed below.")
    assert not leads_on("Values below 10 are ignored by the planner.")


OPTION = """# Quayside

## Waiting

Some ferries of the company leave from the north quay and others from the south one.
The grace_minutes setting says how long a departure waits for late passengers.
"""


def test_an_option_cue_is_one_sentence_without_an_unrelated_neighbour(tmp_path):
    doc = _page(tmp_path, OPTION)
    (cand,) = _candidates(doc, "option")
    alone = "The grace_minutes setting says how long a departure waits for late passengers."
    assert [u.text for u in cand.shown] == [alone]


NAMELESS = """## Usage

The harbour card of a skipper opens the quay gate at any hour of the day or night.
You can renew a harbour card by using the renew_card command before it expires.
"""


def test_the_document_name_leads_the_section_titles(tmp_path):
    doc = _page(tmp_path, NAMELESS, "quaykeeper/README.md")  # no title, no H1: the folder names it
    assert document_name(doc) == "quaykeeper"
    (cand,) = _candidates(doc, "how_to")
    assert cand.section == ("quaykeeper", "Usage")
    titled = _page(tmp_path, "---\ntitle: Quay Keeper\n---\n" + NAMELESS, "x.md")
    assert document_name(titled) == "Quay Keeper"
    assert document_name(_page(tmp_path, "# Quayside\n\n" + NAMELESS, "y.md")) == "Quayside"


def test_a_question_that_names_neither_product_nor_section_is_refused_before_the_round_trip(tmp_path):
    assert not names_its_place("How do I renew a card before it expires?", "quaykeeper > Usage")
    assert names_its_place("How do I renew a quaykeeper card?", "quaykeeper > Usage")
    doc = _page(tmp_path, NAMELESS, "quaykeeper/README.md")
    (cand,) = _candidates(doc, "how_to")
    vague = ScriptedLLM(lambda m, s: {"question": "How do I renew a card before it expires?",
                                      "answer": "Run the renew_card command", "used": [1]})
    with pytest.raises(WriteFailed, match="names neither"):
        asyncio.run(LLMWriter(vague).write(cand, ["quaykeeper"], None, "how_to"))
    assert len(vague.calls) == 1  # the write call only: refused before any round trip
    named = ScriptedLLM(lambda m, s: {"question": "How do I renew a quaykeeper harbour card?",
                                      "answer": "Run the renew_card command", "used": [1]})
    draft = asyncio.run(LLMWriter(named).write(cand, ["quaykeeper"], None, "how_to"))
    assert draft.evidence == cand.shown
    assert '"section": "quaykeeper > Usage"' in named.calls[0].messages[-1]["content"]


LISTED = """# Quayside

## Settings

The planner of the ferry company reads these settings from the route file:

- The grace_minutes setting says how long a departure waits for late passengers.
- The berth_hold setting says how long a berth stays booked after a departure.

## Loose items

The quay has a long history and many skippers and passengers over the years.

- The grace_minutes option of the old planner was never read by anyone at all.
"""


def test_a_list_item_cue_is_shown_with_the_lead_in_and_the_whole_list(tmp_path):
    doc = _page(tmp_path, LISTED)
    found = [c for c in _candidates(doc, "option") if c.section[-1] == "Settings"]
    # both items are cues; the list shown whole is one candidate, the lead-in required, the items marked
    assert len(found) == 1
    [c] = found
    assert c.shown[0].text.endswith("from the route file:") and c.required == (0,) and c.items == (1, 2)
    assert [u.text.split()[2] for u in c.shown[1:]] == ["grace_minutes", "berth_hold"]
    _exact(doc, c)
    # an item whose list has no lead-in into it draws nothing
    assert not any(c.section[-1] == "Loose items" for c in _candidates(doc, "option"))
