"""What product each page of a documentation folder documents, and whether a question names it (issue #34).

A folder that holds the docs of several products (one subfolder each) shares words across them: "How do I launch
a shell within a specific environment?" fits several of them, and a reader of the whole folder cannot tell which
one it asks about. Each document therefore carries its product (``metadata["product"]``), found as the folder
shows it (:func:`with_products`):

- a page's front matter ``product`` key;
- else, in a folder of Markdown or HTML pages, the top-level subfolder a page sits in, when the folder holds
  several that do not link to each other: the sections of one product's docs (``tutorial/``, ``advanced/``) link
  across folders with relative links, separate products never do. Subfolders joined by links are one product,
  named by the folder whose name its pages use most. One product found: none is recorded, and nothing is asked
  of a question;
- or as ``corpus.product`` sets it: one name for every page, or a mapping from subfolder to name.

The name is spelled as its pages spell it most often in their prose ("Hatch", not the folder's "hatch").

On a corpus of several products a question must say which one it asks about (:meth:`Products.missing`): it
names the product (a word that starts with its name: "blackd" names Black) or the folder its pages sit in (the
package's name, "fastapi-pagination"). A name only that product's pages hold (an identifier such as
``ConsoleRenderer`` found in no other product's pages) does not do: the gate knows the folder holds it once, a
reader of ten products' docs does not ("How do I run example-based tests with --phases=examples?" names no
product to them). The index keeps those names (:attr:`Products.unique`); the report counts the questions that
name only one (``named_by_identifier``) among those that had their product added.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragsweep.gen.corpus import Corpus, Document
from ragsweep.metrics import InputError

#: The metadata key of a document's product.
PRODUCT = "product"
#: The modes of ``gates.product``: what the generator does with a question that names no product.
MODES = ("repair", "refuse", "off")

# A relative link target in Markdown or HTML source: "](../x.md)", "href='x.html'" (no scheme, no site root, no anchor)
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)|\bhref\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
# A name that reads as code: a dotted name (structlog.stdlib), snake_case, CamelCase with an inner capital, a --flag
_IDENTIFIER = re.compile(r"(?<![\w.-])(?:--[a-z][\w-]{2,}|[A-Za-z_]\w*(?:\.[A-Za-z_]\w+)+|[A-Za-z]\w*_\w+|"
                         r"[A-Z][a-z0-9]+[A-Z]\w*|[a-z]+[A-Z]\w*)(?![\w-])")
_PROSE = ("paragraph", "list_item", "heading", "admonition", "table")
# A link to another site, with its text: "[Channels](https://channels.readthedocs.io/)" (not an image's "![...]")
_OUTSIDE_LINK = re.compile(r"(?<![!\]])\[([^\[\]\n]{2,40})\]\(\s*<?https?://", re.IGNORECASE)
#: A link's text names a thing (another project, a tool) when it has at most this many words.
_MAX_NAME_WORDS = 3


def _top(path: str) -> str:
    """The top-level folder of a path below the corpus folder ("" for a page at its root)."""
    return path.split("/", 1)[0] if "/" in path else ""


def _links(doc: Document) -> Iterable[str]:
    """The pages and folders ``doc`` links to with relative links, as paths below the corpus folder."""
    if doc.layout is None:
        return
    here = posixpath.dirname(doc.id)
    for m in _LINK.finditer(doc.layout.source):
        target = (m.group(1) or m.group(2) or "").split("#", 1)[0].split("?", 1)[0]
        if not target or target.startswith("/") or _SCHEME.match(target):
            continue
        path = posixpath.normpath(posixpath.join(here, target))
        if not path.startswith(".."):
            yield path


def _prose(doc: Document) -> str:
    if doc.layout is None:
        return doc.text
    return "\n".join(doc.text[b.start:b.end] for b in doc.layout.blocks if b.kind in _PROSE)


def spelling(name: str, docs: Sequence[Document]) -> str:
    """``name`` as ``docs`` write it most often in their prose (case aside), ``name`` itself when they never do."""
    pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
    forms = Counter(m.group(0) for d in docs for m in pattern.finditer(_prose(d)))
    return max(forms.items(), key=lambda kv: (kv[1], kv[0] != kv[0].lower()))[0] if forms else name


def _components(docs: Sequence[Document]) -> list[list[str]]:
    """The top-level folders of ``docs`` grouped by the relative links between their pages (each group in name
    order, groups in order of their first folder)."""
    folders = sorted({_top(d.id) for d in docs})
    parent = {f: f for f in folders}

    def root(f: str) -> str:
        while parent[f] != f:
            parent[f] = parent[parent[f]]
            f = parent[f]
        return f

    for d in docs:
        here = _top(d.id)
        for path in _links(d):
            there = _top(path) if "/" in path else path  # a link to a subfolder itself names it
            # pages at the root (an index of every product's docs) join nothing: only sections of one product's
            # docs link from one subfolder into another
            if here and there in parent and there and there != here:
                parent[root(there)] = root(here)
    groups: dict[str, list[str]] = {}
    for f in folders:
        groups.setdefault(root(f), []).append(f)
    return sorted(groups.values(), key=lambda g: g[0])


def _found(docs: Sequence[Document]) -> dict[str, str]:
    """Document id -> product as the folder shows it (module docstring); empty when it shows one product."""
    pages = [d for d in docs if d.layout is not None]
    groups = [g for g in _components(pages) if g != [""]]  # pages at the root alone name no product
    if len(groups) < 2:
        return {}
    out: dict[str, str] = {}
    for group in groups:
        members = [d for d in pages if _top(d.id) in group]
        folders = [f for f in group if f]
        named = Counter({f: len(re.findall(rf"(?<![\w.-]){re.escape(f)}(?![\w-])", " ".join(map(_prose, members)),
                                           re.IGNORECASE)) for f in folders})
        name = spelling(max(folders, key=lambda f: (named[f], -folders.index(f))), members)
        out.update({d.id: name for d in members})
    return out


def with_products(docs: list[Document], product: str | Mapping[str, Any] | None = None) -> list[Document]:
    """``docs`` with ``metadata["product"]`` set where a product is known (module docstring). ``product``: None
    (found from the folder), a name (every page's), or a mapping from a subfolder or a page (``"hatch"``,
    ``"a/b"``, ``"attrs.md"``: the longest that holds a page wins) to a product name; a page's front matter
    ``product`` comes first."""
    if isinstance(product, str):
        if not product.strip():
            raise InputError("corpus.product must be a product name, a mapping {subfolder: name}, or null")
        given = {d.id: product.strip() for d in docs}
    elif isinstance(product, Mapping):
        folders = sorted(((str(k).strip("/"), str(v).strip()) for k, v in product.items()), key=lambda kv: -len(kv[0]))
        if any(not k or not v for k, v in folders):
            raise InputError(f"corpus.product: a mapping needs a subfolder and a name in each entry, got {dict(product)}")
        given = {d.id: next((v for k, v in folders if d.id == k or d.id.startswith(k + "/")), "") for d in docs}
        given = {k: v for k, v in given.items() if v}
    elif product is None:
        given = _found(docs)
    else:
        raise InputError(f"corpus.product must be a product name, a mapping {{subfolder: name}}, or null; "
                         f"got {product!r}")
    out = []
    for d in docs:
        name = str(d.metadata.get(PRODUCT) or "").strip() or given.get(d.id, "")
        out.append(replace(d, metadata={**d.metadata, PRODUCT: name}) if name else d)
    return out


def product_of(doc: Document) -> str | None:
    """A document's product (None when none is known)."""
    return str(doc.metadata.get(PRODUCT) or "").strip() or None


