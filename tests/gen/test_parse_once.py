"""Each sentence's phrases and each token's content key are computed once: same results, nothing shared."""

from __future__ import annotations

from ragsweep.gen.documents import read_shipped
from ragsweep.gen.units import _phrases, answer_phrases
from ragsweep.metrics import offline


def _content_words_as_before(text: str) -> list[str]:
    out = []
    for tok in offline._TOKEN.findall(text or ""):
        low = tok.lower()
        if low in offline.NUMBER_WORDS:
            out.append(offline.NUMBER_WORDS[low])
        elif low not in offline.STOP and len(low) > 1 or tok[0].isdigit():
            out.append(offline._key(tok))
    return out


def test_content_words_equal_the_token_by_token_loop():
    for doc in read_shipped().documents:
        assert offline.content_words(doc.text) == _content_words_as_before(doc.text)
    assert offline.content_words("Twelve of the 1,200 ferries' crews, a B-road") == ["12", "1200", "ferri", "crews",
                                                                                  "b-road"]


def test_a_caller_changing_its_phrases_changes_nobody_elses():
    sentence = "Calder Ferries moved to Ferrybank in 1963 with 12 ships."
    first = answer_phrases(sentence)
    kinds = [p.kind for p in first]
    first.clear()
    assert [p.kind for p in answer_phrases(sentence)] == kinds == ["entity", "entity", "year", "number"]
    assert _phrases.cache_info().hits >= 1
