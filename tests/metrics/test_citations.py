"""Citations: every marker style read into per-sentence citations, structured source lists, and the ALCE
citation metrics worked by hand with a scripted judge that knows which passages state which fact."""

from __future__ import annotations

import asyncio
import re

import pytest

from ragsweep.metrics.attribution import citation_f1, citation_precision, citation_recall, cited_evidence
from ragsweep.metrics.catalogue import RagSample, resolve
from ragsweep.metrics.citations import parse_answer, strip_markers, structured
from ragsweep.metrics.llm import ScriptedLLM
from ragsweep.metrics.scoring import score_samples


@pytest.mark.parametrize(("answer", "cites"), [
    ("The tower is made of iron [1]. It is painted brown [2].", [[1], [2]]),
    ("The tower is made of iron [1, 3]. It is painted brown [2; 3].", [[1, 3], [2, 3]]),
    ("The tower is made of iron [1][3]. It is painted brown [2] [1].", [[1, 3], [2, 1]]),
    ("The tower is made of iron[^1]. It is painted brown[^2].\n\n[^1]: Guide, p. 3\n[^2]: Atlas", [[1], [2]]),
    ("The tower is made of iron\u30101\u3011. It is painted brown\u30102\uff0c3\u3011.", [[1], [2, 3]]),
    ("The tower is made of iron.[1] It is painted brown. [2][3]", [[1], [2, 3]]),
    ("The tower is made of iron [1-3]. It is painted brown.", [[1, 2, 3], []]),
])
def test_each_marker_style_gives_each_sentence_its_contexts(answer, cites):
    parsed = parse_answer(answer, 3)
    assert [list(s.cites) for s in parsed.sentences] == cites
    assert [s.sentence for s in parsed.sentences] == ["The tower is made of iron.", "It is painted brown."]
    assert parsed.answer == "The tower is made of iron. It is painted brown."
    assert all(not s.invalid for s in parsed.sentences)


def test_numbers_that_name_no_context_are_invalid_citations_not_errors():
    parsed = parse_answer("Iron [0]. Brown [2][7]. Red [4, 1].", 3)
    assert [(s.cites, s.invalid) for s in parsed.sentences] == [((), (0,)), ((2,), (7,)), ((1,), (4,))]
    assert parsed.cites_anything
    unknown = parse_answer("Iron [9].", None)  # no context count: the number is taken as given
    assert unknown.sentences[0].cites == (9,)


def test_an_answer_without_markers_cites_nothing_and_keeps_its_text():
    parsed = parse_answer("The tower is made of iron. It is painted brown.", 2)
    assert not parsed.cites_anything and parsed.answer == "The tower is made of iron. It is painted brown."
    assert strip_markers("Iron [1] , brown [2].") == "Iron, brown."


def test_a_structured_source_list_resolves_numbers_ids_and_texts():
    contexts = ["The tower is made of iron.", "The tower is painted brown."]
    ids = {"doc-a": 1, "doc-b": 2}

    def resolve_source(source):
        return ids.get(source) or next((i for i, c in enumerate(contexts, 1) if c == source), None)

    got = structured([{"text": "It is iron [1].", "sources": [1]},
                      {"sentence": "It is brown.", "citations": ["doc-b", "The tower is made of iron."]},
                      {"statement": "It is tall.", "source": "nowhere"}], 2, resolve_source)
    assert [(s.sentence, s.cites, s.invalid) for s in got] == [
        ("It is iron.", (1,), ()), ("It is brown.", (2, 1), ()), ("It is tall.", (), (0,))]
    with pytest.raises(ValueError, match=r"citations\[0\] has no text"):
        structured([{"sources": [1]}], 2)


# ---------------------------------------------------------------- the ALCE maths, judged by a script

FACTS = ("iron", "brown", "park")


def fact_judge():
    """Says yes exactly when the passages it is shown state every fact word of the statement."""

    def respond(messages, schema):
        text = messages[-1]["content"]
        passages = re.search(r"<passages>(.*?)</passages>", text, re.S).group(1).lower()
        statement = re.search(r"<statement>(.*?)</statement>", text, re.S).group(1).lower()
        needed = [f for f in FACTS if f in statement]
        return {"answer": "yes" if all(f in passages for f in needed) else "no"}

    return ScriptedLLM(respond)


CONTEXTS = ["The tower is made of iron.", "The tower is painted brown.", "The tower stands in a park.",
            "The museum sells tickets online."]


def cites(*rows):
    """Citation records from (sentence, cites) or (sentence, cites, invalid) rows."""
    return [{"sentence": row[0], "cites": list(row[1]), "invalid": list(row[2]) if len(row) > 2 else []}
            for row in rows]


def run(fn, citations, judge):
    return asyncio.run(fn(citations, CONTEXTS, "What is the tower like?", judge=judge))


