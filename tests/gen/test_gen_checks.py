"""Ground-truth checks of generated samples: the kind check and the round trip (scripted model)."""

import json

import pytest

from ragsweep.gen.documents import read_shipped
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.kinds import kind_problem
from ragsweep.gen.prompts import RoundTripOutput, WriteOutput
from ragsweep.gen.roundtrip import agreement
from ragsweep.gen.writer import LLMWriter, WriteFailed
from ragsweep.metrics.errors import JudgeError
from ragsweep.metrics.llm import ScriptedLLM
from tests.gen.test_gen_writer import MIX, good_reply

CURIE = ["Marie Curie was born in Warsaw in 1867.", "Warsaw is the capital of Poland."]
TOWERS = ["The Eiffel Tower is 330 metres tall.", "The Chrysler Building is 319 metres tall."]


def test_kind_check_of_a_bridge():
    # The Marie Curie question hides Warsaw; naming it, or asking for it, needs one sentence only.
    assert kind_problem("multi_hop", "Marie Curie was born in the capital of which country?", "Poland", CURIE,
                        "Warsaw") is None
    assert "bridge" in kind_problem("multi_hop", "Warsaw, where Marie Curie was born, is the capital of which "
                                    "country?", "Poland", CURIE, "Warsaw")
    assert "bridge" in kind_problem("multi_hop", "In which capital city was Marie Curie born in 1867?", "Warsaw",
                                    CURIE, "Warsaw")


@pytest.mark.parametrize("kind, question, reference, sentences, problem", [
    ("multi_hop", "Marie Curie was born in the capital of which country?", "Poland", CURIE, None),
    ("multi_hop", "When was Marie Curie born?", "1867", CURIE, "one sentence"),
    ("multi_hop", "In which city was Marie Curie born?", "Warsaw", CURIE, "one sentence"),  # the bridge itself
    ("multi_hop", "Was Marie Curie born in the capital of Poland?", "Yes", CURIE, None),
    ("multi_hop", "Where was Marie Curie born and what is the capital of Poland?", "Warsaw; Warsaw", CURIE,
     "two questions"),
    ("comparative", "Which is taller, the Eiffel Tower or the Chrysler Building?", "The Eiffel Tower", TOWERS, None),
    ("comparative", "How tall is the Eiffel Tower?", "330 metres", TOWERS, "both things"),
    ("comparative", "What do the Eiffel Tower and the Chrysler Building measure?", "330 and 319 metres", TOWERS,
     "no comparison"),
    ("conditional", "If a patient is a child under 16, why is aspirin not advised?", "Reye's syndrome", [], None),
    ("conditional", "What happens to the Old Quay when the river floods?", "it closes", [], None),
    ("conditional", "When the river floods, what happens to the Old Quay?", "it closes", [], None),
    ("conditional", "When are sailings on the Hollin Island route cancelled?",
     "When the mean wind speed at Gannet Point is above 45 knots", [], None),  # the answer is the condition
    ("conditional", "When was aspirin first advised against for children?", "1986", [], "states a condition"),
    ("conditional", "Which syndrome makes aspirin unsafe for children?", "Reye's syndrome", [], "states a condition"),
    # a "when" inside a quoted title is no condition (1.5B, HotpotQA); the same words unquoted are one
    ("conditional", "When did the South Korean television series 'When a Man Falls in Love' air?", "2013", [],
     "states a condition"),
    ("conditional", "What happens to Jane's boat when the \"Old Quay\" floods?", "it sinks", [], None),
    ("single_hop", "When was Marie Curie born?", "1867", CURIE[:1], None),
])
def test_kind_check_by_hand(kind, question, reference, sentences, problem):
    found = kind_problem(kind, question, reference, sentences)
    assert (found is None) if problem is None else (problem in found)


@pytest.mark.parametrize("answer, reference, agree, reason", [
    ("1890", "In 1890", True, None),                                  # one inside the other
    ("Reye's syndrome", "Because of the risk of Reye's syndrome", True, None),
    ("The Eiffel Tower", "The Eiffel Tower, at 330 metres", True, None),
    ("Cissus", "Lodoicea, with approximately 350 species", False, "words_differ"),  # the false reference
    ("319 metres", "330 metres", False, "numbers_differ"),           # F1 0.5 on "metres", numbers clash
    ("not stated", "1890", False, "not_stated"),
    ("The sentences do not say.", "1890", False, "not_stated"),
    ("the harbour authority board", "harbour board", True, None),   # F1 0.8
    ("Calder Harbour Board of Trustees", "the Port of Calder", False, "words_differ"),  # F1 0.4 (calde only)
])
def test_agreement_by_hand(answer, reference, agree, reason):
    got = agreement(answer, reference)
    assert (got.agree, got.reason) == (agree, reason)


