"""benchmarks/citations.py: the real-answer set (contexts, the cited answerer's answers, labels checked
against what the metric reads) and the agreement it reports."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks.scripts import BENCHMARKS, loaded


@pytest.fixture(scope="module")
def bench():
    yield from loaded("citations.py")


def test_knowledge_splits_at_its_one_join(bench):
    assert bench.split_knowledge("It ran from 1844 to 1846.First for Women is a magazine.") == \
        ("It ran from 1844 to 1846.", "First for Women is a magazine.")
    assert bench.split_knowledge("One paragraph only. No join here.") is None
    assert bench.split_knowledge("A ends here.B starts.C too.D as well.") is None  # two joins: ambiguous


def test_real_contexts_hold_the_two_gold_paragraphs_and_other_texts(bench):
    if not (bench.DATA / "corpus.jsonl").is_file():
        pytest.skip("../shared/data/hotpot is not here")
    items = bench.real_contexts(4)
    assert [int(i["question_id"].removeprefix("dev")) >= bench.REAL_FIRST for i in items] == [True] * 4
    hand = {i["id"] for i in json.loads(bench.LABELS.read_text())["items"]}
    assert not hand & {i["question_id"] for i in items}  # none of the hand-written set's questions
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (bench.DATA / "corpus.jsonl").open())}
    qrels = dict(line.split()[:2] for line in (bench.DATA / "qrels_dev.tsv").read_text().splitlines()[1:])
    for item in items:
        gold = [c for s, c in zip(item["sources"], item["contexts"]) if s == "gold"]
        assert len(gold) == 2 and len(item["contexts"]) == 4
        assert set(gold) == set(bench.split_knowledge(corpus[qrels[item["question_id"]]]))
        distractors = [s for s in item["sources"] if s != "gold"]
        assert len(set(distractors)) == 2  # from two different knowledge texts
    assert bench.real_contexts(4) == items  # the shuffle is seeded by question


def test_retrieved_contexts_are_bm25s_top_documents_for_questions_no_set_uses(bench):
    if not (bench.DATA / "corpus.jsonl").is_file():
        pytest.skip("../shared/data/hotpot is not here")
    items = bench.retrieved_contexts(3, k=4)
    used = {i.get("question_id", i["id"]) for p in (bench.LABELS, bench.REAL_LABELS)
            for i in json.loads(p.read_text())["items"]}
    first = bench.fresh_first()
    assert f"dev{first - 1}" in used and not used & {f"dev{i}" for i in range(first, first + 3)}
    assert [i["question_id"] for i in items] == [f"dev{first + k}" for k in range(3)]  # in order, none skipped
    corpus = {r["_id"]: r["text"] for r in map(json.loads, (bench.DATA / "corpus.jsonl").open())}
    for item in items:
        assert len(item["contexts"]) == 4 and len(set(item["sources"])) == 4
        for source, text in zip(item["sources"], item["contexts"]):
            glued = corpus[source].strip()
            assert text.replace(" ", "") == glued.replace(" ", "")  # the document, a space put at its join
    # these questions name their answer's document well enough for BM25 to find it among four
    assert all(item["gold"] in item["sources"] for item in items)
    assert bench.retrieved_contexts(3, k=4) == items


def test_generate_writes_the_answerers_sentences_unlabelled_and_load_checks_the_labels(bench, tmp_path):
    from ragsweep.metrics.llm import ScriptedLLM

    if not (bench.DATA / "corpus.jsonl").is_file():
        pytest.skip("../shared/data/hotpot is not here")
    asked = []

    def reply(messages, schema):
        asked.append(messages)
        return "It is a brewery [2]. It opened in 1972 [9]. No marker here."

    out = tmp_path / "real.json"
    bench.generate(2, ScriptedLLM(reply), out)
    assert "End every sentence with the number" in asked[0][0]["content"]  # the answerer's cited prompt
    assert "[1] " in asked[0][1]["content"] and "[4] " in asked[0][1]["content"]
    spec = json.loads(out.read_text())
    assert [i["split"] for i in spec["items"]] == ["tune", "report"] and spec["answerer"]["cite"] is True
    first = spec["items"][0]
    assert [(s["sentence"], s["cites"], s["invalid"]) for s in first["sentences"]] == [
        ("It is a brewery.", [2], []), ("It opened in 1972.", [], [9]), ("No marker here.", [], [])]
    with pytest.raises(ValueError, match="sentence 0: not labelled"):
        bench.load(out)
    for item in spec["items"]:
        for s in item["sentences"]:
            s["supported"], s["relevant"] = False, [False] * len(s["cites"])
    out.write_text(json.dumps(spec))
    items = bench.load(out)
    assert items[0]["citations"][0] == {"sentence": "It is a brewery.", "cites": [2], "invalid": []}
    spec["items"][0]["sentences"][0]["cites"] = [3]  # a label that is not what the metric reads
    out.write_text(json.dumps(spec))
    with pytest.raises(ValueError, match="the answer parses to"):
        bench.load(out)


def test_generate_over_retrieved_contexts_puts_every_answer_in_the_report_set(bench, tmp_path):
    from ragsweep.metrics.llm import ScriptedLLM

    if not (bench.DATA / "corpus.jsonl").is_file():
        pytest.skip("../shared/data/hotpot is not here")
    asked = []

    def reply(messages, schema):
        asked.append(messages[1]["content"])
        return "It is a film [1]."

    out = tmp_path / "fresh.json"
    bench.generate(3, ScriptedLLM(reply), out, retrieved=4)
    spec = json.loads(out.read_text())
    assert [i["split"] for i in spec["items"]] == ["report"] * 3
    item = spec["items"][0]
    assert f"[1] {item['contexts'][0]}" in asked[0] and f"[4] {item['contexts'][3]}" in asked[0]
    assert item["question_id"] == f"dev{bench.fresh_first()}"


def test_sentences_citing_nothing_are_reported_apart(bench):
    items = [{"id": "a", "split": "report", "sentences": [
        {"text": "x", "supported": True, "relevant": [True]}, {"text": "y", "supported": False, "relevant": []}]}]
    scored = [{"rows": [{"supported": False, "p_supported": 0.2, "cites": [1], "citations": [
        {"relevant": False, "why": "its sentence is not supported"}]},
        {"supported": False, "p_supported": 0.0, "cites": [], "citations": []}]}]
    got = bench.compare(items, scored, "report")
    assert got["recall_verdicts"]["n"] == 2 and got["recall_verdicts"]["accuracy"] == 0.5
    assert got["recall_verdicts_citing"]["n"] == 1 and got["recall_verdicts_citing"]["accuracy"] == 0.0
    assert got["precision_verdicts"]["n"] == 1
    other = [{**items[0], "id": "b", "split": "tune"}]
    assert bench.compare(items + other, scored * 2, "report")["recall_verdicts"]["n"] == 2
    assert bench.compare(items + other, scored * 2, "all")["recall_verdicts"]["n"] == 4


def test_the_real_set_is_labelled_and_split_by_question(bench):
    path = BENCHMARKS / "citation_labels_real.json"
    if not path.is_file() or not (bench.DATA / "corpus.jsonl").is_file():
        pytest.skip("no real-answer set or no HotpotQA data here")
    items = bench.load(path)  # every sentence labelled, as the metric parses it
    assert sum(len(i["sentences"]) for i in items) >= 100
    halves: dict[str, set[str]] = {}
    for i in items:
        halves.setdefault(i["question_id"], set()).add(i["split"])
    assert all(len(s) == 1 for s in halves.values())  # a question's answers are all in one half


def test_the_fresh_set_is_labelled_for_reporting_on_questions_no_other_set_uses(bench):
    path = BENCHMARKS / "citation_labels_fresh.json"
    if not path.is_file() or not (bench.DATA / "corpus.jsonl").is_file():
        pytest.skip("no fresh set or no HotpotQA data here")
    items = bench.load(path)  # every sentence labelled, as the metric parses it
    sentences = [s for i in items for s in i["sentences"]]
    assert len(sentences) >= 100 and {i["split"] for i in items} == {"report"}
    first = bench.fresh_first()
    assert [i["question_id"] for i in items] == [f"dev{first + k}" for k in range(len(items))]
    assert all(not s["supported"] for s in sentences if not s["cites"])  # citing nothing is unsupported


def test_first_answers_keeps_the_split_order(bench):
    items = [{"id": "q1:a"}, {"id": "q2:a"}, {"id": "q1:b"}]
    assert [i["id"] for i in bench.first_answers(items, 2)] == ["q1:a", "q2:a"]
    assert bench.first_answers(items, None) == items
