"""Ragas' faithfulness on samples from ``ragas_side_by_side.py``; runs in Ragas' own venv.

Not part of ragsweep and never imports it: the side-by-side benchmark starts it with the venv's
Python (Ragas pulls langchain, instructor, datasets, ... which ragsweep does not depend on).

    python ragas_worker.py --samples S.json --out R.jsonl --base-url http://127.0.0.1:PORT/v1 \
        --stats-url http://127.0.0.1:PORT/stats --model NAME

Scores every sample with Ragas 0.4's documented API (``llm_factory`` over an ``AsyncOpenAI`` client,
``ragas.metrics.collections.Faithfulness.ascore``: one statement-extraction call and one NLI call,
instructor in JSON mode, plus instructor's own retries when the output does not validate), one
sample at a time, and appends one JSON line per answer to ``--out`` as soon as it is done:
``id, value, status ("ok" | "nan" | "error"), error, seconds`` and the server's counts for that
answer (``calls, failed, prompt_tokens, completion_tokens, model_ms``: ``--stats-url`` read before
and after), so Ragas is counted exactly as ragsweep is. A failed answer is a line with
``value: null``; nothing already written is lost if the process dies.

Offline: every connection to a host other than the loopback is refused and reported on the
last line (``{"blocked": [...]}``), so a hub download (tiktoken, Hugging Face) or telemetry would
show up instead of passing silently; Ragas' telemetry is also switched off by its own variable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import socket
import sys
import time
import urllib.request

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
BLOCKED: list[str] = []


def _guard_network() -> None:
    """Refuse (and record) any connection or name lookup that leaves this machine."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        name = host.decode() if isinstance(host, bytes) else str(host)
        if host is not None and name not in LOOPBACK:
            BLOCKED.append(f"lookup {name}")
            raise socket.gaierror(socket.EAI_NONAME, f"ragas_worker: offline, lookup of {name} refused")
        return real_getaddrinfo(host, *args, **kwargs)

    def allowed(sock: socket.socket, address: object) -> bool:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return True  # Unix sockets and socketpairs stay local
        host = address[0] if isinstance(address, tuple) else address
        if str(host) in LOOPBACK:
            return True
        BLOCKED.append(f"connect {address}")
        return False

    def connect(self, address):  # type: ignore[no-untyped-def]
        if not allowed(self, address):
            raise ConnectionRefusedError(f"ragas_worker: offline, connection to {address} refused")
        return real_connect(self, address)

    def connect_ex(self, address):  # type: ignore[no-untyped-def]
        if not allowed(self, address):
            return 111  # ECONNREFUSED
        return real_connect_ex(self, address)

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]


def _shim_vertexai() -> str | None:
    """Ragas 0.4.3 imports ``langchain_community.chat_models.vertexai``, which no current
    langchain-community has (ragas issues #2745, #2995), so ``import ragas`` fails on a fresh install.
    The class is only used in an ``isinstance`` list (which LLMs can return n completions), so a
    stand-in class changes nothing for an OpenAI-compatible client. Installed only when missing."""
    import importlib
    import types

    try:
        importlib.import_module("langchain_community.chat_models.vertexai")
        return None
    except ModuleNotFoundError:
        stub = types.ModuleType("langchain_community.chat_models.vertexai")
        stub.ChatVertexAI = type("ChatVertexAI", (), {})  # type: ignore[attr-defined]
        sys.modules[stub.__name__] = stub
        return "langchain_community.chat_models.vertexai is missing: stand-in ChatVertexAI class installed"


def server_counts(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


async def run(args: argparse.Namespace) -> None:
    from openai import AsyncOpenAI
    from ragas.llms import llm_factory
    from ragas.metrics.collections import Faithfulness

    with open(args.samples, encoding="utf-8") as fh:
        samples = json.load(fh)
    client = AsyncOpenAI(base_url=args.base_url, api_key="not-needed", timeout=args.timeout)
    metric = Faithfulness(llm=llm_factory(args.model, client=client))
    for i, s in enumerate(samples, 1):
        before = server_counts(args.stats_url)
        start = time.perf_counter()
        row: dict[str, object] = {"id": s["id"], "value": None, "status": "ok", "error": None}
        try:
            result = await metric.ascore(user_input=s["question"] or "", response=s["answer"],
                                         retrieved_contexts=list(s["contexts"]))
            value = float(result.value) if result.value is not None else math.nan
            if math.isnan(value):
                row.update(status="nan", error="Ragas returned NaN (no statements or verdicts)")
            else:
                row["value"] = value
        except Exception as err:  # noqa: BLE001 -- any failure is this answer's error, the run goes on
            row.update(status="error", error=f"{type(err).__name__}: {str(err)[:300]}")
        row["seconds"] = time.perf_counter() - start
        after = server_counts(args.stats_url)
        row.update({k: after[k] - before[k] for k in after})
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        print(f"[ragas] {i}/{len(samples)} {s['id']}: {row['status']} {row['value']} "
              f"{row['seconds']:.1f}s {row['calls']} calls", file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", required=True, help="JSON list of {id, question, answer, contexts}")
    ap.add_argument("--out", required=True, help="JSONL file to append one result per answer to")
    ap.add_argument("--base-url", required=True, help="OpenAI-compatible endpoint root, .../v1")
    ap.add_argument("--stats-url", required=True, help="the server's call and token counts (JSON)")
    ap.add_argument("--model", required=True, help="model name sent to the server")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per HTTP request")
    args = ap.parse_args()
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _guard_network()
    shim = _shim_vertexai()
    try:
        asyncio.run(run(args))
    finally:
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"blocked": BLOCKED, "shim": shim}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
