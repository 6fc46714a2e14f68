"""The structure-aware chunker: sections packed, code blocks never cut, spans that map back to the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsweep.gen.chunking import RecursiveChunker, StructureChunker
from ragsweep.gen.documents import Document, read_folder
from ragsweep.gen.markdown_reader import markdown_text

FASTAPI = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docs-fastapi"

CODE = "```python\n" + "\n".join(f"def step_{i}(x):\n    return x + {i}\n\n" for i in range(12)) + "```"
PAGE = ("# Guide\n\nIntro sentence about the guide.\n\n## Install\n\nRun the installer first.\n\n"
        "## Long part\n\nSome prose before the code. " + "Words " * 60 + f"\n\n{CODE}\n\n"
        + "More prose after the code. " * 30 + "\n\n## Tail\n\nThe end.\n")


def _doc(source: str, name: str = "page.md") -> Document:
    text, layout, meta = markdown_text(source)
    return Document(name, text, meta, layout)


def _check(doc: Document, chunker: StructureChunker) -> list:
    chunks = chunker.chunk([doc])
    code = doc.layout.of_kind("code")
    for c in chunks:
        assert doc.text[c.start:c.end] == c.text and c.text.strip()
        # no chunk starts or ends inside a code block
        assert not any(b.start < c.start < b.end or b.start < c.end < b.end for b in code), (c.text[:80], doc.id)
        # longer than size only when it is (or holds) a code block longer than size
        if len(c.text) > chunker.size:
            assert any(c.start <= b.start and b.end <= c.end and b.end - b.start > chunker.size for b in code)
        # the span maps back to the source: every piece of the chunk copied from the source lies inside the
        # source range, and a chunk that starts or ends on copied text starts or ends on the same character there
        _maps_back(doc, c.start, c.end)
    for b in code:  # every code block lies whole inside one chunk
        assert any(c.start <= b.start and b.end <= c.end for c in chunks)
    return chunks


def _maps_back(doc: Document, start: int, end: int) -> None:
    layout = doc.layout
    s, e = layout.to_source(start, end)
    segments = zip(layout.clean_starts, layout.clean_lens, layout.source_starts, layout.source_lens)
    for cs, n, ss, m in segments:
        if n != m or cs + n <= start or cs >= end:
            continue
        lo, hi = max(cs, start), min(cs + n, end)
        assert s <= ss + (lo - cs) and ss + (hi - cs) <= e
        if doc.text[cs:cs + n] == layout.source[ss:ss + m]:  # copied, not a same-length replacement
            if lo == start:
                assert layout.source[s] == doc.text[start]
            if hi == end:
                assert layout.source[e - 1] == doc.text[end - 1]


def test_sections_packed_code_whole_prose_split():
    doc = _doc(PAGE)
    chunks = _check(doc, StructureChunker(300, 20))
    texts = [c.text for c in chunks]
    assert texts[0] == "# Guide\n\nIntro sentence about the guide.\n\n## Install\n\nRun the installer first."
    assert any(t.startswith("```python") and t.endswith("```") for t in texts)  # 400+ characters, one chunk
    assert texts[-1].endswith("## Tail\n\nThe end.")


def test_one_section_per_chunk_without_merge():
    doc = _doc(PAGE)
    chunks = _check(doc, StructureChunker(300, 20, merge=False))
    heads = [b.start for b in doc.layout.of_kind("heading")]
    for c in chunks:  # a chunk never runs over a heading: it holds at most one, at its start
        assert all(not (c.start < h < c.end) for h in heads)
    assert chunks[0].text == "# Guide\n\nIntro sentence about the guide."


def test_a_document_without_layout_is_cut_as_the_recursive_splitter_cuts_it():
    doc = Document("a.txt", "Plain words here. " * 100)
    assert StructureChunker(200, 20).spans(doc) == RecursiveChunker(200, 20).spans(doc)


def test_params_name_the_fallback_and_differ_from_recursive():
    assert StructureChunker(512, 64).key() != RecursiveChunker(512, 64).key()
    assert StructureChunker(512, 64).key() != StructureChunker(512, 64, merge=False).key()


@pytest.mark.skipif(not FASTAPI.is_dir(), reason="../shared/data/docs-fastapi not present")
@pytest.mark.parametrize("size", [256, 1024])
def test_fastapi_docs_no_code_block_split(size):
    corpus = read_folder(FASTAPI, suffixes=(".md",))
    for doc in corpus.documents:
        _check(doc, StructureChunker(size, 32))
    # the recursive splitter, by contrast, cuts code blocks of these pages
    cut = 0
    for doc in corpus.documents:
        code = doc.layout.of_kind("code")
        for c in RecursiveChunker(size, 32).chunk([doc]):
            cut += any(b.start < c.start < b.end or b.start < c.end < b.end for b in code)
    assert cut > 0


def test_the_cache_key_of_a_corpus_tells_its_structure_apart(tmp_path):
    # the same text read with and without its structure cuts differently under chunker=structure,
    # so the chunk cache (corpus fingerprint + chunker params) must not share them
    (tmp_path / "a.md").write_text("# A\n\nOne paragraph.\n\n## B\n\nAnother paragraph.\n", encoding="utf-8")
    parsed, raw = read_folder(tmp_path), read_folder(tmp_path, markup="text")
    assert [d.text for d in parsed.documents] == [d.text for d in raw.documents]
    chunker = StructureChunker(20, 0)
    assert chunker.spans(parsed.documents[0]) != chunker.spans(raw.documents[0])
    assert parsed.fingerprint() != raw.fingerprint()
