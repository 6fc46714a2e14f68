"""A paragraph is one sentence group (gen.structure.cut_antecedent): evidence whose "such <noun>" or "these <noun>"
refers back to a sentence of its own paragraph that it leaves out was cut from its group, and the sample is refused
as antecedent_outside; a phrase that refers across paragraphs, or whose noun the evidence names before it, passes."""

from __future__ import annotations

import json

from ragsweep.gen.documents import read_folder
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.structure import cut_antecedent
from ragsweep.gen.styles import block_sentences
from ragsweep.gen.units import Unit
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Enrichment in Harbourlink

While berth enrichment is the approach most crews apply in Harbourlink 2.1, crane enrichment asks which cranes serve
a berth and for how long. The Quayscan tool performs such enrichment tests and ships with Harbourlink 2.1.

## Parts

Every kind of part has its own class in the Harbourlink 2.1 parser. Every one of these classes has a property
named kind, of the type PartKind.

## Drift

Harbourlink 2.1 reads a quay option named drift from the harbour.toml file.

When this option is set, the quay client retries a dropped berth connection three times before it gives up.

```python
# this option is read once per session
drift = True
```
"""


def _corpus(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir(parents=True)
    (folder / "harbour.md").write_text(PAGE, encoding="utf-8")
    return read_folder(folder)


def _sentence(corpus, opening: str) -> Unit:
    doc = corpus.get("harbour.md")
    return next(u for u in block_sentences(doc) if u.text.startswith(opening))


def test_a_demonstrative_whose_sentence_of_the_paragraph_is_left_out_is_found(tmp_path):
    corpus = _corpus(tmp_path)
    such, before = _sentence(corpus, "The Quayscan tool"), _sentence(corpus, "While berth enrichment")
    phrase, antecedent = cut_antecedent(corpus, (such,))
    assert phrase == "such enrichment" and antecedent.startswith("While berth enrichment")
    assert cut_antecedent(corpus, (before, such)) is None  # the group whole
    these = _sentence(corpus, "Every one of these classes")
    assert cut_antecedent(corpus, (these,))[1].startswith("Every kind of part has its own class")


def test_a_phrase_across_paragraphs_or_in_code_is_not_checked(tmp_path):
    corpus = _corpus(tmp_path)
    # "this option" names the option of the paragraph before: a section's subject, which its heading names
    assert cut_antecedent(corpus, (_sentence(corpus, "When this option is set"),)) is None
    doc = corpus.get("harbour.md")
    start = doc.text.index("```python")
    end = doc.text.index("```", start + 3) + 3
    assert cut_antecedent(corpus, (Unit(doc.id, start, end, doc.text[start:end], -1),)) is None


def _writer(whole: bool):
    def reply(messages, schema):
        data = json.loads(messages[-1]["content"])
        sentences = data["sentences"]
        if "question" in data:  # the round trip
            return {"answer": "Quayscan"}
        at = next((i for i, s in enumerate(sentences) if s.startswith("The Quayscan tool")), None)
        if at is None or (whole and at == 0):  # the group is not shown whole: nothing asked of it
            return {"question": "What is Harbourlink?", "answer": "Harbourlink", "used": [1]}
        used = [at, at + 1] if whole else [at + 1]
        return {"question": "Which tool runs berth enrichment tests in Harbourlink 2.1?", "answer": "Quayscan",
                "used": used}
    return reply


def test_a_reference_that_resolves_such_without_its_sentence_is_refused(tmp_path):
    """The scripted writer reads "such enrichment tests" as the berth enrichment of the sentence before (the page
    sets crane enrichment against it) and marks only the sentence with "such": refused as antecedent_outside.
    Marking the sentence group whole, the same question passes the gate."""
    cfg = GenConfig(n=6, styles=("docs",), kinds=(("single_hop", 1.0),),
                    gates=GateConfig(specific=False, roundtrip=False))
    corpus = _corpus(tmp_path)
    cut = generate(corpus, LLMWriter(ScriptedLLM(_writer(whole=False))), cfg)
    assert cut.report.rejected.get("antecedent_outside", 0) >= 1, cut.report.rejected
    group = corpus.get("harbour.md").text.index("While berth enrichment")
    # a sample kept is one whose candidate asked the sentence before, which its evidence therefore holds
    assert all(any(e.start == group for e in s.evidence) for s in cut.samples if s.reference == "Quayscan")
    whole = generate(_corpus(tmp_path / "w"), LLMWriter(ScriptedLLM(_writer(whole=True))), cfg)
    refused = [e["question"] for e in whole.report.examples.get("antecedent_outside", [])]
    assert not [q for q in refused if "Quayscan" in q or "enrichment" in q], refused
    assert [s for s in whole.samples if s.reference == "Quayscan"], whole.report.rejected
