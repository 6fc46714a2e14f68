"""``hydra/launcher=ray``: the default sweep on Ray gives the same leaderboard as the basic launcher.

Two set-ups, each on 2 CPUs: a local Ray instance the launcher starts itself, and a separate head
started with ``ray start --head`` that the sweep joins by address (``hydra/launcher=ray_cluster``),
with absolute sweep and cache folders as on shared storage. Needs ``pip install 'ragsweep[ray]'``.
"""

from __future__ import annotations

import csv
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("hydra_plugins.hydra_ray_launcher", reason="needs the ray extra: pip install 'ragsweep[ray]'")
pytestmark = pytest.mark.slow

# Timing and the per-job folder differ by launcher, and so does embedded_texts: jobs that run at the
# same time each embed the (shared, cached) questions, while one after another only the first does.
# So do the measured costs: per-query latency and index build time. Every score, interval, count,
# p-value and verdict must be identical.
VOLATILE = {"seconds", "job", "embedded_texts", "latency_p50_ms", "latency_p95_ms", "index_build_s"}


@pytest.fixture(scope="module")
def sweep(ragsweep):
    """``ragsweep sweep progress=false ARGS`` in ``cwd`` with Ray's usage statistics off."""
    def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return ragsweep("sweep", "progress=false", *args, cwd=cwd, env={"RAY_DISABLE_USAGE_STATS": "1", **(env or {})},
                        timeout=900)

    return run


def board(sweep: Path) -> dict[str, dict[str, str]]:
    with (sweep / "leaderboard.csv").open() as fh:
        return {r["variant"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in csv.DictReader(fh)}


def differences(a: dict[str, dict[str, str]], b: dict[str, dict[str, str]]) -> list[tuple[str, str, str, str]]:
    assert a.keys() == b.keys()
    return [(v, k, a[v][k], b[v][k]) for v in a for k in a[v] if a[v][k] != b[v].get(k)]


@pytest.fixture(scope="module")
def basic_board(tmp_path_factory, sweep) -> dict[str, dict[str, str]]:
    cwd = tmp_path_factory.mktemp("basic")
    out = sweep(f"cache.dir={cwd / 'cache'}", cwd=cwd)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = board(next((cwd / "outputs" / "sweeps").iterdir()))
    assert len(rows) == 9
    return rows


def test_local_ray_instance_gives_the_basic_launchers_leaderboard(tmp_path, basic_board, sweep):
    # address=local: a new instance even when a cluster runs on this machine (ray.init would join it)
    out = sweep("hydra/launcher=ray", "hydra.launcher.ray.init.address=local", "+hydra.launcher.ray.init.num_cpus=2",
                   "+hydra.launcher.ray.init.include_dashboard=false", "embedder.threads=1",
                   f"cache.dir={tmp_path / 'cache'}", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Ray Launcher is launching 3 jobs" in out.stderr + out.stdout
    folder = next((tmp_path / "outputs" / "sweeps").iterdir())
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["0", "1", "2"]
    assert differences(board(folder), basic_board) == []
    assert (folder / "leaderboard.html").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_separate_ray_head_joined_by_address_gives_the_same_leaderboard(tmp_path, basic_board, sweep):
    port = _free_port()
    # Ray >= 2.5x starts clusters with token authentication; the driver must use the same mode (the
    # token itself is shared through ~/.ray/auth_token on this machine).
    env = {"RAY_AUTH_MODE": "token", "RAY_ADDRESS": f"127.0.0.1:{port}"}
    ray = Path(sys.executable).with_name("ray")
    log = tmp_path / "ray-head.log"
    with log.open("w") as fh:  # a file, not a pipe: nobody reads a pipe while the sweep runs
        head = subprocess.Popen([str(ray), "start", "--head", f"--port={port}", "--num-cpus=2",
                                 "--include-dashboard=false", "--disable-usage-stats", "--block"],
                                env={**os.environ, **env}, cwd=tmp_path, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in log.read_text() and head.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert head.poll() is None and "Ray runtime started" in log.read_text(), log.read_text()[-2000:]
        shared = tmp_path / "shared"  # stands for the shared file system of a real cluster
        out = sweep("hydra/launcher=ray_cluster", "hydra.launcher.ray.remote.num_cpus=1", "embedder.threads=1",
                       f"hydra.sweep.dir={shared / 'sweep'}", f"cache.dir={shared / 'cache'}",
                       cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        assert differences(board(shared / "sweep"), basic_board) == []
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # the head and the processes it started (its own session)
        try:
            head.wait(timeout=60)  # Ray drains for up to 30 s on SIGTERM
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=10)
        # A head stopped by a signal (not `ray stop`) leaves its address as "the cluster on this
        # machine"; a later plain ray.init() would try to join that dead head.
        current = Path("/tmp/ray/ray_current_cluster")
        if current.is_file() and current.read_text().strip().endswith(f":{port}"):
            current.unlink()
