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
    gives_away = sample("In which year did the Saltgate Bridge open, 1932?", "1932")
    assert check_sample(gives_away, CORPUS, cfg) == "trivial"
    # a choice names its answer by design (people's HotpotQA comparisons: "Who was born first, A or B?")
    assert check_sample(sample("Did the Saltgate Bridge open in 1932 or later?", "1932"), CORPUS, cfg) is None


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


# --- rule families: every failure at once (all_reasons), and switched off (gates.families_off) -------------

def test_all_reasons_lists_every_family_a_sample_fails_in_order():
    from ragsweep.gen.gates import FAMILIES, all_reasons

    cfg = GateConfig()
    both = sample("It is said the town was opened in what year?", "1932")  # a pronoun start and an unnamed town
    assert all_reasons(both, CORPUS, cfg) == [("pronoun_start", "not_self_contained"),
                                              ("unnamed_thing", "not_self_contained")]
    assert check_sample(both, CORPUS, cfg) == "not_self_contained"  # the first reason, as before
    assert all_reasons(sample("In which year did the Saltgate Bridge over the River Ashby open?", "1932"), CORPUS,
                       cfg) == []
    copied = sample("The Saltgate Bridge opened in 1932 and carries four lanes across the River Ashby?", "four lanes")
    assert ("copy", "trivial") in all_reasons(copied, CORPUS, cfg)
    assert all(reason for reason in FAMILIES.values())


def test_a_family_switched_off_no_longer_rejects_and_the_others_still_do():
    both = sample("It is said the town was opened in what year?", "1932")
    assert check_sample(both, CORPUS, GateConfig(families_off=("pronoun_start",))) == "not_self_contained"
    assert check_sample(both, CORPUS, GateConfig(families_off=("pronoun_start", "unnamed_thing"))) is None
    copied = sample("The Saltgate Bridge opened in 1932 and carries four lanes across the River Ashby?", "four lanes")
    assert check_sample(copied, CORPUS, GateConfig(families_off=("copy",))) == "trivial"  # it gives "four lanes" away
    assert check_sample(copied, CORPUS, GateConfig(families_off=("copy", "gives_away"))) is None
    multi = TestSample("m", "When did the Saltgate Bridge open?", "1932", (Span("d", 0, 40), Span("d", 40, len(TEXT))),
                       "multi_hop", {}, (TEXT[:40], TEXT[40:]))
    assert check_sample(multi, CORPUS, GateConfig()) == "wrong_kind"
    assert check_sample(multi, CORPUS, GateConfig(families_off=("kind_one_sentence",))) is None


def test_unknown_families_are_an_input_error_naming_them():
    from ragsweep.gen.gates import check_families
    from ragsweep.metrics.errors import InputError

    assert check_families(["copy", "deictic"]) == ("copy", "deictic")
    with pytest.raises(InputError, match="'partial_name'"):
        check_families(["copy", "partial_name"])


def test_families_off_from_the_config():
    from ragsweep.gen.app import gates_record, gen_config
    from ragsweep.harness.api import gen_settings_config
    from ragsweep.metrics.errors import InputError

    cfg = gen_settings_config(settings={"gates": {"families_off": ["copy", "names_nothing"]}})
    gates = gen_config(cfg, 1).gates
    assert gates.families_off == ("copy", "names_nothing")
    assert gates_record(gates, True)["families_off"] == ["copy", "names_nothing"]
    assert "families_off" not in gates_record(gen_config(gen_settings_config(), 1).gates, True)  # old sets stay fresh
    for bad, message in ((["nope"], "unknown gate families 'nope'"), ("copy", "must be a list")):
        with pytest.raises(InputError, match=message):
            gen_config(gen_settings_config(settings={"gates": {"families_off": bad}}), 1)


@pytest.mark.parametrize("question, reference, family", [
    # people's HotpotQA questions the families rejected before (benchmarks/results/2026-11-26-gate-ablation.md)
    ("Are Wenling and Xinzheng both in China?", "yes", None),
    ("Who was born first, Pablo Trapero or Aleksander Ford?", "Aleksander Ford", None),
    ("How long is the river on which Wilbur Dam is located?", "56 km", None),
    ("Brutti di notte is a parody of the film starring which actress?", "Gina Lollobrigida", None),
    ("This fast-food restaurant company was spun off from which American company?", "PepsiCo", None),
    # ... and what they still catch
    ("Who was born first in the Trapero family?", "", "empty_reference"),
    ("What is the name of the movie Prometheus?", "Prometheus (2012)", "gives_away"),
    ("The museum had 84,000 visitors in what year?", "2019", "unnamed_thing"),
    ("It was founded by Pablo Trapero in what year?", "1999", "pronoun_start"),
])
def test_families_on_people_and_generated_questions(question, reference, family):
    from ragsweep.gen.gates import all_reasons

    text = f"Notes. {question} {reference} Aleksander Ford Pablo Trapero Wenling Xinzheng China Gina Lollobrigida PepsiCo 56 km."
    corpus = Corpus([Document("p", text)], source="mem")
    s = TestSample("p", question, reference, (Span("p", 0, len(text)),), "single_hop", {}, (text,))
    families = {f for f, _ in all_reasons(s, corpus, GateConfig(min_question_words=1, max_copy=1.0))}
    families -= {"restated", "support"}  # the evidence here is built from the question itself
    assert families == ({family} if family else set())
