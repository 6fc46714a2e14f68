"""The corpus readers (folder, JSONL, BEIR layout); the types they build are in :mod:`gen.corpus`.

Every reader returns a :class:`Corpus`. Document text is kept exactly as read, because
evidence spans and chunk offsets are character offsets into it.
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ragsweep.gen.corpus import (  # noqa: F401 - the types, re-exported: every reader's callers import them here
    SHOWN_EMPTY,
    Corpus,
    Document,
    Query,
    Span,
    check_documents,
    with_duplicates,
)
from ragsweep.gen.products import with_products
from ragsweep.metrics import InputError

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
MARKDOWN_SUFFIXES = (".md", ".markdown")
HTML_SUFFIXES = (".html", ".htm")
MARKUP = ("parse", "text")


def _read_pdf(path: Path) -> str:
    try:
        from pypdf import PdfReader
    except ImportError as exc:  # optional dependency
        raise InputError(f"{path}: reading PDF needs the optional 'pypdf' package (pip install pypdf)") from exc
    try:
        return "\n\n".join((page.extract_text() or "") for page in PdfReader(str(path)).pages)
    except Exception as exc:  # pypdf raises many types on broken files
        raise InputError(f"{path}: cannot read PDF: {exc}") from exc


def read_folder(path: str | Path, suffixes: Iterable[str] = TEXT_SUFFIXES, min_chars: int = 1,
                duplicates: str = "equal", near_duplicates: float | None = 0.9, markup: str = "parse",
                product: str | Mapping[str, Any] | None = None, hidden: bool = False, site_nav: bool = True) -> Corpus:
    """Read every text-like file below ``path``; the id is the path relative to it (POSIX form).

    The reader is chosen by extension. With ``markup="parse"`` (the default) Markdown (.md, .markdown) and HTML
    (.html, .htm) are parsed: a document's ``text`` is its clean text and its ``layout`` keeps the source, the
    blocks, the sections and the map back to source offsets (:mod:`ragsweep.gen.layout`). ``markup="text"``
    reads Markdown as it is written (HTML still loses its tags), as ragsweep did before it parsed Markdown.
    .txt files are read as they are, PDF through pypdf.

    A file with fewer than ``min_chars`` characters of text (whitespace only, or a PDF with no text layer)
    is left out, logged and recorded in :attr:`Corpus.empty`; only a folder where no file has text is an
    error. ``duplicates`` and ``near_duplicates``: how copies among the documents count (:func:`with_duplicates`).
    ``product``: what product each page documents (:func:`gen.products.with_products`: None finds it from the
    folder; a name for every page; a mapping from subfolder to name), kept as ``metadata["product"]``.
    ``hidden``: read files whose path has a part starting with a dot (``.github/``, ``.mintlify/``, ``.notes.md``).
    Off by default, as MkDocs builds a site (its ``exclude_docs`` leaves out ``.*``): such files are tooling,
    templates or instructions for other programs, not pages people read; those left out are named in a warning.
    ``site_nav``: a page the site's own page list (``_toc.yml``, ``myst.yml``, ``mkdocs.yml`` ``nav``) leaves out
    stays in the corpus but draws no question (:mod:`gen.site_nav`); False when the list is not the site's
    navigation (a plugin builds it), so every page may draw one.
    """
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"{root}: corpus folder not found")
    if markup not in MARKUP:
        raise InputError(f"corpus.markup must be one of {', '.join(MARKUP)}, got {markup!r}")
    for key, value in (("hidden", hidden), ("site_nav", site_nav)):
        if not isinstance(value, bool):  # a string such as "maybe" is truthy: it would pass as true without a word
            raise InputError(f"corpus.{key} must be true or false, got {value!r}")
    wanted = tuple(s.lower() for s in suffixes)
    docs: list[Document] = []
    empty: list[str] = []
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in wanted)
    dotted = [] if hidden else [f for f in files if any(p.startswith(".") for p in f.relative_to(root).parts)]
    if dotted:
        names = [f.relative_to(root).as_posix() for f in dotted]
        if len(dotted) == len(files):
            raise InputError(f"{root}: every one of its {len(files)} {', '.join(wanted)} files is in a hidden folder "
                             f"or has a hidden name ({_first(names)}); corpus.hidden=true reads them")
        log.warning("%s: left out %d file(s) in hidden folders or with hidden names (corpus.hidden=true reads "
                    "them): %s", root, len(dotted), _first(names))
        left_out = set(dotted)
        files = [f for f in files if f not in left_out]
    for file in files:
        rel = file.relative_to(root).as_posix()
        doc = _read_file(file, rel, markup)
        if len(doc.text.strip()) < min_chars:
            empty.append(rel)
            continue
        docs.append(doc)
    if not docs and empty:
        raise InputError(f"{root}: every one of its {len(empty)} {', '.join(wanted)} files is empty "
                         f"({_first(empty)}): no text to read")
    if not docs:
        raise InputError(f"{root}: no {', '.join(wanted)} files found")
    if empty:
        log.warning("%s: left out %d empty file(s) of %d: %s", root, len(empty), len(empty) + len(docs),
                    _first(empty))
    if product is not None and not isinstance(product, (str, Mapping)) and hasattr(product, "_get_node"):
        # Hydra passes a list as a ListConfig: made a list, which with_products refuses
        from omegaconf import OmegaConf

        product = OmegaConf.to_container(product)  # type: ignore[assignment]
    if site_nav:
        docs = _with_listing(root, docs)
    corpus = Corpus(check_documents(with_products(docs, product), str(root)), source=str(root), empty=tuple(empty))
    return with_duplicates(corpus, duplicates, near_duplicates)


def _with_listing(root: Path, docs: list[Document]) -> list[Document]:
    """The documents, each page its site's own page list leaves out marked ``metadata["unlisted"]``
    (:func:`gen.site_nav.unlisted_pages`): it draws no question."""
    from ragsweep.gen.site_nav import unlisted_pages

    unlisted = unlisted_pages(root, [d.id for d in docs])
    if unlisted:
        log.info("%s: %d page(s) its site's page list leaves out draw no question (corpus.site_nav=false: they "
                 "do): %s", root, len(unlisted), _first(sorted(unlisted)))
    return [Document(d.id, d.text, {**d.metadata, "unlisted": True}, d.layout) if d.id in unlisted else d
            for d in docs]


def _first(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN_EMPTY])
    return shown + (f", ... ({len(names) - SHOWN_EMPTY} more)" if len(names) > SHOWN_EMPTY else "")


def _read_file(file: Path, rel: str, markup: str = "parse") -> Document:
    """A file as a document: PDF through pypdf, Markdown and HTML through their readers, anything else as
    UTF-8 text."""
    suffix = file.suffix.lower()
    meta: dict[str, Any] = {"path": rel}
    if suffix == ".pdf":
        return Document(rel, _read_pdf(file), meta)
    try:
        raw = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if suffix in HTML_SUFFIXES:
        from ragsweep.gen.html_reader import html_text

        text, layout, found = html_text(raw)
        return Document(rel, text, {**found, **meta, "format": "html"}, layout)
    if suffix in MARKDOWN_SUFFIXES and markup == "parse":
        from ragsweep.gen.markdown_reader import markdown_text

        text, layout, found = markdown_text(raw, str(file))
        return Document(rel, text, {**found, **meta, "format": "markdown"}, layout)
    return Document(rel, raw, meta)


def _open_text(path: Path):
    # utf-8-sig: a byte-order mark (spreadsheet exports) is not part of the first line
    return gzip.open(path, "rt", encoding="utf-8-sig") if path.suffix == ".gz" else path.open(encoding="utf-8-sig")


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL file (``.gz`` too); a line that
    is not a JSON object, or bytes that are not UTF-8, raise InputError naming the file and line."""
    with _open_text(path) as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}, line {lineno}: not valid JSON ({exc.msg})") from exc
                if not isinstance(row, dict):
                    raise InputError(f"{path}, line {lineno}: expected a JSON object, got {type(row).__name__}")
                yield lineno, row
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def _doc_from_row(path: Path, lineno: int, row: dict[str, Any], id_key: str) -> Document:
    if id_key not in row:
        raise InputError(f"{path}, line {lineno}: missing column {id_key!r}")
    if "text" not in row or not isinstance(row["text"], str):
        raise InputError(f"{path}, line {lineno}: missing or non-string column 'text'")
    title = str(row.get("title") or "").strip()
    body = row["text"]
    # BEIR/MTEB embed "title text"; keep that exact form so published figures are comparable.
    text = f"{title} {body}".strip() if title else body
    if not text.strip():
        raise InputError(f"{path}, line {lineno}: document {row[id_key]!r} is empty")
    meta = {k: v for k, v in row.items() if k not in (id_key, "text")}
    return Document(id=str(row[id_key]), text=text, metadata=meta)


