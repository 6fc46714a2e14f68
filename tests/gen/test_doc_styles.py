"""Documentation styles (how_to, troubleshooting, option, code_answer): chosen by what a section holds, written
by both writers, counted in the report; a code answer's evidence is its code block."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

import ragsweep
from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import read_folder
from ragsweep.gen.generate import GenConfig, generate, variations
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.rules import RuleWriter
from ragsweep.gen.style_prompts import STYLE_PROMPTS
from ragsweep.gen.styles import DOC_STYLES, code_body, code_reference, requested, section_candidates
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter, WriteFailed
from ragsweep.metrics.llm import ScriptedLLM

FASTAPI = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs-fastapi"
MARKUP = re.compile(r"<[a-zA-Z/][^>]*>|\*\*|(?<!\w)\*\w|`|\]\(|\[\w|\{\*|\*\}|///|\{ ?#")

PAGE = """# Harbourline

Harbourline plans the departures of a small ferry company from one configuration file.

## Install Harbourline

You can install the command line tool with pip:

```console
$ pip install harbourline
```

## Scheduling departures

To run a departure every day, add a schedule to the route:

- Open the harbour.toml file of the route.
- Add a schedule table with daily set to true.
- Give the departure time as a string such as 07:30.

## Berth conflicts

Each departure of the ferry company needs a free berth at the quay.
If two departures claim the same berth, harbour plan stops with a BerthConflictError naming both of them.

## Waiting for passengers

Departures of the ferry company wait a little for late passengers at the quay.
The grace_minutes setting says how many minutes a departure waits, and its default is five minutes.

## History

