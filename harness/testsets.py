"""Test sets in any format (:mod:`gen.formats`), with evidence spans located in the corpus, and
``ragsweep convert``.

A sample read from a Ragas, DeepEval or LlamaIndex file brings reference contexts, not spans.
Each context is found in the corpus as an application's returned context is
(:class:`harness.locate.Locator`: exact, then normalised, then fuzzy), or directly when its id is a
span id ``<doc_id>:<start>-<end>`` whose text matches (a file this wrote). The located spans become
the sample's evidence; a context found nowhere is counted and left out, so a sample none of whose
contexts was found has no evidence and its retrieval metrics are ``undefined`` (answer metrics
still score it). ``sweep``, ``run`` and ``convert`` print how many contexts were located, by how.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from ragsweep.gen import (
    FORMATS,
    SUFFIXES,
    Corpus,
    Imported,
    Span,
    TestSample,
    check_against,
    check_format,
    output_format,
    parse_span_id,
    read_external,
    read_testset,
    samples_from_qrels,
    shipped_corpus_path,
    shipped_testset_path,
    write_external,
)
from ragsweep.harness.app.locate import LOCATE_VERSION, Location, Locator
from ragsweep.harness.cache import Cache, make_key
from ragsweep.harness.pipeline.relevance import restate
from ragsweep.metrics import InputError, fail

log = logging.getLogger("ragsweep")
METHODS = ("id", "exact", "normalised", "fuzzy")


@dataclass
class Located:
    """How the reference contexts of imported samples were found in the corpus."""

    contexts: int = 0
    by_method: Counter[str] = field(default_factory=Counter)
    samples: int = 0
    with_evidence: int = 0
    without_contexts: int = 0

    @property
    def located(self) -> int:
        return sum(self.by_method[m] for m in METHODS)

    def to_dict(self) -> dict[str, Any]:
        return {"contexts": self.contexts, "located": self.located, "unlocated": self.contexts - self.located,
                **{m: self.by_method[m] for m in METHODS}, "samples": self.samples,
                "samples_with_evidence": self.with_evidence, "samples_without_contexts": self.without_contexts}

    def message(self) -> str:
        how = ", ".join(f"{m} {self.by_method[m]}" for m in METHODS if self.by_method[m])
        text = f"located {self.located} of {self.contexts} reference contexts in the corpus" + (f" ({how})" if how else "")
        bare = self.samples - self.with_evidence
        if bare:
            text += (f"; {bare} of {self.samples} samples have no evidence span"
                     + (f" ({self.without_contexts} gave no context)" if self.without_contexts else "")
                     + ", so their retrieval metrics are undefined")
        return text


def _by_id(cid: Any, text: str, corpus: Corpus) -> Span | None:
    span = parse_span_id(cid)
    if span is None or span.doc_id not in corpus:
        return None
    return span if corpus.get(span.doc_id).text[span.start:span.end] == text else None


class Prelocated:
    """A :class:`Locator`'s answers for a test set's reference contexts, found once and kept in the cache.

    Locating a few hundred contexts in a corpus takes from seconds to a minute (the fuzzy pass), and a
    sweep reads the same test set in every job: the locations are cached under everything that changes
    them -- the locating code's version, the corpus's texts, the settings and the contexts -- so a sweep
    locates once and every later job (and sweep) reads them back.
    """

    def __init__(self, locator: Locator, texts: list[str], cache: Cache | None) -> None:
        self.locator, self.threshold = locator, locator.threshold
        unique = sorted(set(texts))
        key = make_key("locate", LOCATE_VERSION, locator.corpus.fingerprint(), locator.threshold, locator.fuzzy,
                       unique)

        def compute() -> list[dict[str, Any]]:
            return [asdict(locator.locate(t)) for t in unique]

        hits = cache.hits if cache is not None else 0
        found = cache.json("locate", key, compute) if cache is not None else compute()
        self.from_cache = cache is not None and cache.hits > hits
        self._found = {t: Location(**d) for t, d in zip(unique, found)}

    def locate(self, text: str) -> Location:
        return self._found.get(text) or self.locator.locate(text)


def reference_texts(samples: list[TestSample]) -> list[str]:
    """The reference contexts of imported samples that have no evidence spans yet (what is located)."""
    return [t for s in samples if not s.evidence for t in s.provenance.get("reference_contexts") or ()]


def locate_evidence(samples: list[TestSample], corpus: Corpus,
                    locator: Locator | Prelocated) -> tuple[list[TestSample], Located]:
    """Give imported samples evidence spans by locating their reference contexts in ``corpus``.

    Samples that carry no imported contexts (ours, with spans already) are returned as they are.
    """
    out, report = [], Located()
    for s in samples:
        texts = s.provenance.get("reference_contexts")
        if texts is None or s.evidence:
            if texts is None and not s.evidence and s.provenance.get("format"):
                report.samples += 1
                report.without_contexts += 1
            out.append(s)
            continue
        report.samples += 1
        ids = s.provenance.get("reference_context_ids") or [None] * len(texts)
        spans: list[Span] = []
        quotes: list[str | None] = []
        located = []
        for text, cid in zip(texts, ids):
            report.contexts += 1
            span = _by_id(cid, text, corpus)
            if span is not None:
                entry: dict[str, Any] = {"method": "id", "score": 1.0}
            else:
                where = locator.locate(text)
                entry = where.to_dict(locator.threshold)
                if where.located:
                    span = Span(where.doc_id, where.start, where.end)
            report.by_method[entry["method"]] += 1
            if span is not None:
                entry = {"doc_id": span.doc_id, "start": span.start, "end": span.end, **entry}
                if span not in spans:
                    spans.append(span)
                    quotes.append(text if entry["method"] in ("id", "exact") else None)
            located.append(entry)
        if not texts:
            report.without_contexts += 1
        report.with_evidence += bool(spans)
        out.append(replace(s, evidence=tuple(spans), quotes=tuple(quotes),
                           provenance={**s.provenance, "located": located}))
    return out, report


@dataclass
class Loaded:
    """A test set read from any format: samples (with located evidence when a corpus was given)."""

    samples: list[TestSample]
    format: str
    extra: dict[str, Any] = field(default_factory=dict)
    located: Located | None = None
    locate_seconds: float = 0.0     # spent locating the reference contexts (near 0 when cached)
    located_from_cache: bool = False


def read_any(path: str | Path, corpus: Corpus | None = None, format: str | None = None,
             locate: Mapping[str, Any] | None = None, cache: Cache | None = None) -> Loaded:
    """Read a test set in any format; with a corpus, locate imported contexts and check every span.

    Args:
        path: The file.
        format: One of :data:`gen.formats.FORMATS`; None: detected.
        corpus: The documents the test set points into; None: no spans located or checked.
        locate: ``fuzzy`` (bool) and ``fuzzy_threshold`` (0-1), as ``ragsweep run``'s ``locate``.
        cache: Where the locations are kept (:class:`Prelocated`); None: located afresh.
    """
    imported: Imported = read_external(path, format)
    located = None
    samples = imported.samples
    seconds, from_cache = 0.0, False
    if corpus is not None:
        opts = dict(locate or {})
        started = time.perf_counter()
        locator = Locator(corpus, float(opts.get("fuzzy_threshold", 0.9)), bool(opts.get("fuzzy", True)))
        texts = reference_texts(samples)
        found = Prelocated(locator, texts, cache) if texts else locator
        samples, located = locate_evidence(samples, corpus, found)
        seconds, from_cache = time.perf_counter() - started, getattr(found, "from_cache", False)
        if located.samples == 0:
            located = None
        # evidence on a copy of a document moves to its original first (duplicates=equal|drop):
        # with drop the copy is not in the corpus at all
        samples = restate(samples, corpus, str(path))
        check_against(samples, corpus, str(path))
    return Loaded(samples, imported.format, imported.extra, located, seconds, from_cache)


def load_for_corpus(path: str | Path, corpus: Corpus, format: str | None = None,
                    locate: Mapping[str, Any] | None = None, cache: Cache | None = None) -> list[TestSample]:
    """The samples of ``testset=`` in ``sweep`` and ``run`` (any format), the location counts logged."""
    loaded = read_any(path, corpus, format, locate, cache)
    if loaded.located is not None:
        how = "read from the cache" if loaded.located_from_cache else f"{loaded.locate_seconds:.1f} s"
        log.info("%s (%s): %s (%s)", path, loaded.format, loaded.located.message(), how)
    return loaded.samples


# ---------------------------------------------------------------- ragsweep convert

def output_format_of(out: str | Path, format: str | None) -> tuple[str, str]:
    """The format ``convert`` writes to ``out``, and why: ``format=`` when given; else the one format the
    file's stem names as a word (``ragas_testset.jsonl`` -> ragas), when its suffix fits that format;
    else the suffix (``.jsonl`` ours, ``.csv`` Ragas). A stem naming two formats, a named format whose
    files do not end so, or a suffix that tells nothing is refused: pass ``format=``."""
    if check_format(format):
        return format, "format=" + format
    path = Path(out)
    suffix = "".join(path.suffixes[-1:]).lower()
    words = set(re.split(r"[^a-z0-9]+", path.stem.lower()))
    named = [f for f in FORMATS if f in words or (f == "llamaindex_qa" and {"llamaindex", "qa"} <= words)]
    if "llamaindex_qa" in named:
        named.remove("llamaindex")
    if len(named) > 1:
        raise InputError(f"{out}: the file name names {' and '.join(named)}; pass format= to say which to write")
    if named:
        fmt = named[0]
        if suffix not in SUFFIXES[fmt]:
            raise InputError(f"{out}: the file name says {fmt}, which writes {' or '.join(SUFFIXES[fmt])} files, "
                             f"not {suffix or 'a name without suffix'}; rename it or pass format=")
        return fmt, f"the file name says {fmt}"
    if suffix in (".jsonl", ".csv"):
        fmt = output_format(path)
        return fmt, f"{suffix} files are written as {fmt} unless format= says otherwise"
    raise InputError(f"{out}: say which format to write (format={'|'.join(FORMATS)}); the file name does not tell")


def convert(cfg: DictConfig) -> Path:
    """Read ``cfg.input`` and write it to ``cfg.out`` in ``cfg.format``; print what was done."""
    from ragsweep.gen import build

    fmt, why = output_format_of(cfg.out, cfg.format)
    check_format(cfg.input_format)
    corpus = build(cfg.corpus, "corpus") if cfg.get("corpus") else None
    loaded = read_any(cfg.input, corpus, cfg.input_format, cfg.get("locate"))
    path = write_external(loaded.samples, cfg.out, fmt, corpus, loaded.extra if fmt == loaded.format else None)
    print(f"read {len(loaded.samples)} samples ({loaded.format}) from {cfg.input}")
    if loaded.located is not None:
        print(loaded.located.message())
    elif corpus is None and any(s.provenance.get("reference_contexts") for s in loaded.samples):
        print("no corpus given: reference contexts kept as text, no evidence spans located (corpus=...)")
    print(f"wrote {len(loaded.samples)} samples to {path} in {fmt} format ({why})")
    return path


def convert_app(cfg: DictConfig) -> None:
    try:
        convert(cfg)
    except InputError as exc:
        fail(str(exc))


def load_samples(testset: str | None, corpus: Corpus, testset_format: str | None = None,
                 locate: Mapping[str, Any] | None = None, cache: Cache | None = None) -> list[TestSample]:
    """The test set to run: the file given, else the corpus's own (BEIR qrels, or the shipped set).

    The file may be in any format of :mod:`gen.formats` (``testset_format``, or detected); the
    reference contexts of an imported one are located in the corpus as evidence spans (``locate``;
    the locations kept in ``cache``, so the jobs of a sweep locate once).
    Evidence on a copy of a document is restated on its original (corpus option ``duplicates``).
    """
    if testset:
        samples = restate(load_for_corpus(testset, corpus, testset_format, locate, cache), corpus, str(testset))
        check_against(samples, corpus, str(testset))
        return samples
    if corpus.qrels is not None:
        return samples_from_qrels(corpus)
    if Path(corpus.source).resolve() == shipped_corpus_path().resolve():
        samples = restate(read_testset(shipped_testset_path()), corpus, str(shipped_testset_path()))
        check_against(samples, corpus, str(shipped_testset_path()))
        return samples
    raise InputError(f"{corpus.source}: no test set for this corpus: pass testset=PATH (write one with `ragsweep gen`)")


def check_max_queries(n: Any) -> None:
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"max_queries must be a positive integer or null, got {n!r}")


def subset(samples: list[TestSample], n: Any, seed: int) -> list[TestSample]:
    """``max_queries``: ``n`` samples drawn with ``seed`` (kept in test-set order); None: all."""
    if n is None:
        return samples
    check_max_queries(n)
    if n >= len(samples):
        return samples
    keep = set(random.Random(seed).sample(range(len(samples)), n))
    return [s for i, s in enumerate(samples) if i in keep]


@dataclass
class TestSet:
    """A test set: its samples, the corpus they point into, and the generator's (or reader's) report.

    ``TestSet.read`` reads any format people already have (ours, Ragas, DeepEval, LlamaIndex) and
    ``write`` writes any of them (:mod:`ragsweep.gen.formats`)::

        ts = ragsweep.TestSet.read("goldens.json", corpus="docs/")   # contexts located as spans
        ts.write("ragas.csv")                                         # or format="llamaindex", ...
    """

    __test__ = False  # not a pytest class

    samples: list[Any]
    corpus: Any
    report: dict[str, Any]
    path: Path | None = None
    #: the format the samples were read in (None: generated)
    format: str | None = None
    #: file-level fields of that format (a LlamaIndex QA dataset's corpus), written back in the same format
    extra: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def read(cls, path: str | Path, format: str | None = None, *, corpus: Any = None,
             fuzzy_threshold: float = 0.9, fuzzy: bool = True) -> TestSet:
        """Read a test set in any format (detected when ``format`` is None).

        Args:
            path: The file.
            format: ``ragsweep``, ``ragas``, ``deepeval``, ``llamaindex`` or ``llamaindex_qa``.
            corpus: The documents it points into (``"shipped"``, a folder, a JSONL, a BEIR folder or
                a Corpus): imported reference contexts are located there as evidence spans, and
                ``report["located"]`` counts them. None: no spans located.
            fuzzy_threshold: The fuzzy match's least similarity (as ``ragsweep run``'s ``locate``).
            fuzzy: False: exact and normalised matches only.
        """
        docs = None if corpus is None else corpus_of(corpus)
        loaded = read_any(path, docs, format, {"fuzzy": fuzzy, "fuzzy_threshold": fuzzy_threshold})
        report: dict[str, Any] = {"format": loaded.format}
        if loaded.located is not None:
            report["located"] = loaded.located.to_dict()
        return cls(loaded.samples, docs, report, Path(path), loaded.format, loaded.extra)

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame([s.to_dict(self.corpus) for s in self.samples])

    def write(self, path: str | Path, format: str | None = None) -> Path:
        """Write the test set: ours as JSONL (readable by ``ragsweep sweep testset=PATH`` and ``datasets``),
        Ragas for a ``.csv`` name, or any format named (``format="deepeval"``), keeping all it can hold."""
        from ragsweep.gen import output_format, write_external

        named = Path(path).name.lower().endswith((".csv", ".json"))
        fmt = format or (output_format(path) if named else "ragsweep")
        out = write_external(self.samples, path, fmt, self.corpus, self.extra if fmt == self.format else None)
        if fmt == "ragsweep":
            self.path = out
        return out

    def __len__(self) -> int:
        return len(self.samples)


def corpus_of(corpus: Any) -> Any:
    from ragsweep.gen import Corpus, read_beir, read_folder, read_jsonl, read_shipped

    if isinstance(corpus, Corpus):
        return corpus
    if corpus in (None, "shipped"):
        return read_shipped()
    path = Path(corpus)
    if path.is_dir() and any((path / n).exists() for n in ("corpus.jsonl", "corpus.jsonl.gz")):
        return read_beir(path)
    if path.is_dir():
        return read_folder(path)
    if path.suffix in (".jsonl", ".gz"):
        return read_jsonl(path)
    raise InputError(f"{path}: not a corpus (a folder of documents, a JSONL of {{id, text}}, or a BEIR folder)")
