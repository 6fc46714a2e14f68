"""The evidence-support gate (gen.supported) with a scripted judge, and what ``styles: auto`` and ``kinds_on_docs``
make of a run on documentation (gen.docs_defaults)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragsweep.gen.docs_defaults import for_corpus, is_documentation
from ragsweep.gen.documents import Span, read_folder
from ragsweep.gen.drafts import Passed
from ragsweep.gen.generate import support_gate
from ragsweep.gen.supported import headed_evidence, in_scope
from ragsweep.gen.testset import TestSample
from ragsweep.metrics import InputError
from ragsweep.metrics.llm import ScriptedLLM

PAGE = """# Quayglob

Quayglob matches file paths against patterns.

## Flags

### TILDE

When this flag is set, a tilde at the start of a pattern expands to the user's home folder.

```python
quayglob.match("~/notes", flags=quayglob.TILDE)
```
"""


def _corpus(tmp_path: Path, text: str = PAGE, name: str = "quayglob.md"):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text, encoding="utf-8")
    return read_folder(tmp_path)


def _sample(corpus, sentence: str, question: str, reference: str, style: str | None = "how_to") -> TestSample:
    doc = corpus.get("quayglob.md")
    start = doc.text.index(sentence)
    return TestSample(id="", question=question, reference=reference,
                      evidence=(Span("quayglob.md", start, start + len(sentence)),), kind="single_hop",
                      provenance={"style": style} if style else {})


SENTENCE = "When this flag is set, a tilde at the start of a pattern expands to the user's home folder."


def _passed(sample: TestSample, corpus) -> Passed:
    return Passed(sample, {"question": sample.question}, (SENTENCE,), headed=headed_evidence(sample, corpus))


def _judge(verdict: str) -> ScriptedLLM:
    """A judge that answers every support verdict with ``verdict`` (no log-probabilities: the verdict stands as
    1 or 0) and every slot check with its 'not stated' option's letter, the last one."""
    def reply(messages, schema):
        last = messages[-1]["content"]
        if "options" in last and '"options": null' not in last:
            letters = [line.split(":")[0].strip()[-1] for line in last.split("\\n") if ":" in line and
                       line.strip()[:1].isalpha() and len(line.split(":")[0].strip()) <= 3]
            return {"answer": letters[-1] if letters else "A"}
        return {"answer": verdict}
    return ScriptedLLM(reply)


def test_the_judge_reads_the_evidence_under_its_titles(tmp_path):
    corpus = _corpus(tmp_path)
    sample = _sample(corpus, SENTENCE, "How do I expand a tilde in a quayglob pattern?", "set the tilde flag")
    headed = headed_evidence(sample, corpus)
    assert headed == (f"Quayglob > Flags > TILDE: {SENTENCE}",)
    judge = _judge("yes")
    got = asyncio.run(support_gate(_passed(sample, corpus), judge, 0.5))
    assert got.reason is None and got.calls >= 1 and got.sample.provenance["evidence_support"] == 1.0
    shown = judge.calls[0].messages[-1]["content"]
    assert "Flags > TILDE" in shown and "How do I expand a tilde" in shown and "set the tilde flag" in shown


def test_a_reference_the_judge_does_not_find_in_its_evidence_is_rejected(tmp_path):
    corpus = _corpus(tmp_path)
    sample = _sample(corpus, SENTENCE, "Why does quayglob expand a tilde at the start of a pattern?",
                     "because home folders are long to type", style="troubleshooting")
    got = asyncio.run(support_gate(_passed(sample, corpus), _judge("no"), 0.5))
    assert got.reason == "judge_unsupported" and got.example["support"]["p"] == 0.0
    assert got.calls == 1  # a rejected verdict asks no slot


