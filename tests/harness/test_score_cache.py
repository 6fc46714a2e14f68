"""``ragsweep score`` with a corrupt ``llm.sqlite`` in its cache: the run goes on with a fresh store, and
the warning names the bad file and where it was moved."""

from __future__ import annotations

import csv
import json

from chat_server import ChatServer
from conftest import run_cli


def _reply(body: dict, headers: dict) -> str:
    return json.dumps({"claims": [{"claim": "Ada built it.", "reason": "stated", "verdict": "supported",
                                   "supporting": [1], "contradicting": []}]})


def test_a_corrupt_llm_store_is_named_moved_aside_and_the_run_goes_on(tmp_path):
    with (tmp_path / "in.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([["question", "answer", "contexts"],
                                  ["Who built the bridge?", "Ada built it.", "Ada built the bridge in 1901."]])
    store = tmp_path / "cache" / "llm.sqlite"
    store.parent.mkdir()
    store.write_bytes(b"\x00garbage, not SQLite" * 100)
    with ChatServer(_reply) as server:
        proc = run_cli("score", "llm=openai", "llm.model=m", f"llm.base_url={server.url}",
                       "llm.api_key_env=RAGSWEEP_TEST_NO_KEY", "metrics=[hallucination]", "progress=false",
                       "out=out", "input=in.csv", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [moved] = (tmp_path / "cache" / "quarantine").iterdir()
    assert moved.read_bytes().startswith(b"\x00garbage")
    assert f"LLM cache {store} is not a readable database" in proc.stderr and str(moved) in proc.stderr
    assert "Traceback" not in proc.stderr
    rows = list(csv.DictReader((tmp_path / "out" / "result.csv").open()))
    assert rows[0]["hallucination_status"] == "ok"