def _scripted(roundtrip_answer):
    """A model that writes with :func:`good_reply` and answers round trips with ``roundtrip_answer``."""
    def reply(messages, schema):
        if schema is WriteOutput:
            return good_reply(messages, schema)
        assert schema is RoundTripOutput
        return {"answer": roundtrip_answer(json.loads(messages[-1]["content"]))}
    return ScriptedLLM(reply)


def test_round_trip_rejects_a_disagreeing_answer_and_counts_it():
    corpus = read_shipped()
    seen = []

    def answer(data):  # every other question: a different answer than the writer's reference
        seen.append(data)
        return "Nothing of the kind" if len(seen) % 2 else data["sentences"][-1].rstrip(".").split()[-1]

    llm = _scripted(answer)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=6, kinds=MIX, seed=1, gates=GateConfig(roundtrip_hops=False)),
                      judge=llm)
    assert len(result.samples) == 6
    rt = result.report.roundtrip
    assert rt["checked"] == len(seen) == 6 + result.report.rejected["roundtrip_disagrees"]
    assert rt["agreed"] == 6 and rt["words_differ"] == result.report.rejected["roundtrip_disagrees"] >= 5
    for s in result.samples:
        assert s.provenance["roundtrip"]["agree"] is True
    example = result.report.examples["roundtrip_disagrees"][0]
    assert example["roundtrip"]["answer"] == "Nothing of the kind" and example["roundtrip"]["reason"] == "words_differ"
    # The round trip sees the question and the evidence sentences, never the reference.
    for data, call in zip(seen, [c for c in llm.calls if c.schema is RoundTripOutput]):
        assert set(data) == {"question", "sentences"}
        assert "answer" not in call.messages[-1]["content"]
    assert result.report.to_dict()["roundtrip"] == rt
    assert "round trip agreed on 6 of" in result.report.checks_line()


def test_round_trip_runs_only_after_the_cheap_gates_and_can_be_turned_off():
    corpus = read_shipped()
    state = {"writes": 0}

    def writer(messages, schema):
        if schema is RoundTripOutput:
            return {"answer": "1890"}  # disagrees with every reference
        state["writes"] += 1
        reply = good_reply(messages, schema)
        if state["writes"] % 2:
            reply["question"] = "According to the passage, " + reply["question"]
        return reply

    llm = ScriptedLLM(writer)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=2, seed=0, max_attempts=10), judge=llm)
    trips = [c for c in llm.calls if c.schema is RoundTripOutput]
    assert result.samples == [] and result.attempts == 10
    assert result.report.rejected["not_self_contained"] == 5    # no round trip spent on these
    assert len(trips) == result.report.roundtrip["checked"] == result.report.rejected["roundtrip_disagrees"] == 5
    # Off in the config, or no judge: no round-trip call, the same questions accepted.
    for cfg, judge in ((GenConfig(n=2, seed=0, gates=GateConfig(roundtrip=False)), llm), (GenConfig(n=2, seed=0), None)):
        again = ScriptedLLM(writer)
        out = generate(corpus, LLMWriter(again), cfg, judge=judge)
        assert len(out.samples) == 2 and out.report.roundtrip == {}
        assert not [c for c in again.calls if c.schema is RoundTripOutput]
        assert "no round trip" in out.report.checks_line()


def test_a_failed_round_trip_rejects_and_the_duplicate_gate_forgets_it():
    corpus = read_shipped()
    calls = {"trips": 0}

    def reply(messages, schema):
        if schema is RoundTripOutput:
            calls["trips"] += 1
            if calls["trips"] <= 2:  # the call and its repair both broken: JudgeError
                return "{broken"
            return {"answer": json.loads(messages[-1]["content"])["sentences"][-1].rstrip(".").split()[-1]}
        return good_reply(messages, schema)

    llm = ScriptedLLM(reply)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=3, seed=0), judge=llm)
    assert len(result.samples) == 3
    assert result.report.rejected["roundtrip_failed"] == 1 and result.report.roundtrip["failed"] == 1
    assert "roundtrip_error" in result.report.examples["roundtrip_failed"][0]
    assert [s.id for s in result.samples] == ["gen-0001", "gen-0002", "gen-0003"]


