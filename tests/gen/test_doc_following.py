"""What follows a candidate's text on a docs page is shown to the writer (gen.structure.following, with_following),
and a question of one table row names its row (gen.structure.unnamed_row): the answer of an announcing sentence
is in the next one, and a row is not its table."""

from __future__ import annotations

import json
from dataclasses import replace

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import read_folder
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.structure import following, unnamed_row, with_following
from ragsweep.gen.styles import block_sentences, section_candidates
from ragsweep.gen.units import Unit, document_units
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Loading with Harbourlink

Harbourlink 2.1 can combine three relationship loaders with one paging query when it reads the moorings table.
The loaders it accepts are joinedload, subqueryload and selectinload, each passed by name.

A paging query raises PageOverflowError when the page number passes the last page of the moorings table.

The client reads its settings from these places:

- the harbour.toml file beside the project
- the HARBOUR_URL environment variable

Start a session on the quay with the client object that Harbourlink returns:

```python
session = harbourlink.connect("quay")
```

## Secrets

The release workflow of Harbourlink reads two secrets from the repository settings before it publishes anything,
and it stops with a clear message when one of them is missing from the settings page of the repository.

| secret | what it is for |
| --- | --- |
| GALAXY_TOKEN | publishes the collection to the galaxy server |
| QUAY_PASSWORD | pushes the built image to the quay registry |
"""


def _doc(tmp_path, pages=None):
    folder = tmp_path / "d"
    for name, text in (pages or {"harbour.md": PAGE}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return read_folder(folder)


def _sentence(doc, opening: str) -> Unit:
    return next(u for u in block_sentences(doc) if u.text.startswith(opening))


def test_what_follows_is_the_next_sentence_the_list_or_the_block_and_never_past_a_heading(tmp_path):
    doc = _doc(tmp_path).get("harbour.md")
    nxt = following(doc, _sentence(doc, "Harbourlink 2.1"))
    assert [u.text for u in nxt] == ["The loaders it accepts are joinedload, subqueryload and selectinload, each "
                                     "passed by name."]
    # the paragraph ends: the next block, a paragraph shown whole
    assert [u.text for u in following(doc, _sentence(doc, "The loaders it accepts"))] == \
        [doc.text[doc.text.index("A paging query"):doc.text.index("moorings table.\n\nThe client") + 15]]
    items = following(doc, _sentence(doc, "The client reads"))  # a list: every item of it
    assert [u.text.lstrip("- ") for u in items] == ["the harbour.toml file beside the project",
                                                    "the HARBOUR_URL environment variable"]
    block = following(doc, _sentence(doc, "Start a session"))
    assert len(block) == 1 and 'harbourlink.connect("quay")' in block[0].text
    assert following(doc, Unit(doc.id, block[0].start, block[0].end, block[0].text, -1)) == ()  # a heading next
    for u in (*nxt, *items, *block):
        assert doc.text[u.start:u.end] == u.text


def test_a_table_row_has_nothing_after_it_and_a_row_question_must_name_its_row(tmp_path):
    doc = _doc(tmp_path).get("harbour.md")
    rows = [c for c in section_candidates(doc, document_units(doc), "option") if "GALAXY_TOKEN" in c.shown[-1].text]
    assert rows and rows[0].required == (1,)
    row = rows[0]
    assert following(doc, row.shown[1]) == ()  # the next row is another row's, not this one's context
    assert list(with_following(_doc(tmp_path), iter([row]))) == [row]
    assert unnamed_row(row, "What secrets are required to publish a collection with Harbourlink?")
    assert not unnamed_row(row, "What is the GALAXY_TOKEN secret for in Harbourlink?")
    assert not unnamed_row(row, "What is the galaxy token secret for?")  # its words, as a user types them
    # the key's content words, not its function words: "in the galaxy" is named by "galaxy"
    keyed = Candidate("single_hop", (row.shown[0], Unit(doc.id, 0, 0, "Tokens in the galaxy | publish", -1)), (1,),
                      style="option")
    assert not unnamed_row(keyed, "Which galaxy tokens publish a collection?")
    assert unnamed_row(keyed, "Which tokens publish a collection?")
    # a key that is a function word is asked as it is: the row of channel "a" in a table of channels
    channel = Candidate("single_hop", (row.shown[0], Unit(doc.id, 0, 0, "a | [-40, 40]", -1)), (1,), style="option")
    assert not unnamed_row(channel, "What is the range of the 'a' channel in Harbourlink?")
    assert unnamed_row(channel, "What is the range of the channel in Harbourlink?")
    plain = Candidate("single_hop", row.shown, (1,), style="fact")
    assert not unnamed_row(plain, "What secrets are required?")  # only an option row is checked


def test_with_following_appends_what_follows_not_required_and_leaves_code_answers(tmp_path):
    corpus = _doc(tmp_path)
    doc = corpus.get("harbour.md")
    announce = _sentence(doc, "Harbourlink 2.1")
    cand = Candidate("single_hop", (announce,), (0,))
    got = next(with_following(corpus, iter([cand])))
    assert got.shown[0] == announce and got.required == (0,) and got.shown[1].text.startswith("The loaders")
    code = Candidate("single_hop", (announce,), (0,), style="code_answer")
    assert next(with_following(corpus, iter([code]))) is code
    # what follows leads on in its turn: shown with its list
    paging = _sentence(doc, "A paging query")
    led = next(with_following(corpus, iter([Candidate("single_hop", (paging,), (0,))]))).shown
    assert [u.text[:22] for u in led] == ["A paging query raises ", "The client reads its s", "- the harbour.toml fil",
                                         "- the HARBOUR_URL envi"]
    # a unit already shown is not shown twice
    both = Candidate("single_hop", (announce, got.shown[1]), (0,))
    assert next(with_following(corpus, iter([both]))).shown[:2] == both.shown


def _answers_from_the_last_sentence(messages, schema):
    data = json.loads(messages[-1]["content"])
    sentences = data["sentences"]
    if "question" in data:  # the round trip: the answer the evidence gives
        return {"answer": "joinedload, subqueryload and selectinload"}
    last = sentences[-1]
    if "joinedload" in last:
        return {"question": "Which relationship loaders can Harbourlink combine with a paging query?",
                "answer": "joinedload, subqueryload and selectinload", "used": [1]}
    return {"question": "What does the Harbourlink client do with the harbour settings file?",
            "answer": "it reads its settings from it", "used": [len(sentences)]}


def test_the_writer_sees_the_sentence_after_an_announcement_and_the_evidence_takes_it(tmp_path):
    """The scripted writer answers from the sentence after the announcing one and marks only the announcement
    as used (as the 1.5B did): the evidence widens to hold the answer, so the sample is accepted with both."""
    corpus = _doc(tmp_path)
    llm = ScriptedLLM(_answers_from_the_last_sentence)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=8, styles=("docs",), kinds=(("single_hop", 1.0),),
                                                        gates=GateConfig(specific=False, roundtrip=False)))
    shown = [json.loads(c.messages[-1]["content"])["sentences"] for c in llm.calls]
    assert any(len(s) == 2 and s[0].startswith("Harbourlink 2.1") and s[1].startswith("The loaders")
               for s in shown)
    loaders = [s for s in result.samples if "joinedload" in s.reference]
    assert loaders, result.report.rejected
    texts = [corpus.get(e.doc_id).text[e.start:e.end] for e in loaders[0].evidence]
    assert any(t.startswith("The loaders it accepts") for t in texts)
    assert loaders[0].provenance.get("evidence_widened") == 1


def test_a_reference_that_answers_with_the_announcement_of_a_shown_block_is_refused_or_takes_the_block(tmp_path):
    from ragsweep.gen.structure import announced_unused
    corpus = _doc(tmp_path)
    doc = corpus.get("harbour.md")
    lead = _sentence(doc, "Start a session")
    block = following(doc, lead)[0]
    cand = Candidate("single_hop", (lead, block), (0,))
    # the announcement taken for the answer, the block shown and not used
    assert announced_unused(corpus, cand, (lead,), "Start a session on the quay with the client object.",
                            "how_to")[0] == "announced"
    # the reference holds the block's words: it came from the block, which joins the evidence
    assert announced_unused(corpus, cand, (lead,), 'Call harbourlink.connect("quay").', "how_to") == ("widen", block)
    assert announced_unused(corpus, cand, (lead, block), "Start a session ...", "how_to") == ("", None)  # used
    assert announced_unused(corpus, replace(cand, shown=(lead,)), (lead,), "Start ...", "how_to") == ("", None)
    assert announced_unused(corpus, cand, (lead,), "Start a session ...", "code_answer") == ("", None)  # its block
    # a sentence that ends with a colon leads into its list whatever the style
    cue = _sentence(doc, "The client reads")
    items = following(doc, cue)
    listed = Candidate("single_hop", (cue, *items), (0,))
    assert announced_unused(corpus, listed, (cue,), "It reads its settings from these places.", None)[0] == "announced"
    assert announced_unused(corpus, listed, (cue, *items), "harbour.toml and HARBOUR_URL", None) == ("", None)
    # a fact sentence followed by a paragraph: nothing announced
    fact = _sentence(doc, "The loaders it accepts")
    after = following(doc, fact)
    plain = Candidate("single_hop", (fact, *after), (0,))
    assert announced_unused(corpus, plain, (fact,), "joinedload, subqueryload and selectinload", "fact") == ("", None)


def _answers_with_the_announcement(messages, schema):
    data = json.loads(messages[-1]["content"])
    sentences = data["sentences"]
    if "question" in data:  # the round trip
        return {"answer": "from these places"}
    lead = next((i for i, s in enumerate(sentences) if s.startswith("The client reads")), None)
    if "kind" in data and lead is not None and any("HARBOUR_URL" in s for s in sentences[lead + 1:]):
        # a plain candidate shown the lead-in and its list: answered with the lead-in, only it marked as used
        return {"question": "Where does the Harbourlink client read its settings from?",
                "answer": "The client reads its settings from these places.", "used": [lead + 1]}
    return {"question": "What is Harbourlink?", "answer": "Harbourlink", "used": [1]}


def test_a_writer_that_answers_with_the_announcement_of_what_it_was_shown_is_refused(tmp_path):
    """The scripted writer is shown a lead-in and the list after it and answers with the lead-in, marking only
    it as used (as the 1.5B did on "add the environment names to the command:"): refused as announced_only."""
    corpus = _doc(tmp_path)
    llm = ScriptedLLM(_answers_with_the_announcement)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=8, styles=("docs",), kinds=(("single_hop", 1.0),),
                                                        gates=GateConfig(specific=False, roundtrip=False)))
    assert result.report.rejected.get("announced_only", 0) >= 1, result.report.rejected
    assert not [s for s in result.samples if s.reference.startswith("The client reads its settings")]


EXAMPLES = """# Quay client settings

