"""Cache entries carry a checksum: one that fails it or cannot be loaded is moved to <cache>/quarantine/,
named in one warning and computed again (harness/cache.py)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from ragsweep.harness.cache import QUARANTINE, Cache, make_key


def _flip(path, at: int = -1) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_chunks_entry_holding_braces_is_quarantined_and_recomputed(tmp_path, caplog):
    cache, key = Cache(tmp_path), make_key("chunks", 1)
    rows = [["d1", 0, 10], ["d1", 10, 20]]
    assert cache.json("chunks", key, lambda: rows) == rows
    entry = cache.path("chunks", key, "json")
    entry.write_text("{}")  # what a bad write left: valid JSON, wrong bytes
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert cache.json("chunks", key, lambda: rows) == rows
    moved = list((tmp_path / QUARANTINE / "chunks").glob(f"{key}.json.*"))
    assert [p.read_text() for p in moved if not p.name.endswith(".sha256")] == ["{}"]
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and str(entry) in warnings[0] and "does not match its checksum" in warnings[0]
    assert (cache.hits, cache.misses) == (2, 2) and json.loads(entry.read_text()) == rows


def test_flipped_bytes_in_a_vectors_file_never_reach_a_score(tmp_path, caplog):
    cache, key = Cache(tmp_path), make_key("vectors", 1)
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4)
    cache.array("vectors", key, lambda: vectors)
    _flip(cache.path("vectors", key, "npy"))  # the last float's low bit: np.load reads it without a complaint
    with caplog.at_level(logging.WARNING):
        again = cache.array("vectors", key, lambda: vectors)
    assert np.array_equal(again, vectors)
    assert len(_warnings(caplog)) == 1 and len(cache.quarantined) == 1


def test_search_results_and_faiss_indexes_are_checked_too(tmp_path):
    faiss = pytest.importorskip("faiss")
    cache = Cache(tmp_path)
    found = {"ids": np.array([[1, 2]], dtype=np.int64), "scores": np.array([[0.5, 0.25]], dtype=np.float32)}
    cache.arrays("search", "k1", lambda: found)
    _flip(cache.path("search", "k1", "npz"), at=60)
    assert cache.arrays("search", "k1", lambda: found)["ids"].tolist() == [[1, 2]]

    index = faiss.IndexFlatIP(4)
    index.add(np.eye(4, dtype=np.float32))
    cache.faiss_index("k2", lambda: index)
    cache.path("index", "k2", "faiss").write_bytes(b"not an index")
    assert cache.faiss_index("k2", lambda: index).ntotal == 4
    assert sorted(p.parent.name for p in cache.quarantined) == ["index", "search"]


def test_a_bm25_index_folder_with_a_changed_file_is_rebuilt(tmp_path):
    cache, builds = Cache(tmp_path), []

    def build(folder):
        builds.append(1)
        (folder / "vocab.json").write_text('{"a": 1}')

    def load(folder):
        return json.loads((folder / "vocab.json").read_text())

    assert cache.folder("bm25", "k", build, load) == {"a": 1}
    (tmp_path / "bm25" / "k" / "vocab.json").write_text('{"a": 2}')
    assert cache.folder("bm25", "k", build, load) == {"a": 1}
    assert len(builds) == 2 and (cache.quarantined[0] / "vocab.json").read_text() == '{"a": 2}'
    assert cache.folder("bm25", "k", build, load) == {"a": 1} and len(builds) == 2  # a hit again


def test_an_entry_that_cannot_be_loaded_is_quarantined_not_deleted(tmp_path, caplog):
    cache = Cache(tmp_path)
    cache.json("chunks", "k", lambda: [1])
    with caplog.at_level(logging.WARNING):
        assert cache.json("chunks", "k", lambda: [1]) == [1]  # sound: a hit
        # a sound checksum of bytes that do not load (another writer's format): moved aside, recomputed
        entry = cache.path("chunks", "k", "json")
        entry.write_text("[1,")
        from ragsweep.harness.cache import file_digest

        entry.with_name(entry.name + ".sha256").write_text(file_digest(entry))
        assert cache.json("chunks", "k", lambda: [1]) == [1]
    assert "cannot be loaded (JSONDecodeError" in _warnings(caplog)[0]
    assert [p.read_text() for p in cache.quarantined] == ["[1,"]


def test_an_entry_written_before_checksums_is_a_miss(tmp_path):
    cache = Cache(tmp_path)
    entry = cache.path("chunks", "k", "json")
    entry.parent.mkdir(parents=True)
    entry.write_text("{}")  # no .sha256 beside it
    assert cache.json("chunks", "k", lambda: [["d", 0, 1]]) == [["d", 0, 1]]
    assert cache.misses == 1 and json.loads(entry.read_text()) == [["d", 0, 1]]
    assert cache.json("chunks", "k", lambda: None) == [["d", 0, 1]] and cache.hits == 1