def test_a_judge_error_is_a_rejection_not_a_crash():
    corpus = read_shipped()

    def reply(messages, schema):
        if schema is RoundTripOutput:
            raise JudgeError("down")
        return good_reply(messages, schema)

    llm = ScriptedLLM(reply)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=2, seed=0, max_attempts=4), judge=llm)
    assert result.samples == [] and result.report.rejected["roundtrip_failed"] == 4


def test_kind_check_rejects_single_fact_multi_hop_questions_unless_turned_off():
    corpus = read_shipped()

    def one_sentence(messages, schema):
        reply = good_reply(messages, schema)
        data = json.loads(messages[-1]["content"])
        if data["kind"] == "multi_hop":  # asks about the second sentence only: a single-hop question
            last = data["sentences"][-1]
            words = sorted(set(w for w in last.split() if len(w) > 6), key=lambda w: (-len(w), w))[:2]
            reply["question"] = f"What is said about {' and '.join(words)} in this respect?"
        return reply

    cfg = GenConfig(n=4, kinds=(("single_hop", 0.5), ("multi_hop", 0.5)), seed=3, max_attempts=30)
    checked = generate(corpus, LLMWriter(ScriptedLLM(one_sentence)), cfg)
    assert {s.kind for s in checked.samples} == {"single_hop"}
    # Every multi_hop candidate is turned down: by the kind check, or earlier when its second sentence's
    # subject is a pronoun the question leaves unresolved ("It was built in 1903 ...").
    multi = checked.report.rejected_by_kind["multi_hop"]
    assert multi["wrong_kind"] == checked.report.rejected["wrong_kind"] >= 3
    assert set(multi) == {"wrong_kind", "unresolved_subject"} and sum(multi.values()) >= 10
    off = GenConfig(n=4, kinds=cfg.kinds, seed=3, gates=GateConfig(kind_check=False))
    unchecked = generate(corpus, LLMWriter(ScriptedLLM(one_sentence)), off)
    assert {s.kind for s in unchecked.samples} == {"single_hop", "multi_hop"}
    assert unchecked.report.rejected["wrong_kind"] == 0


def test_the_gen_config_reads_the_checks(tmp_path):
    from hydra import compose, initialize_config_module

    from ragsweep.gen.app import gen_config
    from ragsweep.metrics.errors import InputError

    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="gen", overrides=["llm=none"])
        off = compose(config_name="gen", overrides=["gates.kind_check=false", "gates.roundtrip=false",
                                                    "gates.roundtrip_min_f1=0.8"])
        bad = compose(config_name="gen", overrides=["gates.roundtrip=maybe"])
    g = gen_config(cfg, 1).gates
    assert (g.kind_check, g.roundtrip, g.roundtrip_min_f1) == (True, True, 0.5)
    g = gen_config(off, 1).gates
    assert (g.kind_check, g.roundtrip, g.roundtrip_min_f1) == (False, False, 0.8)
    with pytest.raises(InputError, match="gates.roundtrip must be true or false"):
        gen_config(bad, 1)


