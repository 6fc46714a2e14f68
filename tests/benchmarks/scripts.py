"""Benchmarks are scripts, not package modules: their tests load them from ``benchmarks/`` by path."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def loaded(filename: str) -> Iterator[ModuleType]:
    """The benchmark script ``filename`` as a module, registered in ``sys.modules`` while it is in use
    (dataclasses look their module up while the file executes)."""
    name = f"ragsweep_benchmark_{Path(filename).stem}"
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(name, None)
