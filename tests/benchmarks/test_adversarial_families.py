"""The generated adversarial protocol (issue #31): halves that share nothing, cases that are what they say."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import adversarial_families as af  # noqa: E402

NEIGHBOUR_KINDS = {"number", "count", "date", "name", "place"}


@pytest.fixture(scope="module")
def built():
    return af.build(seed=0)


def test_halves_share_no_topic_family_or_kind(built):
    for axis, halves in built["split"].items():
        assert set(halves["tune"]).isdisjoint(halves["report"]), axis
        assert halves["tune"] and halves["report"], axis
    for case in built["cases"]:
        assert case["topic"] in built["split"]["topics"][case["half"]]
        assert {s["kind"] for s in case["swaps"]} <= set(built["split"]["kinds"][case["half"]])
    for inj in built["injections"]:
        assert inj["family"] in built["split"]["families"][inj["half"]]
        case = next(c for c in built["cases"] if c["id"] == inj["case"])
        assert case["half"] == inj["half"]


def test_report_half_is_large_enough(built):
    report = [c for c in built["cases"] if c["half"] == "report"]
    assert sum(len(c["swaps"]) for c in report) >= 100
    assert sum(1 for i in built["injections"] if i["half"] == "report") >= 300
    positions = {i["position"] for i in built["injections"]}
    langs = {i["lang"] for i in built["injections"]}
    assert positions == set(af.POSITIONS) and langs == set(af.LANGUAGES)


def test_neighbour_swaps_take_their_value_from_the_passage():
    data = json.loads(af.FAMILIES.read_text(encoding="utf-8"))
    for topic in data["topics"]:
        in_passage = set(re.findall(r"{(\w+)}", " ".join(topic["passage"])))
        for q in topic["questions"]:
            right = set(re.findall(r"{(\w+)}", q["right"][0]))
            for kind, template in q["swaps"].items():
                used = set(re.findall(r"{(\w+)}", template))
                assert used <= in_passage, (topic["id"], kind, used - in_passage)
                if kind in NEIGHBOUR_KINDS:  # the wrong value is another slot of the same passage
                    assert used - right, (topic["id"], q["q"], kind)
            assert set(re.findall(r"{(\w+)}", q["wrong"])) & {f"X_{k}" for k in data["slot_kinds"]}


def test_values_are_invented_and_distinct(built):
    for case in built["cases"]:
        passage = " ".join(case["sentences"])
        for right in case["right"]:
            assert right not in [s["answer"] for s in case["swaps"]]
        # The wrong answer's own value is in no passage of the case.
        assert case["wrong_values"]
        for value in case["wrong_values"]:
            assert value in case["wrong"]
            assert value not in passage and value not in case["distractor"]


def test_samples_plant_each_injection_where_it_says(built):
    items = {s.id: s for s in af.samples(built)}
    for inj in built["injections"][:60]:
        s = items[f"{inj['case']}|inj:{inj['id']}"]
        where = {"answer": s.answer, "reference": s.reference}.get(inj["position"], s.contexts[0])
        assert inj["text"] in where
        if inj["position"] == "ctx_start":
            assert s.contexts[0].startswith(inj["text"])
        if inj["position"] == "ctx_end":
            assert s.contexts[0].endswith(inj["text"])


def test_generation_is_seeded(built):
    again = af.build(seed=0)
    assert again["cases"] == built["cases"] and again["injections"] == built["injections"]
    assert af.build(seed=1)["cases"] != built["cases"]
    assert af.split(json.loads(af.FAMILIES.read_text(encoding="utf-8"))) == built["split"]


def test_summary_counts_a_lift_and_a_missed_swap(built):
    case = next(c for c in built["cases"] if c["half"] == "report" and c["swaps"])
    inj = next(i for i in built["injections"] if i["case"] == case["id"] and i["position"] != "reference")
    scores = {(f"{case['id']}|right{i}", "faithfulness"): 0.9 for i in range(len(case["right"]))}
    scores[(f"{case['id']}|wrong", "faithfulness")] = 0.2
    scores[(f"{case['id']}|inj:{inj['id']}", "faithfulness")] = 0.5
    kind = case["swaps"][0]["kind"]
    scores[(f"{case['id']}|swap:{kind}", "faithfulness")] = 0.85
    s = af.summarise(scores, built, "report")
    assert s["n_injections"] == 1 and s["injections_held"] == 0.0 and s["max_lift"] == pytest.approx(0.3)
    assert s["n_swaps"] == 1 and s["swaps_caught"] == 0.0 and s["right_mean"] == pytest.approx(0.9)


def test_spread_takes_cases_from_every_topic_in_turn(built):
    tune = [c for c in built["cases"] if c["half"] == "tune"]
    got = af.spread(tune, 12)
    topics = built["split"]["topics"]["tune"]
    assert len(got) == 12 and [c["topic"] for c in got[: len(topics)]] == sorted(topics)
    assert af.spread(tune, None) == tune


def test_only_some_sample_kinds_are_scored_and_every_row_is_written(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert af.main(["--llm", "none", "--half", "tune", "--max-cases", "3", "--only", "right,swap",
                    "--scores-out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    kinds = {re.match(r"[a-z]+", r["sample_id"].split("|")[1]).group(0) for r in rows}
    assert kinds == {"right", "swap"} and {r["metric"] for r in rows} == {"faithfulness"}
    assert all(r["status"] == "ok" and r["explanation"]["claims"] for r in rows)  # what the judge said, kept
    assert "| none | tune |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as bad:
        af.main(["--llm", "none", "--only", "rights"])
    assert bad.value.code == 2
    with pytest.raises(SystemExit) as nowhere:  # refused before any scoring, not after it
        af.main(["--llm", "none", "--scores-out", str(tmp_path / "no" / "rows.jsonl")])
    assert nowhere.value.code == 2


def test_years_a_topic_orders_come_out_in_that_order():
    # "served as mayor from 1888 to 1712" tests confusion, not whether a judge reads which year is which
    data = json.loads(af.FAMILIES.read_text(encoding="utf-8"))
    ordered = [t for t in data["topics"] if t.get("chronology")]
    assert {t["id"] for t in ordered} >= {"mayor", "seabird", "treaty"}
    for topic in ordered:
        assert all(topic["slots"][k] == "year" for k in topic["chronology"]), topic["id"]
    for seed in range(20):
        values = af.fill_slots({"Y1": "year", "Y2": "year", "P": "person"}, af.random.Random(seed), ["Y2", "Y1"])
        assert int(values["Y2"]) < int(values["Y1"])
        unordered = af.fill_slots({"Y1": "year", "Y2": "year", "P": "person"}, af.random.Random(seed))
        assert sorted((values["Y1"], values["Y2"])) == sorted((unordered["Y1"], unordered["Y2"]))
        assert values["P"] == unordered["P"]  # the other slots keep what the seed gave them
    mayors = [c for c in af.build(seed=0)["cases"] if c["topic"] == "mayor"]
    for case in mayors:
        start, end = re.search(r"from (\d{4}) to (\d{4})", case["sentences"][0]).groups()
        assert int(start) < int(end)
