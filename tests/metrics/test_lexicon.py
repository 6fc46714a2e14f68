"""The word lists live in one module, each with one line that says what it is for."""

from __future__ import annotations

import ast
from pathlib import Path

from ragsweep.metrics import lexicon

SOURCE = Path(lexicon.__file__).read_text(encoding="utf-8")


def test_every_list_says_what_it_is_for():
    lines = SOURCE.splitlines()
    names = []
    for node in ast.parse(SOURCE).body:
        if isinstance(node, ast.Assign):
            name = node.targets[0].id  # type: ignore[attr-defined]
            names.append(name)
            assert lines[node.lineno - 2].startswith("#: "), f"{name} has no '#:' line saying what it is for"
    assert len(names) >= 15


def test_ordered_lists_hold_each_word_once():
    for words in (lexicon.MONTHS, lexicon.WEEKDAYS, lexicon.ORDINALS):
        assert len(set(words)) == len(words)
    assert lexicon.ORDINALS.index("twelfth") + 1 == 12 and lexicon.MONTHS[11] == "December"
    assert lexicon.NUMBER_WORDS["twelve"] == "12"


def test_the_generator_reads_its_lists_from_the_lexicon():
    from ragsweep.gen import language, units, wording

    assert language.FUNCTION_WORDS is lexicon.FUNCTION_WORDS
    assert wording.QUESTION_STOP is lexicon.QUESTION_STOP
    assert units.SENTENCE_OPENERS is lexicon.SENTENCE_OPENERS
