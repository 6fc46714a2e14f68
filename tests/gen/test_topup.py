"""Topping up a test set: ``ragsweep gen append_to=SET n=N`` adds N new questions after the set's own."""

from __future__ import annotations

import json

from ragsweep.gen.documents import Span, read_shipped
from ragsweep.gen.wording import normalise
from ragsweep.gen.testset import TestSample, check_against, read_testset
from ragsweep.gen.topup import fresh_ids

SINGLE_HOP = ["llm=none", "kinds={single_hop: 1}", "gates.embed=false", "progress=false"]


def _sample(sid: str) -> TestSample:
    return TestSample(sid, "q?", "", (Span("d", 0, 1),))


def test_new_ids_follow_the_sets_numbering_and_never_reuse_an_id():
    base = [_sample("gen-0002"), _sample("q1"), _sample("gen-0010")]
    assert [s.id for s in fresh_ids([_sample("gen-0001"), _sample("gen-0002")], base)] == ["gen-0011", "gen-0012"]
    assert [s.id for s in fresh_ids([_sample("x")], [_sample("hand"), _sample("gen-0001x")])] == ["gen-0001"]
    assert [s.id for s in fresh_ids([_sample("x"), _sample("y")], [_sample("gen-0000"), _sample("gen-0002")])] == [
        "gen-0003", "gen-0004"]


def test_top_up_appends_only_new_questions_with_fresh_ids(tmp_path, ragsweep):
    out = tmp_path / "ts.jsonl"
    first = ragsweep("gen", *SINGLE_HOP, "n=4", f"out={out}", cwd=tmp_path, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    before = out.read_bytes()
    # Same seed: without the top-up's rules it would draw the same candidates and write the same questions.
    more = ragsweep("gen", *SINGLE_HOP, "n=3", f"append_to={out}", cwd=tmp_path, timeout=300)
    assert more.returncode == 0, more.stderr[-3000:]
    assert f"topped up: 3 new after the 4 of {out}" in more.stdout
    after = out.read_bytes()
    assert after.startswith(before)  # the set's own lines, byte for byte
    samples = read_testset(out)
    check_against(samples, read_shipped(), str(out))
    assert [s.id for s in samples] == [f"gen-{i:04d}" for i in range(1, 8)]
    assert len({normalise(s.question) for s in samples}) == 7
    assert len({s.provenance["candidate"] for s in samples}) == 7
    report = json.loads(out.with_name("ts.topup.report.json").read_text())
    assert report["accepted"] == 3 and report["rejected"].get("duplicate_text", 0) == 0

    # out= writes the whole set elsewhere and leaves the base as it was.
    other = tmp_path / "bigger.jsonl"
    again = ragsweep("gen", *SINGLE_HOP, "n=2", f"append_to={out}", f"out={other}", cwd=tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert out.read_bytes() == after and other.read_bytes().startswith(after)
    assert [s.id for s in read_testset(other)][-2:] == ["gen-0008", "gen-0009"]