def test_recall_precision_and_f1_follow_alce_by_hand():
    citations = cites(
        ("The tower is made of iron and painted brown.", [1, 2]),  # jointly supported, each needed
        ("The tower is made of iron.", [1, 4]),                   # 1 alone supports; 4 not needed
        ("The tower stands in a park.", [2]),                     # wrong citation: unsupported
        ("The tower is painted brown.", []),                      # no citation: unsupported
        ("The tower is painted brown.", [], [9]),                 # an invalid marker only
    )
    judge = fact_judge()
    recall = run(citation_recall, citations, judge)
    # Supported by their citations: sentences 1 and 2 of 5.
    assert recall.value == pytest.approx(2 / 5)
    assert [r["supported"] for r in recall.explanation["sentences"]] == [True, True, False, False, False]
    precision = run(citation_precision, citations, judge)
    # Citations: [1,2] both relevant; [1] relevant, [4] irrelevant (alone no, the rest supports); [2] of the
    # unsupported sentence irrelevant; the invalid 9 irrelevant: 3 of 6.
    assert precision.value == pytest.approx(3 / 6)
    rows = precision.explanation["sentences"]
    assert [(c["context"], c["relevant"]) for c in rows[0]["citations"]] == [(1, True), (2, True)]
    assert "needed" in rows[0]["citations"][0]["why"]
    assert [(c["context"], c["relevant"]) for c in rows[1]["citations"]] == [(1, True), (4, False)]
    assert "not needed" in rows[1]["citations"][1]["why"]
    assert rows[4]["citations"] == [{"context": 9, "relevant": False, "why": "names no context"}]
    f1 = run(citation_f1, citations, judge)
    assert f1.value == pytest.approx(2 * 0.5 * 0.4 / 0.9)


def test_each_distinct_sentence_and_passage_set_is_judged_once_across_metrics():
    citations = cites(("The tower is made of iron and painted brown.", [1, 2]), ("The tower is made of iron.", [1, 4]))
    judge = fact_judge()
    first = run(citation_recall, citations, judge)
    # Checks: s1 with {1,2}, {1}, {2} (each alone, and each as the other's "rest", reused); s2 with {1,4},
    # {1} (supports alone), {4} (does not; its rest {1} is reused). Passage 4 holds no sentence about s2,
    # so that check asks no model (metrics.evidence): 6 checks, 5 calls.
    assert len(judge.calls) == 5
    assert (first.explanation["checks"], first.explanation["reused"]) == (6, 3)
    for fn in (citation_precision, citation_f1):  # every later metric reads the same verdicts
        again = run(fn, citations, judge)
        assert (again.explanation["checks"], again.explanation["reused"]) == (0, 9)
    assert len(judge.calls) == 5


def test_an_answer_that_cites_nothing_says_so():
    citations = cites(("The tower is made of iron.", []), ("The tower is painted brown.", []))
    judge = fact_judge()
    recall, precision, f1 = (run(fn, citations, judge) for fn in (citation_recall, citation_precision, citation_f1))
    assert recall.status == "ok" and recall.value == 0 and recall.explanation["no_citations"] is True
    assert precision.status == "undefined" and precision.explanation["reason"] == "the answer cites no context"
    assert f1.status == "ok" and f1.value == 0 and f1.explanation["no_citations"] is True
    assert judge.calls == []  # nothing cited, nothing to judge
    none = cited_evidence(citations, [("d", 0, 10)] * 4, [("d", 0, 5)])
    assert none.status == "undefined" and none.explanation["no_citations"]


def test_cited_evidence_reads_spans_or_document_judgements():
    citations = cites(("A.", [1]), ("B.", [2, 3]), ("C.", [2]), ("D.", []))
    retrieved = [("a", 0, 50), ("b", 0, 50), ("a", 100, 150)]
    spans = cited_evidence(citations, retrieved, evidence=[("a", 120, 130)])
    assert spans.value == pytest.approx(1 / 3) and spans.explanation["citing"] == 3  # only B cites a[100:150]
    docs = cited_evidence(citations, retrieved, qrels={"b": 1})
    assert docs.value == pytest.approx(2 / 3)


def test_without_a_judge_the_metrics_use_the_offline_evidence():
    sample = RagSample("s1", question="What is the tower like?", answer="The tower is made of iron. It is in Rome.",
                       contexts=tuple(CONTEXTS), citations=tuple(cites(("The tower is made of iron.", [1]),
                                                                       ("The tower stands in Rome.", [3]))))
    specs = resolve(["citation_recall", "citation_precision", "citation_f1"])
    rows = asyncio.run(score_samples([sample], specs, judge=None, progress=False))
    recall, precision, f1 = (r.result for r in rows)
    assert recall.status == "ok" and recall.explanation["backend"] == "none"
    assert [r["supported"] for r in recall.explanation["sentences"]] == [True, False]
    assert precision.value == pytest.approx(0.5) and f1.value == pytest.approx(0.5)


def test_a_sample_read_without_citations_is_undefined():
    sample = RagSample("s1", answer="The tower is made of iron.", contexts=tuple(CONTEXTS))
    rows = asyncio.run(score_samples([sample], resolve(["citation_recall"]), judge=None, progress=False))
    assert rows[0].result.status == "undefined" and "citations" in rows[0].result.explanation["reason"]


def test_a_sentence_that_restates_the_question_needs_its_citation_to_say_all_of_it():
    # Faithfulness takes the question's words as given; a citation may not: the passage cited says that
    # Paloma is a tequila cocktail and nothing about gin and tonic, so the comparison is unsupported.
    contexts = ["The Paloma is a cocktail made with tequila, grapefruit soda and lime.",
                "Gin and tonic is a highball made with gin and tonic water."]
    question = "Are Gin and tonic and Paloma both cocktails based on tequila?"
    restated = [{"sentence": "Gin and tonic and Paloma are both cocktails based on tequila.", "cites": [1]}]
    told = [{"sentence": "The Paloma is a cocktail based on tequila.", "cites": [1]}]
    bad = asyncio.run(citation_recall(restated, contexts, question))
    good = asyncio.run(citation_recall(told, contexts, question))
    assert bad.value == 0.0 and good.value == 1.0