class Turns:
    """Whose turn comes next on a folder of several products: per product, the candidates it was given and the
    questions it has (:func:`by_product` counts the first, the generation loop the second through
    :meth:`accept`). The product that stands lowest goes next, a refused candidate counting as
    1 / :data:`REFUSALS_PER_QUESTION` of a question: a turn per candidate gives a product whose candidates the
    gates pass easily most of the set and leaves one they refuse often with none, while a turn per accepted
    question alone would spend the run on a product whose pages give nothing."""

    #: About the candidates an accepted docs question costs the packaged writer: a product refused as often as the
    #: run is keeps its share, one refused far more often gives way after spending about what a question costs
    #: elsewhere.
    REFUSALS_PER_QUESTION = 4

    def __init__(self) -> None:
        self.given: Counter[str] = Counter()
        self.accepted: Counter[str] = Counter()
        self._of: dict[Any, str] = {}

    def give(self, key: Any, name: str) -> None:
        self.given[name] += 1
        self._of[key] = name

    def accept(self, key: Any) -> None:
        """A question written from the candidate ``key`` was accepted (a key no product was given: nothing)."""
        if (name := self._of.get(key)) is not None:
            self.accepted[name] += 1

    def standing(self, name: str) -> float:
        got = self.accepted[name]
        return got + (self.given[name] - got) / self.REFUSALS_PER_QUESTION