The debug field turns on the verbose log of the Harbourline 2.1 quay client for every berth it opens in a session.

```python
class Example:
    debug: bool = True
```

Open a quay session with the client that Harbourlink returns:

```python
session = harbourlink.connect("quay")
```

For example Harbourline keeps 14 days of logs on the Eastport quay server of the eastern harbour when the tide is low.

Harbourline keeps the logs of each berth in a folder of its own on the quay server for 30 days after it closes.
"""


def test_a_plain_fact_is_not_shown_the_code_or_example_after_its_text(tmp_path):
    """A plain question is about the product: the example class after "The debug field ..." is what one use
    chose, so it is not shown (a styled how-to still sees it); a sentence that announces a block draws no plain
    fact, and one that is mostly a "for example" clause none either (gen.structure)."""
    from ragsweep.gen.structure import structured
    corpus = _doc(tmp_path, {"quay.md": EXAMPLES})
    doc = corpus.get("quay.md")
    debug = _sentence(doc, "The debug field")
    plain = Candidate("single_hop", (debug,), (0,))
    assert next(with_following(corpus, iter([plain]))).shown == (debug,)
    how = Candidate("single_hop", (debug,), (0,), style="how_to")
    assert next(with_following(corpus, iter([how]))).shown[1].text.lstrip("`").startswith("python\nclass Example")
    lead = _sentence(doc, "Open a quay session")
    assert list(with_following(corpus, iter([Candidate("single_hop", (lead,), (0,))]))) == []
    example = _sentence(doc, "For example Harbourline")
    own = _sentence(doc, "Harbourline keeps the logs")
    kept = list(structured(corpus, iter([Candidate("single_hop", (u,), (0,)) for u in (example, own)])))
    assert [c.shown[0] for c in kept] == [own]


def _answers_from_what_it_sees(messages, schema):
    data = json.loads(messages[-1]["content"])
    if "question" in data:  # the round trip
        return {"answer": "the verbose log"}
    return {"question": "What does the debug field of the Harbourline quay client turn on?",
            "answer": "the verbose log of the quay client", "used": [1]}


def test_a_plain_writer_is_never_shown_an_example_block(tmp_path):
    """Through the generator: no plain (fact) call shows the example class after "The debug field ...", nor
    the "for example" sentence; the plain questions that stay are drawn from the product's own sentences."""
    corpus = _doc(tmp_path, {"quay.md": EXAMPLES})
    llm = ScriptedLLM(_answers_from_what_it_sees)
    generate(corpus, LLMWriter(llm), GenConfig(n=6, styles=("docs",), kinds=(("single_hop", 1.0),),
                                               gates=GateConfig(specific=False, roundtrip=False)))
    plain = [json.loads(c.messages[-1]["content"])["sentences"] for c in llm.calls
             if "kind" in json.loads(c.messages[-1]["content"])]
    assert plain, "no plain call was made"
    for sentences in plain:
        assert not any("class Example" in s or s.startswith("For example") for s in sentences), sentences
