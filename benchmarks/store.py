"""What the cache checksums and the secret scrubber cost, measured side by side in one run.

1. A cached vectors file read back: ``Cache.array`` (checksum verified, then ``np.load``) against a bare
   ``np.load`` of the same file.
2. Scrubbing run records before they are written: ``scrub_all`` over rows shaped like ``runs.jsonl``
   (a question, an answer and five 500-character contexts each) against ``json.dumps`` of the same rows.

    python benchmarks/store.py                       # 20,000 x 384 vectors, 5,000 rows
    python benchmarks/store.py --vectors 100000 --rows 20000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT.parent))

import numpy as np  # noqa: E402

from ragsweep.harness.cache import Cache  # noqa: E402
from ragsweep.metrics.errors import register_secret, scrub_all  # noqa: E402


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=20000)
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Cache(tmp)
        vectors = rng.standard_normal((args.vectors, 384), dtype=np.float32)
        cache.array("vectors", "k", lambda: vectors)
        path = cache.path("vectors", "k", "npy")
        checked = best_of(lambda: cache.array("vectors", "k", lambda: vectors))
        bare = best_of(lambda: np.load(path, allow_pickle=False))
        mb = path.stat().st_size / 1e6
        print(f"vectors {args.vectors} x 384 ({mb:.0f} MB): checked hit {checked * 1e3:.1f} ms, "
              f"bare np.load {bare * 1e3:.1f} ms ({checked / bare:.1f}x)")

    register_secret("Zq7pLm3xVt9wKc2RbN")
    words = "the harbour opened in 1890 after the bridge was built by the city council and its engineers ".split()
    text = " ".join(words[i % len(words)] for i in range(90))[:500]
    rows = [{"sample_id": f"q{i}", "question": "When did the harbour open?", "answer": "In 1890.",
             "retrieved": [{"doc_id": f"d{j}", "start": 0, "end": 500, "text": text} for j in range(5)]}
            for i in range(args.rows)]
    scrub = best_of(lambda: scrub_all(rows), repeat=3)
    dumps = best_of(lambda: [json.dumps(r) for r in rows], repeat=3)
    chars = sum(len(json.dumps(r)) for r in rows) / 1e6
    print(f"{args.rows} run rows ({chars:.1f} M characters): scrub_all {scrub * 1e3:.0f} ms "
          f"({chars / scrub:.1f} M chars/s), json.dumps {dumps * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
