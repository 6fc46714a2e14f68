"""Topping up a test set (``ragsweep gen append_to=SET.jsonl n=N``): N new questions after its own.

The board says how many questions a paired test would need to separate two variants; this adds them
to the set the sweep ran on instead of starting a new one. The new questions pass the same gates,
and the duplicate gate also holds the set's own questions, so none repeats one already there
(normalised text, or MiniLM cosine at ``gates.dup_cosine``); candidates the set's questions were
written from (``provenance.candidate``) are not drawn again. New ids continue the set's ``gen-NNNN``
numbering and never reuse one of its ids. The set's lines are kept byte for byte and the new ones
written after them (atomically).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ragsweep.gen.documents import Corpus
from ragsweep.gen.testset import TestSample, check_against, read_testset

_GEN_ID = re.compile(r"^gen-(\d+)$")


def read_base(path: str | Path, corpus: Corpus) -> list[TestSample]:
    """The test set to top up, checked against the corpus (its spans must lie in it)."""
    samples = read_testset(path)
    check_against(samples, corpus, str(path))
    return samples


def fresh_ids(new: Sequence[TestSample], base: Sequence[TestSample]) -> list[TestSample]:
    """``new`` renumbered ``gen-NNNN`` after the highest such id of ``base``, skipping any id it uses."""
    taken = {s.id for s in base}
    numbers = [int(m.group(1)) for s in base if (m := _GEN_ID.match(s.id))]
    nxt = max(numbers, default=0) + 1
    out = []
    for s in new:
        while f"gen-{nxt:04d}" in taken:
            nxt += 1
        out.append(replace(s, id=f"gen-{nxt:04d}"))
        taken.add(out[-1].id)
        nxt += 1
    return out


def append_samples(base: str | Path, new: Sequence[TestSample], out: str | Path, corpus: Corpus) -> Path:
    """Write ``base``'s lines unchanged, then ``new``, to ``out`` (which may be ``base`` itself)."""
    kept = Path(base).read_bytes()
    if kept and not kept.endswith(b"\n"):
        kept += b"\n"
    file = Path(out)
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_suffix(file.suffix + ".tmp")
    with tmp.open("wb") as fh:
        fh.write(kept)
        for s in new:
            fh.write((json.dumps(s.to_dict(corpus), ensure_ascii=False) + "\n").encode("utf-8"))
    tmp.replace(file)
    return file
