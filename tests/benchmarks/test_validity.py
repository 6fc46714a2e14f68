"""The statistics of benchmarks/validity.py on hand-computed cases (no corpus, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.benchmarks.scripts import loaded


@pytest.fixture(scope="module")
def validity():
    yield from loaded("validity.py")


# Systems A, B, C, D; the truth ranks them A > B > C > D.
TRUTH = [4.0, 3.0, 2.0, 1.0]

# (estimate, tau_AP(truth, estimate)) by hand: for each system from rank 2 of the estimate down,
# the share of the systems above it that the truth also puts above it; tau_AP = 2/(N-1) * sum - 1.
TAU_AP_CASES = [
    ([4.0, 3.0, 2.0, 1.0], 1.0),          # same order: 1 + 1 + 1
    ([1.0, 2.0, 3.0, 4.0], -1.0),         # reversed: 0 + 0 + 0
    ([3.0, 4.0, 2.0, 1.0], 1 / 3),        # top pair swapped (B A C D): 0 + 2/2 + 3/3 = 2 -> 2/3 * 2 - 1
    ([4.0, 3.0, 1.0, 2.0], 7 / 9),        # bottom pair swapped (A B D C): 1 + 2/2 + 2/3 -> 2/3 * 8/3 - 1
    ([2.0, 4.0, 3.0, 1.0], 1 / 3),        # B C A D: 1/1 + 0/2 + 3/3 = 2
]


@pytest.mark.parametrize(("estimate", "expected"), TAU_AP_CASES)
def test_tau_ap_by_hand(validity, estimate, expected):
    assert validity.tau_ap(TRUTH, estimate) == pytest.approx(expected, abs=1e-12)


def test_tau_ap_weights_the_top_where_kendall_does_not(validity):
    top, bottom = [3.0, 4.0, 2.0, 1.0], [4.0, 3.0, 1.0, 2.0]
    assert validity.kendall_tau(TRUTH, top) == pytest.approx(validity.kendall_tau(TRUTH, bottom))  # both 2/3
    assert validity.tau_ap(TRUTH, top) < validity.tau_ap(TRUTH, bottom)


def test_tau_ap_is_not_symmetric(validity):
    # B C A D against A B C D: tau_AP is 1/3 one way; the other way (estimate A B C D, truth B C A D)
    # B has A above it, which the truth puts below (0/1), C has A wrong and B right (1/2), D 3/3:
    # 2/3 * 1.5 - 1 = 0. Kendall's tau is 1/3 both ways.
    other = [2.0, 4.0, 3.0, 1.0]
    assert validity.tau_ap(TRUTH, other) == pytest.approx(1 / 3)
    assert validity.tau_ap(other, TRUTH) == pytest.approx(0.0, abs=1e-12)
    assert validity.kendall_tau(TRUTH, other) == pytest.approx(validity.kendall_tau(other, TRUTH)) == pytest.approx(1 / 3)


def test_tau_ap_matches_ircor(validity):
    # The example of R package ircor (Urbano & Marrero), whose tauAP(x, y) takes x as the truth: 0.3928571.
    x = [0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54]
    y = [0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84]
    assert validity.tau_ap(x, y) == pytest.approx(0.3928571, abs=1e-7)
    assert validity.kendall_tau(x, y) == pytest.approx(0.2)


def test_tau_ap_truth_ties_count_half(validity):
    # Truth ties A and B; the estimate puts B first: the pair counts 1/2, the rest is right.
    # Estimate B A C: A has B above (tied in truth: 1/2), C has both right (2/2): 2/2 * 1.5 - 1 = 0.5.
    assert validity.tau_ap([2.0, 2.0, 1.0], [2.0, 3.0, 1.0]) == pytest.approx(0.5)


def test_rank_statistics_refuse_bad_input(validity):
    with pytest.raises(ValueError):
        validity.tau_ap([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        validity.tau_ap([1.0, float("nan")], [1.0, 2.0])
    with pytest.raises(ValueError, match="ties every system"):
        validity.kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])


def test_agreement_on_system_means(validity):
    human = np.array([[1.0, 0.5, 0.0], [0.8, 0.5, 0.2]])           # means 0.9, 0.5, 0.1
    synthetic = np.array([[1.0, 1.0, 0.6], [1.0, 0.8, 0.6]])       # means 1.0, 0.9, 0.6: same order, easier
    stats = validity.agreement(human, synthetic)
    assert stats["tau"] == pytest.approx(1.0)
    assert stats["tau_ap"] == pytest.approx(1.0)
    assert stats["spearman"] == pytest.approx(1.0)
    assert stats["mad"] == pytest.approx((0.1 + 0.4 + 0.5) / 3)
    assert stats["diff"] == pytest.approx((0.1 + 0.4 + 0.5) / 3)


def _matrices(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    quality = np.array([0.7, 0.6, 0.5, 0.4, 0.3])
    human = (rng.random((60, 5)) < quality).astype(float)
    synthetic = (rng.random((40, 5)) < quality[::-1] * 0.5 + 0.4).astype(float)
    return human, synthetic


def test_bootstrap_is_deterministic_with_a_seed(validity):
    human, synthetic = _matrices()
    a = validity.bootstrap(human, synthetic, validity.agreement, n_resamples=200, seed=7)
    b = validity.bootstrap(human, synthetic, validity.agreement, n_resamples=200, seed=7)
    c = validity.bootstrap(human, synthetic, validity.agreement, n_resamples=200, seed=8)
    assert a == b
    assert a != c
    assert set(a) == {"tau", "tau_ap", "spearman", "mad", "diff"}
    for interval in a.values():
        assert interval.lo <= interval.hi
    # The point value is the statistic on the data as given, whatever the resamples.
    assert a["tau"].point == c["tau"].point == pytest.approx(validity.agreement(human, synthetic)["tau"])


def test_split_half_is_deterministic_and_disjoint(validity):
    human, synthetic = _matrices()
    seen: list[tuple[int, int]] = []

    def record(a, b):
        seen.append((len(a), len(b)))
        return validity.kendall_tau(a, b)

    first = validity.split_half(human, n_splits=50, seed=3)
    assert first == validity.split_half(human, n_splits=50, seed=3)
    assert -1.0 <= first.lo <= first.mean <= first.hi <= 1.0
    validity.split_half(human, synthetic, n_splits=5, seed=3, statistic=record)
    assert seen == [(5, 5)] * 5  # the statistic receives system means, one per system


def test_split_half_halves_do_not_share_questions(validity):
    # Question i scores i on every system: a half's mean names its questions, so two halves
    # drawn from 0..9 without overlap have means summing to 2 * 4.5.
    human = np.repeat(np.arange(10.0)[:, None], 3, axis=1) + np.array([0.0, 0.1, 0.2])
    means: list[tuple[float, float]] = []

    def record(a, b):
        means.append((a[0], b[0]))
        return 0.0

    validity.split_half(human, n_splits=20, seed=0, statistic=record)
    assert all(a + b == pytest.approx(9.0) for a, b in means)


def test_winner_check_on_a_constructed_case(validity):
    names = ["a", "b", "c"]
    human = np.array([[1.0, 0.0, 0.0]] * 20 + [[0.0, 1.0, 0.0]] * 5)  # a wins on the human board
    # Synthetic board 1: b is clearly best and a clearly worse -> ▼.
    worse = np.array([[0.0, 1.0, 0.0]] * 30)
    assert validity.winner_mark(human, worse, names) == ("a", "▼")
    # Synthetic board 2: a is the best there too -> ★.
    same = np.array([[1.0, 0.0, 0.0]] * 30)
    assert validity.winner_mark(human, same, names) == ("a", "★")
    # Synthetic board 3: b is a hair ahead of a on a few questions, not distinguishable -> ≈.
    close = np.array([[1.0, 1.0, 0.0]] * 29 + [[0.0, 1.0, 0.0]])
    assert validity.winner_mark(human, close, names) == ("a", "≈")
    assert validity.winner_share(human, same, names, n_resamples=10, compare_resamples=200) == 1.0
    assert validity.winner_share(human, worse, names, n_resamples=10, compare_resamples=200) == 0.0


def test_winner_breaks_ties_by_name(validity):
    assert validity.winner([0.5, 0.7, 0.7], ["a", "c", "b"]) == "b"


def test_document_ranking_keeps_each_document_at_its_best_chunk(validity):
    chunks = ["d2", "d1", "d2", "d3", "d1", "d4"]
    assert validity.document_ranking(chunks, 3) == ["d2", "d1", "d3"]
    assert validity.document_ranking(chunks, 10) == ["d2", "d1", "d3", "d4"]


def test_doc_scores(validity):
    scores = validity.doc_scores(["x", "r1", "y"], {"r1": 1.0, "r2": 1.0}, k=10)
    assert scores["recall@10"] == pytest.approx(0.5)
    idcg = 1.0 + 1.0 / np.log2(3)
    assert scores["ndcg@10"] == pytest.approx((1.0 / np.log2(3)) / idcg)


def test_split_half_size(validity):
    human, synthetic = _matrices()
    # One question scores 1 on the first system, every other 0: a half of 3 questions has mean 0 or 1/3.
    one_hot = np.zeros((60, 2))
    one_hot[0, 0] = 1.0
    means: list[float] = []

    def record(a, b):
        means.extend([a[0], b[0]])
        return 0.0

    validity.split_half(one_hot, size=3, n_splits=50, seed=0, statistic=record)
    assert set(np.round(means, 9)) <= {0.0, round(1 / 3, 9)}
    with pytest.raises(ValueError, match="size"):
        validity.split_half(human, size=31)
    # Against a smaller synthetic set, both sides shrink to its size.
    shrunk = validity.split_half(human, synthetic[:10], n_splits=20, seed=0)
    assert shrunk == validity.split_half(human, synthetic[:10], size=10, n_splits=20, seed=0)


def test_set_overlap_is_the_mean_over_questions(validity):
    docs = [["The Saltgate Bridge opened in 1932."], ["Ferries cross the bay.", "The bay is shallow."]]
    # Question 1: saltg, bridg, year -> 2 of 3 found. Question 2: ferri, shall(ow) -> 2 of 2.
    # A question without a content word is left out.
    share, shared = validity.set_overlap(["Saltgate Bridge: which year?", "Ferries shallow?", "What is it?"],
                                         [*docs, ["Anything."]])
    assert share == pytest.approx((2 / 3 + 1.0) / 2)
    assert shared == pytest.approx(2.0)
    with pytest.raises(ValueError, match="content word"):
        validity.set_overlap(["What is it?"], [["x"]])
    with pytest.raises(ValueError, match="document lists"):
        validity.set_overlap(["a question"], [])


def test_gen_settings_name_the_file(validity):
    assert validity.gen_settings([]) == ({}, "")
    settings, tag = validity.gen_settings(["styles=[keywords]", "gates.max_overlap=0.8"])
    assert settings == {"styles": ["keywords"], "gates": {"max_overlap": 0.8}}
    assert tag == "styles-keywords-gates.max-overlap-0.8"


def test_dense_only_agreement_uses_the_given_columns(validity):
    import argparse

    human, _ = _matrices()
    args = argparse.Namespace(resamples=50, splits=50, stat_seed=0)
    assert validity._dense_only(human, human, [0, 1], 30, args) == ""  # too few variants to rank
    # The synthetic set agrees on columns 0-2 and reverses 3-4: only the first three are asked about.
    reversed_tail = human.copy()
    reversed_tail[:, [3, 4]] = human[:, [4, 3]]
    cell = validity._dense_only(human, reversed_tail, [0, 1, 2], 30, args)
    assert cell.startswith("1.000 [") and cell.endswith("; 3 variants)")


def test_separated_set_reuses_searches_and_differs_by_construction(validity):
    members = validity.separated_variants()
    assert len({v.name for v in members}) == len(members) == 9
    full = {v.search_key() for v in members if v.top_k == 10}
    # Every K-cut variant is its K=10 twin's ranking cut short: no search of its own.
    assert all(v.search_key() in full for v in members if v.top_k < 10)
    assert {v.top_k for v in members} == {1, 3, 10}
    assert {v.retrieval.mode for v in members} == {"dense", "hybrid"}
    assert {v.embedder for v in members} == {"minilm", "l3"}


def test_union_keeps_order_and_refuses_one_name_for_two_setups(validity):
    mixed, separated = validity.variants(), validity.separated_variants()
    both = validity.union({"mixed": mixed, "separated": separated})
    assert [v.name for v in both[:len(mixed)]] == [v.name for v in mixed]
    assert len(both) == len(mixed) + sum(v.name not in {m.name for m in mixed} for v in separated)
    clash = validity.Variant("minilm flat", top_k=1)
    with pytest.raises(ValueError, match="two set-ups"):
        validity.union({"a": [validity.Variant("minilm flat")], "b": [clash]})


def test_evaluate_cuts_each_variant_at_its_k_and_searches_once(validity, tmp_path, monkeypatch):
    import json

    from ragsweep.gen.documents import read_beir
    from ragsweep.harness.cache import Cache
    from ragsweep.harness.pipeline.pipeline import Pipeline

    docs = {"a": "The Saltgate lighthouse was lit in 1903.", "b": "Saltgate harbour ferries cross the bay.",
            "c": "Granite quarries closed in 1950."}
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "text": t}) + "\n" for k, t in docs.items()))
    (tmp_path / "queries_dev.jsonl").write_text(json.dumps({"_id": "q", "text": "Saltgate ferries"}) + "\n")
    (tmp_path / "qrels_dev.tsv").write_text("query-id\tcorpus-id\tscore\nq\ta\t1\n")
    corpus = read_beir(tmp_path, split="dev")
    calls = []
    search = Pipeline.search
    monkeypatch.setattr(Pipeline, "search", lambda self, *a, **kw: calls.append(1) or search(self, *a, **kw))
    bm25 = validity.retrieval("bm25")
    members = [validity.Variant("bm25", retrieval=bm25), validity.Variant("bm25 K=1", retrieval=bm25, top_k=1)]
    # 'Saltgate ferries' ranks b (both words) above a (one word); a is the relevant one.
    sets = {"human": (["Saltgate ferries"], [{"a": 1.0}])}
    out = validity.evaluate(corpus, sets, Cache(tmp_path / "cache"), members)
    assert len(calls) == 1
    assert out["human"]["ndcg@10"][0].tolist() == pytest.approx([1 / np.log2(3), 0.0])
    assert out["human"]["recall@10"][0].tolist() == [1.0, 0.0]
    assert out["human"]["first"][0].tolist() == [2, 0]  # a is second at K=10, gone at K=1


def test_first_relevant_and_where_it_lands(validity):
    assert validity.first_relevant(["x", "r", "y"], {"r": 1.0, "z": 1.0}) == 2
    assert validity.first_relevant(["x", "y"], {"r": 1.0}) == 0
    assert validity.first_relevant(["r0", "r"], {"r0": 0.0, "r": 2.0}) == 2  # a grade of 0 is not relevant
    assert validity.landing(np.array([1, 1, 3, 0])) == pytest.approx((0.5, 0.25, 0.25))


def test_landing_rows_read_the_variant_people_rank_first(validity):
    names = ["weak", "strong"]
    human = {"ndcg@10": np.array([[0.0, 1.0], [0.0, 0.5]]), "first": np.array([[0, 1], [0, 3]])}
    synthetic = {"ndcg@10": np.array([[1.0, 1.0]] * 4), "first": np.array([[1, 1], [1, 1], [1, 2], [0, 0]])}
    rows = validity.landing_rows("c", names, {"human": human, "gen": synthetic})
    assert rows == ["| c | human | strong | 2 | 0.50 | 0.50 | 0.00 | 0.50 |",
                    "| c | gen | strong | 4 | 0.50 | 0.25 | 0.25 | 0.67 |"]
    lost = {"ndcg@10": np.zeros((2, 2)), "first": np.zeros((2, 2))}
    assert validity.landing_rows("c", names, {"human": human, "gen": lost})[1] == \
        "| c | gen | strong | 2 | 0.00 | 0.00 | 1.00 | – (none found) |"  # no NaN


def test_a_resample_that_ties_every_system_is_counted_not_fatal(validity):
    # Two systems that differ on questions 0 and 1 only (A first): a half holding neither ties them.
    # The halves are complementary, so a split is defined only when each half holds one of the two.
    scores = np.full((40, 2), 0.5)
    scores[[0, 1], 0] = 1.0
    ceiling = validity.split_half(scores, size=20, n_splits=200, seed=0)
    assert 0 < ceiling.undefined < 200
    assert ceiling.lo == ceiling.hi == 1.0 and "resamples tied" in str(ceiling)
    tied = np.full((10, 3), 0.5)
    with pytest.raises(ValueError, match="no resample gave a value"):
        validity.split_half(tied, size=5, n_splits=10, seed=0)
    boot = validity.bootstrap(scores, scores, lambda h, s: {"tau": validity.kendall_tau(h.mean(0), s.mean(0))},
                              n_resamples=100, seed=0)["tau"]
    assert boot.point == 1.0 and 0 < boot.undefined < 100


def test_a_cached_set_written_with_other_checks_is_named_stale(validity):
    from ragsweep.gen.report import REASONS
    from ragsweep.gen.units import UNITS

    fresh = {"gates": validity.gate_settings({}), "reasons": dict(REASONS), "units": UNITS}
    assert validity.stale(fresh, {}) is None
    assert "max_overlap" in validity.stale(fresh, {"gates": {"max_overlap": 0.8}})
    assert "does not record its gates" in validity.stale({"seconds": 3.0}, {})
    older = {**fresh, "reasons": {k: v for k, v in REASONS.items() if k != "restated"}}
    assert validity.stale(older, {}) == "written before the checks restated existed"
    # Glued paragraphs cut into separate units write other questions from the same seed.
    assert validity.stale({k: v for k, v in fresh.items() if k != "units"}, {}) == \
        f"written from other sentence units (before {UNITS})"
    assert validity.stale({**fresh, "units": "nupunkt"}, {}) == "written from other sentence units (nupunkt)"


def test_a_stale_cached_set_is_used_with_a_warning(validity, tmp_path, capsys):
    import json

    from ragsweep.gen.documents import read_shipped

    corpus, args = read_shipped(), ("shipped", "none", 3, 0, tmp_path, ["gates.embed=false"])
    first, _, path = validity.synthetic_set(corpus, *args)            # written
    again, _, _ = validity.synthetic_set(corpus, *args)               # read back: the same checks
    assert again == first and len(first[0]) == 3
    assert "warning" not in capsys.readouterr().err
    report = path.with_name(path.stem + ".report.json")
    body = json.loads(report.read_text())
    report.write_text(json.dumps({k: v for k, v in body.items() if k != "gates"}))
    assert validity.synthetic_set(corpus, *args)[0] == first          # still used, as it is ...
    assert "does not record its gates" in capsys.readouterr().err     # ... with a warning


def test_a_broken_report_is_named_and_the_set_still_used(validity, tmp_path):
    report = tmp_path / "set.report.json"
    assert validity.read_report(report) == ({}, None)                  # none: nothing to say
    report.write_text('{"gates": ')
    body, why = validity.read_report(report)
    assert body == {} and why == f"its report {report} is not JSON (line 1, column 11: Expecting value)"
    report.write_text("[1, 2]")
    assert validity.read_report(report) == ({}, f"its report {report} is not a JSON object")
    report.write_text('{"seconds": 3.5}')
    assert validity.read_report(report) == ({"seconds": 3.5}, None)


def _systems(rng, n, means, noise=0.25):
    """n questions x systems: each question's score is a system's mean plus question noise."""
    return np.clip(np.asarray(means)[None, :] + rng.normal(0, noise, (n, len(means))), 0, 1)


def test_ceiling_gap_holds_zero_for_a_second_sample_of_people_and_not_for_a_reversed_board(validity):
    rng = np.random.default_rng(7)
    means = np.linspace(0.45, 0.55, 6)  # near ties: halves of people disagree on some pairs
    human = _systems(rng, 200, means)
    alike = _systems(rng, 100, means)              # the same systems, other questions
    reversed_ = _systems(rng, 100, means[::-1])     # a board that orders them the other way
    same = validity.ceiling_gap(human, alike, n_splits=300, seed=0)
    assert same.lo < 0 < same.hi
    wrong = validity.ceiling_gap(human, reversed_, n_splits=300, seed=0)
    assert wrong.hi < 0 and wrong.point < -0.5  # a reversed order against people's own
    assert validity.ceiling_gap(human, alike, n_splits=300, seed=0) == same  # seeded
    with pytest.raises(ValueError, match="half the human questions"):
        validity.ceiling_gap(human[:1], alike)


def test_ceiling_gap_is_printed_in_the_agreement_row(validity):
    import argparse

    rng = np.random.default_rng(1)
    means = np.linspace(0.2, 0.8, 4)
    human, synthetic = _systems(rng, 40, means), _systems(rng, 20, means)
    args = argparse.Namespace(resamples=50, stat_seed=0, splits=50, winner_resamples=20)
    row = validity.agreement_row("c", "ndcg@10", "none", human, synthetic, [f"s{i}" for i in range(4)], args)
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    assert len(cells) == len(validity.HEADER[1].strip("|").split("|"))
    gap = validity.ceiling_gap(human, synthetic, size=20, n_splits=50, seed=0)
    assert cells[11] == str(gap)
