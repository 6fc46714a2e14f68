"""The human-labelled calibration sets load as the field reports them, with a fixed tune/held-out split."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from calibration_sets import LOADERS, SHARED_DATA, split_of  # noqa: E402

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data not present")


def test_sizes_and_split_are_fixed():
    sizes = {name: len(load(split="all", n=None).samples) for name, load in LOADERS.items()}
    assert sizes == {"halueval": 4000, "qags": 953, "begin": 1229, "ragchecker": 560}
    for name, load in LOADERS.items():
        tune = {s.id for s in load(split="tune", n=None).samples}
        held = {s.id for s in load(split="heldout", n=None).samples}
        assert tune and held and not tune & held
    assert split_of("halueval", "h1") == split_of("halueval", "h1")


def test_sampling_is_seeded():
    a = [s.id for s in LOADERS["qags"](n=10, seed=3).samples]
    assert a == [s.id for s in LOADERS["qags"](n=10, seed=3).samples]
    assert a != [s.id for s in LOADERS["qags"](n=10, seed=4).samples]


def test_an_oracle_agrees_perfectly_and_an_inverted_one_does_not():
    halu = LOADERS["halueval"](n=20)
    oracle = {s.id: float(s.id.endswith("right")) for s in halu.samples}
    assert halu.evaluate(oracle) == {"n_pairs": 20.0, "pairwise_acc": 1.0, "roc_auc": 1.0,
                                     "mean_supported": 1.0, "mean_unsupported": 0.0, "ece": 0.0}
    inverted = halu.evaluate({k: 1 - v for k, v in oracle.items()})
    assert inverted["roc_auc"] == 0.0 and inverted["ece"] == 1.0
    # every score 0.5: means 0.5, and half of each bin's texts are supported, so perfectly calibrated
    flat = halu.evaluate({k: 0.5 for k in oracle})
    assert flat["mean_supported"] == flat["mean_unsupported"] == 0.5 and flat["ece"] == 0.0
    begin = LOADERS["begin"](n=60)
    label = {s.id: 1.0 for s in begin.samples}  # constant scores: AUC 0.5, never NaN
    assert begin.evaluate(label)["roc_auc"] == 0.5


def test_ragchecker_differences_follow_the_label_direction():
    rc = LOADERS["ragchecker"](n=30)
    import json

    data = json.loads((SHARED_DATA / "ragchecker" / "human_labeled_data.json").read_text())
    mean_label: dict[str, list[float]] = {}
    for row in data:
        mean_label.setdefault(str(row["instance_id"]), []).append(row["correctness_label"])
    # response 2 scores the human label: Pearson with correctness must be 1
    scores = {}
    for s in rc.samples:
        rid, model = s.id[1:].split(".")
        lab = sum(mean_label[rid]) / len(mean_label[rid])
        scores[s.id] = lab if model == "model2" else 0.0
    assert rc.evaluate(scores)["correctness_pearson"] == pytest.approx(1.0)


def test_ragchecker_own_scores_are_measured_on_the_same_pairs_the_same_way():
    import json

    from calibration_sets import ragchecker_own_scores
    from ragsweep.metrics.agreement import pearson

    own = ragchecker_own_scores(split="heldout", n=None)
    held = {s.id[1:].split(".")[0] for s in LOADERS["ragchecker"](split="heldout", n=None).samples}
    assert own["n_pairs"] == len(held) == 140
    baseline = json.loads((SHARED_DATA / "ragchecker" / "baseline_ragchecker.json").read_text())
    base = {str(r["instance_id"]): r for r in baseline}
    labels: dict[str, list[float]] = {}
    for row in json.loads((SHARED_DATA / "ragchecker" / "human_labeled_data.json").read_text()):
        labels.setdefault(str(row["instance_id"]), []).append(row["completeness_label"])
    ids = sorted(held)
    diff = [base[i]["model2"]["ragchecker"]["completeness_label"]
            - base[i]["model1"]["ragchecker"]["completeness_label"] for i in ids]
    human = [sum(labels[i]) / len(labels[i]) for i in ids]
    assert own["completeness_pearson"] == pytest.approx(pearson(diff, human))
    assert 0.3 < own["correctness_pearson"] < 0.9  # a real checker agrees with people, imperfectly


def test_a_broken_baseline_file_is_a_clear_input_error(tmp_path):
    import shutil

    from calibration_sets import ragchecker_own_scores
    from ragsweep.metrics.errors import InputError

    (tmp_path / "ragchecker").mkdir()
    shutil.copy(SHARED_DATA / "ragchecker" / "human_labeled_data.json", tmp_path / "ragchecker")
    with pytest.raises(InputError, match="baseline_ragchecker.json: human-labelled data not found"):
        ragchecker_own_scores(root=tmp_path)
    for text, why in (("", "JSONDecodeError"), ('[{"instance_id": 0}]', "KeyError")):
        (tmp_path / "ragchecker" / "baseline_ragchecker.json").write_text(text)
        with pytest.raises(InputError, match=f"not RAGChecker's baseline scores \\({why}"):
            ragchecker_own_scores(root=tmp_path)
