"""Every primary config composes; every config group option is built (nothing loaded); every experiment composes."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_module
from hydra.utils import instantiate
from omegaconf import OmegaConf
from ragsweep.gen.parts import build
from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import ScriptedLLM

CONF = Path(__file__).resolve().parents[2] / "conf"
PRIMARY = sorted(p.stem for p in CONF.glob("*.yaml"))  # one per command: sweep, gen, score, board, ...
GROUPS = sorted(p.name for p in CONF.iterdir() if p.is_dir() and p.name not in ("hydra", "experiment"))
#: Optional dependencies an option must not import while it is built (each loads on first use).
HEAVY = ("torch", "sentence_transformers", "xllamacpp", "onnxruntime", "faiss", "openai")
#: Options whose config builds no object on purpose.
BUILDS_NONE = {"answerer/none", "llm/none"}


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def required(option: str, tmp: Path) -> list[str]:
    """Overrides for the values a user must give (``???``), pointing at tiny inputs made in ``tmp``."""
    targets = {"target/http": ["target.url=http://127.0.0.1:9/ask"],
               "target/openai": ["target.model=tiny", "target.base_url=http://127.0.0.1:9/v1"],
               "target/python": ["target.function=json:dumps"]}
    if option in targets:
        return targets[option]
    if option == "corpus/folder":
        (tmp / "kb").mkdir()
        (tmp / "kb" / "a.md").write_text("The harbour opened in 1890. It has two piers.\n", encoding="utf-8")
        return [f"corpus.path={tmp / 'kb'}"]
    if option == "corpus/jsonl":
        (tmp / "kb.jsonl").write_text(json.dumps({"id": "a", "text": "The harbour opened in 1890."}) + "\n",
                                      encoding="utf-8")
        return [f"corpus.path={tmp / 'kb.jsonl'}"]
    if option == "corpus/ragas_kg":
        node = {"id": "n1", "type": "document", "properties": {"page_content": "The harbour opened in 1890."}}
        (tmp / "kg.json").write_text(json.dumps({"nodes": [node], "relationships": []}), encoding="utf-8")
        return [f"corpus.path={tmp / 'kg.json'}"]
    if option == "corpus/beir":
        root = tmp / "beir"
        root.mkdir()
        (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "", "text": "The harbour opened in 1890."})
                                           + "\n", encoding="utf-8")
        (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "When did the harbour open?"}) + "\n",
                                            encoding="utf-8")
        (root / "qrels").mkdir()
        (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
        return [f"corpus.path={root}"]
    if option == "rerank/cross_encoder":  # an ONNX export's files: nothing is read until the first query
        (tmp / "ce").mkdir()
        for name in ("model.onnx", "tokenizer.json"):
            (tmp / "ce" / name).write_text("{}", encoding="utf-8")
        return [f"rerank.model={tmp / 'ce'}"]
    if option == "embedder/sentence_transformers":
        return [f"embedder.path={tmp / 'no-model-needed-to-construct'}"]
    return []


@functools.cache
def primary_of(group: str) -> str:
    """The first primary config whose defaults list selects ``group``."""
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        return next(name for name in PRIMARY if group in compose(config_name=name))


def loaded_eagerly(obj: Any) -> list[str]:
    """Lazily loaded attributes of ``obj`` (and of a caching wrapper's model) that were loaded anyway."""
    loaded = []
    for o in (obj, getattr(obj, "inner", None)):
        if o is None:
            continue
        lazy = [n for c in type(o).__mro__ for n, v in vars(c).items() if isinstance(v, functools.cached_property)]
        loaded += [f"{type(o).__name__}.{n}" for n in lazy if n in vars(o)]
        if getattr(o, "_server", None) is not None:  # LocalLLM: llama.cpp starts on the first call
            loaded.append(f"{type(o).__name__}._server")
    return loaded


@pytest.mark.parametrize("name", PRIMARY)
def test_primary_config_composes_and_resolves(name):
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name=name, return_hydra_config=True)
    assert cfg.hydra.job.chdir is False  # relative paths stay relative to where the command runs
    OmegaConf.to_container(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]), resolve=True,
                           throw_on_missing=False)  # every interpolation resolves; only `???` values wait
    for callback in (cfg.hydra.callbacks or {}).values():  # the sweep's leaderboard and MLflow hooks
        assert instantiate(callback) is not None


@pytest.mark.parametrize("group, option", [(g, o) for g in GROUPS for o in options(g)])
def test_every_group_option_builds_without_loading_a_model(group, option, tmp_path, cache_dir):
    if group == "target" and option in ("langchain", "llamaindex"):
        pytest.skip("building one calls the user's pipeline factory: built end to end in test_run_frameworks.py")
    overrides = [f"{group}={option}", f"cache.dir={cache_dir}", *required(f"{group}/{option}", tmp_path)]
    primary = primary_of(group)
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name=primary, overrides=overrides)
    assert "_target_" in cfg[group]
    before = {m for m in HEAVY if m in sys.modules}
    extra = {"answerer": {"llm": ScriptedLLM([]), "embedder": None}}.get(group, {})
    try:
        obj = build(cfg[group], group, **extra)
    except InputError as exc:
        pytest.skip(f"{group}={option} needs what this machine lacks to be constructed at all: {exc}")
    if f"{group}/{option}" in BUILDS_NONE:
        assert obj is None
        return
    assert obj is not None
    assert loaded_eagerly(obj) == [], f"{group}={option} loaded its model while being built"
    assert {m for m in HEAVY if m in sys.modules} - before == set(), f"{group}={option} imported an optional dependency"
    if group == "chunker":
        assert obj.params()["name"] == option
    if group == "index":
        assert obj.params()["kind"] == option
    if group == "corpus":
        assert obj.documents and obj.documents[0].text


@pytest.mark.parametrize("experiment", options("experiment"))
def test_experiments_compose(experiment):
    if "/hydra/sweeper: optuna" in (CONF / "experiment" / f"{experiment}.yaml").read_text():
        pytest.importorskip("hydra_plugins.hydra_optuna_sweeper", reason="pip install 'ragsweep[search]'")
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[f"+experiment={experiment}"], return_hydra_config=True)
    assert cfg.retriever.top_k
    text = (CONF / "experiment" / f"{experiment}.yaml").read_text()
    assert text.startswith("# @package _global_") and "ragsweep sweep +experiment=" in text


def test_default_sweep_is_chunk_size_by_context_budget():
    from ragsweep.harness.sweep import cuts_of

    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", return_hydra_config=True)
        with_k = compose(config_name="sweep", overrides=["retriever.top_k=[1,5]"])
        both = compose(config_name="sweep", overrides=["retriever.top_k=[1,5]", "retriever.budget=700"])
    assert cfg.hydra.sweeper.params["chunker.size"] == "256,512,1024"
    assert cfg.retriever.top_k is None and cfg.retriever.budget is None
    assert [c.label for c in cuts_of(cfg.retriever)] == ["budget=500", "budget=1000", "budget=2000"]
    assert [c.label for c in cuts_of(with_k.retriever)] == ["top_k=1", "top_k=5"]  # a K given: K variants
    assert [c.label for c in cuts_of(both.retriever)] == ["budget=700"]  # a budget given wins
    assert cfg.hydra.mode.name == "MULTIRUN"


def test_every_key_is_commented():
    """Configs are documentation: each leaf key of a group option carries a comment or is obvious."""
    for path in CONF.rglob("*.yaml"):
        lines = path.read_text().splitlines()
        assert lines[0].startswith("#") or path.parent.name == "job_logging", f"{path}: first line should say what it is"
