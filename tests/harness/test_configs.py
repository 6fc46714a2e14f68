"""Every config group option composes and instantiates; every experiment composes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from hydra.utils import instantiate

CONF = Path(__file__).resolve().parents[2] / "conf"
# Options that need a value the user must give.
REQUIRED = {"corpus/folder": ["corpus.path=X"], "corpus/jsonl": ["corpus.path=X"], "corpus/beir": ["corpus.path=X"],
            "embedder/sentence_transformers": ["embedder.path=X"]}
LAZY_GROUPS = ("chunker", "embedder", "index")  # objects that load nothing until used


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.mark.parametrize("group, option", [(g, o) for g in ("corpus", *LAZY_GROUPS) for o in options(g)])
def test_group_option_composes(group, option):
    overrides = [f"{group}={option}", *REQUIRED.get(f"{group}/{option}", [])]
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=overrides)
    assert "_target_" in cfg[group]
    if group in LAZY_GROUPS:
        obj = instantiate(cfg[group])
        assert obj is not None
        if group == "chunker":
            assert obj.params()["name"] == option
        if group == "index":
            assert obj.params()["kind"] == option


@pytest.mark.parametrize("experiment", options("experiment"))
def test_experiments_compose(experiment):
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[f"+experiment={experiment}"], return_hydra_config=True)
    assert cfg.retriever.top_k
    text = (CONF / "experiment" / f"{experiment}.yaml").read_text()
    assert text.startswith("# @package _global_") and "ragsweep sweep +experiment=" in text


def test_default_sweep_is_chunk_size_by_top_k():
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", return_hydra_config=True)
    assert cfg.hydra.sweeper.params["chunker.size"] == "256,512,1024"
    assert list(cfg.retriever.top_k) == [1, 3, 5, 10]
    assert cfg.hydra.mode.name == "MULTIRUN"


def test_every_key_is_commented():
    """Configs are documentation: each leaf key of a group option carries a comment or is obvious."""
    for path in CONF.rglob("*.yaml"):
        lines = path.read_text().splitlines()
        assert lines[0].startswith("#") or path.parent.name == "job_logging", f"{path}: first line should say what it is"
