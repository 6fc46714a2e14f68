"""Each page's product (gen.products): found from a docs folder, set by corpus.product, told to the writers, and
named by every question on a folder of several products (gates.product)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragsweep
from ragsweep.gen.documents import read_folder
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.products import PRODUCT, names, products, spelling, with_product
from ragsweep.gen.rules import RuleWriter
from ragsweep.gen.styles import section_candidates
from ragsweep.gen.units import document_units
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics import InputError
from ragsweep.metrics.llm import ScriptedLLM

# Two made-up products whose docs share their words ("environment", "shell", "Getting started"), each with a
# name of its own as code (quill_notebook, TessGrid) and one code name both use (env_name).
QUILL = """# Getting started

Quillmark keeps your notes in plain text files and syncs them between machines. Quillmark works in a notebook
environment that holds the notes of one project, and every notebook has its own settings file.

## Launching a shell

To work inside a specific environment, you can open a shell with the notebook named by quill_notebook:

```console
$ quill shell --notebook work
```

## Environment settings

The env_name setting names the environment a shell opens, and quillmark reads it from the settings file of
the notebook when no notebook is given on the command line.
"""

TESS = """# Getting started

Tesselate builds map tiles from survey data and keeps each build apart in an environment of its own. Each
environment of Tesselate holds the survey files and the TessGrid layout of one map.

## Launching a shell

To work inside a specific environment, you can open a shell with the build environment loaded:

```console
$ tess shell --env coast
```

## Environment settings

