"""The README and the docs site: every command and Python block runs or is checked, the site builds strictly,
and the generated reference pages match the code.

How each block is checked is said by the comment before it (tests/docs_blocks.py). Blocks that run for real
use the shipped corpus and share one cache per session, so the whole file stays within a few minutes.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
from conftest import run_cli
from docs_blocks import NOT_CODE, PYTHON, ROOT, SHELL, Block, blocks, commands, pages, program

ALL = [b for p in pages() for b in blocks(p)]
FILES = {b.arg: b.code for b in ALL if b.kind == "file"}
RUNNABLE = sorted({b.page for b in ALL if b.kind is None and b.lang in SHELL | PYTHON})
# Programs the docs name that are not ours: nothing of theirs to check here.
EXTERNAL = {"ray", "mlflow", "export", "optimum-cli", "python3", "."}
# Hydra plugins that an override needs (an extra), so that composing it can be skipped when absent.
PLUGINS = {"hydra/launcher=ray": "hydra_plugins.hydra_ray_launcher", "hydra/sweeper=optuna":
           "hydra_plugins.hydra_optuna_sweeper", "+experiment=search": "hydra_plugins.hydra_optuna_sweeper"}


def test_every_block_says_what_it_is():
    """A fence without a language, or a marker with no reason, would let a command escape every check."""
    bad = [f"{b.where}: no language" for b in ALL if not b.lang]
    bad += [f"{b.where}: unknown language {b.lang}" for b in ALL if b.lang and b.lang not in SHELL | PYTHON | NOT_CODE]
    bad += [f"{b.where}: '{b.kind}' without its argument" for b in ALL if b.kind and not b.arg]
    bad += [f"{b.where}: a file block not run as code needs no 'not run'" for b in ALL
            if b.kind == "not run" and b.lang in NOT_CODE]
    assert not bad, "\n".join(bad)


def test_blocks_run_elsewhere_are_run_there():
    for b in ALL:
        if b.kind == "tested-by":
            test = ROOT / b.arg
            assert test.is_file(), f"{b.where}: {b.arg} does not exist"
            assert b.page in test.read_text(encoding="utf-8"), f"{b.where}: {b.arg} does not name {b.page}"


# ---------------------------------------------------------------- blocks that run for real

@pytest.fixture(scope="session")
def docs_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docs-cache")


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE)
def test_page_runs(page: str, tmp_path: Path, docs_cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Every unmarked block of the page, in order, in one folder holding the files the docs define."""
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGSWEEP_CACHE_DIR", str(docs_cache))
    monkeypatch.syspath_prepend(str(tmp_path))  # my_app.py, as `ragsweep run target=python` imports it
    namespace: dict = {}
    for b in (b for b in ALL if b.page == page and b.kind is None):
        if b.lang in PYTHON:
            exec(compile(b.code, b.where, "exec"), namespace)  # noqa: S102 - the docs' own code
        elif b.lang in SHELL:
            for words in commands(b.code):
                assert words[0] == "ragsweep", f"{b.where}: a block that runs may hold ragsweep commands only"
                out = run_cli(*words[1:], cwd=tmp_path, cache=docs_cache)
                assert out.returncode == 0, f"{b.where}: {' '.join(words)} exited {out.returncode}\n{out.stderr[-3000:]}"


# ---------------------------------------------------------------- cheap checks of the blocks that do not run