def test_a_kind_that_keeps_failing_gives_its_share_up():
    corpus = read_shipped()

    def no_bridges(messages, schema):  # every multi_hop question joins two questions: wrong_kind
        reply = good_reply(messages, schema)
        if json.loads(messages[-1]["content"])["kind"] == "multi_hop":
            reply["question"] = reply["question"].rstrip("?") + " and what else happened there?"
        return reply

    kinds = (("single_hop", 0.5), ("multi_hop", 0.5))
    # Without max_tries_per_sample (the rule writer's case) the kind furthest behind is still drawn first,
    # but it gives up once it has spent its quota's share of max_attempts (2 of 4 x 20 = 10), and single_hop
    # fills the set; before, it spent all 20 attempts and the run ended with fewer than 4.
    stuck = generate(corpus, LLMWriter(ScriptedLLM(no_bridges)), GenConfig(n=4, kinds=kinds, seed=3, max_attempts=20))
    assert [s.kind for s in stuck.samples] == ["single_hop"] * 4
    assert stuck.report.gave_up == {"multi_hop": 10} == {"multi_hop": stuck.report.tried_by_kind["multi_hop"]}
    done = generate(corpus, LLMWriter(ScriptedLLM(no_bridges)),
                    GenConfig(n=4, kinds=kinds, seed=3, max_attempts=20, max_tries_per_sample=3))
    assert [s.kind for s in done.samples] == ["single_hop"] * 4
    assert done.report.gave_up == {"multi_hop": 6} == {"multi_hop": done.report.tried_by_kind["multi_hop"]}
    assert "gave up (max_tries_per_sample) on multi_hop after 6 candidates" in done.report.message()
    assert done.report.to_dict()["gave_up"] == {"multi_hop": 6}
    # A kind that passes well is not given up when it fills the others' share past its own budget
    # (single_hop: 2 samples x 1 try, then all 4).
    one = generate(corpus, LLMWriter(ScriptedLLM(no_bridges)),
                   GenConfig(n=4, kinds=kinds, seed=3, max_attempts=20, max_tries_per_sample=1))
    assert [s.kind for s in one.samples] == ["single_hop"] * 4 and set(one.report.gave_up) == {"multi_hop"}
    assert one.report.tried_by_kind["single_hop"] > 2
    # A large share is given up as soon as even the optimistic end of the kind's pass rate is below
    # 1 / tries (0 of 6), not after its whole budget (3 x 6 = 18 candidates).
    big = generate(corpus, LLMWriter(ScriptedLLM(no_bridges)),
                   GenConfig(n=12, kinds=kinds, seed=3, max_attempts=60, max_tries_per_sample=3))
    assert big.report.gave_up == {"multi_hop": 6} and len(big.samples) == 12


def test_single_hop_never_gives_up_so_a_hard_corpus_still_gets_its_questions():
    """HotpotQA with the 1.5B once passed 18 single_hop candidates of 55: under 1 in 3, so single_hop gave
    up too after the others had, and the run ended with 18 of 50. The fallback kind keeps going."""
    corpus = read_shipped()
    seen = {"single_hop": 0}

    def hard(messages, schema):  # multi_hop never passes; single_hop passes 1 candidate in 4
        reply = good_reply(messages, schema)
        kind = json.loads(messages[-1]["content"])["kind"]
        if kind == "multi_hop":
            reply["question"] = reply["question"].rstrip("?") + " and what else happened there?"
        elif kind == "single_hop":
            seen["single_hop"] += 1
            if seen["single_hop"] % 4:
                reply["question"] = "What did the band do?"            # not self-contained
        return reply

    kinds = (("single_hop", 0.5), ("multi_hop", 0.5))
    done = generate(corpus, LLMWriter(ScriptedLLM(hard)),
                    GenConfig(n=6, kinds=kinds, seed=3, max_attempts=60, max_tries_per_sample=3))
    assert set(done.report.gave_up) == {"multi_hop"} and len(done.samples) == 6
    assert done.report.tried_by_kind["single_hop"] > 3 * 3   # past its own budget (3 tries x its share of 3)


def test_the_pass_rate_bound_that_gives_a_kind_up_early():
    from ragsweep.gen.schedule import pass_rate_upper

    # 0 of n: the bound is 1 - 0.1 ** (1 / n); below 1/3 from n = 6 on, not at 5.
    assert pass_rate_upper(0, 6) == pytest.approx(1 - 0.1 ** (1 / 6), abs=1e-9)
    assert pass_rate_upper(0, 6) < 1 / 3 < pass_rate_upper(0, 5)
    # 1 of n: P(X <= 1) at the bound is 0.1.
    p = pass_rate_upper(1, 11)
    assert (1 - p) ** 11 + 11 * p * (1 - p) ** 10 == pytest.approx(0.1, abs=1e-9) and p < 1 / 3 < pass_rate_upper(1, 10)
    assert pass_rate_upper(0, 0) == 1.0 == pass_rate_upper(4, 4)


