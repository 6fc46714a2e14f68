"""Copies among a corpus's documents: exact and near duplicates, span mapping, the readers' duplicates option."""

from __future__ import annotations

import json
import random

import pytest
import ragsweep
from ragsweep.gen.documents import Document, read_beir, read_folder, read_jsonl
from ragsweep.gen.duplicates import find_duplicates
from ragsweep.metrics.errors import InputError

# About 400 characters: one word changed leaves ~95% of its character 5-grams.
HARBOUR = ("The harbour lighthouse at Port Ellen was first lit in 1871 and guided ships past the Otter "
           "reef for a century. Its keeper, Agnes Munro, kept a log of every wreck and rescue, and the "
           "log is now held by the county archive in Bowmore. The light was automated in 1978, when the "
           "last keeper left the island, and a small museum opened in the keeper's cottage in 1994 with "
           "the original lens on display beside the log books.")
RAIL = ("Rail services to the Calder valley stopped in 1962 when the branch line closed. The station "
        "building became a youth hostel, and the trackbed is now a cycle path that runs for eleven miles "
        "from Ferrybank to the old quarry at Glenmoy, passing the viaduct that was restored in 2009.")
COUNCIL = ("The council of Brackwater has 45 members elected every four years. It meets in the old corn "
           "exchange, which it bought in 1931, and it runs the harbour, the markets and the ferry to Port "
           "Ellen, whose lighthouse it also owns.")


def docs(*pairs: tuple[str, str]) -> list[Document]:
    return [Document(i, t) for i, t in pairs]


def test_exact_copies_up_to_case_and_whitespace_and_nothing_else():
    found = find_duplicates(docs(("a", HARBOUR), ("b", RAIL), ("c", "  " + HARBOUR.upper().replace(" ", "\n  ")),
                                 ("d", COUNCIL), ("e", HARBOUR)))
    assert found.original == {"c": "a", "e": "a"} and found.kind == {"c": "exact", "e": "exact"}
    assert found.groups() == [["a", "c", "e"]]
    s = found.summary()
    assert (s["documents"], s["copies"], s["exact"], s["near"], s["groups"], s["largest_group"]) == (5, 2, 2, 0, 1, 3)
    assert "2 of 5 documents are copies (2 exact, 0 near) in 1 groups, e.g. a = c = e" in found.message("kb")


def test_one_word_changed_is_a_near_copy_and_unrelated_documents_are_not():
    changed = HARBOUR.replace("Agnes Munro", "Agnes Monroe")
    # The council passage shares words and names with the harbour one (Port Ellen, lighthouse, harbour).
    found = find_duplicates(docs(("a", HARBOUR), ("b", RAIL), ("c", COUNCIL), ("d", changed)))
    assert found.original == {"d": "a"} and found.kind == {"d": "near"}
    assert find_duplicates(docs(("a", HARBOUR), ("d", changed)), near=None).original == {}  # exact only
    # Half of the passage rewritten is not a copy.
    half = HARBOUR[:200] + RAIL[:200]
    assert find_duplicates(docs(("a", HARBOUR), ("h", half))).original == {}


def test_a_span_of_a_near_copy_maps_onto_the_same_words_of_its_original():
    copy = "  " + HARBOUR.replace("Agnes Munro", "Agnes  Munro-Grant").replace("The light", "THE light")
    found = find_duplicates(docs(("a", HARBOUR), ("b", copy)))
    assert found.kind == {"b": "near"}
    start = copy.index("automated in 1978")
    orig, s, e = found.map_span("b", start, start + len("automated in 1978"))
    assert orig == "a" and HARBOUR[s:e] == "automated in 1978"
    start = copy.index("Munro-Grant")  # a word the original lacks maps nowhere
    assert found.map_span("b", start, start + len("Munro-Grant")) is None
    start = copy.index("Agnes")  # a span reaching into it maps onto the words both share
    orig, s, e = found.map_span("b", start, start + len("Agnes  Munro-Grant"))
    assert HARBOUR[s:e] == "Agnes"
    assert found.map_span("a", 0, 10) is None  # an original maps nowhere


def test_copies_are_found_among_thousands_of_documents():
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)]
    texts = [" ".join(rng.choices(vocab, k=60)) for _ in range(3000)]
    corpus = docs(*((f"d{i}", t) for i, t in enumerate(texts)))
    planted = []
    for n, i in enumerate(rng.sample(range(3000), 20)):
        words = texts[i].split()
        words[rng.randrange(60)] = "changed"
        corpus.append(Document(f"copy{n}", " ".join(words)))
        planted.append((f"copy{n}", f"d{i}"))
    found = find_duplicates(corpus)
    assert found.original == dict(planted) and found.seconds < 10


def test_readers_take_the_option(tmp_path):
    rows = [{"id": "a", "text": HARBOUR}, {"id": "b", "text": RAIL}, {"id": "c", "text": HARBOUR}]
    path = tmp_path / "kb.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    equal = read_jsonl(path)
    assert [d.id for d in equal.documents] == ["a", "b", "c"] and equal.duplicates.original == {"c": "a"}
    assert [d.id for d in equal.originals().documents] == ["a", "b"]
    drop = read_jsonl(path, duplicates="drop")
    assert [d.id for d in drop.documents] == ["a", "b"] and drop.duplicates.summary()["copies"] == 1
    keep = read_jsonl(path, duplicates="keep")
    assert [d.id for d in keep.originals().documents] == ["a", "b", "c"] and keep.duplicates.original == {"c": "a"}
    with pytest.raises(InputError, match="corpus.duplicates must be one of equal, drop, keep"):
        read_jsonl(path, duplicates="merge")
    with pytest.raises(InputError, match=r"corpus.near_duplicates must be a Jaccard threshold in \(0, 1\]"):
        read_jsonl(path, near_duplicates=1.5)


def test_dropping_copies_judges_each_group_once_on_its_original(tmp_path):
    root = tmp_path / "beir"
    root.mkdir()
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                               for i, t in [("d1", HARBOUR), ("d2", RAIL), ("d3", HARBOUR)]))
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "lighthouse?"}) + "\n")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t2\nq1\td2\t1\n")
    drop = read_beir(root, duplicates="drop")
    assert [d.id for d in drop.documents] == ["d1", "d2"] and drop.qrels == {"q1": {"d1": 2, "d2": 1}}
    assert read_beir(root).qrels == {"q1": {"d3": 2, "d2": 1}}  # equal: the file as it is (the harness groups)


def test_a_test_set_is_written_from_originals_only(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    for i in range(4):
        (kb / f"copy{i}.txt").write_text(HARBOUR)
    (kb / "rail.txt").write_text(RAIL)
    testset = ragsweep.generate(str(kb), n=6, gates={"embed": False})
    assert testset.samples and {e.doc_id for s in testset.samples for e in s.evidence} <= {"copy0.txt", "rail.txt"}
    assert testset.report["duplicates"]["copies"] == 3
    # ... and how the set was written, so it can be written again: every gate, the version.
    assert testset.report["gates"]["embed"] is False and testset.report["gates"]["min_support"] == 0.6
    assert testset.report["gates"]["specific"] is True and testset.report["ragsweep"]
    assert read_folder(kb).duplicates.groups() == [["copy0.txt", "copy1.txt", "copy2.txt", "copy3.txt"]]
