"""A tab (card) of a row is titled (gen.structure.item_titles): its title joins the section path the writer is
shown, and a question of one tab that names none of its title words asks what the row answers whole (or what the
other tab says) and is refused as unnamed_item (gen.structure.unnamed_item). Read from where the blocks stand: a
lone titled note is no row's item."""

from __future__ import annotations

import json

from ragsweep.gen.documents import read_folder
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.structure import item_titles, unnamed_item
from ragsweep.gen.styles import block_sentences, section_candidates
from ragsweep.gen.units import Unit
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

TABS = """# Storage in Quaypath

## Switching the backend

Quaypath picks its storage backend from the prefix of the path.

=== "Local"

    Quaypath writes a path that starts with file to the local disk of the machine.

=== "Production (S3)"

    Quaypath writes a path that starts with s3 to the bucket named in the credentials.

!!! note "Credentials"

    Quaypath reads the credentials from the environment of the process.
"""

MYST_TABS = """# Installing Quaypath

````{tab-set}
```{tab-item} pip
Quaypath installs from the package index with the pip install quaypath command.
```
```{tab-item} conda
Quaypath installs from the conda-forge channel with the conda install quaypath command.
```
````
"""


def _page(tmp_path, text: str, name: str):
    folder = tmp_path / name
    folder.mkdir(parents=True)
    (folder / "page.md").write_text(text, encoding="utf-8")
    corpus = read_folder(folder)
    return corpus, corpus.get("page.md")


def _at(doc, opening: str) -> tuple[Unit, ...]:
    start = doc.text.index(opening)
    end = doc.text.index("\n", start)
    return (Unit(doc.id, start, end, doc.text[start:end], -1),)


def test_a_tab_of_a_row_is_titled_and_a_question_of_it_must_name_it(tmp_path):
    corpus, doc = _page(tmp_path, TABS, "tabs")
    s3 = _at(doc, "Quaypath writes a path that starts with s3")
    assert item_titles(doc, s3[0].start, s3[0].end) == ("Production (S3)",)
    assert unnamed_item(corpus, s3, "How does Quaypath pick its storage backend?") == "Production (S3)"
    assert unnamed_item(corpus, s3, "Where does Quaypath write an S3 path?") is None
    assert unnamed_item(corpus, s3, "Where does Quaypath write a path in production?") is None
    # a lone titled note is no row's item: nothing to name
    creds = _at(doc, "Quaypath reads the credentials")
    assert item_titles(doc, creds[0].start, creds[0].end) == ()
    assert unnamed_item(corpus, creds, "Where does Quaypath read its settings from?") is None
    # evidence over both tabs is the row's, not one item's
    both = (*_at(doc, "Quaypath writes a path that starts with file"), *s3)
    assert unnamed_item(corpus, both, "How does Quaypath pick its storage backend?") is None


NESTED = """# Storage in Quaypath

=== "Local"

    Quaypath writes a path that starts with file to the local disk of the machine.

    !!! warning "Permissions"

        Quaypath needs write access to the folder that the local path names.

=== "Production (S3)"

    Quaypath writes a path that starts with s3 to the bucket named in the credentials.
"""


def test_a_box_nested_in_a_tab_does_not_hide_the_row(tmp_path):
    corpus, doc = _page(tmp_path, NESTED, "nested")
    s3 = _at(doc, "Quaypath writes a path that starts with s3")
    assert item_titles(doc, s3[0].start, s3[0].end) == ("Production (S3)",)
    access = _at(doc, "Quaypath needs write access")
    assert item_titles(doc, access[0].start, access[0].end) == ("Local",)  # the lone warning is no item
    assert unnamed_item(corpus, access, "What access does Quaypath need to the folder?") == "Local"


def test_myst_tab_items_are_titled_too(tmp_path):
    corpus, doc = _page(tmp_path, MYST_TABS, "myst")
    conda = _at(doc, "Quaypath installs from the conda-forge")
    assert item_titles(doc, conda[0].start, conda[0].end) == ("conda",)
    assert unnamed_item(corpus, conda, "How do I install Quaypath?") == "conda"
    assert unnamed_item(corpus, conda, "How do I install Quaypath with conda?") is None


HOW_TABS = """# Storage in Quaypath

## Switching the backend

Quaypath picks its storage backend from the prefix of the path, and the rest of the code stays the same.

=== "Local"

    To write to the local disk of the machine, you can start the path with the file prefix in Quaypath.

=== "Production (S3)"

    To write to the bucket named in the credentials, you can start the path with the s3 prefix in Quaypath.
"""


def test_a_tab_title_reaches_the_writer_as_a_heading_of_its_text(tmp_path):
    corpus, doc = _page(tmp_path, HOW_TABS, "head")
    cands = section_candidates(doc, block_sentences(doc), "how_to")
    s3 = doc.text.index("To write to the bucket")
    inside = [c for c in cands if all(u.start >= s3 for u in c.shown)]
    assert inside and all(c.section[-1] == "Production (S3)" for c in inside), [c.section for c in cands]
    local = [c for c in cands if all(u.end <= s3 for u in c.shown)]
    assert local and all(c.section[-1] == "Local" for c in local), [c.section for c in cands]


def _tab_writer(named: bool):
    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        sentences = data["sentences"]
        if "question" in data:  # the round trip
            return {"answer": "the s3 prefix"}
        at = next((i for i, s in enumerate(sentences) if s.startswith("To write to the bucket")), None)
        if at is None:
            return {"question": "What does Quaypath pick its storage backend from?", "answer": "the prefix",
                    "used": [1]}
        question = ("How do I write to a bucket in production with Quaypath?" if named
                    else "How do I switch the storage backend in Quaypath?")
        return {"question": question, "answer": "start the path with the s3 prefix", "used": [at + 1]}
    return reply


def test_the_gate_refuses_a_question_of_one_tab_that_does_not_name_it(tmp_path):
    cfg = GenConfig(n=3, styles=("docs",), kinds=(("single_hop", 1.0),),
                    gates=GateConfig(specific=False, roundtrip=False))
    unnamed = generate(_page(tmp_path, HOW_TABS, "a")[0], LLMWriter(ScriptedLLM(_tab_writer(named=False))), cfg)
    refused = unnamed.report.examples.get("unnamed_item", [])
    assert refused and refused[0]["item"] == "Production (S3)", unnamed.report.rejected
    # kept only where its evidence is more than the one tab (a candidate shown the row: evidence over both)
    assert all(len(s.evidence) >= 2 for s in unnamed.samples if "switch the storage backend" in s.question)
    named = generate(_page(tmp_path, HOW_TABS, "b")[0], LLMWriter(ScriptedLLM(_tab_writer(named=True))), cfg)
    assert not named.report.rejected.get("unnamed_item"), named.report.examples.get("unnamed_item")
    assert [s for s in named.samples if "in production" in s.question], named.report.rejected
