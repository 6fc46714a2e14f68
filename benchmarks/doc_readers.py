"""How fast the Markdown and HTML readers read a 10,000-page documentation folder (issue #34).

Builds the folder in a temporary directory from the 97 FastAPI pages of ``../shared/data/docs-fastapi``: each
page written ``--pages / 97`` times, every copy with its words perturbed (a copy number appended to one word
in ten) so no two pages are equal. The same pages are also rendered to HTML (markdown-it-py) for the HTML
reader. Then times, per reader, the parse alone (``markdown_text`` / ``html_text`` over the texts in memory)
and ``read_folder`` (disk, the reader, the document objects; copies among the documents not looked for:
``duplicates=keep near_duplicates=null``, which is the same cost whatever the reader), against reading the
Markdown as written (``markup=text``) -- the cost of understanding the format.

    python benchmarks/doc_readers.py                 # 10,000 pages (~2 min on two cores)
    python benchmarks/doc_readers.py --pages 1000
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT.parent / "shared" / "data" / "docs-fastapi"

from ragsweep.gen.documents import read_folder  # noqa: E402
from ragsweep.gen.html_reader import html_text  # noqa: E402
from ragsweep.gen.markdown_reader import markdown_text  # noqa: E402


def perturbed(text: str, copy: int, rng: random.Random) -> str:
    """``text`` with one word in ten carrying the copy number (code, markup and line structure left as they are)."""
    lines = []
    for line in text.split("\n"):
        words = line.split(" ")
        for i, w in enumerate(words):
            if w.isalpha() and rng.random() < 0.1:
                words[i] = f"{w}{copy}"
        lines.append(" ".join(words))
    return "\n".join(lines)


def build(root: Path, pages: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """Writes ``pages`` Markdown pages under root/md and their HTML under root/html; returns both texts."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    sources = [p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md")) if p.name != "README.md"]
    rng = random.Random(seed)
    (root / "md").mkdir()
    (root / "html").mkdir()
    mds, htmls = [], []
    for i in range(pages):
        text = perturbed(sources[i % len(sources)], i // len(sources), rng)
        page = f"<!doctype html><html><head><title>Page {i}</title></head><body>{md.render(text)}</body></html>"
        (root / "md" / f"p{i:05d}.md").write_text(text, encoding="utf-8")
        (root / "html" / f"p{i:05d}.html").write_text(page, encoding="utf-8")
        mds.append(text)
        htmls.append(page)
    return mds, htmls


def timed(label: str, pages: int, chars: int, fn) -> float:
    start = time.perf_counter()
    fn()
    took = time.perf_counter() - start
    print(f"| {label} | {pages:,} | {chars / 1e6:.1f} | {took:.2f} | {pages / took:,.0f} | {1000 * took / pages:.2f} |")
    return took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=10_000)
    args = ap.parse_args(argv)
    if not DOCS.is_dir():
        print(f"{DOCS} not found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        mds, htmls = build(root, args.pages)
        md_chars, html_chars = sum(map(len, mds)), sum(map(len, htmls))
        keep = {"duplicates": "keep", "near_duplicates": None}
        print("| what | pages | MB of source | seconds | pages / s | ms / page |")
        print("|---|---:|---:|---:|---:|---:|")
        timed("Markdown: markdown_text (parse only)", len(mds), md_chars, lambda: [markdown_text(t) for t in mds])
        timed("HTML: html_text (parse only)", len(htmls), html_chars, lambda: [html_text(t) for t in htmls])
        timed("Markdown folder, markup=text (as written)", len(mds), md_chars,
              lambda: read_folder(root / "md", markup="text", **keep))
        timed("Markdown folder, markup=parse", len(mds), md_chars, lambda: read_folder(root / "md", **keep))
        timed("HTML folder", len(htmls), html_chars, lambda: read_folder(root / "html", **keep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
