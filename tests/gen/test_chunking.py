"""Every chunker keeps verbatim character offsets, on the shipped corpus and on awkward text."""

from __future__ import annotations

import pytest

from ragsweep.gen.chunking import CHUNKERS, RecursiveChunker, SentenceChunker, TokenChunker, WholeDocument
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
            SentenceChunker(200, 1), SentenceChunker(50, 0), TokenChunker(32, 8), TokenChunker(128, 0)]


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


def test_params_distinguish_cache_keys():
    keys = {c.key() for c in chunkers()}
    assert len(keys) == len(chunkers())
    assert set(CHUNKERS) == {"none", "recursive", "sentence", "token"}
