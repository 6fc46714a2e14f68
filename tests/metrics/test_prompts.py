"""The judge prompts: defined once, typed, versioned by content, rendered prefix-first."""

import dataclasses

from ragsweep.metrics.prompts import (
    CHUNK_VERDICTS,
    CLAIMS_VERDICTS,
    PROMPTS,
    ClaimsInput,
    identify,
    render,
    render_input,
)


def test_names_are_unique_and_versions_are_content_hashes():
    assert len({p.name for p in PROMPTS}) == len(PROMPTS)
    for p in PROMPTS:
        assert len(p.version) == 12 and p.id.name == p.name and p.id.version == p.version


def test_version_changes_with_the_wording_or_the_examples_only():
    same = dataclasses.replace(CLAIMS_VERDICTS)
    assert same.version == CLAIMS_VERDICTS.version
    assert dataclasses.replace(CLAIMS_VERDICTS, instruction=CLAIMS_VERDICTS.instruction + " ").version != same.version
    assert dataclasses.replace(CLAIMS_VERDICTS, examples=()).version != same.version
    assert dataclasses.replace(CLAIMS_VERDICTS, max_tokens=1).version == same.version


def test_examples_are_typed():
    for p in PROMPTS:
        for example_in, example_out in p.examples:
            assert isinstance(example_in, p.input) and isinstance(example_out, p.output)
            p.output.model_validate_json(example_out.model_dump_json())


def test_instruction_and_examples_come_first_and_the_sample_last():
    a = render(CLAIMS_VERDICTS, ClaimsInput(question="Q1?", text="Answer one.", passages=["p1", "p2"]))
    b = render(CLAIMS_VERDICTS, ClaimsInput(question="Q2?", text="Answer two.", passages=["p3"]))
    assert a[0]["role"] == "system" and a[0]["content"].startswith(CLAIMS_VERDICTS.instruction)
    assert a[:-1] == b[:-1]  # a shared prefix: llama.cpp reuses its KV cache across samples
    assert len(a) == 2 + 2 * len(CLAIMS_VERDICTS.examples)
    assert [m["role"] for m in a[1:-1]] == ["user", "assistant"] * len(CLAIMS_VERDICTS.examples)
    assert "Answer one." in a[-1]["content"] and "Answer one." not in "".join(m["content"] for m in a[:-1])


def test_sample_sections_number_passages_and_skip_missing_fields():
    text = render_input(ClaimsInput(text="T.", passages=["first", "second"]))
    assert "<question>" not in text
    assert "<passages>\n[1] first\n[2] second\n</passages>" in text
    assert "<atomicity>\nhigh\n</atomicity>" in text
    assert "<passages>\n(none)\n</passages>" in render_input(ClaimsInput(text="T.", passages=[]))


def test_identify_finds_the_prompt_from_its_messages():
    for p in PROMPTS:
        sample = p.examples[0][0] if p.examples else None
        if sample is not None:
            assert identify(render(p, sample)) is p
    assert identify([{"role": "system", "content": "something else"}]) is None
    assert identify(render(CHUNK_VERDICTS, CHUNK_VERDICTS.examples[0][0])) is CHUNK_VERDICTS
