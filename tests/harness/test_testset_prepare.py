"""A sweep locates an imported test set's reference contexts once: the locations are cached (by the
contexts, the corpus's texts and the locate settings), later jobs read them back, and the time spent
locating is the test set's preparation (summary.json ``testset``), not a variant's ``seconds``."""

from __future__ import annotations

import json
import time

from hydra import compose, initialize_config_module
from ragsweep.harness.app import locate
from ragsweep.harness.sweep import run_job

CONTEXTS = [("Port Calder is governed by a directly elected mayor and a city council of 45 members, elected every "
             "four years."),
            ("The Port Calder Harbour Authority (PCHA) was created by the Calder Harbour Act of 1921, wich dissolved "
             "the older Calder Pier Trust")]  # a typo: found by the fuzzy pass


class Clock:
    """perf_counter that moves 1 ms per reading and 100 s per context located: no wall-clock in the asserts."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def job(tmp_path, size: int, overrides: list[str] = ()):
    with initialize_config_module(config_module="ragsweep.conf", version_base="1.3"):
        cfg = compose(config_name="sweep", overrides=[
            f"testset={tmp_path / 'ragas.jsonl'}", "retrieval=bm25", "answerer=none", f"chunker.size={size}",
            "retriever.top_k=[1,3]", "retriever.latency_queries=0", "progress=false",
            f"cache.dir={tmp_path / 'cache'}", *overrides])
    out = tmp_path / f"job-{size}-{len(overrides)}"
    out.mkdir()
    run_job(cfg, out, {"chunker": "recursive", "retrieval": "bm25", "corpus": "shipped"})
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_a_sweep_locates_once_and_keeps_it_out_of_the_variants_seconds(tmp_path, monkeypatch):
    rows = [{"user_input": f"Question {i}?", "reference": "-", "reference_contexts": [c]} for i, c in enumerate(CONTEXTS)]
    (tmp_path / "ragas.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    clock, located = Clock(), []
    real = locate.Locator._locate

    def slow_locate(self, text):
        located.append(text)
        clock.now += 100.0
        return real(self, text)

    monkeypatch.setattr(time, "perf_counter", clock)
    monkeypatch.setattr(locate.Locator, "_locate", slow_locate)

    first, second = job(tmp_path, 256), job(tmp_path, 512)
    assert sorted(located) == sorted(CONTEXTS)  # the first job located each context once; the second none
    assert first["testset"]["located_from_cache"] is False and second["testset"]["located_from_cache"] is True
    assert first["testset"]["seconds"] >= 200 and second["testset"]["seconds"] < 100
    assert first["cost"]["seconds"]["total"] < 100  # the 200 s of locating are not the variant's
    assert len(list((tmp_path / "cache" / "locate").glob("*.json"))) == 1  # beside it, its checksum

    # other settings locate again (and are kept apart)
    job(tmp_path, 256, ["locate.fuzzy_threshold=0.8"])
    assert len(located) == 4 and len(list((tmp_path / "cache" / "locate").glob("*.json"))) == 2
