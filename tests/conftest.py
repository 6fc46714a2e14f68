"""Fixtures shared by the whole suite: the ``ragsweep`` command run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

CLI = (sys.executable, "-m", "ragsweep.harness.cli")


def run_cli(*args: str, cwd: Path, cache: Path | None = None, env: Mapping[str, str | None] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``ragsweep ARGS`` in a subprocess in ``cwd``; output captured as text, exit code not checked.

    Args:
        cwd: The working folder (relative paths and ``outputs/`` land there).
        cache: ``RAGSWEEP_CACHE_DIR`` for the run; None: ``cwd / "cache"``, so a test never reads or
            writes the user's cache.
        env: Variables set over ``os.environ``; a None value removes the variable.
        timeout: Seconds before the run is killed (``subprocess.TimeoutExpired``).
    """
    environ = {**os.environ, "RAGSWEEP_CACHE_DIR": str(cache if cache is not None else cwd / "cache"),
               "HYDRA_FULL_ERROR": "0"}
    for key, value in (env or {}).items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    return subprocess.run([*CLI, *args], cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="session")
def ragsweep() -> Callable[..., subprocess.CompletedProcess[str]]:
    """:func:`run_cli`: ``ragsweep("sweep", "progress=false", cwd=tmp_path)``."""
    return run_cli


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``RAGSWEEP_CACHE_DIR`` for in-process code (``tmp_path / "cache"``, not created)."""
    path = tmp_path / "cache"
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(path))
    return path


@pytest.fixture
def small_model_cache(tmp_path: Path) -> Path:
    """A cache folder for a CLI run of the packaged 0.5B (skips when it is not installed), reusing the
    model the user's cache already assembled instead of copying 500 MB again."""
    from tests.gen.test_gen_cli import _packaged_small_model_ready

    reason = _packaged_small_model_ready()
    if reason:
        pytest.skip(f"packaged 0.5B model not available: {reason}")
    models = Path(os.environ.get("RAGSWEEP_CACHE_DIR", Path.home() / ".cache" / "ragsweep")).expanduser() / "models"
    cache = tmp_path / "cache"
    if models.is_dir():
        cache.mkdir()
        (cache / "models").symlink_to(models)
    return cache