def read_jsonl(path: str | Path, duplicates: str = "equal", near_duplicates: float | None = 0.9) -> Corpus:
    """Read a JSONL (optionally .gz) file of ``{id, title?, text, ...}`` records (copies: :func:`with_duplicates`)."""
    file = Path(path)
    if not file.is_file():
        raise InputError(f"{file}: corpus file not found")
    if file.suffix.lower() == ".json":
        return _read_json_corpus(file, duplicates, near_duplicates)
    docs = [_doc_from_row(file, n, row, "id" if "id" in row else "_id") for n, row in iter_jsonl(file)]
    return with_duplicates(Corpus(check_documents(docs, str(file)), source=str(file)), duplicates, near_duplicates)


def _read_json_corpus(file: Path, duplicates: str, near_duplicates: float | None) -> Corpus:
    """A ``.json`` file given as a JSONL corpus: a Ragas knowledge graph is read as one
    (:mod:`gen.ragas_kg`); anything else is refused with what was expected."""
    from ragsweep.gen.ragas_kg import looks_like_kg, read_ragas_kg

    try:
        data = json.loads(file.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        data = None
    if looks_like_kg(data):
        log.info("%s: a Ragas knowledge graph; reading its document nodes (corpus=ragas_kg)", file)
        return read_ragas_kg(file, duplicates, near_duplicates)
    raise InputError(f"{file}: a .json corpus must be a Ragas knowledge graph (corpus=ragas_kg); "
                     "for documents, write one JSON object per line ({\"id\", \"text\"}) in a .jsonl file")


def _find_qrels(root: Path, split: str, qrels: str | None) -> Path:
    if qrels:
        explicit = Path(qrels)
        candidates = [explicit, root / qrels, root / f"qrels_{split}_{qrels}.tsv"]
        for c in candidates:
            if c.is_file():
                return c
        raise InputError(f"{root}: qrels {qrels!r} not found (tried {', '.join(map(str, candidates))})")
    exact = [root / "qrels" / f"{split}.tsv", root / f"qrels_{split}.tsv"]
    for c in exact:
        if c.is_file():
            return c
    found = sorted(root.glob(f"qrels_{split}_*.tsv"))
    if not found:
        raise InputError(f"{root}: no qrels for split {split!r} (looked for qrels/{split}.tsv, qrels_{split}*.tsv)")
    if len(found) > 1:
        log.warning("several qrels files for split %r: using %s (choose with corpus.qrels=...): %s",
                    split, found[0].name, ", ".join(f.name for f in found[1:]))
    return found[0]


def _read_qrels(path: Path, corpus_ids: set[str]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    labelled = False  # a third column of labels (SciFact evidence: SUPPORT / CONTRADICT) = relevant
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t") if "\t" in line else line.split()
            if not parts or not line.strip():
                continue
            if lineno == 1 and not parts[-1].lstrip("-").isdigit():
                labelled = parts[-1].strip().lower() == "label"
                continue  # header
            if len(parts) == 4:  # TREC format: qid 0 docid rel
                parts = [parts[0], parts[2], parts[3]]
            if len(parts) != 3:
                raise InputError(f"{path}, line {lineno}: expected 'query-id corpus-id score'")
            qid, did, score = parts
            if did not in corpus_ids:
                raise InputError(f"{path}, line {lineno}: corpus-id {did!r} is not in the corpus")
            try:
                qrels.setdefault(qid, {})[did] = 1 if labelled and score.strip() else int(score)
            except ValueError as exc:
                raise InputError(f"{path}, line {lineno}, column score: {score!r} is not an integer") from exc
    return qrels


def read_beir(path: str | Path, split: str = "test", qrels: str | None = None, duplicates: str = "equal",
              near_duplicates: float | None = 0.9) -> Corpus:
    """Read a BEIR-layout folder: ``corpus.jsonl[.gz]``, ``queries.jsonl`` or ``queries_<split>.jsonl``,
    and qrels as ``qrels/<split>.tsv`` or ``qrels_<split>*.tsv``.

    Only queries with at least one positive judgement are kept (as BEIR's evaluation does). Copies
    among the documents: :func:`with_duplicates`.
    """
    root = Path(path)
    if not root.is_dir():
        raise InputError(f"{root}: BEIR folder not found")
    corpus_file = next((root / n for n in ("corpus.jsonl", "corpus.jsonl.gz") if (root / n).is_file()), None)
    if corpus_file is None:
        raise InputError(f"{root}: no corpus.jsonl or corpus.jsonl.gz")
    docs = [_doc_from_row(corpus_file, n, row, "_id" if "_id" in row else "id") for n, row in iter_jsonl(corpus_file)]
    check_documents(docs, str(corpus_file))
    qrels_file = _find_qrels(root, split, qrels)
    judged = _read_qrels(qrels_file, {d.id for d in docs})
    qfile = next((root / n for n in (f"queries_{split}.jsonl", "queries.jsonl", "queries.jsonl.gz") if (root / n).is_file()), None)
    if qfile is None:
        raise InputError(f"{root}: no queries_{split}.jsonl or queries.jsonl")
    queries: list[Query] = []
    for lineno, row in iter_jsonl(qfile):
        qid = str(row.get("_id", row.get("id", "")))
        if not qid or not isinstance(row.get("text"), str):
            raise InputError(f"{qfile}, line {lineno}: a query needs '_id' and 'text'")
        if any(v > 0 for v in judged.get(qid, {}).values()):
            queries.append(Query(qid, row["text"]))
    if not queries:
        raise InputError(f"{qfile}: no query has a positive judgement in {qrels_file.name}")
    log.info("BEIR %s: %d documents, %d judged queries (%s)", root.name, len(docs), len(queries), qrels_file.name)
    corpus = Corpus(docs, source=str(root), queries=queries, qrels={q.id: judged[q.id] for q in queries})
    return with_duplicates(corpus, duplicates, near_duplicates)


def read_shipped(duplicates: str = "equal", near_duplicates: float | None = 0.9) -> Corpus:
    """The shipped knowledge base (see :func:`shipped_corpus_path`)."""
    return read_folder(shipped_corpus_path(), duplicates=duplicates, near_duplicates=near_duplicates)


def shipped_corpus_path() -> Path:
    """The small knowledge base that ships with ragsweep (the default corpus)."""
    return Path(__file__).parent / "data" / "corpus"


def shipped_testset_path() -> Path:
    """The hand-checked test set over the shipped corpus."""
    return Path(__file__).parent / "data" / "testset.jsonl"
