"""The pages a documentation site lists in its own navigation (issue #34): a Jupyter Book ``_toc.yml``, a MyST
``myst.yml`` with a ``toc``, a ``mkdocs.yml`` with a ``nav``, found in the folder read (the folder itself or any
folder below it). A page below such a file that its list leaves out is one the site does not show its readers
(a template's sample page left in the folder, a draft, a page only another tool reads): it draws no question
(:func:`gen.structure.for_users`). A site without such a list (Sphinx's toctree, MkDocs without ``nav``)
shows every page, and so does a list that names none of the pages beside it (it is about other pages).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

log = logging.getLogger(__name__)

#: The files a site lists its pages in, and the key of the list in each.
NAV_FILES = {"_toc.yml": "toc", "_toc.yaml": "toc", "myst.yml": "myst", "mkdocs.yml": "nav", "mkdocs.yaml": "nav"}


def _load(path: Path) -> Any:
    import yaml

    class _Loader(yaml.SafeLoader):
        """Safe YAML that reads a tag it does not know (MkDocs' ``!!python/name:``, ``!ENV``) as no value."""

    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - a SafeLoader
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as exc:
        log.warning("%s: not read as a site's page list (%s)", path, type(exc).__name__)
        return None


def _entries(node: Any, keys: tuple[str, ...]) -> Iterable[str]:
    """Every string under ``keys`` of a Jupyter Book / MyST toc (``file``, ``glob``, ``pattern``, ``root``)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in keys and isinstance(v, str):
                yield v
            else:
                yield from _entries(v, keys)
    elif isinstance(node, list):
        for v in node:
            yield from _entries(v, keys)


def _nav(node: Any) -> Iterable[str]:
    """Every page path of an MkDocs ``nav``: the strings in it (a title maps to a path or to a section)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _nav(v)
    elif isinstance(node, list):
        for v in node:
            yield from _nav(v)


def _listed(conf: Path) -> tuple[Path, list[str]] | None:
    """The folder a page list's paths are relative to and its entries (globs allowed); None without a list."""
    data = _load(conf)
    if not isinstance(data, dict):
        return None
    kind = NAV_FILES[conf.name]
    if kind == "toc":
        return conf.parent, list(_entries(data, ("file", "glob", "root")))
    if kind == "myst":
        toc = (data.get("project") or {}).get("toc") if isinstance(data.get("project"), dict) else None
        return (conf.parent, list(_entries(toc, ("file", "pattern")))) if toc else None
    if not data.get("nav"):
        return None
    docs = conf.parent / str(data.get("docs_dir") or "docs")
    return (docs if docs.is_dir() else conf.parent), [p for p in _nav(data["nav"]) if "://" not in p]


def _stem(path: str) -> str:
    p = PurePosixPath(path.strip().lstrip("./").rstrip("/"))
    return str(p.with_suffix("")) if p.suffix in (".md", ".markdown", ".ipynb", ".html", ".rst", ".py") else str(p)


def unlisted_pages(root: Path, ids: Iterable[str]) -> set[str]:
    """The page ids (paths relative to ``root``) below a page list of their site that the list leaves out."""
    ids = list(ids)
    out: set[str] = set()
    for conf in sorted(p for name in NAV_FILES for p in root.rglob(name) if p.is_file()):
        got = _listed(conf)
        if got is None:
            continue
        base, entries = got
        try:
            prefix = base.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        prefix = "" if prefix == "." else prefix + "/"
        below = {i: _stem(i[len(prefix):]) for i in ids if i.startswith(prefix)}
        names = [_stem(e) for e in entries if e.strip()]

        def listed(page: str) -> bool:
            return any(page == n or page.startswith(n + "/") or fnmatch.fnmatchcase(page, n) for n in names)

        shown = {i for i, page in below.items() if listed(page)}
        if shown:  # a list that names none of these pages is another site's
            out |= set(below) - shown
    return out