# Questions a 1.5B writer wrote on HotpotQA that take a thing as known without naming it, and
# questions that name what they ask about (hand-read; README "How far to trust a generated test set").
@pytest.mark.parametrize("question, ok", [
    ("What caused the town to flood?", False),
    ("What is the name of the unit?", False),
    ("What was the weight of the gold coins on board?", False),
    ("In which year did the band play at the Super Bowl XXXIII half-time show?", False),
    ("Who was the head coach of the team in Walter Camp's sixth season?", False),
    ("In what year did the terminal handle 294,000 passengers?", False),  # sixth read
    ("What brand of clothing did the store sell in 2017?", False),
    ("What is the name of the policy that was formally titled 'An Act to Promote the Defense of the United States'?",
     True),
    ("What is the name of the event that was staged at the Mount Panorama Circuit?", True),
    ("What is the name of the film based on Albert Camus' novel?", True),
    ("What did the band Foo Fighters release in 2011?", True),
    ("When was the city of Warsaw founded?", True),
    ("The group is headquartered in what?", False),            # the rule writer's clause, at the start
    ("The band Foo Fighters formed in which city?", True),
    ("Which band released the album Nevermind?", True),
    ("Does vitamin D deficiency raise the risk of fractures?", True),
    # SciFact abstracts: the report's own setting, taken as known.
    ("What was the duo's first appearance on Dr. Dre's debut album?", False),
    ("What is the objective of the study?", False),
    ("What is the age range of the individuals examined?", False),
    ("What was the difference in echocardiographic findings between the eccentric and non-eccentric groups?", False),
    ("What is the main topic of the introduction?", False),
    ("What was the software package used for analysis in the study?", False),
    ("What did the study of 1,575 hypertensive adults find about resistin?", True),
    ("Which trial compared the two doses, the STICH trial or the PARTNER trial?", True),
    ("What share of the patients with celiac disease had serum IgA against T84 cells?", True),
])
def test_a_question_names_what_it_asks_about(question, ok):
    from ragsweep.gen.gates import self_contained

    assert self_contained(question, GateConfig()) is ok


def test_a_pronoun_reference_is_rejected():
    from ragsweep.gen.documents import Corpus, Document, Span
    from ragsweep.gen.gates import check_sample
    from ragsweep.gen.testset import TestSample

    text = "Benny Andersson wrote the songs. He co-produced the film Mamma Mia! with his friend Benny Andersson."
    corpus = Corpus([Document("d", text)], "test")
    start = text.index("He co")
    ev = (Span("d", start, len(text)),)
    bare = TestSample(id="x", question="Who co-produced the film Mamma Mia! with Benny Andersson?", reference="He",
                      evidence=ev, kind="single_hop")
    assert check_sample(bare, corpus, GateConfig(kind_check=False)) == "empty_reference"


def test_a_multi_hop_question_one_sentence_answers_is_rejected():
    """The single-hop shortcut: asked of each evidence sentence alone, the question still gets its reference."""
    corpus = read_shipped()
    mix = (("multi_hop", 1.0),)

    def answers_alone(data):  # the reference whatever it is shown: one sentence suffices
        return " ".join(data["sentences"][-1].rstrip(".").split()[-3:])

    def needs_both(data):  # the reference only from both sentences
        return answers_alone(data) if len(data["sentences"]) >= 2 else "not stated"

    shortcut = _scripted(answers_alone)
    out = generate(corpus, LLMWriter(shortcut), GenConfig(n=2, kinds=mix, seed=0, max_attempts=6), judge=shortcut)
    assert out.samples == [] and out.report.rejected["one_sentence_answers"] >= 1
    example = out.report.examples["one_sentence_answers"][0]
    assert len(example["roundtrip"]["alone"]) == 2
    assert out.report.roundtrip["one_sentence_answers"] == out.report.rejected["one_sentence_answers"]

    both = _scripted(needs_both)
    ok = generate(corpus, LLMWriter(both), GenConfig(n=2, kinds=mix, seed=0, max_attempts=20), judge=both)
    assert len(ok.samples) == 2 and ok.report.rejected["one_sentence_answers"] == 0
    for s in ok.samples:
        assert s.provenance["roundtrip"]["alone"] == ["not stated", "not stated"]
    # Three round-trip calls per accepted multi_hop question; off: one.
    trips = [c for c in both.calls if c.schema is RoundTripOutput]
    assert len(trips) == 3 * ok.report.roundtrip["checked"]
    off = _scripted(answers_alone)
    kept = generate(corpus, LLMWriter(off), GenConfig(n=2, kinds=mix, seed=0, max_attempts=20,
                                                       gates=GateConfig(roundtrip_hops=False)), judge=off)
    assert len(kept.samples) == 2 and "alone" not in kept.samples[0].provenance["roundtrip"]


