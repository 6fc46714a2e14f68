"""Quality gates: hand-made cases with exact outcomes."""

import numpy as np
import pytest

from ragsweep.gen.documents import Corpus, Document, Span
from ragsweep.gen.gates import GateConfig, check_sample
from ragsweep.gen.report import Report
from ragsweep.gen.schedule import kind_quotas
from ragsweep.gen.testset import TestSample
from ragsweep.gen.wording import DuplicateFilter, Overlap, copy_ratio, lexical_overlap, normalise, support_ratio

TEXT = "The Saltgate Bridge opened in 1932 and carries four lanes across the River Ashby."
CORPUS = Corpus([Document("d", TEXT)], source="mem")


def sample(question: str, reference: str, span: Span = Span("d", 0, len(TEXT)), quote: str | None = TEXT) -> TestSample:
    return TestSample("s", question, reference, (span,), "single_hop", {}, (quote,))


def test_support_ratio_counts_content_words_found_in_evidence():
    assert support_ratio("1932", TEXT) == 1.0
    assert support_ratio("four lanes", TEXT) == 1.0
    assert support_ratio("six lanes", TEXT) == 0.5
    assert support_ratio("the", TEXT) == 1.0  # no content word: nothing to contradict


def test_copy_ratio_is_longest_copied_run_over_evidence_length():
    assert copy_ratio(TEXT, TEXT) == 1.0
    assert copy_ratio("Which river does it cross?", TEXT) == pytest.approx(1 / 14)


def test_lexical_overlap_by_hand():
    # Content words (5-letter keys): river, saltg, bridg, cross. TEXT has the first three; "across"
    # is not "cross". 3 of 4.
    assert lexical_overlap("Which river does the Saltgate Bridge cross?", [TEXT]) == Overlap(0.75, 3)
    # Repeated words count once; prefixes match inflections ("bridges" -> "bridg").
    assert lexical_overlap("Bridges, bridges: Saltgate bridges?", [TEXT]) == Overlap(1.0, 2)
    # Several relevant documents: the words of any of them.
    assert lexical_overlap("Which river does the Saltgate Bridge cross?", [TEXT, "Ferries cross the bay."]) == Overlap(1.0, 4)
    assert lexical_overlap("Who built it?", [TEXT]) == Overlap(0.0, 0)    # "built" only
    assert lexical_overlap("What is it?", [TEXT]) is None               # no content word: undefined


def test_gates_in_order():
    cfg = GateConfig()
    good = sample("In which year did the Saltgate Bridge over the River Ashby open?", "1932")
    assert check_sample(good, CORPUS, cfg) is None
    assert check_sample(sample("What year, according to the passage, did the bridge open?", "1932"), CORPUS, cfg) == "not_self_contained"
    assert check_sample(sample("In this study, when did the Saltgate Bridge open?", "1932"), CORPUS, cfg) == "not_self_contained"
    assert check_sample(sample("It opened in which year, the bridge?", "1932"), CORPUS, cfg) == "not_self_contained"
    assert check_sample(sample("When did the Saltgate Bridge open to traffic?", "In 1954"), CORPUS, cfg) == "unsupported"
    copied = "The Saltgate Bridge opened in 1932 and carries four lanes across the River Ashby?"
    assert check_sample(sample(copied, "four lanes"), CORPUS, cfg) == "trivial"
    gives_away = sample("Did the Saltgate Bridge open in 1932 or later?", "1932")
    assert check_sample(gives_away, CORPUS, cfg) == "trivial"


def test_overlap_cap():
    # "Which river does the Saltgate Bridge cross?": 3 of its 4 content words are in TEXT (0.75).
    question = sample("Which river does the Saltgate Bridge cross?", "the River Ashby")
    assert check_sample(question, CORPUS, GateConfig()) is None                  # no cap by default
    assert check_sample(question, CORPUS, GateConfig(max_overlap=0.8)) is None
    assert check_sample(question, CORPUS, GateConfig(max_overlap=0.7)) == "high_overlap"


def test_report_warns_when_questions_copy_their_evidence():
    r = Report(requested=3)
    assert r.overlap()["mean"] is None and "no accepted" in r.overlap_line()
    for share in (0.6, 0.7, 0.8):
        r.accept("single_hop", share)
    assert r.overlap()["mean"] == pytest.approx(0.7) and r.overlap()["warning"] is None
    copying = Report(requested=2)
    copying.accept("single_hop", 1.0)
    copying.accept("single_hop", 0.9)
    summary = copying.to_dict()["overlap"]
    assert summary["mean"] == 0.95 and summary["median"] == 0.95 and summary["n"] == 2
    assert "BM25" in summary["warning"] and "0.95" in copying.overlap_line()


def test_evidence_not_verbatim():
    cfg = GateConfig()
    moved = sample("In which year did the Saltgate Bridge open?", "1932", Span("d", 1, len(TEXT)))
    assert check_sample(moved, CORPUS, cfg) == "evidence_not_verbatim"
    missing = sample("In which year did the Saltgate Bridge open?", "1932", Span("x", 0, 5), None)
    assert check_sample(missing, CORPUS, cfg) == "evidence_not_verbatim"


def test_duplicates_by_text_and_by_embedding():
    def embed(texts):  # 2-d "embedding": questions about bridges point one way, others the other
        return np.array([[1.0, 0.0] if "bridge" in t.lower() else [0.0, 1.0] for t in texts], dtype=np.float32)

    f = DuplicateFilter(embed, threshold=0.9)
    reason, vec = f.check("When did the bridge open?")
    assert reason is None
    f.add("When did the bridge open?", vec)
    assert f.check("when did the Bridge open ")[0] == "duplicate_text"
    assert f.check("What year was the bridge opened?")[0] == "duplicate_embedding"
    assert f.check("Who ran the ferry?")[0] is None
    assert normalise("  Café,  OPEN! ") == "cafe open"


def test_kind_quotas_sum_to_n_and_include_every_kind():
    q = kind_quotas(20, [("single_hop", 0.4), ("multi_hop", 0.2), ("comparative", 0.2), ("conditional", 0.2)])
    assert q == {"single_hop": 8, "multi_hop": 4, "comparative": 4, "conditional": 4}
    q = kind_quotas(4, [("single_hop", 0.9), ("multi_hop", 0.04), ("comparative", 0.03), ("conditional", 0.03)])
    assert sum(q.values()) == 4 and all(v == 1 for v in q.values())
    assert kind_quotas(3, [("single_hop", 1.0), ("multi_hop", 0.0)]) == {"single_hop": 3}


def test_report_says_plainly_when_short():
    r = Report(requested=5)
    r.accept("single_hop")
    r.reject("trivial", {"question": "q"})
    r.exhausted.append("single_hop")
    msg = r.message()
    assert "accepted 1 of 5" in msg and "exhausted" in msg and "4 fewer" in msg
    d = r.to_dict()
    assert d["rejected"]["trivial"] == 1 and d["complete"] is False


def test_max_overlap_setting_is_checked():
    import ragsweep
    from ragsweep.metrics.errors import InputError

    with pytest.raises(InputError, match="max_overlap"):
        ragsweep.generate("shipped", 2, gates={"max_overlap": 1.5})
