"""Pairing sentences for follow-ups and multi-hop questions: a window and a per-document sample, not all pairs.

The candidate streams of the shipped corpus (and of the FastAPI docs, when ../shared is there) are compared
with the streams the all-pairs code produced (``shipped_candidates.json``, recorded before the change).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from ragsweep.gen import candidates as cand
from ragsweep.gen.documents import Document, read_folder, read_shipped
from ragsweep.gen.units import Unit, corpus_units, document_units, unit_topics

HERE = Path(__file__).resolve().parent
RECORDED = json.loads((HERE / "shipped_candidates.json").read_text())
FASTAPI = HERE.parents[1] / ".." / "shared" / "data" / "docs-fastapi"


def _streams(corpus) -> dict[str, list[str]]:
    units = corpus_units(corpus, [d.id for d in corpus.documents])
    topics = {(u.doc_id, u.start): t for d, us in units.items() for u, t in zip(us, unit_topics(corpus.get(d), us))}
    kinds = ("follow_up", "multi_hop", "comparative")
    return {f"{kind}:{seed}": [c.key + ("#" + c.bridge if c.bridge else "")
                               for c in cand.candidates(units, kind, seed, topics)]
            for kind in kinds for seed in (0, 1, 2)}


def _digest(keys: list[str]) -> str:
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


def test_shipped_corpus_pairs_are_the_all_pairs_ones():
    for name, keys in _streams(read_shipped()).items():
        want = RECORDED["shipped"][name]
        assert keys[:2] == want["first"], name
        assert (len(keys), _digest(keys)) == (want["count"], want["sha256"]), name


@pytest.mark.skipif(not FASTAPI.is_dir(), reason="../shared/data/docs-fastapi not present")
def test_fastapi_docs_pairs_are_the_all_pairs_ones():
    # recorded from the pages as written (before the Markdown reader), so read as written
    for name, keys in _streams(read_folder(FASTAPI, markup="text")).items():
        want = RECORDED["docs-fastapi"][name]
        assert (len(keys), _digest(keys)) == (want["count"], want["sha256"]), name


class _CountingList(list):
    reads = 0

    def __getitem__(self, i):
        type(self).reads += 1
        return super().__getitem__(i)


def _unit(index: int) -> Unit:
    return Unit("d", index * 10, index * 10 + 9, "x" * 9, index)


def test_nearby_pairs_equal_the_all_pairs_filter():
    rng = random.Random(0)
    for _ in range(200):
        indexes = sorted(rng.sample(range(60), rng.randint(0, 30)))
        doc = [_unit(i) for i in indexes]
        asked = sorted(rng.sample(range(len(doc)), rng.randint(0, len(doc))))
        gap = rng.randint(1, 6)
        want = [(i, j) for i in asked for j in asked if 0 < doc[j].index - doc[i].index <= gap]
        assert list(cand.nearby_pairs(doc, asked, gap)) == want


def test_nearby_pairs_read_a_window_per_sentence_not_every_pair():
    doc = _CountingList(_unit(i) for i in range(20_000))
    _CountingList.reads = 0
    pairs = list(cand.nearby_pairs(doc, range(len(doc)), cand.FOLLOW_UP_GAP))
    assert len(pairs) == sum(min(cand.FOLLOW_UP_GAP, len(doc) - 1 - i) for i in range(len(doc)))
    assert _CountingList.reads <= 3 * (cand.FOLLOW_UP_GAP + 1) * len(doc)  # all pairs: 4e8 reads


def test_per_document_sample_keeps_small_groups_and_spreads_large_ones():
    small = [Unit("a", i, i + 1, "x", i) for i in range(5)] + [Unit("b", i, i + 1, "x", i) for i in range(3)]
    assert cand.per_document_sample(small, 4) == small[:4] + small[5:]  # "a" thinned to 4, "b" whole
    big = [Unit("a", i, i + 1, "x", i) for i in range(1000)] + small[5:]
    got = cand.per_document_sample(big, 10)
    assert [u.index for u in got[:10]] == list(range(0, 1000, 100))
    assert got[10:] == small[5:]


def _long_document(sentences: int) -> Document:
    rng = random.Random(3)
    places = ["Hollin Island", "Saltgate Bridge", "Gannet Point"]
    text = " ".join(f"The Calder Ferries fleet carried {rng.randint(10, 900)} passengers to {rng.choice(places)} "
                    f"in {rng.randint(1900, 2020)} on the morning route." for _ in range(sentences))
    return Document("long.txt", text, {})


def test_a_long_document_gives_a_bounded_number_of_pairs():
    doc = _long_document(400)
    units = {doc.id: document_units(doc)}
    assert len(units[doc.id]) == 400
    pairs = list(cand.candidates(units, "multi_hop", 0))
    by_entity: dict[str, set] = {}
    for c in pairs:
        shared = c.shown[0].entities & c.shown[1].entities
        for e in shared:
            by_entity.setdefault(e, set()).update(u.index for u in c.shown)
    # every sentence names "Calder Ferries": all pairs would be ~80,000; a 32-sentence sample gives at most 496
    # per entity, spread from the start of the document to its end
    assert 0 < len(pairs) <= 4 * 496
    assert min(by_entity["Calder Ferries"]) == 0 and max(by_entity["Calder Ferries"]) >= 400 - 400 // 32