def test_once_one_sentence_alone_answers_the_other_is_not_asked():
    import asyncio

    from ragsweep.gen.drafts import Passed
    from ragsweep.gen.roundtrip import round_trip
    from ragsweep.gen.testset import TestSample

    texts = ("The Eiffel Tower is 330 metres tall.", "The Chrysler Building is 319 metres tall.")
    sample = TestSample(id="", question="Which is taller, the Eiffel Tower or the Chrysler Building?",
                        reference="The Eiffel Tower", evidence=(), kind="comparative")
    judge = ScriptedLLM([{"answer": "The Eiffel Tower"}, {"answer": "The Eiffel Tower"}])  # both, then [1] alone
    out = asyncio.run(round_trip(Passed(sample, {}, texts), judge, 0.5))
    assert out.reason == "one_sentence_answers" and out.calls == 2 and judge.remaining == 0
    assert out.example["roundtrip"]["alone"] == ["The Eiffel Tower"]
    judge = ScriptedLLM([{"answer": "The Eiffel Tower"}, {"answer": "not stated"}, {"answer": "not stated"}])
    kept = asyncio.run(round_trip(Passed(sample, {}, texts), judge, 0.5))
    assert kept.reason is None and kept.calls == 3 and kept.sample.provenance["roundtrip"]["alone"] == ["not stated"] * 2


def test_the_round_trip_completes_a_partial_name_and_keeps_the_written_one():
    from ragsweep.gen.roundtrip import _fuller_name

    texts = ["M.S. Dhoni: The Untold Story is a 2016 Indian biographical sports film written by Neeraj Pandey."]
    assert _fuller_name("M.S. Dhoni: The Untold Story", "The Untold Story", texts) == "M.S. Dhoni: The Untold Story"
    assert _fuller_name("The Untold Story", "M.S. Dhoni: The Untold Story", texts) is None  # already whole
    assert _fuller_name("a 2016 Indian biographical sports film", "2016", texts) is None   # not a name
    assert _fuller_name("M.S. Dhoni: The Untold Story (2016)", "The Untold Story", texts) is None  # not verbatim


@pytest.mark.parametrize("question, problem", [
    ("Which film director is known for his performances in more than 55 years and has received a National Medal "
     "of Arts?", "the question asks for no comparison"),
    ("Which song reached number 2 in 1988, and which federation has the largest number of clubs?",
     "two questions joined by 'and', not one comparison"),
])
def test_a_comparative_question_compares_two_things(question, problem):
    sentences = ["With a film career spanning more than 55 years, Arkin reached number 2 in 1988 in Popi.",
                 "A National Medal of Arts recipient, he founded the federation with the largest number of clubs."]
    assert kind_problem("comparative", question, "Arkin", sentences) == problem


def test_a_code_for_an_id_is_not_a_topic():
    """HotpotQA's BEIR ids ("k1273") became "the k1273 mine" in 1.5B-written questions."""
    from ragsweep.gen.documents import Document
    from ragsweep.gen.units import topic_of

    assert topic_of(Document("k514", "Muse are an English rock band from Teignmouth, Devon.")) == "Muse"
    assert topic_of(Document("k9", "The Willunga railway line ran through the suburbs.")) == "Willunga"
    assert topic_of(Document("4983", "the 150 acre mine became a mercury producer.")) == "the 150 acre mine"
    assert topic_of(Document("harbour-guide.md", "The harbour opened in 1887.")) == "harbour guide"
    assert topic_of(Document("k1", "x", {"title": "Port Calder"})) == "Port Calder"


def test_a_reference_from_a_shown_sentence_not_marked_used_widens_the_evidence():
    corpus = read_shipped()

    def from_context(messages, schema):  # answers from the first shown sentence, says it used the last
        reply = good_reply(messages, schema)
        sents = json.loads(messages[-1]["content"])["sentences"]
        reply["answer"] = " ".join(sents[0].rstrip(".").split()[-3:])
        reply["used"] = [len(sents)]
        return reply

    out = generate(corpus, LLMWriter(ScriptedLLM(from_context)), GenConfig(n=3, seed=0, max_attempts=30))
    widened = [s for s in out.samples if s.provenance.get("evidence_widened")]
    assert widened, out.report.rejected
    for s in widened:
        assert len(s.evidence) == 2 and s.quotes[0].rstrip(".").endswith(s.reference)
    # Only a shown sentence can widen it: an answer from nowhere stays unsupported.
    def from_nowhere(messages, schema):
        return {**good_reply(messages, schema), "answer": "Zanzibar quartz lemurs"}

    none = generate(corpus, LLMWriter(ScriptedLLM(from_nowhere)), GenConfig(n=2, seed=0, max_attempts=8))
    assert none.samples == [] and none.report.rejected["unsupported"] == 8


