"""benchmarks/gate_audit.py on hand-made sets: every family counted, alone-rejections told apart."""

from __future__ import annotations

import pytest
from ragsweep.gen.corpus import Corpus, Document
from ragsweep.gen.gates import FAMILIES, GateConfig
from ragsweep.gen.testset import TestSample

from tests.benchmarks.scripts import loaded


@pytest.fixture(scope="module")
def audit():
    yield from loaded("gate_audit.py")


TEXT = "Tom Dey is an American film director.Shanghai Noon is a 2000 film directed by Tom Dey."


def test_people_are_counted_per_family_and_kind_families_under_their_best_kind(audit):
    corpus = Corpus([Document("h0", TEXT)], "mem")
    spans = tuple(audit._paragraph_spans("h0", TEXT))
    assert [TEXT[s.start:s.end] for s in spans] == ["Tom Dey is an American film director.",
                                                    "Shanghai Noon is a 2000 film directed by Tom Dey."]
    bridge = TestSample("a", "Shanghai Noon was directed by a film director of what nationality?", "American", spans,
                        kind="multi_hop")
    choice = TestSample("b", "Which came first, the band or the American Shanghai Noon?", "Shanghai Noon", spans,
                        kind="multi_hop")
    h = audit.audit_human(audit.Human("people", "tune", corpus, [bridge, choice], tuple(FAMILIES)), GateConfig())
    assert h.failed[0] == set()
    # "the band" is unnamed; as a comparison it needs no bridge, so no kind family counts against it
    assert h.failed[1] == {"unnamed_thing"}
    rows = audit.table([h], [])
    row = next(r for r in rows if r.startswith("| unnamed_thing |"))
    assert "1 / 2 (50.0%)" in row
    assert any(r.startswith("| partial_name | removed |") for r in rows)


def test_alone_counts_only_candidates_no_other_family_rejects(audit):
    g = audit.Generated("gen", [TestSample(str(i), "q", "r", ()) for i in range(3)],
                        [["copy"], ["copy", "unnamed_thing"], []])
    row = next(r for r in audit.table([], [g]) if r.startswith("| copy |"))
    assert "| 1 / 2 |" in row
    shown = audit.examples([], [g], 8)
    assert shown[0] == "\n### copy\n" and len(shown) == 2


def test_the_rule_writer_run_is_recorded_candidate_by_candidate_and_unchanged(audit):
    import ragsweep.gen.drafts as drafts

    real = drafts.check_sample
    g = audit.record_candidates("shipped", "shipped", 5, 0, gates={"embed": False}, progress=False)
    assert drafts.check_sample is real
    assert len(g.samples) == len(g.failed) >= 5
    assert all(set(f) <= set(FAMILIES) | {"verbatim"} for f in g.failed)
    assert any(not f for f in g.failed)  # the accepted ones fail no family (follow-up pairs are gated apart)
