"""How many candidates each documentation style (:mod:`gen.styles`) draws from a folder of pages, with no model.

Every candidate costs a model call when an LLM writer is used, so these counts say how much a change to the
cues or checks cuts before anything is written. Counts only; nothing of the candidates is printed unless
``--show STYLE`` asks for it (not on a held-out set).

    python benchmarks/style_candidates.py FOLDER [FOLDER ...]
    python benchmarks/style_candidates.py --structure FOLDER [FOLDER ...]

``--asks`` counts what the troubleshooting candidates' text states (:mod:`gen.grounding`): a reason (asked
"why" / "what causes"), or none (asked what to avoid; "what happens if" only when it states a consequence).

``--structure`` also counts what the page's structure does to the plain ``single_hop`` (fact) candidates
(:func:`gen.structure.structured`): how many are drawn, dropped as an example's, shown as a whole list item, or
shown with their list's lead-in and the whole list.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from ragsweep.gen.candidates import candidates
from ragsweep.gen.documents import read_folder
from ragsweep.gen.grounding import states_consequence, states_reason
from ragsweep.gen.products import products
from ragsweep.gen.structure import structured
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


def structure_counts(folder: Path) -> dict[str, int]:
    """What :func:`gen.structure.structured` does to the plain ``single_hop`` candidates of ``folder`` (seed 0)."""
    corpus = read_folder(str(folder))
    units = {d.id: us for d in corpus.documents if (us := document_units(d))}
    plain = list(candidates(units, "single_hop", 0))
    after = list(structured(corpus, iter(plain)))
    whole_item = sum(1 for c in after if len(c.shown) == 1 and not c.items and c.shown[0].index < 0)
    return {"plain": len(plain), "dropped (example)": len(plain) - len(after), "whole item": whole_item,
            "whole list": sum(1 for c in after if c.items)}


def ask_counts(folder: Path) -> dict[str, int]:
    """Of the troubleshooting candidates of ``folder``: how many state a reason, a consequence only, neither."""
    corpus = read_folder(str(folder))
    got: collections.Counter[str] = collections.Counter()
    for doc in corpus.documents:
        for c in section_candidates(doc, document_units(doc), "troubleshooting"):
            texts = [u.text for u in c.shown]
            why = states_reason(texts, not c.warning)
            cue = "warning" if c.warning else "error"
            got[f"{cue}: " + ("reason" if why else "consequence only" if states_consequence(texts) else "neither")] += 1
    return {f"{cue}: {k}": got[f"{cue}: {k}"] for cue in ("error", "warning")
            for k in ("reason", "consequence only", "neither")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--show", choices=DOC_STYLES, help="print this style's candidates (tune sets only)")
    parser.add_argument("--structure", action="store_true", help="also count the plain candidates' structure")
    parser.add_argument("--asks", action="store_true", help="also count what troubleshooting candidates state")
    args = parser.parse_args(argv)
    print("| folder | pages | products | " + " | ".join(DOC_STYLES) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in DOC_STYLES) + " |")
    for folder in args.folders:
        pages, found, made = counts(folder, args.show)
        print(f"| {folder} | {pages} | {len(made) or 1} | " + " | ".join(str(found[s]) for s in DOC_STYLES) + " |")
    if args.structure:
        print()
        rows = [(folder, structure_counts(folder)) for folder in args.folders]
        print("| folder | " + " | ".join(rows[0][1]) + " |")
        print("| --- | " + " | ".join("---" for _ in rows[0][1]) + " |")
        for folder, got in rows:
            print(f"| {folder} | " + " | ".join(str(v) for v in got.values()) + " |")
    if args.asks:
        print("\n| folder | " + " | ".join(f"{c}: {k}" for c in ("error", "warning") for k in ("reason", "consequence only",
              "neither")) + " |\n| --- |" + " --- |" * 6)
        for folder in args.folders:
            print(f"| {folder} | " + " | ".join(str(v) for v in ask_counts(folder).values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
