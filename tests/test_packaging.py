"""The distribution installs one top-level package, ``ragsweep``, with every module and config inside."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("conf", "gen", "harness", "metrics")


@pytest.mark.slow
def test_wheel_holds_one_top_level_package_with_every_file(tmp_path: Path) -> None:
    # Builds with isolation (fetches setuptools from the package index), as `pip install` does.
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True, text=True)
    (wheel,) = tmp_path.glob("ragsweep-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {n.split("/")[0] for n in names} == {"ragsweep", wheel.name.split("-py3")[0] + ".dist-info"}
    expected = {"ragsweep/__init__.py"}
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".yaml", ".jsonl", ".md") and "__pycache__" not in path.parts:
                expected.add("ragsweep/" + path.relative_to(ROOT).as_posix())
    assert expected - names == set()


def test_old_top_level_names_are_not_importable_outside_the_checkout(tmp_path: Path) -> None:
    code = ("import importlib.util, ragsweep, ragsweep.harness.cli\n"
            "print([n for n in ('metrics', 'gen', 'harness', 'conf') if importlib.util.find_spec(n)])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