The env_name setting names the environment a shell opens, and the tiles of every build go to its own folder
below the output folder of the project.
"""

INDEX = "# Our tools\n\nThe docs of [Quillmark](quillmark/index.md) and [Tesselate](tesselate/guide.md) are here.\n"


def _folder(root: Path, pages: dict[str, str]) -> Path:
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture()
def two(tmp_path):
    return _folder(tmp_path / "docs", {"quillmark/index.md": QUILL, "tesselate/guide.md": TESS, "index.md": INDEX})


def test_each_subfolder_of_a_folder_of_several_products_is_one_spelled_as_its_pages_spell_it(two):
    corpus = read_folder(two)
    assert corpus.get("quillmark/index.md").metadata[PRODUCT] == "Quillmark"  # not the folder's "quillmark"
    assert corpus.get("tesselate/guide.md").metadata[PRODUCT] == "Tesselate"
    assert PRODUCT not in corpus.get("index.md").metadata  # a page at the root, linking to both, is of neither
    index = products(corpus)
    assert index.several and index.pages == {"Quillmark": 1, "Tesselate": 1}
    assert "quill_notebook" in index.unique["Quillmark"] and "tessgrid" in index.unique["Tesselate"]
    assert "env_name" not in index.unique["Quillmark"] | index.unique["Tesselate"]  # both products' pages hold it


def test_a_question_names_its_product_not_only_a_name_only_its_pages_hold(two):
    index = products(read_folder(two))
    doc = ["quillmark/index.md"]
    assert index.missing("How do I launch a shell within a specific environment?", doc) == ["Quillmark"]
    assert index.missing("How do I launch a shell within a Quillmark environment?", doc) == []
    # a name only its pages hold does not name it: a reader of both products' docs cannot tell whose it is
    assert index.missing("What does quill_notebook name when I open a shell?", doc) == ["Quillmark"]
    assert index.by_identifier("What does quill_notebook name when I open a shell?", "Quillmark")
    assert index.missing("What does quill_notebook name in a quillmark shell?", doc) == []
    assert index.missing("What does the env_name setting name?", doc) == ["Quillmark"]  # a name both hold
    assert index.missing("How do I launch a shell in Tesselate?", doc) == ["Quillmark"]  # another product
    assert index.missing("How do I launch a shell?", ["index.md"]) == []  # a page of no product: nothing asked


def test_sections_of_one_products_docs_that_link_to_each_other_are_one_product(tmp_path):
    folder = _folder(tmp_path / "site", {
        "tutorial/shell.md": QUILL + "\nThe [settings](../advanced/settings.md) page says more.\n",
        "advanced/settings.md": QUILL.replace("# Getting started", "# Settings"),
        "index.md": INDEX})
    corpus = read_folder(folder)
    assert all(PRODUCT not in d.metadata for d in corpus.documents)
    assert not products(corpus).several
    assert products(corpus).missing("How do I launch a shell?", ["tutorial/shell.md"]) == []


def test_corpus_product_sets_it_and_front_matter_comes_first(two, tmp_path):
    one = read_folder(two, product="Toolbox")
    assert {d.metadata[PRODUCT] for d in one.documents} == {"Toolbox"}
    assert not products(one).several  # one product: a question need not name it
    mapped = read_folder(two, product={"quillmark": "Quill Mark", "tesselate/": "Tess"})
    assert [mapped.get(i).metadata.get(PRODUCT) for i in ("quillmark/index.md", "tesselate/guide.md", "index.md")] \
        == ["Quill Mark", "Tess", None]
    assert names("How do I open a quill-mark shell?", "Quill Mark")
    inked = products(read_folder(two, product={"quillmark": "Inkwell", "tesselate": "Tess"}))
    # the folder its pages sit in (the package's name) names the product too
    assert inked.missing("How do I open a shell in quillmark?", ["quillmark/index.md"]) == []
    assert inked.missing("How do I open a shell in tesselate?", ["quillmark/index.md"]) == ["Inkwell"]
    paged = read_folder(two, product={"index.md": "Toolbox", "quillmark": "Quillmark"})  # a page, a folder
    assert [paged.get(i).metadata.get(PRODUCT) for i in ("index.md", "quillmark/index.md", "tesselate/guide.md")] \
        == ["Toolbox", "Quillmark", None]
    fm = _folder(tmp_path / "fm", {"a/x.md": "---\nproduct: Inkwell\n---\n" + QUILL, "b/y.md": TESS})
    assert read_folder(fm).get("a/x.md").metadata[PRODUCT] == "Inkwell"
    with pytest.raises(InputError, match="corpus.product"):
        read_folder(two, product=["quillmark"])


def test_names_and_the_repair():
    assert names("What causes blackd to return a 400 error?", "Black")  # a word that starts with the name
    assert not names("What does the setting do?", "Black")
    assert with_product("How do I open a shell?", ["Quillmark"]) == "How do I open a shell in Quillmark?"
    assert with_product("Open a shell", ["A", "B"]) == "Open a shell (A and B)"
    assert spelling("quillmark", []) == "quillmark"


def test_the_rule_writer_names_the_product_of_every_question(two):
    corpus = read_folder(two)
    result = generate(corpus, RuleWriter(), GenConfig(n=6, styles=("docs",), kinds=(("single_hop", 1.0),),
                                                      gates=GateConfig(specific=False)))
    assert any(PRODUCT in s.provenance for s in result.samples)
    for s in result.samples:
        product = corpus.get(s.evidence[0].doc_id).metadata.get(PRODUCT)
        assert s.provenance.get(PRODUCT) == product  # none for the root page
        assert product is None or names(s.question, product), s.question
    code = [s for s in result.samples if s.provenance.get("style") == "code_answer"]
    assert code and all(not s.provenance.get("product_added") for s in code)  # it writes the name itself



def test_the_run_reports_each_accepted_question_to_its_products_turns(two, monkeypatch):
    from ragsweep.gen import generate as generate_module
    from ragsweep.gen.products import Turns
    made = []

    class Kept(Turns):
        def __init__(self):
            super().__init__()
            made.append(self)

    monkeypatch.setattr(generate_module, "Turns", Kept)
    corpus = read_folder(two)
    result = generate(corpus, RuleWriter(), GenConfig(n=6, styles=("docs",), kinds=(("single_hop", 1.0),),
                                                      gates=GateConfig(specific=False)))
    assert len(made) == 1 and result.samples
    counted = {name: n for name, n in made[0].accepted.items() if n}
    asked = {}
    for s in result.samples:
        name = corpus.get(s.evidence[0].doc_id).metadata.get(PRODUCT) or ""
        asked[name] = asked.get(name, 0) + 1
    assert counted == asked  # every accepted question counted once, for the product of its evidence
    # the report keeps the candidates each product was given, and the products summary shows them beside its questions
    given = result.report.tried_by_product
    assert given == dict(sorted(made[0].given.items())) and set(asked) <= set(given)
    assert all(given[name] >= n for name, n in asked.items())
    from ragsweep.gen.products import summary
    found = summary(products(corpus), result.samples, "repair", given)
    assert found["candidates"] == given and "candidates" not in summary(products(corpus), result.samples, "repair")

def _writes_no_product(messages, schema):
    data = json.loads(messages[-1]["content"])
    if "whose answer is the last numbered item" in messages[0]["content"]:
        return {"question": "How do I launch a shell within a specific environment?"}
    return {"question": "Which setting names the environment that a shell opens?",
            "answer": " ".join(data["sentences"][-1].rstrip(".").split()[-5:]), "used": [len(data["sentences"])]}


@pytest.mark.parametrize("mode", ["repair", "refuse", "off"])
def test_a_question_that_names_no_product_is_repaired_refused_or_kept(two, mode):
    corpus = read_folder(two)
    llm = ScriptedLLM(_writes_no_product)
    result = generate(corpus, LLMWriter(llm), GenConfig(n=4, styles=("code_answer",), kinds=(("single_hop", 1.0),),
                                                        gates=GateConfig(specific=False, product=mode)))
    shown = [json.loads(c.messages[-1]["content"]) for c in llm.calls]
    code_inputs = [s for s in shown if "product" in s]
    assert code_inputs and {s["product"] for s in code_inputs} <= {"Quillmark", "Tesselate"}  # the writer is told
    if mode == "refuse":
        # only the root page's question, which belongs to no product, may stay
        assert all(PRODUCT not in s.provenance for s in result.samples)
        assert result.report.rejected["unnamed_product"] >= 2
        return
    assert any(PRODUCT in s.provenance for s in result.samples)
    for s in result.samples:
        product = s.provenance.get(PRODUCT)
        if product is None:  # the folder's root page belongs to no product: there is none to name
            assert "product_added" not in s.provenance
            continue
        if mode == "repair":
            assert s.question.endswith(f" in {product}?") and s.provenance["product_added"]
        else:
            assert not names(s.question, product) and "product_added" not in s.provenance


def test_style_candidates_carry_the_product_and_the_report_counts_the_named(two):
    corpus = read_folder(two)
    doc = corpus.get("tesselate/guide.md")
    found = section_candidates(doc, document_units(doc), "code_answer")
    assert found and {c.product for c in found} == {"Tesselate"}
    ts = ragsweep.generate(str(two), n=4, styles=["docs"], kinds={"single_hop": 1.0},
                           gates={"embed": False, "specific": False})
    rep = ts.report["products"]
    assert rep["several"] and rep["pages"] == {"Quillmark": 1, "Tesselate": 1}
    asked = [s for s in ts.samples if PRODUCT in s.provenance]  # the root page's are of no product
    assert asked and sum(rep["accepted"].values()) == len(asked)
    assert rep["named"] + rep["added"] == len(asked)
    assert rep["named_by_identifier"] <= rep["added"]  # counted among the repaired: an identifier names no product


def _cands(doc_ids):
    from ragsweep.gen.candidates import Candidate
    from ragsweep.gen.units import Unit
    return [Candidate("single_hop", (Unit(d, 0, 4, "text", i),), (0,)) for i, d in enumerate(doc_ids)]


def test_candidates_are_taken_one_product_at_a_time_so_a_small_product_gets_its_turn():
    from ragsweep.gen.corpus import Corpus, Document
    from ragsweep.gen.products import by_product
    big = [Document(f"big/{i}.md", "text", {PRODUCT: "Big"}) for i in range(6)]
    corpus = Corpus([*big, Document("small/a.md", "text", {PRODUCT: "Small"}), Document("root.md", "text")], source="x")
    # the pages' own round-robin: the big product's six pages come first, the small one's last
    stream = _cands([d.id for d in big] + ["small/a.md", "root.md"] + [d.id for d in big] + ["small/a.md"])
    got = [c.shown[0].doc_id.split("/")[0] for c in by_product(corpus, iter(stream))]
    assert got[:4] == ["big", "small", "root.md", "big"]  # each product in turn, a page of no product its own
    assert got[4:6] == ["small", "big"]  # the small product's second candidate, then it has run out
    assert sorted(got) == sorted(c.shown[0].doc_id.split("/")[0] for c in stream)  # nothing lost
    big_order = [c.shown[0].index for c in by_product(corpus, iter(stream)) if c.shown[0].doc_id.startswith("big")]
    assert big_order == sorted(big_order)  # within a product the stream's order is kept
    one = Corpus(big, source="x")  # one product: the stream as it is
    assert [c.shown[0].index for c in by_product(one, iter(stream))] == list(range(len(stream)))



def test_the_turn_goes_to_the_product_with_fewest_questions_not_fewest_candidates():
    """Product A's candidates are all accepted, B's all refused: A stops taking turns once it leads, and B, refused
    every time, gives way after REFUSALS_PER_QUESTION candidates a question, so neither takes the set."""
    from ragsweep.gen.corpus import Corpus, Document
    from ragsweep.gen.products import Turns, by_product
    docs = [Document(f"{p}/{i}.md", "text", {PRODUCT: p.upper()}) for p in ("a", "b", "c") for i in range(30)]
    corpus = Corpus(docs, source="x")
    stream = _cands([f"{p}/{i}.md" for i in range(30) for p in ("a", "b", "c")])
    turns = Turns()
    taken = []
    for cand in by_product(corpus, iter(stream), turns):
        name = cand.shown[0].doc_id[0]
        taken.append(name)
        if name in "ac":  # the loop reports each accepted question back
            turns.accept(cand.key)
        if sum(turns.accepted.values()) == 12:
            break
    assert turns.accepted["A"] == turns.accepted["C"] == 6  # the two that pass share the set evenly
    # B, never accepted, was tried while its refusals counted for fewer questions than the others had (5 before
    # their last round), and not after
    assert turns.given["B"] == Turns.REFUSALS_PER_QUESTION * 5
    assert taken[:3] == ["a", "b", "c"]  # the stream's first order breaks ties
    # without accepted questions reported the turn is each product's in order, as a round-robin
    plain = [c.shown[0].doc_id[0] for c in by_product(corpus, iter(stream))][:9]
    assert plain == ["a", "b", "c"] * 3
    turns.accept("no such candidate")  # a key no product was given changes nothing
    assert sum(turns.accepted.values()) == 12

FRAMEWORKS = """# Frameworks