def by_product(corpus: Corpus, stream: Iterator[Any], turns: Turns | None = None) -> Iterator[Any]:
    """The candidates of ``stream`` taken one product at a time (a page with no product is a product of its own,
    ""): the stream visits pages round-robin, so on a folder where one product has most of the pages most of the
    first candidates were that product's, and a set of thirty questions left most of a dozen products without
    one. The next candidate is the product's that stands lowest in ``turns`` (:class:`Turns`: questions accepted,
    candidates refused), ties to the product the stream showed first; without accepted questions reported, that
    is each product in turn. Several streams (one per kind) may share one ``turns``. A product runs out and
    leaves the turn; within a product the stream's own order is kept. Read lazily: a candidate of another
    product than the one whose turn it is waits its product's turn (the stream is read as far as every product's
    first candidate, to the end when a product has none). A corpus of one product or none passes the stream as
    it is."""
    known = {product_of(d) for d in corpus.documents}
    if len(known - {None}) < 2:
        yield from stream
        return
    turns = turns if turns is not None else Turns()

    def product(cand: Any) -> str:
        unit = cand.shown[cand.required[0]] if cand.required else cand.shown[0]
        return (product_of(corpus.get(unit.doc_id)) if unit.doc_id in corpus else None) or ""

    waiting: dict[str, deque[Any]] = {}
    order: list[str] = []
    ended = False

    def pull() -> bool:
        nonlocal ended
        cand = next(stream, None)
        if cand is None:
            ended = True
            return False
        name = product(cand)
        if name not in waiting:
            waiting[name] = deque()
            order.append(name)
        waiting[name].append(cand)
        return True

    everyone = {name or "" for name in known}
    while set(waiting) != everyone and pull():  # every product's first candidate, to know whose turn comes when
        pass
    while order:
        name = min(order, key=lambda n: (turns.standing(n), turns.given[n]))  # min keeps the first of equals
        while not waiting[name] and not ended and pull():
            pass
        if waiting[name]:
            cand = waiting[name].popleft()
            turns.give(cand.key, name)
            yield cand
        else:  # the stream has ended and this product holds nothing more
            order.remove(name)
            del waiting[name]


def _outside_names(doc: Document) -> set[str]:
    """The names ``doc`` links to another site: link texts of at most :data:`_MAX_NAME_WORDS` words that read
    as a name (a capital or code punctuation: "Channels", "taskiq-redis"), not sentences ("our forum")."""
    if doc.layout is None:
        return set()
    found = set()
    for m in _OUTSIDE_LINK.finditer(doc.layout.source):
        text = m.group(1).strip().strip("`*_ ")
        if text and len(text.split()) <= _MAX_NAME_WORDS and (text[0].isupper() or re.search(r"\w[-_.]\w", text)):
            found.add(text)
    return found


