"""The held-out docs sets: each pinned list is its own products, and an sdist gives its docs pages by path."""

from __future__ import annotations

import io
import itertools
import tarfile

import pytest

from tests.benchmarks.scripts import loaded


@pytest.fixture(scope="module")
def sdist_docs():
    yield from loaded("sdist_docs.py")


def test_no_product_is_in_two_sets(sdist_docs):
    # a product read as tune data in one set would not be held out in another
    assert len(sdist_docs.SETS) >= 12
    for (a, first), (b, second) in itertools.combinations(sdist_docs.SETS.items(), 2):
        assert not set(first) & set(second), (a, b)


def _sdist(path, files: dict[str, str]):
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"pkg-1.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_docs_pages_keep_user_pages_under_docs_and_the_site_list(sdist_docs, tmp_path):
    long = "A page a user reads. " * 40
    sdist = _sdist(tmp_path / "pkg-1.0.tar.gz", {
        "README.md": long, "docs/index.md": long, "docs/guide/setup.md": long, "docs/changelog.md": long,
        "docs/short.md": "tiny", "docs/mkdocs.yml": "nav: [index.md]\n", "src/notes.md": long})
    assert sorted(sdist_docs.docs_pages(sdist, 500)) == ["guide/setup.md", "index.md"]
    assert sdist_docs.site_files(sdist) == {"mkdocs.yml": "nav: [index.md]\n"}
    bare = _sdist(tmp_path / "bare-1.0.tar.gz", {"README.md": long, "src/notes.md": long})
    assert list(sdist_docs.docs_pages(bare, 500)) == ["README.md"]


def test_an_sdist_link_is_read_from_a_simple_index_page_for_its_exact_version(sdist_docs):
    sha = "ab" * 32
    page = (f'<a href="https://files.example/p/Tach-0.35.3.tar.gz#sha256={sha}">a</a>'
            f'<a href="https://files.example/p/tach-0.35.30.tar.gz#sha256={"cd" * 32}">b</a>'
            f'<a href="https://files.example/p/tach-0.35.3-py3-none-any.whl#sha256={"ef" * 32}">c</a>')
    assert sdist_docs.sdist_link(page, "tach", "0.35.3") == ("https://files.example/p/Tach-0.35.3.tar.gz", sha)
    assert sdist_docs.sdist_link(page, "tach", "0.35.30")[1] == "cd" * 32
    assert sdist_docs.sdist_link(page, "tach", "0.35") is None
    # a name's separators are one: django_unicorn's file is django-unicorn's
    assert sdist_docs.sdist_link(page.replace("Tach", "django_unicorn"), "django-unicorn", "0.35.3") is not None