Quillmark syncs a notebook through Channels when the notebook settings name a socket route for the sync.
"""

CHANNELS = """# Channels

[Channels](https://channels.example.org/) is a project that takes Django and extends it beyond HTTP to sockets.
"""


def _asks_about_what_the_text_is_about(messages, schema):
    data = json.loads(messages[-1]["content"])
    if "question" in data:  # the round trip
        return {"answer": "a project that takes Django beyond HTTP"}
    first = data["sentences"][0]
    if first.startswith("Channels is a project"):
        return {"question": "What is Channels?", "answer": "A project that takes Django beyond HTTP", "used": [1]}
    if first.startswith("Quillmark syncs"):
        return {"question": "When does Quillmark sync a notebook through Channels?",
                "answer": "When the notebook settings name a socket route", "used": [1]}
    return {"question": "Which protocol does it speak?", "answer": "the notebook sync protocol", "used": [1]}


def test_a_question_about_another_project_the_page_links_to_is_refused(two):
    """The scripted writer asks of "Channels is a project ..." what Channels is, naming no product: the product
    is added ("What is Channels in Quillmark?"), but Channels is what the page links to another site for and
    the sentence does not name Quillmark, so it is refused; the question of the sentence that names Quillmark
    and Channels stays (gen.products.Products.other_subject)."""
    (two / "quillmark" / "frameworks.md").write_text(FRAMEWORKS, encoding="utf-8")
    (two / "quillmark" / "channels.md").write_text(CHANNELS, encoding="utf-8")
    corpus = read_folder(two)
    index = products(corpus)
    assert "Channels" in index.outside["Quillmark"]
    result = generate(corpus, LLMWriter(ScriptedLLM(_asks_about_what_the_text_is_about)),
                      GenConfig(n=12, styles=("docs",), kinds=(("single_hop", 1.0),),
                                gates=GateConfig(specific=False, roundtrip=False)))
    assert result.report.rejected.get("other_subject", 0) >= 1, result.report.rejected
    questions = [s.question for s in result.samples]
    assert "What is Channels in Quillmark?" not in questions
    assert "When does Quillmark sync a notebook through Channels?" in questions


def test_other_subject_reads_the_evidence_and_leaves_the_products_own_words():
    from ragsweep.gen.products import Products
    index = Products(pages={"ansible-dev-tools": 2, "kr8s": 1},
                     outside={"ansible-dev-tools": frozenset({"Ansible", "VS Code"})})
    ask = index.other_subject
    # "Ansible" is made of the product's own words: its ecosystem, not another project
    assert ask("Which extension helps Ansible development in ansible-dev-tools?", "The Ansible extension",
               ["The Ansible extension is recommended."], "ansible-dev-tools") is None
    assert ask("Which editor has the extension in ansible-dev-tools?", "VS Code",
               ["The extension runs in VS Code."], "ansible-dev-tools") == "VS Code"
    # the evidence names the product: the question is about it
    assert ask("Which editor has the extension in ansible-dev-tools?", "VS Code",
               ["ansible-dev-tools ships an extension for VS Code."], "ansible-dev-tools") is None


def test_the_names_a_product_links_out_to_are_names_not_phrases_or_badges(two):
    page = ("# Links\n\nOpen an [issue](https://tracker.example.org/) or see [Channels](https://channels.example.org/),"
            " [taskiq-redis](https://pypi.example.org/taskiq-redis), [the guide](guide.md) and "
            "[![Build Status](https://ci.example.org/b.svg)](https://ci.example.org/) and [Read the full story of how "
            "it began](https://blog.example.org/).\n")
    (two / "quillmark" / "links.md").write_text(page, encoding="utf-8")
    assert products(read_folder(two)).outside["Quillmark"] == {"Channels", "taskiq-redis"}


def test_gen_prints_each_products_questions_beside_its_candidates(two, tmp_path, ragsweep):
    out = tmp_path / "ts.jsonl"
    done = ragsweep("gen", "llm=none", "n=4", "styles=[docs]", "gates.specific=false", "gates.embed=false",
                    "corpus=folder", f"corpus.path={two}", f"out={out}", "progress=false", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(l for l in done.stdout.splitlines() if l.startswith("questions per product (candidates): "))
    report = json.loads(out.with_suffix(".report.json").read_text(encoding="utf-8"))
    made = report["products"]
    assert set(made["accepted"]) <= set(made["candidates"])
    got = {**made["accepted"], "": report["accepted"] - sum(made["accepted"].values())}  # the index page's: none
    assert report["accepted"] >= 2 and sum(made["candidates"].values()) >= report["accepted"]
    for name, given in made["candidates"].items():  # "Quillmark 2 (3)": questions, then candidates given
        assert f"{name or '(no product)'} {got.get(name, 0)} ({given})" in line
