"""Every ``conf/experiment/*.yaml`` runs, by the command written at its top, on the smallest input
that still exercises it: its own sweep axes and top-K list, with a few test questions.

The shipped-corpus experiments keep the shipped corpus (28 documents) and take the first questions
of its test set. The SciFact experiments keep SciFact's dev split and its qrels but read a subset
folder built from ``../shared/data/scifact``: a few dev claims, their cited abstracts and enough
other abstracts to fill the largest K. The corpus reader has no document limit, so the subset is
the only way to shrink them; the whole-corpus run is ``test_sweep_cli``'s published-figure check.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

pytestmark = pytest.mark.slow

CONF = Path(__file__).resolve().parents[2] / "conf"
EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))
SHIPPED_TESTSET = CONF.parent / "gen" / "data" / "testset.jsonl"
SCIFACT = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scifact"
QUESTIONS = 4  # test questions per experiment


def command_of(name: str) -> tuple[str, list[str]]:
    """The first command written at the top of the experiment: (``sweep``, its arguments)."""
    for line in (CONF / "experiment" / f"{name}.yaml").read_text(encoding="utf-8").splitlines():
        m = re.match(r"#\s+ragsweep (\w+) (.*\+experiment=" + re.escape(name) + r"\b.*)$", line)
        if m:
            return m.group(1), shlex.split(m.group(2))
    raise AssertionError(f"conf/experiment/{name}.yaml does not start with the command that runs it")


def expected_rows(name: str) -> tuple[int, int]:
    """Variants the experiment makes, at least and at most: the product of its sweep axes, times its
    top-K values; an Optuna study's trials times its top-K values, at most (a trial that repeats a
    variant adds no row)."""
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[f"+experiment={name}"], return_hydra_config=True)
    top_k = cfg.retriever.top_k
    ks = len(top_k) if not isinstance(top_k, int) else 1
    if "optuna" in cfg.hydra.sweeper._target_:
        return ks, cfg.hydra.sweeper.n_trials * ks
    axes = [str(v).split(",") for v in (cfg.hydra.sweeper.params or {}).values()]
    n = len(list(itertools.product(*axes))) * ks
    return n, n


def scifact_subset(root: Path, n_queries: int = QUESTIONS, n_docs: int = 120) -> Path:
    """A BEIR folder with the first dev claims, their cited abstracts, and other abstracts up to ``n_docs``."""
    with (SCIFACT / "qrels_dev_cited.tsv").open(encoding="utf-8") as fh:
        header, *lines = fh.read().splitlines()
    qrels = [line.split("\t") for line in lines if line.strip()]
    keep = list(dict.fromkeys(q for q, _, _ in qrels))[:n_queries]
    qrels = [r for r in qrels if r[0] in keep]
    wanted = {d for _, d, _ in qrels}
    docs = []
    with gzip.open(SCIFACT / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["_id"] in wanted or len(docs) < n_docs - len(wanted):
                docs.append(line)
    root.mkdir()
    (root / "corpus.jsonl").write_text("".join(docs), encoding="utf-8")
    (root / "qrels_dev_cited.tsv").write_text("\n".join([header, *("\t".join(r) for r in qrels)]) + "\n",
                                              encoding="utf-8")
    with (SCIFACT / "queries_dev.jsonl").open(encoding="utf-8") as fh:
        queries = [line for line in fh if json.loads(line)["_id"] in keep]
    (root / "queries_dev.jsonl").write_text("".join(queries), encoding="utf-8")
    return root


def shrink(name: str, tmp: Path) -> list[str]:
    """Overrides that make the experiment small without changing what it sweeps."""
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[f"+experiment={name}"], return_hydra_config=True)
    fewer = ["hydra.sweeper.n_trials=4"] if "optuna" in cfg.hydra.sweeper._target_ else []  # the same space
    if cfg.corpus.get("path") and "scifact" in str(cfg.corpus.path):
        if not SCIFACT.is_dir():
            pytest.skip("../shared/data/scifact not present")
        return [f"corpus.path={scifact_subset(tmp / 'scifact')}", *fewer]
    assert cfg.testset is None and "read_shipped" in cfg.corpus._target_, f"{name}: teach shrink() its input"
    small = tmp / "testset.jsonl"
    small.write_text("".join(SHIPPED_TESTSET.read_text(encoding="utf-8").splitlines(keepends=True)[:QUESTIONS]),
                     encoding="utf-8")
    return [f"testset={small}", *fewer]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One cache for all experiments: they share chunkings and embeddings, as a user's runs would."""
    return tmp_path_factory.mktemp("cache")


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_runs_by_its_own_command(name, tmp_path, cache, ragsweep):
    if "/hydra/sweeper: optuna" in (CONF / "experiment" / f"{name}.yaml").read_text():
        pytest.importorskip("hydra_plugins.hydra_optuna_sweeper", reason="pip install 'ragsweep[search]'")
    command, args = command_of(name)
    out = ragsweep(command, *args, *shrink(name, tmp_path), "progress=false", cwd=tmp_path, cache=cache,
                   timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    (sweep,) = (tmp_path / "outputs" / "sweeps").iterdir()
    with (sweep / "leaderboard.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    low, high = expected_rows(name)
    assert low <= len(rows) <= high
    assert len({r["variant"] for r in rows}) == len(rows)
