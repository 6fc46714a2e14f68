"""What a user of a documented product asks (issue #34, session 41): a question naming code its pages do not hold
made its subject up; an option's values are not read from a "for example" configuration; a contributing page (how
to run the project's own tests) draws no question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsweep.metrics import InputError
from ragsweep.gen.documents import Corpus, Document, read_folder
from ragsweep.gen.gates import GateConfig
from ragsweep.gen.generate import GenConfig, generate
from ragsweep.gen.grounding import unseen_names
from ragsweep.gen.structure import for_users, project_page
from ragsweep.gen.candidates import Candidate
from ragsweep.gen.styles import section_candidates
from ragsweep.gen.units import Unit, document_units
from ragsweep.gen.writer import LLMWriter
from ragsweep.metrics.llm import ScriptedLLM

TAGS = """# Case tags

Cases can be filtered on the tags they carry. The has_tag argument of the case filter selects the cases that
carry one tag, and the `@with_case_tags` decorator sets the tags of every case function of a module.

## Running the cases

Kestrel runs every case of a module once per test, and a case function that raises is reported as an error.
"""

CHANNELS = """# Authenticated channels

Kestrel reads the channels of an environment file and stores the address of each channel in its lock file.

For example using this configuration in your environment.yml:

```yaml
channels:
  - https://host.tld/t/$TOKEN/private
```

To change where the lock file is written, set the lockfile_path option in the kestrel.toml configuration file.
"""

TESTS = """# Running the test suite

Before you open a pull request, run the whole test suite of Kestrel with the tox command at the root folder.
Use `tox -a` to list all test environments and their versions, and `tox -e py312` to run one of them.
"""


def _folder(root: Path, pages: dict[str, str]) -> Path:
    for rel, text in pages.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_a_code_name_the_page_holds_only_inside_a_longer_name_is_unseen():
    page = TAGS
    assert unseen_names("What is the purpose of the `@case_tags` decorator in Kestrel?", page) == ["case_tags"]
    assert unseen_names("What does the @with_case_tags decorator set in Kestrel?", page) == []
    assert unseen_names("What does the has_tag argument select?", page) == []
    # a hyphen is no underscore: "autodoc2-summary" does not hold "autodoc2_summary"
    assert unseen_names("What does autodoc2_summary render?", "The autodoc2-summary directive.") == ["autodoc2_summary"]
    # camelCase names and file names are code too; plain and capitalised words are not read
    assert unseen_names("What does activateState() do in kestrel.toml?", "Call activateState in kestrel.toml.") == []
    assert unseen_names("How does Kestrel report a failing Case?", "nothing about it") == []
    # a name opening with underscores is looked up whole, as the page writes it
    assert unseen_names("What does Kestrel's __init__ method take?", "def __init__(self, name):") == []
    assert unseen_names("What does Kestrel's __init__ method take?", "def init__(self):") == ["__init__"]


def _asks_about(decorator: str):
    def write(messages, schema):
        data = json.loads(messages[-1]["content"])
        if "question" in data:  # the round trip
            return {"answer": "the cases that carry one tag"}
        return {"question": f"What is the purpose of the {decorator} decorator in Kestrel?",
                "answer": "It selects the cases that carry one tag", "used": [1]}
    return write


def test_a_question_about_a_made_up_code_name_is_refused_as_unseen_name(tmp_path):
    """The same question of the same text, once naming the page's ``@with_case_tags`` (kept) and once a
    ``@case_tags`` the page holds only inside that longer name (refused)."""
    folder = _folder(tmp_path / "docs", {"tags.md": TAGS})
    runs = {}
    for name in ("@case_tags", "@with_case_tags"):
        runs[name] = generate(read_folder(folder), LLMWriter(ScriptedLLM(_asks_about(name))),
                              GenConfig(n=1, styles=("docs",), kinds=(("single_hop", 1.0),),
                                        gates=GateConfig(specific=False, roundtrip=False)))
    assert runs["@case_tags"].report.rejected["unseen_name"] >= 1
    assert not runs["@case_tags"].samples
    assert runs["@with_case_tags"].report.rejected["unseen_name"] == 0
    assert [s.question for s in runs["@with_case_tags"].samples] == [
        "What is the purpose of the @with_case_tags decorator in Kestrel?"]


def test_an_option_is_not_drawn_from_a_for_example_cue(tmp_path):
    folder = _folder(tmp_path / "docs", {"channels.md": CHANNELS})
    doc = read_folder(folder).get("channels.md")
    cues = [c.shown[0].text for c in section_candidates(doc, document_units(doc), "option")]
    assert not any(t.startswith("For example") for t in cues), cues
    assert any("lockfile_path" in t for t in cues), cues  # the product's own option still is


def test_a_contributing_page_is_for_the_projects_developers():
    assert project_page("kestrel/contributing/tests.md")
    assert project_page("kestrel/development/setup.md")
    # "developer" names an API's readers as often: requests' and aiomqtt's developer-interface.md is the API page
    assert not project_page("kestrel/developer-interface.md")
    assert project_page("CONTRIBUTING.md")
    assert not project_page("kestrel/local-development-server.md")  # a user's page: the name does not start so
    assert not project_page("kestrel/guide/tests.md")
    own = Candidate("single_hop", (Unit("kestrel/contributing/tests.md", 0, 10, "x", 0),), (0,))
    user = Candidate("single_hop", (Unit("kestrel/guide/tests.md", 0, 10, "x", 0),), (0,))
    corpus = Corpus([Document(u.shown[0].doc_id, "x" * 10) for u in (own, user)], source="test")
    assert list(for_users(corpus, iter([own, user]))) == [user]


def _asks_of_every_text(messages, schema):
    data = json.loads(messages[-1]["content"])
    if "question" in data:
        return {"answer": "tox"}
    first = data["sentences"][0]
    return {"question": f"What does Kestrel say about {' '.join(first.split()[:6])}?",
            "answer": " ".join(first.split()[:12]), "used": [1]}


def test_a_docs_run_asks_no_question_of_a_contributing_page(tmp_path):
    folder = _folder(tmp_path / "docs", {"guide/tags.md": TAGS, "contributing/tests.md": TESTS})
    result = generate(read_folder(folder), LLMWriter(ScriptedLLM(_asks_of_every_text)),
                      GenConfig(n=8, styles=("docs",), kinds=(("single_hop", 1.0),),
                                gates=GateConfig(specific=False, roundtrip=False)))
    assert result.samples
    assert all(not e.doc_id.startswith("contributing/") for s in result.samples for e in s.evidence)


SAMPLE = """# Markdown Files