# Hand-read HotpotQA pairs of the packaged 1.5B: a pronoun subject pinned on another name in its sentence
# (doc text, evidence sentence, question, reference), and pairs that resolve the pronoun.
_PRONOUN_CASES = [
    (" He drew all illustrations to the first edition of \"The Adventures of Tom Sawyer\" (1876).",
     'Who drew all illustrations to the first edition of "The Adventures of Tom Sawyer"?', 'Thomas "Tom" Sawyer', True),
    (" It is 84.5 km in diameter and was named after Edmond Halley.", "What is the diameter of the Earth?", "84.5 km", True),
    (" Born into a family of a major art historian and Hermitage Museum curator Andrey Ivanovich Somov, he became "
     "interested in 18th-century art.", "What was Andrey Ivanovich Somov's family background?",
     "Born into a family of a major art historian", True),
    ("Very Rev James MacGregor DD FRSE (1832-1910) was a Scottish minister. In 1886 he was made Chaplain in Ordinary "
     "to Queen Victoria.", "In which year did James MacGregor become Chaplain in Ordinary to Queen Victoria?", "1886", False),
    ("The Chiefs released all-time leading rusher Jamaal Charles after 9 seasons. He was drafted by the Kansas City "
     "Chiefs in the third round.", "Which team drafted Jamaal Charles?", "Kansas City Chiefs", False),
    ("The Ashby Swing Bridge crosses the River Ashby. It was built in 1903 by Holt & Carrow.",
     "Who built the Ashby Swing Bridge?", "Holt & Carrow", False),
]


@pytest.mark.parametrize("text, question, reference, unresolved", _PRONOUN_CASES)
def test_a_pronoun_subject_must_be_resolved_by_the_question(text, question, reference, unresolved):
    from ragsweep.gen.gates import unresolved_subject

    start = text.rindex(". ") + 2 if not text.startswith(" ") else 1
    assert unresolved_subject(question, reference, text, start, len(text)) is unresolved


def test_an_unresolved_pronoun_subject_is_rejected_before_the_round_trip():
    import dataclasses

    from ragsweep.gen.documents import Corpus, Document, Span
    from ragsweep.gen.gates import check_sample
    from ragsweep.gen.testset import TestSample

    text = ("Halley is a lunar impact crater. It is 84.5 km in diameter and was named after Edmond Halley, "
            "and the name was approved in 1973.")
    start = text.index("It is")
    corpus = Corpus([Document("k816", text)], "mem")
    sample = TestSample(id="x", question="What is the diameter of the lunar crater Halley?",
                        reference="84.5 km", evidence=[Span("k816", start, len(text))], kind="single_hop")
    assert check_sample(sample, corpus, GateConfig()) is None   # the question names what "It" is
    earth = dataclasses.replace(sample, question="What is the diameter of the Earth?")
    assert check_sample(earth, corpus, GateConfig()) == "unresolved_subject"


@pytest.mark.parametrize("question", [
    "What is ping, and why is it important?",          # people write pronouns for what they just named,
    "Is it possible to extract a model's training data?",  # ... and as a dummy subject
    "Which film did Tom Dey direct before he moved to Los Angeles?",
])
def test_a_pronoun_alone_does_not_make_a_question_unreadable(question):
    """The pronoun family ("did he", "was it" before any capitalised name) caught no generated question in
    1,300 audited and rejected 11 of people's (benchmarks/gate_audit.py): removed."""
    from ragsweep.gen.gates import FAMILIES, self_contained

    assert "unnamed_pronoun" not in FAMILIES
    assert self_contained(question, GateConfig()) is True


def test_a_pronoun_question_that_another_document_also_fits_is_unspecific():
    """What the pronoun family was for is left to the corpus check, which reads no wording."""
    from ragsweep.gen.absence import CorpusWords, unspecific
    from ragsweep.gen.documents import Corpus, Document

    corpus = Corpus([Document("a", "The guild was founded in the year 1802."),
                     Document("b", "The mill was founded in the year 1911.")], "mem")
    assert unspecific("In which year was it founded?", {"a"}, CorpusWords(corpus)) == "b"


