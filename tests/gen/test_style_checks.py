"""The checks made before a documentation style's question is written (gen.style_checks): a candidate is drawn
only where a question of its style can be answered from it."""

from __future__ import annotations

import asyncio

import pytest

from ragsweep.gen.documents import read_folder
from ragsweep.gen.style_checks import commands, explained_error, presents_code, steps
from ragsweep.gen.styles import section_candidates
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter, WriteFailed
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Quayside

Quayside plans the departures of a small ferry company from one configuration file on the quay.

## Berth conflicts

Each departure of the ferry company needs a free berth at the quay, booked a day before it sails.
If two departures claim the same berth, quay plan stops with a BerthConflictError naming both of them.

## Errors in general

Quayside can report an error now and then, and a departure may fail for many reasons on a busy day.
The log keeps every error with the time it happened, so the harbour master can read it later.

## Install Quayside

Add the command line tool to your project with pip:

```console
$ pip install quayside
Successfully installed quayside-1.0
```

## The plan file

When you run quay plan, you will see a response like this:

```json
{"departures": 3, "berths": 2}
```

## Unsafe passwords

For example, do not compare the passwords like this:

```python
if password == stored:
    allow()
```

## Scheduling departures

To run a departure every day, you add a schedule to the route in the configuration file:

- Open the harbour.toml file of the route.
- Add a schedule table with daily set to true.

## Words

Other words used for a departure by the people of the ferry company in the harbour are:

- sailing
- crossing
"""

INDEX = """# Guides

These guides show how to plan departures with Quayside, one task per page, for every kind of route.

- [Plan a daily route](daily.md)
- [Plan a night route](night.md)
- [Handle a BerthConflictError if two routes clash](clash.md)
"""


@pytest.fixture()
def docs(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "quay.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "d" / "index.md").write_text(INDEX, encoding="utf-8")
    return read_folder(tmp_path / "d")


def _sections(doc, style):
    return {c.section[-1] for c in section_candidates(doc, document_units(doc), style)}


def test_troubleshooting_needs_an_error_named_with_its_cause(docs):
    assert _sections(docs.get("quay.md"), "troubleshooting") == {"Berth conflicts"}  # not "Errors in general"


def test_a_code_answer_needs_a_lead_in_that_presents_the_block_as_what_to_do(docs):
    doc = docs.get("quay.md")
    found = section_candidates(doc, document_units(doc), "code_answer")
    assert {c.section[-1] for c in found} == {"Install Quayside"}  # not the response, not the anti-example


def test_steps_are_instructions_not_any_list(docs):
    assert _sections(docs.get("quay.md"), "how_to") == {"Scheduling departures"}  # not "Words"


def test_a_page_of_links_draws_no_candidate(docs):
    doc = docs.get("index.md")
    assert all(not section_candidates(doc, document_units(doc), s)
               for s in ("how_to", "troubleshooting", "option", "code_answer"))


def test_cause_or_fix_in_the_next_sentence_counts():
    said = ["The server answers with a 422 error.", "This happens when the body is not valid JSON."]
    assert explained_error(said, 0) == 1
    assert explained_error(["The server can answer with a 422 error.", "Read on."], 0) is None
    assert explained_error(["The server can fail at times."], 0) is None  # no error named


def test_lead_ins():
    assert presents_code("You can install the tool with pip:", "console")
    assert not presents_code("You can install the tool with pip", "console")  # leads into nothing
    assert not presents_code("The output of the command looks like this:", "console")
    assert not presents_code("You can see the JSON response it sends:", "json")
    assert not presents_code("A single dot, like in this import:", "python")
    assert steps("To deploy the service, you:", ["Build the image.", "Push it to the registry."])
    assert not steps("One of:", ["GET", "POST"])  # a lead-in that says nothing of a task
    assert not steps("Other names are:", ["resources", "providers"])


def test_commands_drop_prompts_and_output():
    assert commands("$ pip install x\nSuccessfully installed x\n$ x --help\nUsage: x", "console") == \
        "pip install x\nx --help"
    assert commands(">>> a = 1\n>>> a + 1\n2", "python") == "a = 1\na + 1"
    assert commands("# build it\nmake all", "bash") == "# build it\nmake all"  # a script, no prompts
    assert commands("INFO: started", "console") == ""  # a console block of output only
    assert commands("def f():\n    return 1", "python") == "def f():\n    return 1"


def test_a_styled_answer_that_restates_its_question_is_refused(docs):
    doc = docs.get("quay.md")
    cand = section_candidates(doc, document_units(doc), "troubleshooting")[0]
    llm = ScriptedLLM(lambda m, s: {"question": "Why does quay plan stop with a BerthConflictError?",
                                    "answer": "Quay plan stop with a BerthConflictError", "used": [2]})
    with pytest.raises(WriteFailed, match="restates"):
        asyncio.run(LLMWriter(llm).write(cand, ["Quayside"] * len(cand.shown), None, "troubleshooting"))
    fine = ScriptedLLM(lambda m, s: {"question": "Why does quay plan stop with a BerthConflictError?",
                                     "answer": "Two departures claim the same berth", "used": [2]})
    assert asyncio.run(LLMWriter(fine).write(cand, ["Quayside"] * len(cand.shown), None, "troubleshooting")).reference


def test_a_how_sentence_names_its_means(tmp_path):
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "p.md").write_text(
        "# Quayside\n\n## Routes\n\nA route of the ferry company joins two quays and is written in one file.\n"
        "You can put the routes of a large company in many files.\n\n## Berths\n\nA berth of the ferry company "
        "is booked for one departure at a time and freed after it.\nYou can free a berth early using the "
        "release_berth function.\n", encoding="utf-8")
    doc = read_folder(tmp_path / "h").get("p.md")
    assert _sections(doc, "how_to") == {"Berths"}
