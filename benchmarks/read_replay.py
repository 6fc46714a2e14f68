"""Replay a deterministic docs gate on hand-read test sets, without a model (issue #34).

A hand read (``benchmarks/results/*-doc-heldoutK-read.md``) marks every question of a kept test set with SC / AE /
CR / UA in a table whose row ``#`` is the sample's number (``gen-00NN``). This script joins each read table to its
kept JSONL (checking that the questions match), reads the corpus folder the set was written from with today's
folder reader, rebuilds each sample's evidence units there (by offset, or by the span's text when the reader has
moved it; a sample whose evidence is gone is skipped and counted), and runs a gate on them: how many wrong
references (CR = n) it catches and how many right ones (CR = y) it refuses, per half of the reads.

    python benchmarks/read_replay.py \\
        --set tune:heldout6:READ6.md:KEPT6.jsonl:CORPUS6 --set check:heldout7:READ7.md:KEPT7.jsonl:CORPUS7 ...

The gate replayed is :func:`gen.structure.cut_antecedent` (``antecedent_outside``), or with ``--gate unnamed_item``
:func:`gen.structure.unnamed_item` (a question of one tab of a row that does not name it). A folder's samples all go
to the half named first in their ``--set``: split by folder before looking at any figure.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections import defaultdict
from pathlib import Path

from ragsweep.gen.documents import Corpus, iter_jsonl, read_folder
from ragsweep.metrics.errors import InputError
from ragsweep.gen.structure import cut_antecedent, unnamed_item
from ragsweep.gen.units import Unit

_ROW = re.compile(r"^\| (\d+) \| (\w+) \| (.*?) \| ([yn?]) \| ([yn?]) \| ([yn?]) \| ([yn?]) \| (.*)\|\s*$")


def read_marks(path: Path) -> dict[int, dict[str, str]]:
    """The rows of a read table: number -> question (shortened), SC, AE, CR, UA, note."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := _ROW.match(line):
            n, _style, question, sc, ae, cr, ua, note = m.groups()
            rows[int(n)] = {"question": question, "SC": sc, "AE": ae, "CR": cr, "UA": ua, "note": note.strip()}
    return rows


def evidence_units(sample: dict, corpus: Corpus) -> tuple[Unit, ...]:
    """A kept sample's evidence as units of today's reading of its corpus; a span whose text is found neither at
    its offsets nor elsewhere in its document is left out."""
    out = []
    for e in sample["evidence"]:
        doc = corpus.get(e["doc_id"]) if e["doc_id"] in corpus else None
        if doc is None:
            continue
        start, text = e["start"], e["text"]
        if doc.text[start:e["end"]] != text:
            text = text.strip()
            start = doc.text.find(text[:40])
            if start < 0:
                continue
        out.append(Unit(doc.id, start, start + len(text), doc.text[start:start + len(text)], -1))
    return tuple(out)


def replay(half: str, name: str, read: Path, kept: Path, folder: Path, tally: dict,
           gate: str = "antecedent_outside") -> None:
    marks = read_marks(read)
    try:
        samples = [sample for _, sample in iter_jsonl(kept)]
    except InputError as exc:
        raise SystemExit(str(exc)) from None
    corpus = read_folder(folder)
    for sample in samples:
        n = int(sample["id"].rsplit("-", 1)[1])
        mark = marks.get(n)
        if mark is None:
            continue
        same = difflib.SequenceMatcher(None, mark["question"].replace("...", ""), sample["question"]).ratio()
        if same < 0.6:
            raise SystemExit(f"{name} #{n}: the read's question does not match the kept set's: {sample['question']}")
        t = tally[half]
        units = evidence_units(sample, corpus)
        if not units:
            t["skipped"] += 1
            continue
        t["read"] += 1
        wrong = mark["CR"] == "n"
        t["wrong"] += wrong
        if gate == "unnamed_item":
            hit = (title,) if (title := unnamed_item(corpus, units, sample["question"])) is not None else None
        else:
            hit = cut_antecedent(corpus, units)
        if hit is not None:
            t["caught" if wrong else "refused"].append(f"{name}#{n} ({hit[0]})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", required=True,
                    help="half:name:read.md:kept.jsonl:corpus_folder (repeat; the half is tune or check)")
    ap.add_argument("--gate", choices=("antecedent_outside", "unnamed_item"), default="antecedent_outside")
    args = ap.parse_args()
    tally: dict = defaultdict(lambda: {"read": 0, "skipped": 0, "wrong": 0, "caught": [], "refused": []})
    for spec in args.set:
        parts = spec.split(":")
        if len(parts) != 5 or parts[0] not in ("tune", "check"):
            ap.error(f"--set {spec!r}: expected half:name:read.md:kept.jsonl:corpus_folder, half tune or check")
        half, name, read, kept, folder = parts
        for what, path in (("read table", read), ("kept set", kept), ("corpus folder", folder)):
            if not Path(path).exists():
                ap.error(f"--set {name}: the {what} {path} does not exist")
        replay(half, name, Path(read), Path(kept), Path(folder), tally, args.gate)
    print("| half | read (skipped) | wrong references | caught | right refused | caught | refused |")
    print("|---|---|---|---|---|---|---|")
    for half, t in tally.items():
        right = t["read"] - t["wrong"]
        print(f"| {half} | {t['read']} ({t['skipped']}) | {t['wrong']} | {len(t['caught'])} of {t['wrong']} | "
              f"{len(t['refused'])} of {right} | {', '.join(t['caught'])} | {', '.join(t['refused'])} |")


if __name__ == "__main__":
    main()
