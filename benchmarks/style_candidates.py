"""How many candidates each documentation style (:mod:`gen.styles`) draws from a folder of pages, with no model.

Every candidate costs a model call when an LLM writer is used, so these counts say how much a change to the
cues or checks cuts before anything is written. Counts only; nothing of the candidates is printed unless
``--show STYLE`` asks for it (not on a held-out set).

    python benchmarks/style_candidates.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from ragsweep.gen.documents import read_folder
from ragsweep.gen.products import products
from ragsweep.gen.styles import DOC_STYLES, section_candidates
from ragsweep.gen.units import document_units


def counts(folder: Path, show: str | None = None) -> tuple[int, dict[str, int], dict[str, int]]:
    """(pages read, style -> candidates, product -> pages) of every page under ``folder`` (no product: one)."""
    corpus = read_folder(str(folder))
    total: collections.Counter[str] = collections.Counter()
    pages = 0
    for doc in corpus.documents:
        pages += 1
        units = document_units(doc)
        for style in DOC_STYLES:
            found = section_candidates(doc, units, style)
            total[style] += len(found)
            for c in found if style == show else ():
                print("==", doc.id, " > ".join(c.section), "| required", c.required)
                print("   " + "\n   ".join(u.text[:300].replace("\n", "\n   ") for u in c.shown))
    return pages, {s: total[s] for s in DOC_STYLES}, products(corpus).pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--show", choices=DOC_STYLES, help="print this style's candidates (tune sets only)")
    args = parser.parse_args(argv)
    print("| folder | pages | products | " + " | ".join(DOC_STYLES) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in DOC_STYLES) + " |")
    for folder in args.folders:
        pages, found, made = counts(folder, args.show)
        print(f"| {folder} | {pages} | {len(made) or 1} | " + " | ".join(str(found[s]) for s in DOC_STYLES) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