def _single_runs(args: list[str]) -> list[list[str]]:
    """The overrides once per value of the longest sweep, so that every swept value is composed once."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    values: list[list[str]] = []
    for a in args:
        if "=" not in a or a.startswith("-"):
            values.append([a])
            continue
        try:
            o = parser.parse_override(a)
        except Exception:  # noqa: BLE001 - left for the CLI to refuse, with its own message
            values.append([a])
            continue
        values.append([f"{o.get_key_element()}={v}" for v in o.sweep_string_iterator()] if o.is_sweep_override()
                      else [a])
    return [[v[i % len(v)] for v in values] for i in range(max((len(v) for v in values), default=1))]


@lru_cache(maxsize=None)
def _compose(command: str, args: tuple[str, ...]) -> tuple[int, str]:
    """``ragsweep COMMAND --cfg job ARGS`` in this process: the CLI's own checks, then Hydra's composition.

    ``--cfg job`` goes first, since the CLI appends overrides of its own (an Optuna study's direction) at the
    end; so a folder given first (``board DIR``) is passed as ``dir=DIR``, as the CLI does itself."""
    from ragsweep.harness import cli

    args = tuple(cli.positional(command, list(args)))
    argv, err, code = sys.argv[:], io.StringIO(), 0
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            cli.main([command, "--cfg", "job", *args])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = argv
    return code, err.getvalue()


def _variables(words: list[str]) -> set[str]:
    text = " ".join(words)
    return set(re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", text)) | set(re.findall(r"env:([A-Z_][A-Z0-9_]*)", text)) \
        | set(re.findall(r"api_key_env=([A-Z_][A-Z0-9_]*)", text))


def _check_ragsweep(words: list[str], where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _variables(words):
        monkeypatch.setenv(name, "set-for-the-docs-check")
    for token, module in PLUGINS.items():
        # the plugin's own module: hydra_plugins, their shared namespace, is there whenever any plugin is
        if any(w.startswith(token) for w in words) and importlib.util.find_spec(module) is None:
            pytest.skip(f"{where}: {' '.join(words)} needs {module} (an extra)")
    args = [re.sub(r"<([\w-]+)>", r"\1", w) for w in words[2:]]  # <stamp>: a placeholder, a word in its place
    for single in _single_runs(args):
        code, err = _compose(words[1], tuple(single))
        assert code == 0, f"{where}: ragsweep {words[1]} {' '.join(single)} does not compose (exit {code}): {err}"


@lru_cache(maxsize=None)
def _flags(script: str) -> str:
    out = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{script} --help failed: {out.stderr[-1000:]}"
    return out.stdout


def _check_python_command(words: list[str], where: str) -> None:
    if words[1:3] == ["-m", "pytest"]:
        assert "python -m pytest" in (ROOT / ".ci/run").read_text(), f"{where}: CI no longer runs python -m pytest"
        return
    if words[1] == "-m":
        return  # another tool's module (ragas_once): nothing of ours to check
    script = words[1]
    assert (ROOT / script).is_file(), f"{where}: {script} does not exist"
    help_text = _flags(script)
    for flag in (w.split("=", 1)[0] for w in words[2:] if w.startswith("--")):
        assert re.search(rf"(^|[\s,\[]){re.escape(flag)}([\s,=\]]|$)", help_text, re.M), \
            f"{where}: {script} has no option {flag}"


def _check_pip(words: list[str], where: str) -> None:
    declared = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    ci = (ROOT / ".ci/run").read_text(encoding="utf-8")
    for w in words[2:]:
        extras = re.search(r"\[([\w,-]+)\]", w)
        if extras:
            for extra in extras.group(1).split(","):
                assert re.search(rf"^{re.escape(extra)} = \[", declared, re.M), f"{where}: no extra {extra!r}"
        elif "==" in w:
            assert w in ci or w in declared, f"{where}: {w} is pinned nowhere in pyproject.toml or .ci/run"


def _check_python_block(b: Block) -> None:
    """Compile it, and bind every ``ragsweep.<name>(...)`` call to the real signature."""
    import ragsweep

    tree = ast.parse(b.code, b.where)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        chain, target = [], node.func
        while isinstance(target, ast.Attribute):
            chain.insert(0, target.attr)
            target = target.value
        if not (isinstance(target, ast.Name) and target.id == "ragsweep" and chain):
            continue
        obj = ragsweep
        for attr in chain:
            assert hasattr(obj, attr), f"{b.where}: ragsweep.{'.'.join(chain)} does not exist"
            obj = getattr(obj, attr)
        keywords = {k.arg: None for k in node.keywords if k.arg}
        positional = [None] * sum(not isinstance(a, ast.Starred) for a in node.args)
        try:
            inspect.signature(obj).bind_partial(*positional, **keywords)
        except TypeError as exc:
            raise AssertionError(f"{b.where}: ragsweep.{'.'.join(chain)}(...): {exc}") from None


MARKED = [b for b in ALL if b.kind == "not run" and b.lang in SHELL | PYTHON]


@pytest.mark.slow  # composing a sweep's config takes about a second; the docs hold some hundred of them
@pytest.mark.parametrize("block", MARKED, ids=[b.where for b in MARKED])
def test_block_not_run_still_checks(block: Block, monkeypatch: pytest.MonkeyPatch):
    """A renamed option, flag, extra or API argument breaks this, even for blocks too costly to run."""
    if block.lang in PYTHON:
        _check_python_block(block)
        return
    for words in commands(block.code):
        _, words = program(words)
        if words[0] == "ragsweep":
            _check_ragsweep(words, block.where, monkeypatch)
        elif words[0] == "python":
            _check_python_command(words, block.where)
        elif words[0] == "pip":
            _check_pip(words, block.where)
        else:
            assert words[0] in EXTERNAL, f"{block.where}: unknown program {words[0]} (add a check for it)"


# ---------------------------------------------------------------- the site and its generated pages

def test_reference_pages_match_the_code():
    out = subprocess.run([sys.executable, "docs/scripts/reference.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT.parent)})
    assert out.returncode == 0, out.stderr


def test_reference_covers_every_command_config_and_public_name():
    import ragsweep
    from ragsweep.harness.cli import APPS

    cli_page = (ROOT / "docs/reference/cli.md").read_text(encoding="utf-8")
    assert not [c for c in APPS if f"## `ragsweep {c}`" not in cli_page], "a command is missing from reference/cli.md"
    config_page = (ROOT / "docs/reference/config.md").read_text(encoding="utf-8")
    missing = [p.relative_to(ROOT).as_posix() for p in (ROOT / "conf").rglob("*.yaml")
               if f'"{p.relative_to(ROOT).as_posix()}"' not in config_page]
    assert not missing, f"reference/config.md does not include {missing}"
    api_page = (ROOT / "docs/reference/api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: [\w.]+\.(\w+)$", api_page, re.M))
    assert not [n for n in ragsweep.__all__ if n not in documented and n != "llm"], "reference/api.md misses a name"
    assert "_Judges" in documented  # ragsweep.llm's class


def test_site_builds_strictly(tmp_path: Path):
    if shutil.which("mkdocs") is None and importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]'")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT.parent), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, env={**env, "NO_MKDOCS_2_WARNING": "1"},
                         timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    assert (tmp_path / "site/reference/api/index.html").read_text(encoding="utf-8").count("ragsweep.harness.api.") > 5


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    tour = next(b for b in ALL if b.page == "README.md" and b.kind is None and b.lang in SHELL)
    steps = [w[1] for w in commands(tour.code)]
    assert steps == ["gen", "sweep", "board", "rescore", "run", "score"], steps


def test_the_checks_catch_what_they_are_for(monkeypatch: pytest.MonkeyPatch):
    """A renamed override, benchmark flag, extra or API argument in a block that does not run fails its check."""
    with pytest.raises(AssertionError, match="does not compose"):
        _check_ragsweep(["ragsweep", "sweep", "chunker.sise=256,512"], "page.md:1", monkeypatch)
    with pytest.raises(AssertionError, match="has no option --corpra"):
        _check_python_command(["python", "benchmarks/validity.py", "--corpra", "scifact"], "page.md:1")
    with pytest.raises(AssertionError, match="no extra 'nosuchextra'"):
        _check_pip(["pip", "install", "-e", ".[dev,nosuchextra]"], "page.md:1")
    with pytest.raises(AssertionError, match="judgee"):
        _check_python_block(Block("page.md", 1, "python", "ragsweep.score(rows, judgee=None)\n", "not run", "r"))
    assert [w[:2] for w in commands("ragsweep gen n=2 && ragsweep sweep \\\n  a=$(date +%F)  # note\n")] == \
        [["ragsweep", "gen"], ["ragsweep", "sweep"]]