@pytest.mark.parametrize("question, nameless", [
    ("What engine did the car use?", True),
    ("Who was the plaintiff in the lawsuit?", True),
    ("What happened after the war?", True),
    ("In which year did the ship sink?", True),
    ("What engine did the McLaren MP4/5 use?", False),          # a name
    ("Who was the plaintiff in the 1985 lawsuit?", False),       # a number
    ('What engine did the car in "Rush" use?', False),          # a quote
    ("Which engine powers most cars?", False),                  # no definite "the": a general question
    ("Obesity increases the risk of the disease.", False),       # a claim, not a question
    ("Where did Ada Morrow record the album?", False),          # named after the wh-word
    ("What is the name of the relief vessel?", True),
    ("What is the significance of the pathway?", True),
    # described in lower case, as scientific text names things: left to the corpus check (gates.specific)
    ("What is the effect of chronic variable stress on hematopoietic stem cells?", False),
])
def test_a_question_that_names_nothing_is_not_self_contained(question, nameless):
    from ragsweep.gen.gates import names_nothing, self_contained

    assert names_nothing(question) is nameless
    if nameless:
        assert self_contained(question, GateConfig()) is False


def test_the_rule_writer_fills_the_set_when_one_of_its_kinds_never_passes():
    """SciFact: rule-written follow-ups never pass (abstracts name no subject a pronoun can stand for), and
    the rule writer has no max_tries_per_sample, so follow_up took 6,041 of 6,050 attempts and
    ``ragsweep gen llm=none n=300`` wrote 6 questions. Each kind now spends at most its share."""
    from ragsweep.gen.rules import RuleWriter

    corpus = read_shipped()
    writer = RuleWriter()
    real = writer.write

    async def no_follow_ups(cand, *args, **kwargs):
        if cand.kind == "follow_up":
            raise WriteFailed("no pronoun refers to the first turn's subject")
        return await real(cand, *args, **kwargs)

    writer.write = no_follow_ups
    kinds = (("single_hop", 0.8), ("follow_up", 0.2))
    done = generate(corpus, writer, GenConfig(n=10, kinds=kinds, seed=0, max_attempts=250))
    assert len(done.samples) == 10 and {s.kind for s in done.samples} == {"single_hop"}
    # follow_up's share: 2 of 10 samples x 250 attempts = 50 candidates, then it gives its share up.
    assert done.report.gave_up == {"follow_up": 50} == {"follow_up": done.report.tried_by_kind["follow_up"]}


def test_the_report_says_what_each_outcome_cost_in_calls_and_time():
    """Every model call of the run is counted once, under the outcome of the candidate it was made for."""
    corpus = read_shipped()
    seen = []

    def answer(data):  # every other question disagrees
        seen.append(data)
        return "Nothing of the kind" if len(seen) % 2 else data["sentences"][-1].rstrip(".").split()[-1]

    llm = _scripted(answer)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=4, kinds=(("single_hop", 1.0), ("multi_hop", 1.0)), seed=1),
                      judge=llm)
    rep = result.report
    spent = rep.spent
    assert spent["accepted"]["candidates"] == len(result.samples) == rep.accepted
    assert sum(v["candidates"] for v in spent.values()) == result.attempts
    assert {k for k in spent if k != "accepted"} == {k for k, v in rep.rejected.items() if v}
    assert all(spent[k]["candidates"] == v for k, v in rep.rejected.items() if v)
    assert sum(v["calls"] for v in spent.values()) == len(llm.calls)  # each write and round trip, no repair here
    trips = sum(1 for c in llm.calls if c.schema is RoundTripOutput)
    assert spent["roundtrip_disagrees"]["calls"] == 2 * rep.rejected["roundtrip_disagrees"]  # a write, a trip
    assert sum(v["calls"] for v in spent.values()) - trips == result.attempts  # one write per candidate
    assert sum(v["generated_tokens"] for v in spent.values()) == result.usage.completion_tokens > 0
    assert set(rep.seconds) == {"setup", "write", "gates", "roundtrip"} and all(v >= 0 for v in rep.seconds.values())
    body = rep.to_dict()
    assert body["spent"] == spent and set(body["stage_seconds"]) == set(rep.seconds)
    line = rep.time_line()
    assert line.startswith("time:     setup ") and f"{len(llm.calls)} model calls" in line
    assert f"{spent['accepted']['calls']} of them for accepted questions" in line


def test_the_rule_writer_spends_no_model_call():
    from ragsweep.gen.rules import RuleWriter

    result = generate(read_shipped(), RuleWriter(), GenConfig(n=5, seed=0))
    spent = result.report.spent
    assert spent["accepted"]["candidates"] == len(result.samples) == 5
    assert sum(v["candidates"] for v in spent.values()) == result.attempts
    assert all(v["calls"] == 0 and v["generated_tokens"] == 0 for v in spent.values())
    assert "model calls" not in result.report.time_line()