def test_the_gate_is_off_without_a_threshold_and_skips_code_answers_and_pages_without_layout(tmp_path):
    corpus = _corpus(tmp_path)
    sample = _sample(corpus, SENTENCE, "Why does quayglob expand a tilde?", "because", style="troubleshooting")
    judge = _judge("no")
    assert asyncio.run(support_gate(_passed(sample, corpus), judge, None)).reason is None
    assert asyncio.run(support_gate(_passed(sample, corpus), None, 0.5)).reason is None
    assert not judge.calls
    code = _sample(corpus, SENTENCE, "How do I match a tilde path in quayglob?", "x", style="code_answer")
    assert not in_scope(code, corpus, "docs") and in_scope(sample, corpus, "docs")
    plain = _corpus(tmp_path / "txt", "Quayglob matches file paths against patterns of many kinds.", "quayglob.txt")
    fact = TestSample(id="", question="q", reference="r", evidence=(Span("quayglob.txt", 0, 20),), kind="single_hop")
    assert not in_scope(fact, plain, "docs") and in_scope(fact, plain, "all")
    # out of scope: no headed evidence, so the gate asks nothing
    assert asyncio.run(support_gate(Passed(fact, {}, ("x",)), judge, 0.5)).reason is None and not judge.calls


def _cfg(**settings):
    from ragsweep.harness.api import gen_settings_config

    return gen_settings_config(settings=settings or None)


def test_a_docs_folder_gets_the_documentation_styles_and_single_hop_only_by_default(tmp_path):
    docs = _corpus(tmp_path)
    assert is_documentation(docs)
    cfg, decided = for_corpus(_cfg(), docs, llm_writer=True)
    assert list(cfg.styles) == ["docs"] and dict(cfg.kinds) == {"single_hop": 1.0}
    assert decided == {"styles": ["docs"], "gates.specific": False, "kinds": {"single_hop": 1.0}}
    assert cfg.gates.specific is False  # a product's other pages hold its users' words: no specificity gate
    # kinds set by the user are kept; so are they with kinds_on_docs=as_set
    mine = {"single_hop": 0.5, "multi_hop": 0.5, "comparative": 0.0, "conditional": 0.0, "unanswerable": 0.0,
            "follow_up": 0.0}
    assert dict(for_corpus(_cfg(kinds=mine), docs, True)[0].kinds) == mine
    kept, decided = for_corpus(_cfg(kinds_on_docs="as_set"), docs, True)
    assert dict(kept.kinds)["multi_hop"] > 0 and decided == {"styles": ["docs"], "gates.specific": False}
    # the rule writer, a folder of plain text, and styles named by the user: no docs defaults from auto
    rule = for_corpus(_cfg(), docs, llm_writer=False)[0]
    assert list(rule.styles) == [] and rule.gates.specific is True
    plain = _corpus(tmp_path / "txt", "Quayglob matches file paths against patterns of many kinds.", "a.txt")
    text = for_corpus(_cfg(), plain, True)[0]
    assert list(text.styles) == [] and text.gates.specific is True
    named, decided = for_corpus(_cfg(styles=["formal"]), docs, True)
    assert list(named.styles) == ["formal"] and dict(named.kinds)["multi_hop"] > 0 and decided == {}
    assert named.gates.specific is True
    # the rule writer asked for a docs style by name keeps the gate (the change was measured with a model writer)
    assert for_corpus(_cfg(styles=["code_answer"]), docs, llm_writer=False)[0].gates.specific is True
    # set by the user, the gate stays as set on docs too
    asked = for_corpus(_cfg(gates={"specific": True}), docs, True)
    assert asked[0].gates.specific is True and "gates.specific" not in asked[1]


def test_bad_docs_settings_are_input_errors(tmp_path):
    docs = _corpus(tmp_path)
    with pytest.raises(InputError, match="kinds_on_docs"):
        for_corpus(_cfg(kinds_on_docs="some"), docs, True)
    with pytest.raises(InputError, match="styles"):
        for_corpus(_cfg(styles="docs"), docs, True)
    from ragsweep.gen.app import gen_config

    with pytest.raises(InputError, match="gates.specific must be true, false or auto"):
        gen_config(_cfg(gates={"specific": "maybe"}), 1)
