"""Ragas' faithfulness beside ours: same local model, same server, same held-out HaluEval rows, one run.

    python benchmarks/ragas_side_by_side.py                  # 40 pairs (80 answers), the 1.5B judge
    python benchmarks/ragas_side_by_side.py --n 2 --model qwen2.5-coder-0.5b-instruct-q4_k_m   # smoke

1. Loads the packaged GGUF with the in-process judge's exact llama.cpp settings (``LocalLLM``:
   n_ctx 4096, one slot, prompt cache, 2 threads). xllamacpp's ``Server`` also serves llama.cpp's
   own OpenAI-compatible HTTP API on 127.0.0.1 (a free port), so no other server is needed.
2. Puts a small counting proxy in front of it on ``--port``: every chat call of both systems goes
   through it, one at a time, and it adds up calls, prompt and completion tokens (the server's
   ``usage``) and model time (llama.cpp's ``timings``). ``GET /stats`` returns the running counts.
3. Ours: ``faithfulness`` (default options, as the calibration table) through the same endpoint
   with :class:`metrics.llm.OpenAICompatLLM` (JSON schema + top-5 logprobs), one answer at a time.
4. Ragas 0.4.3 from PyPI in its own venv (``--ragas-venv``, created and filled on first use; never a
   ragsweep dependency): ``benchmarks/ragas_worker.py`` scores the same answers with
   ``ragas.metrics.collections.Faithfulness`` against the same endpoint.
5. Pairwise accuracy and ROC-AUC exactly as ``benchmarks/calibration_sets.py`` computes them (ties count
   half). An answer without a score (Ragas error or NaN, our undefined/error) counts as the neutral
   0.5 and in the errors column, as in ``benchmarks/calibrate.py``.

Seconds are wall time per answer at the client, HTTP included for both; "model s" is llama.cpp's
own prompt + generation time. Nothing is cached.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration_sets import CalibrationSet, halueval  # noqa: E402
from ragsweep.metrics.catalogue import RagSample, catalogue  # noqa: E402
from ragsweep.metrics.errors import InputError, fail  # noqa: E402

RAGAS_VERSION = "0.4.3"
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
WORKER = Path(__file__).with_name("ragas_worker.py")
#: The issue's figures for Ragas (40 held-out pairs, the same 1.5B), printed under the table.
ISSUE_RAGAS = "pairwise 0.66, ROC-AUC 0.65, 2 calls, ~1,470 tokens, 10.4 s per answer"
COUNTS = ("calls", "failed", "prompt_tokens", "completion_tokens", "model_ms")


class CountingProxy:
    """``127.0.0.1:port`` -> an upstream OpenAI-compatible server; counts every chat call.

    Requests are forwarded one at a time (the model serves one anyway), so a count read before
    and after an answer is that answer's. ``GET /stats`` returns :meth:`snapshot` as JSON.
    """

    def __init__(self, upstream: str, port: int = 0) -> None:
        parts = urlsplit(upstream)
        self.host, self.upstream_port = parts.hostname or "127.0.0.1", parts.port or 80
        self.counts: dict[str, float] = dict.fromkeys(COUNTS, 0)
        self._forward_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def snapshot(self) -> dict[str, float]:
        with self._count_lock:
            return dict(self.counts)

    def forward(self, method: str, path: str, body: bytes, content_type: str) -> tuple[int, bytes, str]:
        with self._forward_lock:
            try:
                conn = http.client.HTTPConnection(self.host, self.upstream_port, timeout=None)
                conn.request(method, path, body=body or None, headers={"Content-Type": content_type})
                resp = conn.getresponse()
                status, data = resp.status, resp.read()
                ctype = resp.getheader("Content-Type", "application/json")
                conn.close()
            except OSError as err:
                status, ctype = 502, "application/json"
                data = json.dumps({"error": {"message": f"upstream: {err}", "type": "proxy_error"}}).encode()
        if method == "POST" and path.rstrip("/").endswith("/chat/completions"):
            self._count(status, data)
        return status, data, ctype

    def _count(self, status: int, data: bytes) -> None:
        try:
            out = json.loads(data) if status == 200 else {}
        except ValueError:
            out = {}
        usage, timings = out.get("usage") or {}, out.get("timings") or {}
        with self._count_lock:
            self.counts["calls"] += 1
            self.counts["failed"] += status != 200
            self.counts["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
            self.counts["completion_tokens"] += int(usage.get("completion_tokens") or 0)
            self.counts["model_ms"] += float(timings.get("prompt_ms") or 0) + float(timings.get("predicted_ms") or 0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI SDK expects

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") == "/stats":
                    self._reply(200, json.dumps(proxy.snapshot()).encode(), "application/json")
                else:
                    self._reply(*proxy.forward("GET", self.path, b"", "application/json"))

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._reply(*proxy.forward("POST", self.path, body,
                                           self.headers.get("Content-Type", "application/json")))

            def _reply(self, status: int, data: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # one line per call would drown the progress
                pass

        return Handler


def ragas_python(venv: Path) -> Path:
    """The venv's Python, with ragas==RAGAS_VERSION installed (created and installed if needed)."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} for Ragas (its own venv: it is never a ragsweep dependency)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('ragas'))"],
                           capture_output=True, text=True)
    if probe.stdout.strip() != RAGAS_VERSION:
        print(f"installing ragas=={RAGAS_VERSION} into {venv}", file=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"ragas=={RAGAS_VERSION}"], check=True)
    return python


