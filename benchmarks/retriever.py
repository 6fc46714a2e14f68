"""Retriever-sweep benchmark: measured side by side in one run, printed as ratios.

1. Embedding throughput of the sweep's embedding stage (``Pipeline``: length-bucketed batches,
   cache writes) against the raw model (``OnnxMiniLM.embed_batch`` on consecutive batches in corpus
   order) on the same texts.
2. Wall time of a repeated ``ragsweep sweep`` (every stage cached) against the first, cold run.
3. BM25 and hybrid (RRF) beside dense on SciFact, in the same cache (so the dense vectors are cached):
   each sweep's wall time, nDCG@10, per-query latency (p50, p95), index build time and size.

    python benchmarks/retriever.py                 # SciFact from ../shared/data (as in the README)
    python benchmarks/retriever.py --docs 500      # a quicker subset for the throughput part
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragsweep.gen.chunking import WholeDocument  # noqa: E402
from ragsweep.gen.documents import Corpus, read_beir  # noqa: E402
from ragsweep.harness.cache import Cache  # noqa: E402
from ragsweep.harness.pipeline.index import IndexSpec  # noqa: E402
from ragsweep.harness.pipeline.pipeline import Pipeline  # noqa: E402
from ragsweep.metrics.embedding import OnnxMiniLM  # noqa: E402


def raw_throughput(model: OnnxMiniLM, texts: list[str]) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), model.batch_size):
        model.embed_batch(texts[i : i + model.batch_size])
    return len(texts) / (time.perf_counter() - start)


def sweep_throughput(model: OnnxMiniLM, corpus: Corpus) -> float:
    with tempfile.TemporaryDirectory() as cache_dir:
        pipe = Pipeline(corpus, WholeDocument(), model, IndexSpec(), Cache(cache_dir))
        _ = pipe.chunks
        start = time.perf_counter()
        pipe.index  # noqa: B018  embeds every chunk (a cache miss) and builds the index
        return len(pipe.chunks) / (time.perf_counter() - start)


def sweep_wall(scifact: Path, cache_dir: str, *overrides: str) -> tuple[float, dict[str, str]]:
    """Wall time of one SciFact sweep and its leaderboard row."""
    import csv

    cmd = [sys.executable, "-m", "ragsweep.harness.cli", "sweep", "corpus=beir", f"corpus.path={scifact}",
           "corpus.split=dev", "chunker=none", "retriever.top_k=10", "progress=false", *overrides]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run(cmd, cwd=cwd, env={**os.environ, "RAGSWEEP_CACHE_DIR": cache_dir},
                             capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"sweep failed:\n{out.stderr[-3000:]}")
        board = next(Path(cwd, "outputs", "sweeps").iterdir()) / "leaderboard.csv"
        with board.open(newline="") as fh:
            row = next(csv.DictReader(fh))
    elapsed = time.perf_counter() - start
    print(f"    {' '.join(overrides) or 'retrieval=dense':22s} {elapsed:7.1f} s   nDCG@10 {float(row['ndcg@10']):.3f}   "
          f"latency p50 {row['latency_p50_ms']} ms  p95 {row['latency_p95_ms']} ms   "
          f"index build {row['index_build_s']} s  {row['index_mb']} MB")
    return elapsed, row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--docs", type=int, default=1000, help="documents for the throughput comparison")
    ap.add_argument("--skip-sweep", action="store_true", help="only the throughput comparison")
    args = ap.parse_args()

    corpus = read_beir(args.scifact, split="dev")
    sub = Corpus(corpus.documents[: args.docs], source=corpus.source)
    texts = [d.text for d in sub.documents]
    model = OnnxMiniLM()
    model.embed_batch(texts[:8])  # load the model and warm up before timing either side
    print(f"1. embedding throughput on {len(texts)} SciFact abstracts (docs/s)")
    raw = raw_throughput(model, texts)
    swept = sweep_throughput(model, sub)
    print(f"    raw model {raw:7.1f}   sweep stage {swept:7.1f}   ratio sweep/raw {swept / raw:.2f}")
    if args.skip_sweep:
        return
    print("2. SciFact sweep (5,183 docs, 300 queries, nDCG@10): cold, then repeated")
    with tempfile.TemporaryDirectory() as cache_dir:
        cold, _ = sweep_wall(args.scifact, cache_dir)
        warm, _ = sweep_wall(args.scifact, cache_dir)
        print(f"    cold {cold:.1f} s   repeated {warm:.1f} s   ratio repeated/cold {warm / cold:.3f}")
        print("3. BM25 and hybrid (RRF) beside dense, the dense vectors cached by step 2")
        bm25, _ = sweep_wall(args.scifact, cache_dir, "retrieval=bm25")
        hybrid, _ = sweep_wall(args.scifact, cache_dir, "retrieval=hybrid")
    print(f"    hybrid / dense cold {hybrid / cold:.3f}   (hybrid - dense repeated) / dense cold "
          f"{(hybrid - warm) / cold:.3f}   bm25 / dense cold {bm25 / cold:.3f}")


if __name__ == "__main__":
    main()