Whether you write your book's content in Jupyter Notebooks or in regular Markdown files, you write in the
same flavor of Markdown called MyST Markdown, which the book template ships as its first sample page.
"""


def test_a_page_its_sites_own_list_leaves_out_is_unlisted(tmp_path):
    # Jupyter Book: _toc.yml names the pages (without extension); a template's sample page left beside them is not
    folder = _folder(tmp_path / "docs", {"kestrel/intro.md": TAGS, "kestrel/guide/tags.md": TAGS,
                                         "kestrel/markdown.md": SAMPLE,
                                         "kestrel/_toc.yml": "format: jb-book\nroot: intro\nchapters:\n"
                                                             "- file: guide/tags\n"})
    corpus = read_folder(folder)
    assert [d.id for d in corpus.documents if d.metadata.get("unlisted")] == ["kestrel/markdown.md"]
    # MkDocs: nav paths are relative to docs_dir, a section's pages nested under titles; a tag it does not know
    # (!!python/name) is no reason to ignore the list
    mk = _folder(tmp_path / "mk", {"docs/index.md": TAGS, "docs/api/channels.md": CHANNELS, "docs/draft.md": SAMPLE,
                                   "mkdocs.yml": "site_name: K\nmarkdown_extensions:\n- pymdownx.emoji:\n"
                                                 "    emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
                                                 "nav:\n- Home: index.md\n- API:\n  - Channels: api/channels.md\n"})
    assert [d.id for d in read_folder(mk).documents if d.metadata.get("unlisted")] == ["docs/draft.md"]
    # MyST: project.toc, a glob pattern lists a folder
    my = _folder(tmp_path / "my", {"index.md": TAGS, "guide/a.md": CHANNELS, "sample.md": SAMPLE,
                                   "myst.yml": "version: 1\nproject:\n  toc:\n  - file: index.md\n"
                                               "  - pattern: guide/*.md\n"})
    assert [d.id for d in read_folder(my).documents if d.metadata.get("unlisted")] == ["sample.md"]
    # corpus.site_nav=false: the list is not the site's navigation (a plugin builds it), every page may draw one
    assert not any(d.metadata.get("unlisted") for d in read_folder(my, site_nav=False).documents)
    with pytest.raises(InputError, match="corpus.site_nav must be true or false, got 'maybe'"):
        read_folder(my, site_nav="maybe")
    with pytest.raises(InputError, match="corpus.hidden must be true or false"):
        read_folder(my, hidden="yes please")
    # a list that names none of the pages beside it, or a site without one: every page is shown
    other = _folder(tmp_path / "other", {"a.md": TAGS, "b.md": SAMPLE, "_toc.yml": "root: elsewhere\n"})
    assert not any(d.metadata.get("unlisted") for d in read_folder(other).documents)
    plain = _folder(tmp_path / "none", {"a.md": TAGS, "b.md": SAMPLE})
    assert not any(d.metadata.get("unlisted") for d in read_folder(plain).documents)


def test_a_docs_run_asks_no_question_of_a_page_its_site_does_not_list(tmp_path):
    folder = _folder(tmp_path / "docs", {"intro.md": TAGS, "markdown.md": SAMPLE,
                                         "_toc.yml": "format: jb-book\nroot: intro\n"})
    result = generate(read_folder(folder), LLMWriter(ScriptedLLM(_asks_of_every_text)),
                      GenConfig(n=8, styles=("docs",), kinds=(("single_hop", 1.0),),
                                gates=GateConfig(specific=False, roundtrip=False)))
    assert result.samples
    assert all(e.doc_id == "intro.md" for s in result.samples for e in s.evidence)
