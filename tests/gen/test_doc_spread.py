"""A question whose answer stands in more than one place of its section (gen.spread.spread_answer): one asked of
the section (both tabs, every step) matches a piece outside its evidence as well as its evidence and is refused as
spread_answer; one that names what only its evidence says matches its evidence best and passes. The embedder here is
a bag of words (cosine of word counts), so the figures follow from the page's words."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np

from ragsweep.gen.documents import read_folder
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.spread import spread_answer
from ragsweep.gen.structure import item_titles, unnamed_item
from ragsweep.gen.styles import block_sentences, section_candidates
from ragsweep.gen.units import Unit
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Storage in Quaypath

## Switching the storage backend

Quaypath switches its storage backend by the prefix of the path, without any change to the code.

For local storage, Quaypath reads a path that starts with file and writes the local disk.

For cloud storage, Quaypath reads a path that starts with s3 and writes the bucket of the s3 credentials.

## Retries

Quaypath retries a failed upload to the bucket three times before it raises an error.
"""

_WORD = re.compile(r"[a-z0-9]+")


def bag_embed(texts: list[str]) -> np.ndarray:
    """L2-normalised word counts over the words of the texts given (a stand-in for MiniLM)."""
    counts = [Counter(_WORD.findall(t.lower())) for t in texts]
    vocab = sorted(set().union(*counts))
    rows = np.array([[c[w] for w in vocab] for c in counts], dtype=float)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def _corpus(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir(parents=True)
    (folder / "quaypath.md").write_text(PAGE, encoding="utf-8")
    return read_folder(folder)


def _sentence(corpus, opening: str) -> Unit:
    return next(u for u in block_sentences(corpus.get("quaypath.md")) if u.text.startswith(opening))


def test_a_question_of_the_section_matches_another_piece_as_well_as_its_evidence(tmp_path):
    corpus = _corpus(tmp_path)
    local = (_sentence(corpus, "For local storage"),)
    whole = spread_answer(corpus, local, "How does Quaypath read a path for storage?", bag_embed)
    assert whole is not None and whole.rival >= whole.evidence - 0.05, whole
    assert whole.rival_text.startswith("For cloud storage")  # the other tab's sentence, not the other section's
    named = spread_answer(corpus, local, "Which path does Quaypath read for local storage on the local disk?",
                          bag_embed)
    assert named is not None and named.rival < named.evidence - 0.1, named


def test_evidence_with_nothing_beside_it_or_on_two_pages_is_not_checked(tmp_path):
    corpus = _corpus(tmp_path)
    retries = (_sentence(corpus, "Quaypath retries"),)  # alone in its section
    assert spread_answer(corpus, retries, "How often does Quaypath retry an upload?", bag_embed) is None
    other = Unit("elsewhere.md", 0, 5, "Other", -1)
    assert spread_answer(corpus, (*retries, other), "How often does Quaypath retry?", bag_embed) is None


def _writer(named: bool):
    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        sentences = data["sentences"]
        if "question" in data:  # the round trip
            return {"answer": "a path that starts with file"}
        at = next((i for i, s in enumerate(sentences) if s.startswith("For local storage")), None)
        if at is None:
            return {"question": "How many times does Quaypath retry a failed upload?", "answer": "three times",
                    "used": [1]}
        question = ("Which path does Quaypath read for local storage on the local disk?" if named
                    else "How does Quaypath read a path for storage?")
        return {"question": question, "answer": "a path that starts with file", "used": [at + 1]}
    return reply


def test_the_gate_refuses_a_question_of_the_section_and_keeps_one_of_its_evidence(tmp_path):
    gates = GateConfig(specific=False, roundtrip=False, spread_margin=0.05)
    cfg = GenConfig(n=4, styles=("docs",), kinds=(("single_hop", 1.0),), gates=gates)
    spread = generate(_corpus(tmp_path / "a"), LLMWriter(ScriptedLLM(_writer(named=False))), cfg, embed=bag_embed)
    refused = spread.report.examples.get("spread_answer", [])
    assert refused and refused[0]["question"] == "How does Quaypath read a path for storage?", spread.report.rejected
    assert refused[0]["spread"]["piece"].startswith("For cloud storage")
    # kept only where its evidence holds both tabs (a candidate that showed both: the reference's words are in each)
    assert all(len(s.evidence) >= 2 for s in spread.samples if s.reference == "a path that starts with file")
    named = generate(_corpus(tmp_path / "b"), LLMWriter(ScriptedLLM(_writer(named=True))), cfg, embed=bag_embed)
    assert not named.report.rejected.get("spread_answer"), named.report.examples.get("spread_answer")
    assert [s for s in named.samples if s.reference == "a path that starts with file"], named.report.rejected
    off = GenConfig(n=4, styles=("docs",), kinds=(("single_hop", 1.0),),
                    gates=GateConfig(specific=False, roundtrip=False))
    kept = generate(_corpus(tmp_path / "c"), LLMWriter(ScriptedLLM(_writer(named=False))), off, embed=bag_embed)
    assert not kept.report.rejected.get("spread_answer")


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
