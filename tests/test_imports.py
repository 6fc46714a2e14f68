"""The package's import graph: no cycles, and the layers point one way (harness -> gen -> metrics).

Every module of ``ragsweep`` is read with :mod:`ast`, never imported, so modules behind an optional
extra are checked too, and every import counts: at the top, inside functions (the lazy imports of
optional dependencies) and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = "ragsweep"
#: package -> the packages it must never import (DESIGN.md, "Layout"). The root package is the
#: public API and loads ``harness`` on first use, so the lower layers may not import it either.
FORBIDDEN = {
    "ragsweep.metrics": ("ragsweep.gen", "ragsweep.harness", ROOT),
    "ragsweep.gen": ("ragsweep.harness", ROOT),
}


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``line``."""

    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}) -> {self.target}"


def modules() -> dict[str, Path]:
    """Every module of the package -> its file, found with pkgutil over the package's path (nothing imported)."""
    spec = importlib.util.find_spec(ROOT)
    assert spec is not None and spec.origin is not None and spec.submodule_search_locations
    found = {ROOT: Path(spec.origin)}

    def walk(paths: list[str], prefix: str) -> None:
        for info in pkgutil.iter_modules(paths, prefix):
            folder = Path(info.module_finder.path)  # type: ignore[union-attr]
            leaf = info.name.rsplit(".", 1)[1]
            if info.ispkg:
                found[info.name] = folder / leaf / "__init__.py"
                walk([str(folder / leaf)], info.name + ".")
            else:
                found[info.name] = folder / f"{leaf}.py"

    walk(list(spec.submodule_search_locations), ROOT + ".")
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name an ``ImportFrom`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of the package's modules (None: outside the package)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def face_table(package: str, init: Path) -> dict[str, str]:
    """A package face's ``_FACE`` (name -> the module that defines it), read from its ``__init__`` without
    importing it; empty for a package without one."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "_FACE" and isinstance(node.value, ast.Dict):
            return {k.value: f"{package}.{v.value.partition(':')[0]}" for k, v in zip(node.value.keys, node.value.values)
                    if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
    return {}


def imports(module: str, path: Path, known: dict[str, Path]) -> Iterator[Edge]:
    """Every import of ``module`` into the package. ``from ragsweep.x import y`` is an edge to the
    submodule ``ragsweep.x.y`` when there is one, else to the module that defines ``y`` when ``ragsweep.x``
    is a face that names it, else to ``ragsweep.x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _target(alias.name, known)
                if target is not None:
                    yield Edge(module, target, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, path.name == "__init__.py", node)
            face = face_table(base, known[base]) if base in known and known[base].name == "__init__.py" else {}
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                target = submodule if submodule in known else face.get(alias.name) or _target(base, known)
                if target is not None:
                    yield Edge(module, target, node.lineno)


def graph() -> dict[str, list[Edge]]:
    """module -> its imports of other modules of the package."""
    known = modules()
    return {m: [e for e in imports(m, p, known) if e.target != m] for m, p in known.items()}


def strongly_connected(edges: dict[str, list[Edge]]) -> list[list[str]]:
    """Tarjan's strongly connected components of the import graph."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for e in edges.get(v, []):
            if e.target not in index:
                visit(e.target)
                low[v] = min(low[v], low[e.target])
            elif e.target in on_stack:
                low[v] = min(low[v], index[e.target])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_found_and_parsed():
    found = modules()
    for package in ("ragsweep.conf", "ragsweep.gen", "ragsweep.harness", "ragsweep.metrics",
                    "ragsweep.metrics.llm", "ragsweep.metrics.prompts"):
        assert package in found and found[package].name == "__init__.py"
    assert {"ragsweep.gen.app", "ragsweep.harness.cli", "ragsweep.metrics.prompts.core"} <= found.keys()
    assert all(p.is_file() for p in found.values())
    edges = graph()
    assert any(e.target == "ragsweep.metrics.errors" for e in edges["ragsweep.gen.app"])


def test_edges_resolve_submodules_packages_and_relative_imports(tmp_path):
    known = {"ragsweep": Path(), "ragsweep.a": Path(), "ragsweep.a.b": Path(), "ragsweep.c": Path()}
    path = tmp_path / "mod.py"
    path.write_text("import os\nfrom ragsweep.a import b, helper\nfrom .. import c\nfrom .b import thing\n"
                    "def f():\n    import ragsweep.a.b.deep\n", encoding="utf-8")
    got = {(e.target, e.line) for e in imports("ragsweep.a.mod", path, known)}
    assert got == {("ragsweep.a.b", 2), ("ragsweep.a", 2), ("ragsweep.c", 3), ("ragsweep.a.b", 4),
                   ("ragsweep.a.b", 6)}


def test_cycle_finder_groups_modules_that_import_each_other():
    edges = {"a": [Edge("a", "b", 1)], "b": [Edge("b", "c", 1)], "c": [Edge("c", "a", 1), Edge("c", "d", 2)], "d": []}
    assert sorted(strongly_connected(edges)) == [["a", "b", "c"], ["d"]]


def test_no_import_cycles():
    edges = graph()
    cycles = [c for c in strongly_connected(edges) if len(c) > 1]
    report = []
    for members in cycles:
        inside = set(members)
        report.append("cycle: " + " <-> ".join(members) + "\n" + "\n".join(
            f"    {e}" for m in members for e in edges[m] if e.target in inside))
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(report)


def test_layers_point_one_way():
    bad = [f"{e}  ({layer} must not import {e.target})"
           for module, out in graph().items()
           for layer, banned in FORBIDDEN.items() if module == layer or module.startswith(layer + ".")
           for e in out if any(e.target == b or b != ROOT and e.target.startswith(b + ".") for b in banned)]
    assert not bad, "layering violations:\n" + "\n".join(bad)


HARNESS = "ragsweep.harness"
#: the ways in (docs/reference/layout.md): they call the commands; nothing calls them.
FRONT_DOORS = tuple(f"{HARNESS}.{m}" for m in ("api", "cli", "ragas_once", "pytest_plugin", "overrides"))
#: wing -> the wings it must never import.
WING_BANS = {"pipeline": ("app", "board"), "board": ("pipeline",), "app": ("board",)}
#: what a wing may import from the harness root: the shared leaves, never a command or a front door.
WING_MAY_USE = (f"{HARNESS}.cache", f"{HARNESS}.records")


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _wing(module: str) -> str | None:
    return next((w for w in WING_BANS if _inside(module, f"{HARNESS}.{w}")), None)


def wing_violations(edges: dict[str, list[Edge]]) -> list[str]:
    """Every import that breaks a wing rule, as a readable line."""
    bad = []
    for module, out in edges.items():
        wing = _wing(module)
        for e in out:
            if not _inside(e.target, HARNESS) or e.target == HARNESS:
                continue
            if any(_inside(e.target, d) for d in FRONT_DOORS) and module not in (ROOT, *FRONT_DOORS):
                bad.append(f"{e}  (only a front door imports a front door)")
            if wing is None:
                continue
            target_wing = _wing(e.target)
            if target_wing in WING_BANS[wing]:
                bad.append(f"{e}  ({wing}/ must not import {target_wing}/)")
            elif target_wing is None and e.target not in WING_MAY_USE:
                bad.append(f"{e}  ({wing}/ uses only {', '.join(WING_MAY_USE)} of the harness root)")
    return bad


def test_wing_rules_catch_each_kind_of_break():
    edges = {f"{HARNESS}.pipeline.index": [Edge(f"{HARNESS}.pipeline.index", f"{HARNESS}.board.model", 3)],
             f"{HARNESS}.board.plots": [Edge(f"{HARNESS}.board.plots", f"{HARNESS}.pipeline.context", 4),
                                        Edge(f"{HARNESS}.board.plots", f"{HARNESS}.records", 5)],
             f"{HARNESS}.app.calls": [Edge(f"{HARNESS}.app.calls", f"{HARNESS}.sweep", 6)],
             f"{HARNESS}.score": [Edge(f"{HARNESS}.score", f"{HARNESS}.cli", 7)],
             f"{HARNESS}.cli": [Edge(f"{HARNESS}.cli", f"{HARNESS}.ragas_once", 8)]}
    got = wing_violations(edges)
    assert [line.split("  (")[1] for line in got] == [
        "pipeline/ must not import board/)", "board/ must not import pipeline/)",
        f"app/ uses only {', '.join(WING_MAY_USE)} of the harness root)", "only a front door imports a front door)"]


def test_harness_wings_keep_apart():
    bad = wing_violations(graph())
    assert not bad, "wing rule violations:\n" + "\n".join(bad)


#: the packages with a face: what other packages may import from each (its ``__init__``'s ``__all__``).
FACED = ("ragsweep.gen", "ragsweep.harness", "ragsweep.metrics")


def _package(module: str) -> str:
    """The top-level package a module belongs to (``ROOT`` for the root ``__init__``)."""
    return ".".join(module.split(".")[:2]) if module != ROOT else ROOT


def face_violations(module: str, path: Path, faces: dict[str, set[str]]) -> Iterator[str]:
    """Every import of ``module`` that reaches past another package's face. Allowed: ``from ragsweep.P import
    name`` with ``name`` in ``P.__all__``, and ``from ragsweep.P.M import ...`` when ``M`` itself is in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = _package(module)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(module, path.name == "__init__.py", node)
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            base, names = "", [a.name for a in node.names]
        else:
            continue
        for full in ([f"{base}.{n}" for n in names] if base else names):
            package = next((p for p in FACED if full.startswith(p + ".")), None)
            if package is None or package == own:
                continue
            first = full[len(package) + 1:].split(".")[0]
            if first not in faces[package]:
                yield f"{module} (line {node.lineno}) -> {full}  ({first!r} is not in {package}.__all__)"


def _faces() -> dict[str, set[str]]:
    return {p: set(importlib.import_module(p).__all__) for p in FACED}


def test_face_rule_catches_a_reach_past_the_face(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("from ragsweep.metrics import InputError\nfrom ragsweep.metrics.errors import fail\n"
                    "from ragsweep.harness.sweep import run_job\nimport ragsweep.gen.chunking\n"
                    "def f():\n    from ragsweep.gen import documents, Corpus\n", encoding="utf-8")
    faces = {"ragsweep.metrics": {"InputError"}, "ragsweep.harness": {"api"}, "ragsweep.gen": {"Corpus"}}
    got = sorted(line.split(" -> ")[1].split("  (")[0] for line in face_violations("ragsweep.harness.mod", path, faces))
    assert got == ["ragsweep.gen.chunking", "ragsweep.gen.documents", "ragsweep.metrics.errors.fail"]


def test_packages_import_each_other_only_through_their_faces():
    faces = _faces()
    bad = [line for m, p in modules().items() for line in face_violations(m, p, faces)]
    assert not bad, "imports past a package's face:\n" + "\n".join(bad)


def test_every_face_name_resolves_and_no_submodule_shadows_one():
    found = modules()
    for package, names in _faces().items():
        table, face = face_table(package, found[package]), importlib.import_module(package)
        for name in sorted(names):
            if name in table:  # loaded on first use: a submodule of that name, once loaded, would take its place
                assert f"{package}.{name}" not in found, f"{package}.{name}: a submodule shadows the face's name"
                assert hasattr(face, name), f"{package}.{name}: not defined in {table[name]}"
            else:
                assert f"{package}.{name}" in found, f"{package}.{name}: neither in _FACE nor a module"


#: The most lines a module of the package, and a function in it, may have (issue #32): past them a reader
#: cannot hold the whole in mind, and a split by responsibility is due.
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 500, 80


def oversized(module: str, path: Path) -> Iterator[str]:
    """A line for the module when it is over :data:`MAX_MODULE_LINES`, and one per function (or method,
    nested ones too) over :data:`MAX_FUNCTION_LINES`, decorators and docstring included."""
    text = path.read_text(encoding="utf-8")
    if (n := len(text.splitlines())) > MAX_MODULE_LINES:
        yield f"{module}: {n} lines (at most {MAX_MODULE_LINES})"
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if (n := node.end_lineno - first + 1) > MAX_FUNCTION_LINES:
                yield f"{module}.{node.name} (line {node.lineno}): {n} lines (at most {MAX_FUNCTION_LINES})"


def test_size_finder_catches_a_long_module_and_a_long_function(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "mod.py"
    path.write_text(f"def short():\n    return 1\n\n\nclass C:\n    async def long(self):\n{body}\n", encoding="utf-8")
    assert [line.split(" (")[0] for line in oversized("m", path)] == ["m.long"]
    path.write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert [line.split(":")[0] for line in oversized("m", path)] == ["m"]


def test_no_module_or_function_is_too_long():
    bad = [line for m, p in modules().items() for line in oversized(m, p)]
    assert not bad, "split by responsibility:\n" + "\n".join(bad)
