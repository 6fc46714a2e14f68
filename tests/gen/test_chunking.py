"""Every chunker keeps verbatim character offsets, on the shipped corpus and on awkward text."""

from __future__ import annotations

import pytest

from ragsweep.gen.chunking import (
    CHUNKERS,
    RecursiveChunker,
    SentenceChunker,
    StructureChunker,
    TokenChunker,
    WholeDocument,
)
from ragsweep.gen.documents import Document, read_shipped
from ragsweep.metrics.errors import InputError

AWKWARD = Document(
    "odd.md",
    "# Title\n\n\nFirst para.  Two  spaces.\n\nSecond para with a very long word "
    + "x" * 300
    + " and café, naïve, 東京 and emoji 🚢.\r\nWindows line.\n\n\n   \n"
    + "Repeated sentence. " * 40,
)


def chunkers():
    return [WholeDocument(), RecursiveChunker(256, 32), RecursiveChunker(64, 0), RecursiveChunker(1024, 128),
            SentenceChunker(200, 1), SentenceChunker(50, 0), TokenChunker(32, 8), TokenChunker(128, 0),
            StructureChunker(256, 32), StructureChunker(1024, 0, merge=False)]


@pytest.mark.parametrize("chunker", chunkers(), ids=lambda c: str(c.params()))
def test_offsets_are_verbatim(chunker):
    docs = [*read_shipped().documents, AWKWARD]
    chunks = chunker.chunk(docs)
    by_id = {d.id: d for d in docs}
    for c in chunks:
        assert by_id[c.doc_id].text[c.start : c.end] == c.text
        assert c.text.strip()
    # Chunks of one document come in order and together cover all of its non-blank text.
    for d in docs:
        mine = [c for c in chunks if c.doc_id == d.id]
        assert [c.start for c in mine] == sorted(c.start for c in mine)
        covered = set()
        for c in mine:
            covered.update(range(c.start, c.end))
        assert all(i in covered for i, ch in enumerate(d.text) if not ch.isspace() and ch != "#"), chunker.params()


def test_recursive_respects_size_and_overlap():
    doc = read_shipped().documents[0]
    chunks = RecursiveChunker(200, 40).chunk([doc])
    assert len(chunks) > 3
    assert all(len(c.text) <= 200 for c in chunks)
    # neighbours overlap (the splitter repeats up to `overlap` characters) but never run backwards
    assert all(b.start > a.start for a, b in zip(chunks, chunks[1:]))


def test_token_chunker_counts_tokens():
    from ragsweep.metrics.embedding import load_tokenizer

    tok = load_tokenizer()
    tok.no_truncation()  # tokenizer.json ships with truncation and padding at 128
    tok.no_padding()
    chunks = TokenChunker(32, 8).chunk([AWKWARD])
    for c in chunks[:-1]:
        assert len(tok.encode(c.text, add_special_tokens=False).ids) <= 34  # word pieces re-split at edges


def test_sentence_chunker_packs_whole_sentences():
    doc = Document("s.md", "One short. Two short. Three is a longer sentence here. Four.")
    chunks = SentenceChunker(size=25, overlap=0).chunk([doc])
    assert [c.text for c in chunks] == ["One short. Two short.", "Three is a longer sentence here.", "Four."]
    with_overlap = SentenceChunker(size=25, overlap=1).chunk([doc])
    assert with_overlap[1].text.startswith("Two short.")


def test_bad_parameters_are_input_errors():
    with pytest.raises(InputError, match="overlap"):
        RecursiveChunker(100, 100)
    with pytest.raises(InputError, match="size"):
        TokenChunker(0, 0)
    with pytest.raises(InputError):
        WholeDocument().chunk([Document("e", "   ")])
    # a value from the command line that is not a number names the key, not a TypeError inside the chunker
    with pytest.raises(InputError, match=r"chunker.size must be a whole number, got 'x'"):
        SentenceChunker("x")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"chunker.overlap must be a whole number, got 1.5"):
        RecursiveChunker(100, 1.5)  # type: ignore[arg-type]


def test_params_distinguish_cache_keys():
    keys = {c.key() for c in chunkers()}
    assert len(keys) == len(chunkers())
    assert set(CHUNKERS) == {"none", "recursive", "sentence", "structure", "token"}


# --- paragraphs joined without a space (gen.chunking.unglued) ------------------------------------------


def test_glued_paragraphs_become_separate_question_units():
    from ragsweep.gen.units import document_units

    # HotpotQA's passages are two Wikipedia paragraphs joined with no space after the first one's full stop.
    text = ("Wild Horse Creek is a tributary of the Powder River in northern Wyoming.Powder River is a tributary "
            "of the Yellowstone River, approximately 375 mi long in Montana.")
    units = document_units(Document("k1", text))
    assert [u.text for u in units] == [
        "Wild Horse Creek is a tributary of the Powder River in northern Wyoming.",
        "Powder River is a tributary of the Yellowstone River, approximately 375 mi long in Montana."]
    assert all(text[u.start:u.end] == u.text for u in units)
    assert [u.index for u in units] == [0, 1]


@pytest.mark.parametrize("text, pieces", [
    ('It is a sequel to "Puss in Boots".Puss in Boots is a 2011 film. It won.',
     ['It is a sequel to "Puss in Boots".', "Puss in Boots is a 2011 film.", "It won."]),
    ("Stable angina pectoris (SAP).Methods and Results: we enrolled 40 patients.",
     ["Stable angina pectoris (SAP).", "Methods and Results: we enrolled 40 patients."]),
    ("He died in 1989.James Henry Miller was a singer.", ["He died in 1989.", "James Henry Miller was a singer."]),
    # not a joint: a gene name, initials, a decimal, a file name
    ("The factor Atf1.Pcr1 binds DNA. The U.S.Army left.", ["The factor Atf1.Pcr1 binds DNA.", "The U.S.Army left."]),
    ("It rose by 3.5 per cent. See notes.txt for more.", ["It rose by 3.5 per cent.", "See notes.txt for more."]),
])
def test_unglued_cuts_only_at_a_full_stop_followed_by_a_capitalised_word(text, pieces):
    from ragsweep.gen.chunking import sentence_spans, unglued

    spans = unglued(text, sentence_spans(text))
    assert [text[s:e] for s, e in spans] == pieces
    assert spans[0][0] == 0 and all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_the_sentence_chunker_keeps_its_spans_for_glued_text():
    # The chunker's cache keys and published sweep figures rest on nupunkt's spans as they are.
    from ragsweep.gen.chunking import sentence_spans

    text = "The creek is in Wyoming.Powder River is long. It flows north."
    assert [text[s:e] for s, e in sentence_spans(text)] == ["The creek is in Wyoming.Powder River is long.",
                                                            "It flows north."]