def _says(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as words of its own; a capitalised name only with its capital ("Channels",
    not the "channels" of a sentence)."""
    flags = 0 if name[0].isupper() else re.IGNORECASE
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text, flags) is not None


def names(question: str, product: str) -> bool:
    """Whether ``question`` names ``product``: a word of it starts with the name ("blackd", "Hatchling" name Black
    and Hatch), case aside; a name of several words or with dashes matches with spaces or dashes between them."""
    parts = [re.escape(p) for p in re.split(r"[\s_-]+", product.strip()) if p]
    return bool(parts) and re.search(r"(?<![\w.])" + r"[\s_-]*".join(parts), question, re.IGNORECASE) is not None


def identifiers(text: str) -> set[str]:
    """The names of ``text`` that read as code (:data:`_IDENTIFIER`), lower case."""
    return {m.group(0).lower() for m in _IDENTIFIER.finditer(text)}


def with_product(question: str, products: Sequence[str]) -> str:
    """``question`` with the products it asks about named at its end: "How do I launch a shell?" -> "How do I
    launch a shell in Hatch?" (the repair of ``gates.product=repair``)."""
    said = " and ".join(products)
    q = question.rstrip()
    return f"{q[:-1].rstrip()} in {said}?" if q.endswith("?") else f"{q} ({said})"


@dataclass
class Products:
    """The products of a corpus: each document's, and the names only one product's pages hold."""

    of_doc: dict[str, str] = field(default_factory=dict)
    unique: dict[str, frozenset[str]] = field(default_factory=dict)
    pages: dict[str, int] = field(default_factory=dict)
    folders: dict[str, frozenset[str]] = field(default_factory=dict)  # product -> the top folders of its pages
    outside: dict[str, frozenset[str]] = field(default_factory=dict)  # product -> names its pages link elsewhere

    @property
    def several(self) -> bool:
        """Whether the corpus documents more than one product (only then must a question name one)."""
        return len(self.pages) >= 2

    def of(self, doc_ids: Iterable[str]) -> list[str]:
        """The products of ``doc_ids``, each once, in order (documents without one left out)."""
        return list(dict.fromkeys(p for d in doc_ids if (p := self.of_doc.get(d))))

    def named(self, question: str, product: str) -> bool:
        """Whether ``question`` names ``product``, or the folder its pages sit in (module docstring)."""
        return names(question, product) or any(names(question, f) for f in self.folders.get(product, ()))

    def by_identifier(self, question: str, product: str) -> bool:
        """Whether ``question`` holds a name only ``product``'s pages hold (which does not name it to a reader)."""
        return bool(identifiers(question) & self.unique.get(product, frozenset()))

    def missing(self, question: str, doc_ids: Iterable[str]) -> list[str]:
        """The products of ``doc_ids`` that ``question`` does not name (:meth:`named`); none on a corpus of one
        product."""
        if not self.several:
            return []
        return [p for p in self.of(doc_ids) if not self.named(question, p)]


    def other_subject(self, question: str, reference: str, evidence: Sequence[str], product: str) -> str | None:
        """The other project a question asks about instead of ``product``, or None: its question or reference
        names a thing ``product``'s pages link to another site for (that site documents it: "Channels", "Quart"
        on Mangum's page of frameworks) and no text of its ``evidence`` names the product ("Channels is a project
        that takes Django ..."). Read for a question the writer did not name its product in: it asked about what
        the text is about, and the text is about the other thing."""
        if any(self.named(text, product) for text in evidence):
            return None
        # a name made of the product's own words is its ecosystem ("Ansible" for ansible-dev-tools), not another
        own = {w.lower() for w in re.split(r"[\s_-]+", product) if w}
        for name in sorted(self.outside.get(product, ()), key=len, reverse=True):
            if self.named(name, product) or {w.lower() for w in re.split(r"[\s_-]+", name) if w} <= own:
                continue
            if _says(question, name) or _says(reference, name):
                return name
        return None


def products(corpus: Corpus) -> Products:
    """The products of ``corpus``'s documents (``metadata["product"]``) and the identifiers each product's pages
    alone hold."""
    of_doc = {d.id: p for d in corpus.documents if (p := product_of(d))}
    pages = Counter(of_doc.values())
    if len(pages) < 2:
        return Products(of_doc, {}, dict(pages))
    folders: dict[str, set[str]] = {}
    for doc_id, p in of_doc.items():
        if _top(doc_id):
            folders.setdefault(p, set()).add(_top(doc_id))
    holders: dict[str, set[str]] = {}
    for d in corpus.documents:
        if d.id in of_doc:
            for name in identifiers(d.text):
                holders.setdefault(name, set()).add(of_doc[d.id])
    unique: dict[str, set[str]] = {p: set() for p in pages}
    for name, owners in holders.items():
        if len(owners) == 1:
            unique[next(iter(owners))].add(name)
    outside: dict[str, set[str]] = {}
    for d in corpus.documents:
        if d.id in of_doc:
            outside.setdefault(of_doc[d.id], set()).update(_outside_names(d))
    return Products(of_doc, {p: frozenset(v) for p, v in unique.items()}, dict(sorted(pages.items())),
                    {p: frozenset(v) for p, v in folders.items()}, {p: frozenset(v) for p, v in outside.items()})


def summary(index: Products, samples: Sequence[Any], mode: str,
            tried: Mapping[str, int] | None = None) -> dict[str, Any]:
    """What a generation report says of the products: pages per product, and of the accepted questions how many
    each product got, how many name their product as written (``named``: its name or its folder's), how many had
    it added (``added``, ``gates.product=repair``) and, of those, how many held only a name unique to its pages
    (``named_by_identifier``: a question the gate once counted as naming its product); with ``tried``, the
    candidates each product was given in its turns (``candidates``: a product whose pages gave few questions for
    many candidates shows here)."""
    if not index.pages:
        return {}
    out: dict[str, Any] = {"pages": index.pages, "several": index.several, "mode": mode}
    if not index.several:
        return out
    by: Counter[str] = Counter()
    named = by_identifier = added = 0
    for s in samples:
        asked = s.provenance.get(PRODUCT)
        if not asked:
            continue
        prods = [asked] if isinstance(asked, str) else list(asked)
        by.update(prods)
        if s.provenance.get("product_added"):
            added += 1
            by_identifier += all(index.by_identifier(s.question, p) for p in prods)
        elif all(index.named(s.question, p) for p in prods):
            named += 1
    return {**out, "accepted": dict(sorted(by.items())), **({"candidates": dict(tried)} if tried else {}),
            "named": named, "named_by_identifier": by_identifier, "added": added}
