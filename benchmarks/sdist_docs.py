"""A held-out documentation set nobody has read: the Markdown ``docs/`` folders of well-known Python packages'
source distributions (issue #34).

The packages and versions are pinned below, chosen before any page was built or read: projects whose docs are
written in Markdown and which the project's environment does not install (so no README of theirs was in the
earlier READMEs set, ``benchmarks/package_readmes.py``). Each source distribution is fetched from PyPI with
``pip download --no-deps --no-binary <name>`` (pip prepares its metadata, so a build backend is fetched too: a
minute or two a package) and every ``docs/**/*.md`` of it is written to ``OUT/<package>/<path under docs>``;
a package whose sdist holds no Markdown docs gives its ``README.md`` (``OUT/<package>/README.md``) instead.
Pages that are no documentation to ask of are left out by name (a changelog, a licence, a code of conduct,
contributing and security notes), and so are pages shorter than ``--min-chars``. A site's own list of its pages
(``docs/_toc.yml``, ``docs/myst.yml``, ``docs/mkdocs.yml``) is kept beside them (:data:`SITE_FILES`).

    python benchmarks/sdist_docs.py /tmp/sdist_docs              # builds the set, prints pages per package
    python benchmarks/style_candidates.py /tmp/sdist_docs        # candidate counts only (it parses)
    python benchmarks/sdist_docs.py /tmp/sdist_docs2 --set heldout2   # the second set (below)

``--set heldout`` (the default) is the first list; it was read (2026-11-26-doc-styles-sdist-heldout.md) and is
tune data since. ``--set heldout2`` is a second list, pinned before anything of it was built: other packages
with Markdown docs, none installed in the project's environment and none of the first list; it was read
(2026-11-26-doc-product-naming-heldout2-read.md) and is tune data too. ``--set heldout3`` is a third list, pinned
the same way, in neither earlier list (``python benchmarks/sdist_docs.py /tmp/sdist_docs3 --set heldout3``); it was
read (2026-11-26-doc-structure-heldout3-read.md) and is tune data too. ``--set heldout4`` is a fourth list, pinned the same way, in
none of the three earlier lists; it was read
(2026-11-26-doc-heldout4-read.md) and is tune data too. ``--set heldout5`` is a fifth list, pinned the same way, in
none of the four earlier lists; it was read (2026-11-26-doc-heldout5-read.md) and is tune data too. ``--set heldout6``
is a sixth list, pinned the same way, in none of the five earlier lists, each package's sdist file list checked for
Markdown ``docs/`` pages before pinning; it was read (2026-11-26-doc-heldout6-read.md) and is tune data too.
``--set heldout7`` is a seventh list, pinned the same way, in none of the six earlier lists; it was read
(2026-11-27-doc-heldout7-read.md) and is tune data too. ``--set heldout8`` is an eighth list, pinned the same way, in
none of the seven earlier lists; it was read (2026-11-27-doc-heldout8-read.md) and is tune data too. ``--set heldout9``
is a ninth list, pinned the same way, in none of the eight earlier lists; it was read
(2026-11-27-doc-heldout9-read.md) and is tune data too. ``--set heldout10`` is a tenth list, pinned the same way,
in none of the nine earlier lists; it was read (2026-11-27-doc-heldout10-read.md) and is tune data too.
``--set heldout11`` is an eleventh list, pinned the same way, in none of the ten earlier lists.
``--set heldout12`` is a twelfth list, pinned the same way, in none of the eleven earlier lists.
``--set heldout13`` is a thirteenth list, pinned the same way, in none of the twelve earlier lists; it was read
(2026-11-27-doc-heldout13-read.md) and is tune data too. ``--set heldout14`` is a fourteenth list, pinned the same
way, in none of the thirteen earlier lists; it was read (2026-11-28-doc-heldout14-read.md) and is tune data too.
``--set heldout15`` is a fifteenth list of three packages, in none of the fourteen earlier lists.

Write it outside the repository (its pages are the packages' authors', under their licences); the lead reads
its questions, nobody else.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path, PurePosixPath

#: name -> version, fixed before any output was read. Projects with Markdown docs, none installed here.
PACKAGES = {
    "structlog": "24.4.0",
    "cattrs": "24.1.2",
    "pipx": "1.7.1",
    "black": "24.10.0",
    "hatch": "1.13.0",
    "typer": "0.12.5",
    "respx": "0.21.1",
    "isort": "5.13.2",
}
#: The second held-out list (issue #34, the product named): pinned before any page of it was built or read.
#: None of these is installed in the project's venv (``pip list``), none is in :data:`PACKAGES`.
PACKAGES2 = {
    "jupytext": "1.16.4",
    "copier": "9.3.1",
    "pdm": "2.19.1",
    "pipenv": "2024.1.0",
    "sqlmodel": "0.0.22",
    "commitizen": "3.29.1",
    "httpie": "3.2.3",
    "environs": "11.0.0",
    "mike": "2.1.3",
    # Added after the nine above were built (page counts only, nothing read: eight of them ship no docs/ in their
    # sdist, only a README), before any page of these was built: projects whose sdists ship a Markdown docs/.
    "svcs": "24.1.0",
    "stamina": "24.3.0",
    "doc2dash": "3.1.0",
    "environ-config": "24.1.0",
    "cibuildwheel": "2.21.3",
    "dirty-equals": "0.8.0",
    "bump-my-version": "0.26.0",
}
#: The third held-out list (issue #34, evidence that follows a page's structure): pinned and committed before any
#: page of it was built or read. None installed in the project's venv (``pip list``), none in the two lists above.
PACKAGES3 = {
    "scikit-build-core": "0.10.7",
    "argon2-cffi": "23.1.0",
    "myst-parser": "4.0.0",
    "django-ninja": "1.3.0",
    "beanie": "1.27.0",
    "hatch-fancy-pypi-readme": "24.1.0",
    "prometheus-async": "22.2.0",
    "hishel": "0.0.33",
    "rich-click": "1.8.3",
    "pdm-backend": "2.4.3",
    "sqladmin": "0.19.0",
    "rq": "2.0.0",
    "pyinstrument": "5.0.0",
    "service-identity": "24.2.0",
}
#: The fourth held-out list (issue #34, session 36): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the three lists above; chosen for Markdown docs
#: that a build which ships every tracked file (hatch, setuptools_scm, a grafting MANIFEST) puts in the sdist.
PACKAGES4 = {
    "inline-snapshot": "0.14.0",
    "devtools": "0.12.2",
    "fastapi-users": "13.0.0",
    "httpx-oauth": "0.15.1",
    "setuptools-scm": "8.1.0",
    "cookiecutter": "2.6.0",
    "dynaconf": "3.2.6",
    "starlette-admin": "0.14.1",
    "pip-tools": "7.4.1",
    "typed-settings": "24.5.0",
    "ansible-lint": "24.10.0",
    "molecule": "24.9.0",
    "instructor": "1.6.4",
    "httpx-ws": "0.6.2",
    # Added after the fourteen above were built (page counts only, nothing read: five of them ship no Markdown
    # docs/ in their sdist, only a README), before any page of these was built or anything generated: projects
    # whose sdists ship every tracked file (setuptools_scm, hatch) and whose docs are Markdown.
    "outlines": "0.1.1",
    "pyocd": "0.36.0",
    "folium": "0.18.0",
    "mesa": "2.4.0",
    "ansible-compat": "24.9.1",
}
#: The fifth held-out list (issue #34, session 36b): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the four lists above; versions are the registry's
#: newest at pinning; chosen for Markdown docs that a build shipping every tracked file (hatch, pdm-backend's
#: source-includes) puts in the sdist.
PACKAGES5 = {
    "wcmatch": "12.0.1",
    "bracex": "3.2.2",
    "coloraide": "8.13.1",
    "pyspelling": "2.13",
    "duty": "1.10.1",
    "git-changelog": "2.10.0",
    "markdown-exec": "1.12.6",
    "failprint": "1.1.1",
    "fire": "0.7.1",
    "mkdocs-macros-plugin": "1.5.0",
    "odmantic": "1.1.0",
    "detect-secrets": "1.5.0",
    "mkdocs-manpage": "2.0.2",
    "mkdocs-include-markdown-plugin": "7.3.0",
    # Added after the fourteen above were built (page counts only, nothing read: seven of them ship no Markdown
    # docs/ in their sdist, only a README), before any page of these was built or anything generated: the same
    # two families of builds (hatch with docs/src/markdown, pdm-backend with docs in its source-includes).
    "soupsieve": "4.1.1",
    "rummage": "4.26.4",
    "yore": "0.4.7",
    "griffe-pydantic": "1.3.2",
    "griffe-typingdoc": "0.3.2",
    "mkdocs-coverage": "2.0.1",
    "mkdocs-gen-files": "0.6.1",
}
#: The sixth held-out list (issue #34, session 37): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the five lists above; versions are the registry's
#: newest at pinning. Each was chosen after its sdist's file list (names only, nothing opened) showed Markdown
#: pages under ``docs/`` (twenty sdists listed; the ten with none, a README at most, are left out).
PACKAGES6 = {
    "ansible-creator": "26.10.0",
    "ansible-navigator": "26.10.0",
    "ansible-dev-environment": "26.10.0",
    "pytest-ansible": "26.10.0",
    "tox-ansible": "26.10.0",
    "magentic": "0.41.1",
    "mkdocs-print-site-plugin": "2.9",
    "mkdocs-table-reader-plugin": "4.0.2",
    "schemathesis": "4.32.5",
    "fastapi-pagination": "0.16.1",
}
#: The seventh held-out list (issue #34, session 38): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the six lists above; versions are the registry's
#: newest at pinning. Each was chosen after its sdist's file list (names only, nothing opened) showed Markdown
#: pages under ``docs/`` (thirty-two sdists listed; the twenty-one with none, and python-dotenv, which the venv
#: installs, are left out).
PACKAGES7 = {
    "ansible-dev-tools": "26.10.0",
    "mkdocs-rss-plugin": "1.19.0",
    "bunnet": "1.3.0",
    "aria2p": "0.12.3",
    "dependenpy": "3.3.4",
    "mkdocs-llmstxt": "0.5.1",
    "griffe-inherited-docstrings": "1.1.4",
    "mkdocstrings-shell": "1.0.5",
    "installer": "1.1.0",
    "setuptools-rust": "1.13.0",
}
#: The eighth held-out list (issue #34, session 39): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the seven lists above; versions are the registry's
#: newest at pinning. Each was chosen after its sdist's file list (names and sizes only, nothing opened) showed
#: Markdown pages under ``docs/`` beyond the boilerplate (changelog, licence, contributing, a one-line index); of the
#: fifty-five sdists listed (three more packages had none), the thirty-four with no such page, and the eight whose
#: only ``docs/`` pages are boilerplate or tiny (five griffe extensions, mkdocs-spellcheck, humanize, textual), are
#: left out. polyfactory and advanced-alchemy ship one long ``docs/PYPI_README.md`` each.
PACKAGES8 = {
    "cappa": "0.33.0",
    "taskiq": "0.13.0",
    "kr8s": "0.20.15",
    "antsibull-nox": "1.10.0",
    "antsibull-changelog": "0.36.0",
    "antsibull-docs": "2.28.0",
    "antsibull-docs-parser": "1.2.3",
    "mangum": "0.22.0",
    "dataclass-settings": "0.8.0",
    "mkdocstrings-c": "0.1.1",
    "ansible-rulebook": "1.3.2",
    "polyfactory": "3.5.0",
    "advanced-alchemy": "1.12.0",
}
#: The ninth held-out list (issue #34, session 40): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the eight lists above nor among the packages whose
#: file lists earlier sessions checked; versions are the registry's newest at pinning. Each was chosen after its
#: sdist's file list (names and sizes only, nothing opened) showed Markdown pages under ``docs/`` beyond the
#: boilerplate. Of the eighty-four packages tried, seventeen had no sdist pip could prepare and forty-seven no
#: Markdown page under ``docs/``; of the twenty left, cruft and griffe2md (boilerplate only),
#: sphinx-remove-toctrees (tiny test pages) and mkdocstrings-typescript (the template of mkdocstrings-c and -shell,
#: tune products) are left out. pydantic-settings ships one long ``docs/index.md``.
PACKAGES9 = {
    "python-statemachine": "3.2.2",
    "pandera": "0.35.0",
    "wireup": "2.13.0",
    "sphinx-book-theme": "1.4.0",
    "conda-lock": "4.0.3",
    "aiomqtt": "2.5.1",
    "sphinx-autodoc2": "0.5.0",
    "sphinx-exercise": "1.2.1",
    "pytest-cases": "3.10.1",
    "sphinx-thebe": "0.3.1",
    "makefun": "1.16.0",
    "mkdocstrings-vba": "1.0.0",
    "sphinx-tippy": "0.4.3",
    "sphinx-pyscript": "0.1.0",
    "shellman": "1.0.3",
    "pydantic-settings": "2.16.3",
}
#: The tenth held-out list (issue #34, session 41): pinned and committed before any page of it was built or read.
#: None installed in the project's venv (``pip list``), none in the nine lists above; versions are the registry's
#: newest at pinning. Each was chosen after its sdist's file list (names and sizes only, nothing opened) showed
#: Markdown pages under the sdist's top-level ``docs/``. Of the 118 packages tried (three more, found installed
#: here, were not), five had no sdist pip could prepare and a hundred no Markdown page under ``docs/``, or some
#: only under a tests or demo folder (mkdocs-static-i18n, mkdocs-git-revision-date-localized-plugin,
#: mkdocs-glightbox, mkdocs-jupyter) or tiny ones (mkdocs-nav-weight, marvin, sphinxcontrib-mermaid);
#: openai-agents (147 pages, most of them translations) is left out for its size. pyserde ships its pages in
#: English and Japanese.
PACKAGES10 = {
    "furo": "2025.12.19",
    "sphinx-inline-tabs": "2025.12.21.14",
    "pyserde": "0.34.0",
    "xsdata": "26.10",
    "voila": "0.5.13",
    "expression": "5.8.0",
    "posting": "2.11.1",
    "pydoclint": "0.12.0",
    "click-extra": "9.5.0",
    "frictionless": "5.21.0",
    "mcp": "2.3.0",
    "fastmcp": "4.2.3",
}
#: The eleventh held-out list (issue #34, session 42): pinned before any page of it was built or read, none
#: installed in the project's venv, none in an earlier list. Of 144 packages asked for (eleven more, found
#: installed here, were not), the 113 fetched when it was pinned had their sdist's file list read for Markdown
#: pages under its top-level ``docs/`` (names and sizes only); most had none. Chosen for MyST (Sphinx and mystmd sites) and mkdocs-material syntax
#: among them. cruft (contributing pages only), sphinx-remove-toctrees and sphinx-reredirects (tiny pages) and
#: the scverse packages whose pages are mostly release notes (scanpy, anndata, squidpy) are left out.
PACKAGES11 = {
    "jupyter-book": "2.1.7",
    "magicgui": "0.10.2",
    "scvi-tools": "1.4.2",
    "spatialdata": "0.7.3",
    "mudata": "0.3.10",
    "singer-sdk": "0.54.9",
    "leafmap": "0.63.1",
    "segment-geospatial": "1.4.2",
    "tyro": "1.0.17",
    "sphinx-copybutton": "0.5.2",
    "quax": "0.4.6",
    "app-model": "0.5.1",
    "pertpy": "1.0.3",
}
#: The twelfth held-out list (issue #34, session 43): pinned before any page of it was built or read, none
#: installed in the project's venv, none in an earlier list nor among the sdists earlier sessions fetched;
#: versions are the newest pip fetched at pinning. Of 228 packages asked for, the 208 fetched had their sdist's
#: file list read for Markdown pages under its top-level ``docs/`` (names and sizes only); 38 had one or more.
#: Chosen for a mix of doc systems (MkDocs: htpy, sqlframe, universal-pathlib, virtualizarr; Zensical: pyinfra;
#: Sphinx with MyST: oauthenticator, tmuxp, repo-review, deal, pytest-notebook, jupyter-ai; plain Markdown with
#: its own ``tree.yml``: emmett) and of domains (web, data engineering, command-line tools, testing, ML tooling).
#: Left out: ragas, ingestr, jupyterhub, awkward (over sixty pages), pydata-sphinx-theme (heldout11's domain,
#: documentation tooling), libtmux and vcspull (tmuxp's siblings, one site style), and distilabel, blackjax,
#: palfrey, monkay, jupyter-enterprise-gateway, jupyter-releaser and a few with one to eight pages, to keep the
#: total near 250 pages.
PACKAGES12 = {
    "htpy": "26.5.1",
    "emmett": "2.8.2",
    "oauthenticator": "17.4.0",
    "sqlframe": "4.10.0",
    "universal-pathlib": "0.3.10",
    "virtualizarr": "2.5.1",
    "tmuxp": "1.76.0",
    "pyinfra": "3.10.0",
    "repo-review": "1.3.0",
    "deal": "4.24.6",
    "pytest-notebook": "0.11.0",
    "jupyter-ai": "3.2.0",
}
#: The thirteenth held-out list (issue #34, session 44): pinned before any page of it was built or read, none
#: installed in the project's venv, none in an earlier list nor named in an earlier list's comment; versions are
#: the newest PyPI gave at pinning. Of 57 packages a first pass asked pip for (eight more, found installed here,
#: were not), the 48 fetched had their sdist's file list read for Markdown pages under its top-level ``docs/``
#: (names and sizes only); six had one or more. Fetched with none: cf-xarray, llm, fastcrud, apiflask, edgy, ormar,
#: alembic-utils, narwhals, patito, shot-scraper, tavern, approvaltests, testcontainers, docling, lm-eval,
#: strawberry-graphql, redis-om, zarr, cyclopts, slowapi, prisma, pytest-split, asyncer, python-multipart, psygnal,
#: superqt, mplhep, jupyter-cache, myst-nb, jupyter-server-proxy, jupyterhub-kubespawner, dockerspawner,
#: jupyterhub-traefik-proxy, sqlmesh, gitlint-core, jaxtyping, papermill, jrnl, markdown-callouts, archan,
#: ansible-sign, copier-templates-extensions; not fetched (no sdist pip could prepare): pytest-harvest, river,
#: pytest-steps, mkdocs-gallery, valid8, pyfields, decopatch, autoclass, genbadge. A second pass asked PyPI's JSON API
#: for 409 more and read the file lists of the 396 sdists it gave (no build; names and sizes only): 39 had Markdown
#: pages under ``docs/``. Chosen for a mix of doc systems (MkDocs: xgcm; Sphinx with MyST: jupyterlab, intake-esm,
#: lark, flox, vector, uhi; Markdown with no site file in ``docs/``: gunicorn, beartype, lumen) and of domains (web
#: serving, a notebook application, typing, parsing, earth science, array and physics libraries, data apps). Four
#: chosen at first are not here because pip cannot fetch them on this machine's Python 3.11: flax, earthaccess
#: and pyodide-build (their newest releases need 3.12) and deptry (its sdist needs a Rust build); jupyterlab took
#: their place. Left out: boost-histogram, hist and scirpy (one page each; the first two vector's and uhi's
#: siblings, scirpy heldout11's scverse family); cellrank, ehrapy, rapids-singlecell and decoupler (the scverse
#: family again); numcodecs (most of its pages are short); and those with one to six pages (litestar, falcon,
#: shiny, mypy, adlfs, dask, hydra-zen, simple-parsing, uvicorn-worker, sktime, momepy, libpysal, esda among them).
PACKAGES13 = {
    "flox": "0.11.2",
    "vector": "1.9.0",
    "uhi": "1.2.1",
    "beartype": "0.23.1",
    "gunicorn": "27.0.1",
    "xgcm": "0.10.1",
    "intake-esm": "2025.12.12",
    "lark": "1.3.1",
    "jupyterlab": "4.6.6",
    "lumen": "1.4.0",
}
#: The fourteenth held-out list (issue #34, session 45): pinned before any page of it was built or read, none
#: installed in the project's venv, none in an earlier list nor named in an earlier list's comment; versions are
#: the newest PyPI gave at pinning. PyPI's JSON API gave the sdist file lists (names and sizes only, no build) of
#: 252 packages not asked for before; 17 had three or more Markdown pages under ``docs/``. Chosen for a mix of doc
#: systems (MkDocs: pymdown-extensions, pypsa, hyperopt, import-linter, mkdocstrings-python, jiwer; Sphinx with
#: MyST: coffea, tuf, exoplanet; Markdown with no site file in ``docs/``: rdflib) and of domains (Markdown
#: extensions, linked data, power systems, particle physics analysis, hyperparameter search, software update
#: security, import architecture rules, API docs, astronomy, speech recognition metrics). Left out: tach and
#: jellyfish (their sdists need a Rust build), polars-ds and mkdocs-autorefs (pages of a few lines), bioio and
#: termynal (one page of prose), pytkdocs (archived).
PACKAGES14 = {
    "pymdown-extensions": "13.1.2",
    "rdflib": "7.6.0",
    "pypsa": "1.4.0",
    "coffea": "2026.9.0",
    "hyperopt": "0.3.0",
    "tuf": "7.0.1",
    "import-linter": "2.17",
    "mkdocstrings-python": "2.0.11",
    "exoplanet": "0.6.0",
    "jiwer": "4.0.0",
}
#: The fifteenth list (session 48): the three packages of session 45's sdist scans with Markdown docs pages that no
#: list above has used, pinned before anything of them was built.
PACKAGES15 = {
    "bioio": "3.6.0",
    "django-unicorn": "0.67.0",
    "tach": "0.35.3",
}
SETS = {"heldout": PACKAGES, "heldout2": PACKAGES2, "heldout3": PACKAGES3, "heldout4": PACKAGES4,
        "heldout5": PACKAGES5, "heldout6": PACKAGES6, "heldout7": PACKAGES7, "heldout8": PACKAGES8,
        "heldout9": PACKAGES9, "heldout10": PACKAGES10, "heldout11": PACKAGES11, "heldout12": PACKAGES12,
        "heldout13": PACKAGES13, "heldout14": PACKAGES14,
        "heldout15": PACKAGES15}
#: File names (without extension, lower case) of pages that are not documentation of how to use the package.
NOT_DOCS = ("changelog", "changes", "history", "license", "licence", "code_of_conduct", "contributing",
            "security", "authors", "contributors")


def _wanted(name: str, min_chars: int, text: str) -> bool:
    stem = PurePosixPath(name).stem.lower().replace("-", "_")
    return not stem.startswith(NOT_DOCS) and len(text.strip()) >= min_chars


#: A site's own list of its pages, kept beside them when it stands in ``docs/`` (a Jupyter Book ``_toc.yml``, a
#: MyST ``myst.yml``, a ``mkdocs.yml``): what a docs folder a user points ragsweep at holds
#: (:func:`gen.site_nav.unlisted_pages` reads it). Not a page: nothing is asked of it.
SITE_FILES = ("_toc.yml", "_toc.yaml", "myst.yml", "mkdocs.yml", "mkdocs.yaml")


def site_files(sdist: Path) -> dict[str, str]:
    """path under the package's folder -> text of each :data:`SITE_FILES` file under the sdist's ``docs/``."""
    found: dict[str, str] = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts[1:]
            if member.isfile() and len(parts) > 1 and parts[0] == "docs" and parts[-1] in SITE_FILES:
                handle = tar.extractfile(member)
                if handle is not None:
                    found[str(PurePosixPath(*parts[1:]))] = handle.read().decode("utf-8", errors="replace")
    return found


def docs_pages(sdist: Path, min_chars: int) -> dict[str, str]:
    """path under the package's folder -> Markdown text: the sdist's ``docs/**/*.md``, else its ``README.md``."""
    pages: dict[str, str] = {}
    readme = ""
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts[1:]  # below the "<name>-<version>/" folder
            if not member.isfile() or not parts or not parts[-1].lower().endswith((".md", ".markdown")):
                continue
            handle = tar.extractfile(member)
            text = handle.read().decode("utf-8", errors="replace") if handle is not None else ""
            if parts[0] == "docs" and len(parts) > 1 and _wanted(parts[-1], min_chars, text):
                pages[str(PurePosixPath(*parts[1:]))] = text
            elif len(parts) == 1 and parts[0].lower() == "readme.md":
                readme = text
    if not pages and _wanted("README.md", min_chars, readme):
        pages["README.md"] = readme
    return pages


#: PyPI's simple index (PEP 503): a project's page lists its files with their sha256.
SIMPLE = "https://pypi.org/simple"


def sdist_link(page: str, name: str, version: str) -> tuple[str, str] | None:
    """(url, sha256) of ``name``'s ``version`` sdist among a simple-index page's links, or None."""
    stem = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", name)) + "-" + re.escape(version)
    m = re.search(r'href="([^"#]+/(?i:' + stem + r')\.tar\.gz)#sha256=([0-9a-f]{64})"', page)
    return (m.group(1), m.group(2)) if m else None


def fetch_sdist(name: str, version: str, into: Path) -> Path:
    """The sdist file of ``name==version`` straight from the simple index, its sha256 checked: for a package whose
    metadata pip cannot prepare here (a maturin backend needs a Rust toolchain), since only its files are read."""
    with urllib.request.urlopen(f"{SIMPLE}/{name}/", timeout=60) as page:
        link = sdist_link(page.read().decode("utf-8", errors="replace"), name, version)
    if link is None:
        raise FileNotFoundError(f"{name}=={version}: no .tar.gz sdist on {SIMPLE}/{name}/")
    url, sha = link
    with urllib.request.urlopen(url, timeout=300) as got:
        data = got.read()
    if hashlib.sha256(data).hexdigest() != sha:
        raise FileNotFoundError(f"{name}=={version}: the sdist's sha256 is not the index's")
    path = into / PurePosixPath(url).name
    path.write_bytes(data)
    return path


def download(name: str, version: str, into: Path) -> Path:
    """The sdist of ``name==version`` from PyPI (pip; the index's file when pip cannot prepare it), in ``into``."""
    # the package itself as source, its build backend as a wheel: a backend built from source (uv_build, maturin)
    # needs a Rust toolchain and its crates, which pip cannot fetch here
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", name,
                        f"{name}=={version}", "-d", str(into)], check=True)
    except subprocess.CalledProcessError:
        return fetch_sdist(name, version, into)
    found = sorted(p for p in into.iterdir() if p.name.lower().replace("_", "-").startswith(f"{name}-{version}")
                   and p.name.endswith((".tar.gz", ".tgz")))
    if not found:
        raise FileNotFoundError(f"{name}=={version}: pip saved no .tar.gz sdist in {into}")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the pages to (created; outside the repository)")
    parser.add_argument("--sdists", type=Path, help="keep the downloaded sdists here (default: a temporary folder)")
    parser.add_argument("--set", choices=sorted(SETS), default="heldout", help="which pinned list to build")
    parser.add_argument("--min-chars", type=int, default=500, help="skip pages shorter than this")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        where = args.sdists or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for name, version in SETS[args.set].items():
            try:
                sdist = download(name, version, where)
            except (subprocess.CalledProcessError, OSError) as exc:  # OSError: a missing file, the index unreachable
                print(f"{name}=={version}: not fetched ({exc})")
                continue
            pages = docs_pages(sdist, args.min_chars)
            kept = site_files(sdist) if pages and list(pages) != ["README.md"] else {}
            for rel, text in {**pages, **kept}.items():
                path = args.out / name / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            also = f" (and {', '.join(kept)})" if kept else ""
            print(f"{name}=={version}: {len(pages)} pages{also}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