def _row(system: str, sample_id: str, value: float | None, status: str, error: str | None, seconds: float,
         before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    return {"system": system, "id": sample_id, "value": value, "status": status, "error": error,
            "seconds": seconds, **{k: after[k] - before[k] for k in COUNTS}}


async def run_ours(samples: list[RagSample], proxy: CountingProxy, model: str) -> list[dict[str, Any]]:
    """Our faithfulness on each answer in turn, through the proxy (OpenAI-compatible, logprobs)."""
    from ragsweep.metrics.llm import OpenAICompatLLM
    from ragsweep.metrics.scoring import score_samples

    # A variable that is never set: a real OPENAI_API_KEY in the environment stays at home.
    judge = OpenAICompatLLM(model, base_url=proxy.url + "/v1", api_key_env="RAGSWEEP_SIDE_BY_SIDE_NO_KEY",
                            timeout_s=900.0, max_concurrency=1)
    spec = catalogue()["faithfulness"]
    rows = []
    for i, sample in enumerate(samples, 1):
        before, start = proxy.snapshot(), time.perf_counter()
        [scored] = await score_samples([sample], [spec], judge=judge, concurrency=1, progress=False)
        res = scored.result
        rows.append(_row("ragsweep", sample.id, res.value, res.status, res.explanation.get("reason"),
                         time.perf_counter() - start, before, proxy.snapshot()))
        print(f"[ragsweep] {i}/{len(samples)} {sample.id}: {res.status} {res.value} "
              f"{rows[-1]['seconds']:.1f}s {rows[-1]['calls']} calls", file=sys.stderr, flush=True)
    return rows


def run_ragas(samples: list[RagSample], proxy: CountingProxy, model: str, python: Path,
              work: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Ragas on the same answers in its venv; answers the worker did not finish become errors."""
    src, out = work / "samples.json", work / "ragas.jsonl"
    src.write_text(json.dumps([{"id": s.id, "question": s.question, "answer": s.answer,
                                "contexts": list(s.contexts or ())} for s in samples]), encoding="utf-8")
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    env.pop("OPENAI_API_KEY", None)
    proc = subprocess.run([str(python), str(WORKER), "--samples", str(src), "--out", str(out),
                           "--base-url", proxy.url + "/v1", "--stats-url", proxy.url + "/stats",
                           "--model", model], env=env)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if x.strip()] if out.exists() else []
    meta = next((x for x in reversed(lines) if "blocked" in x), {"blocked": None, "shim": None})
    meta["exit_code"] = proc.returncode
    got = {x["id"]: x for x in lines if "id" in x}
    zero = dict.fromkeys(COUNTS, 0)
    rows = []
    for s in samples:
        if s.id in got:
            rows.append({"system": "ragas", **zero, **got[s.id]})
        else:
            rows.append(_row("ragas", s.id, None, "error", f"worker exited with code {proc.returncode} first",
                             0.0, zero, zero))
    return rows, meta


def summarize(rows: list[dict[str, Any]], cs: CalibrationSet) -> dict[str, Any]:
    """Agreement (unscored answers at the neutral 0.5) and cost per answer."""
    scores = {r["id"]: 0.5 if r["value"] is None else float(r["value"]) for r in rows}
    n = max(len(rows), 1)
    total = {k: sum(r[k] for r in rows) for k in COUNTS}
    return {**cs.evaluate(scores), "answers": len(rows), "errors": sum(r["value"] is None for r in rows),
            "calls": total["calls"] / n, "failed_calls": total["failed"],
            "tokens": (total["prompt_tokens"] + total["completion_tokens"]) / n,
            "seconds": sum(r["seconds"] for r in rows) / n, "model_seconds": total["model_ms"] / 1000 / n}


def table(results: dict[str, dict[str, Any]], header: str) -> str:
    names = {"ragsweep": "ragsweep faithfulness (sentence verdicts: logprobs + offline evidence; calls as counted)",
             "ragas": f"Ragas {RAGAS_VERSION} Faithfulness (collections API: statements + NLI, instructor JSON)"}
    lines = [header, "", "| system | pairwise acc | ROC-AUC | calls / answer | tokens / answer | s / answer | "
             "model s / answer | errors |", "|---|---|---|---|---|---|---|---|"]
    for key, r in results.items():
        auc = f"{r['roc_auc']:.3f}" if "roc_auc" in r else "n/a"
        pair = f"{r['pairwise_acc']:.3f}" if "pairwise_acc" in r else "n/a"
        lines.append(f"| {names[key]} | {pair} | {auc} | {r['calls']:.2f} | {r['tokens']:.0f} | {r['seconds']:.2f} | "
                     f"{r['model_seconds']:.2f} | {r['errors']} / {r['answers']} |")
    ours, theirs = results.get("ragsweep"), results.get("ragas")
    if ours and theirs and theirs["seconds"] > 0:
        lines += ["", f"ragsweep s / Ragas s per answer: {ours['seconds'] / theirs['seconds']:.2f} "
                      f"(model time only: {ours['model_seconds'] / max(theirs['model_seconds'], 1e-9):.2f})"]
    lines += ["", "Errors: answers without a score (Ragas exception or NaN; ragsweep undefined or error); each "
              "counts as 0.5 in both statistics.", f"The issue's figures for Ragas (40 pairs, 1.5B): {ISSUE_RAGAS}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=40, help="held-out HaluEval question pairs (2 answers each)")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="packaged model name or a .gguf path")
    ap.add_argument("--port", type=int, default=0, help="port of the endpoint both systems call (0: a free one)")
    ap.add_argument("--out", default=None, help="also write the table to this markdown file")
    ap.add_argument("--dump", default=None, help="write every answer's score, status and cost to this JSONL file")
    ap.add_argument("--ragas-venv", default=str(Path(__file__).with_name(".ragas-venv")),
                    help="venv for Ragas (created, with ragas==%s, if missing)" % RAGAS_VERSION)
    ap.add_argument("--seed", type=int, default=0, help="row sample seed (the calibration table uses 0)")
    args = ap.parse_args(argv)
    os.environ.setdefault("RAGSWEEP_CACHE_DIR", str(Path.home() / ".cache" / "ragsweep"))
    try:
        cs = halueval(split="heldout", n=args.n, seed=args.seed)
    except InputError as err:
        fail(str(err))
    python = ragas_python(Path(args.ragas_venv))  # before the model loads: a failed install fails fast

    from ragsweep.metrics.llm import LocalLLM

    local = LocalLLM(args.model, n_ctx=4096)
    try:
        server = local._load()  # the in-process judge's exact settings; xllamacpp also serves it over HTTP
    except InputError as err:
        fail(str(err))
    upstream = server.listening_address
    if not upstream:
        fail("xllamacpp did not start its HTTP server (Server.listening_address is empty)")
    results: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    try:
        with CountingProxy(upstream, args.port) as proxy, tempfile.TemporaryDirectory() as work:
            print(f"model {local.model_id}: llama.cpp at {upstream}, counted at {proxy.url}/v1", file=sys.stderr)
            ours = asyncio.run(run_ours(cs.samples, proxy, local.model_id))
            rows += ours  # kept for --dump even if the Ragas half is interrupted
            theirs, meta = run_ragas(cs.samples, proxy, local.model_id, python, Path(work))
            rows += theirs
            results = {"ragsweep": summarize(ours, cs), "ragas": summarize(theirs, cs)}
    finally:
        local.close()
        if args.dump and rows:
            Path(args.dump).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    header = (f"HaluEval QA, held-out half, {args.n} pairs ({len(cs.samples)} answers), seed {args.seed}. Judge "
              f"{local.model_id} (llama.cpp in xllamacpp, n_ctx 4096, 2 threads), served once on 127.0.0.1; both "
              f"systems call the same /v1/chat/completions, one answer at a time; calls and tokens are counted "
              f"at the server. Ragas offline check: blocked connections {meta.get('blocked')}"
              + (f"; {meta['shim']}" if meta.get("shim") else "") + ".")
    text = table(results, header) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