The ferry company was founded in Port Calder in 1931 by the harbour master Ines Marrow.
"""


@pytest.fixture()
def doc(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "harbourline.md").write_text(PAGE, encoding="utf-8")
    return read_folder(tmp_path / "docs").get("harbourline.md")


#: style -> the one section whose cue it is
CUED = {"code_answer": "Install Harbourline", "how_to": "Scheduling departures", "troubleshooting": "Berth conflicts",
        "option": "Waiting for passengers"}


@pytest.mark.parametrize("style", DOC_STYLES)
def test_each_style_is_chosen_for_the_section_that_holds_its_cue(doc, style):
    found = section_candidates(doc, document_units(doc), style)
    assert found, f"no {style} candidate"
    assert {c.section[-1] for c in found} == {CUED[style]}
    assert all(c.style == style and c.kind == "single_hop" for c in found)
    asked = [c.shown[i].text for c in found for i in c.required]
    if style == "code_answer":
        assert asked == [doc.text[b.start:b.end] for b in doc.layout.of_kind("code")]
    elif style == "how_to":
        assert [a for a in asked if a.startswith("- ")] == [line for line in PAGE.splitlines() if line.startswith("- ")]
    elif style == "troubleshooting":
        assert any("BerthConflictError" in a for a in asked)
    else:
        assert any("grace_minutes" in a for a in asked)


def test_a_page_without_cues_and_a_plain_text_document_give_no_style_candidate(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "history.md").write_text(PAGE.split("## History")[1], encoding="utf-8")
    (tmp_path / "d" / "notes.txt").write_text("To run a departure every day, add a schedule to the route file.\n")
    corpus = read_folder(tmp_path / "d")
    for d in corpus.documents:
        assert all(not section_candidates(d, document_units(d), s) for s in DOC_STYLES)


def test_docs_asks_for_all_four_and_a_candidate_keeps_its_style():
    assert requested(["docs", "formal"]) == (DOC_STYLES, ("formal",))
    assert requested(["code_answer", "keywords"]) == (("code_answer",), ("keywords",))
    cfg = GenConfig(n=1, styles=("docs", "formal"))
    plain = Candidate("single_hop", (), ())
    assert variations(Candidate("single_hop", (), (), style="how_to"), cfg)[1] == "how_to"
    assert variations(plain, cfg)[1] == "formal"  # the free styles are drawn as before
    assert variations(plain, GenConfig(n=1, styles=("formal",))) == variations(plain, cfg)


def test_a_code_answer_question_has_its_code_block_as_evidence(doc, tmp_path):
    corpus = read_folder(tmp_path / "docs")
    result = generate(corpus, RuleWriter(), GenConfig(n=4, styles=("docs",), seed=0,
                                                      gates=GateConfig(specific=False)))
    code = [s for s in result.samples if s.provenance.get("style") == "code_answer"]
    assert code, result.report.to_dict()["rejected_examples"]
    [block] = doc.layout.of_kind("code")
    for s in code:
        [span] = s.evidence
        assert (span.start, span.end) == (block.start, block.end)
        assert doc.text[span.start:span.end] == "```console\n$ pip install harbourline\n```"
        start, end = doc.layout.to_source(span.start, span.end)
        # the block where the page holds it (its source range ends after the closing fence's line break)
        assert start == PAGE.index("```console") and PAGE[start:end].rstrip("\n") == doc.text[span.start:span.end]
        assert s.reference == "pip install harbourline"  # the command, its prompt dropped
        assert s.question == "How do I install Harbourline?"
    rep = result.report.to_dict()
    assert rep["accepted_by_style"]["code_answer"] == len(code)
    # The rule writer says plainly what it cannot write, with the candidates the corpus holds for it.
    assert set(rep["styles_not_written"]) == {"how_to", "troubleshooting", "option"}


def _styled_reply(messages, schema):
    data = json.loads(messages[-1]["content"])
    prompt = messages[0]["content"]
    if "whose answer is the last numbered item" in prompt:
        return {"question": f"How do I get {data['section'].split(' > ')[-1]} working?"}
    last = data["sentences"][-1]
    return {"question": f"In Harbourline, what about {data['section'].split(' > ')[-1]}?",
            "answer": " ".join(last.rstrip(".").split()[-4:]), "used": [len(data["sentences"])]}


@pytest.mark.parametrize("style", DOC_STYLES)
def test_the_llm_writer_writes_each_style_with_its_own_prompt(doc, style):
    llm = ScriptedLLM(_styled_reply)
    cand = section_candidates(doc, document_units(doc), style)[0]
    draft = asyncio.run(LLMWriter(llm).write(cand, ["Harbourline"] * len(cand.shown), None, style))
    assert llm.calls[0].messages[0]["content"].startswith(STYLE_PROMPTS[style].instruction)
    shown = json.loads(llm.calls[0].messages[-1]["content"])
    assert shown["section"] == "Harbourline > " + CUED[style]
    assert draft.provenance["prompt"].startswith(STYLE_PROMPTS[style].name + "@")
    if style == "code_answer":
        assert draft.evidence == (cand.shown[-1],) and draft.reference == "pip install harbourline"
    else:
        assert draft.evidence and all(u in cand.shown for u in draft.evidence)


def test_the_llm_writer_drops_inline_code_marks_and_refuses_the_examples_product(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "tool.md").write_text(PAGE.replace("Harbourline", "Quayside"), encoding="utf-8")
    doc = read_folder(tmp_path / "d").get("tool.md")
    cand = section_candidates(doc, document_units(doc), "option")[0]
    marked = ScriptedLLM(lambda m, s: {"question": "What does the `grace_minutes` setting of Quayside do?",
                                       "answer": "how many minutes a departure waits", "used": [2]})
    draft = asyncio.run(LLMWriter(marked).write(cand, ["Quayside"] * len(cand.shown), None, "option"))
    assert draft.question == "What does the grace_minutes setting of Quayside do?"
    copied = ScriptedLLM(lambda m, s: {"question": "Which Harbourline setting sets how long a departure waits?",
                                       "answer": "grace_minutes", "used": [2]})
    with pytest.raises(WriteFailed, match="Harbourline from the prompt"):
        asyncio.run(LLMWriter(copied).write(cand, ["Quayside"] * len(cand.shown), None, "option"))


@pytest.mark.skipif(not FASTAPI.is_dir(), reason="../shared/data/docs-fastapi not present")
def test_rule_questions_with_doc_styles_hold_no_markup_on_the_fastapi_docs():
    ts = ragsweep.generate(str(FASTAPI), n=40, styles=["docs"], gates={"embed": False})
    assert ts.report["accepted_by_style"].get("code_answer", 0) >= 10
    bad = [s.question for s in ts.samples if MARKUP.search(s.question or "")]
    assert not bad, bad[:5]


class _OrderWriter(RuleWriter):
    """The rule writer, recording the style of each candidate it is asked to write, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def write(self, cand, topics, persona, style):  # noqa: ANN001 - the Writer protocol's arguments
        self.asked.append(cand.style or "fact")
        return await super().write(cand, topics, persona, style)


@pytest.mark.parametrize("mode", ["after_styles", "mixed"])
def test_plain_facts_on_docs_come_after_the_styled_candidates_unless_mixed(doc, tmp_path, mode):
    corpus = read_folder(tmp_path / "docs")
    writer = _OrderWriter()
    result = generate(corpus, writer, GenConfig(n=2, styles=("docs",), seed=0, facts_on_docs=mode,
                                                gates=GateConfig(specific=False)))
    assert len(result.samples) == 2  # a fact still fills the set once the one code block is used
    assert "code_answer" in writer.asked and "fact" in writer.asked
    if mode == "after_styles":
        assert writer.asked[0] == "code_answer"
        assert all(s == "fact" for s in writer.asked[1:])
    else:  # taking turns, a fact first
        assert writer.asked[:2] == ["fact", "code_answer"]


def test_facts_on_docs_must_be_a_known_mode():
    from omegaconf import OmegaConf

    from ragsweep.gen.app import gen_config
    from ragsweep.metrics import InputError

    cfg = OmegaConf.load(Path(ragsweep.__file__).resolve().parent / "conf" / "gen.yaml")
    cfg.facts_on_docs = "facts_first"
    with pytest.raises(InputError, match="facts_on_docs must be one of after_styles, mixed"):
        gen_config(cfg, concurrency=1, rule_writer=True)
