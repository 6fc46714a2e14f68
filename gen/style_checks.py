"""Cheap checks that keep a documentation style (:mod:`gen.styles`) from drawing a section whose question would
be rejected or wrong, made before any writer is called: every candidate drawn costs a model call, and most of
a run's rejected candidates were visible as such in the section itself.

- **navigation**: a section (or a whole page) made mostly of links is a table of contents; a question drawn from
  it asks about the titles of other pages and its reference restates one;
- **prose**: a section whose own sentences are too few words gives the writer nothing to say but its title
  (a code answer's prose is the lead-in of its block);
- **troubleshooting** needs an error *named* (an exception such as ``ValidationError``, an HTTP error status)
  and, in the same or the next sentence, its cause ("if", "when", "because", ...) or its fix: an instruction
  to the reader (a clause that opens with a verb such as "Use ..." or "Make sure ...", or "you need to ...").
  A purpose clause ("..., to avoid overwhelming the server") says why something is done, not what to do.
  Mentioning that something can fail is no answer to "why";
- **standing alone**: a sentence whose subject points back ("It ...", "This ...", "These errors ...")
  means nothing without the sentence before it, and one that leads into what follows ("... one of the
  following:", "as shown below") nothing without the list, block or sentence it leads into
  (:func:`points_back`, :func:`leads_on`; :mod:`gen.styles` shows both or draws nothing);
- **pointers**: a sentence whose words are mostly a link ("check the MDN documentation about ...") answers
  nothing itself;
- **what a block is for** (:func:`role_at`), read from the page's structure, not from its words: text inside a
  warning, danger, caution or deprecated admonition (or one titled "Bad", "Don't", ...) says what not to do,
  so its code is no recipe (no code answer, no how-to from it); text inside an example admonition, or a
  sentence that comments on the code shown before it ("this example", "the code above"), describes sample
  values, which are no facts about the product (no plain fact, no option lookup from it);
- **one item of a list**: a question that asks for a list as a whole (it names none of its items) and whose
  reference is one of them is wrong (:func:`one_of_list`);
- **code answer** needs the paragraph before the block to present it as the way to do something: it leads into
  the block (ends with a colon), and it does not present it as what comes back (a response, an output) or as
  what not to do. A console block's reference is its commands: prompts and the printed output are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragsweep.gen.documents import Document
from ragsweep.gen.layout import Block
from ragsweep.metrics import content_words

#: A block whose link text makes at least this share of its words is navigation.
NAV_LINK_SHARE = 0.5
#: A section (or page) is navigation when at least this share of its prose blocks are.
NAV_BLOCK_SHARE = 0.5
#: A sentence whose link text makes at least this share of its words points to another page.
POINTER_LINK_SHARE = 0.3
#: Fewer words of prose than this in a section (code and tables not counted): nothing to ask of it.
MIN_PROSE_WORDS = 20
#: A code block's or a list's lead-in shorter than this says too little of what the code or the steps do.
MIN_LEAD_WORDS = 5

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|<a\b[^>]*>(.*?)</a>|(?<![(\w])https?://\S+", re.S | re.I)
_LINK_TAIL = re.compile(r"\]\([^)]*\)|\]\[[^\]]*\]|</a>", re.I)
ERROR_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|\b(?:status(?: code)?|HTTP|error|code) [45]\d\d\b|"
                        r"\b[45]\d\d (?:error|status|response|Not Found|Unprocessable|Unauthorized|Forbidden|"
                        r"Bad Request|Internal Server)\b")
_CAUSE = re.compile(r"\b(?:if|when|whenever|because|since|unless|caused by|due to|means|happens|occurs)\b", re.I)
# A fix is addressed to the reader: a clause that opens with "you need to ..." or an imperative (_FIX_VERBS).
_FIX_SUBJECT = re.compile(r"^(?:you|users?) (?:need|have|must|should|can|could|may want)\b", re.I)
# Clauses: cut at punctuation and at "and"/"or"/"then"/"so" ("... fails, so pass ..."; "... and use ...").
_CLAUSE_CUT = re.compile(r"[,;:()]\s*|\s+(?:and|or|then|so|but)\s+|\s+-+\s+", re.I)
# A subject that points back to the sentence before: a personal pronoun, or a demonstrative ("This ...",
# "These errors ..."). "It is easy to ..." or "It's recommended that ..." (an empty "it") and "There are ..."
# point nowhere.
_POINTS_BACK = re.compile(r"^(?:It|Its|They|Their|Them|This|That|These|Those|Such|Here|Both|The (?:above|former|"
                          r"latter|same))\b")
_EMPTY_IT = re.compile(r"^It(?:'s| is| was| will be| would be| can be| may be| might be) (?:\w+ ){0,2}"
                       r"(?:to|that|if|whether)\b")
# A sentence that leads into what comes after it: it ends with a colon, or names what follows.
_LEADS_ON = re.compile(r":\s*$|\b(?:the following|as follows|(?:shown|listed|given|described|see|as|example|code|"
                       r"table) below|below[.]?$|like so|like this[.]?$|these steps|here(?:'s| is) (?:how|an? ))", re.I)
# The lead-in presents the block as what comes back or what a run shows, not as what to write or run.
_SHOWS_RESULT = re.compile(r"\b(?:outputs?|responses?|results?|prints?|printed|logs?|you(?:'ll| will| would)? "
                           r"(?:see|get|receive)|looks? like|would look|returns? (?:a|an|the|something)|"
                           r"JSON (?:body|object|document)|generated|structure)\b", re.I)
# The lead-in presents the block as what not to do (an unsafe, wrong or outdated way).
_ANTI = re.compile(r"\b(?:don't|do not|never|avoid|bad|wrong|unsafe|insecure|vulnerable|incorrect|deprecated|"
                   r"old way|would fail|will fail|won't work|not work)\b", re.I)
# ... and presents it as a way to do something: an instruction ("Add it to your project:", "To run it, ..."),
# what the reader can do ("you can configure ... like this:"), or a command. "A single dot, like in:" or
# "which would be equivalent to:" show an illustration of something said, not what to write.
_IMPERATIVE = frozenset("add apply build call change check choose clone configure copy create declare define delete "
                        "deploy disable download edit enable generate get import include install log mount open "
                        "override pass provide put read register remove replace restart retrieve return run save "
                        "select send serve set specify start stop test type update upgrade use write".split())
_DOING = re.compile(r"^(?:to|in order to) [a-z]+\b|\byou (?:can|could|should|need to|have to|must)\b|"
                    r"\bcommand\b", re.I)
# Verbs of an instruction that changes something (a fix); "Read on", "See ...", "Check the docs" point elsewhere.
_FIX_VERBS = frozenset("add apply avoid catch change close configure convert declare decode define delete disable "
                       "downgrade enable encode ensure escape handle import include increase install keep make "
                       "override pass pin provide reduce register reinstall remove rename replace restart retry "
                       "return run set specify try uninstall update upgrade use verify wrap".split())
_ILLUSTRATES = re.compile(r"\b(?:equivalent|same as|not allowed|becomes|would be)\b", re.I)
_CONSOLE = {"console", "shell-session", "bash", "sh", "shell", "zsh", "powershell", "pwsh", "cmd", "terminal"}
_OUTPUT_LANGUAGES = {"json", "output", "log", "text", "txt", "plain", "http", "mermaid"}
_PROMPT = re.compile(r"^\s*(?:\$|PS [^>]*>|C:\\[^>]*>)\s+")  # not "#": a comment in a script
_REPL = re.compile(r"^(?:>>>|\.\.\.)(?: |$)")


def link_share(doc: Document, start: int, end: int) -> float:
    """The share of the words of clean text ``[start, end)`` that are the text of links in the source."""
    assert doc.layout is not None
    s, e = doc.layout.to_source(start, end)
    # A range that starts or ends with link text maps to the text only: take in the link's brackets and target,
    # or a list item that is one link ("- [Plan a route](plan.md)") reads as no link at all.
    source = doc.layout.source
    if s > 0 and source[s - 1] == "[":
        s -= 1
    if (tail := _LINK_TAIL.match(source, e)) is not None:
        e = tail.end()
    linked = sum(len((m.group(1) or m.group(2) or m.group(0)).split()) for m in _LINK.finditer(source[s:e]))
    return min(1.0, linked / max(1, len(doc.text[start:end].split())))


def points_elsewhere(doc: Document, start: int, end: int) -> bool:
    """Whether a sentence's substance is a link ("To know more, check the MDN documentation about status codes"):
    its answer is on another page."""
    return doc.layout is not None and link_share(doc, start, end) >= POINTER_LINK_SHARE


# A pointer sentence: a clause whose verb sends the reader to a link ("See the [installation instructions](...)
# to run models on CPU", "For details, refer to [Routing](routing.md)"); the family of verbs is named, the
# object must be a link, so "Install [Foo](...)" (a step whose object happens to be linked) is no pointer.
_POINTER = re.compile(r"\b(?:see|consult|refer to|check(?: out)?|read|visit|head (?:over )?to|go to|look at)\s+"
                      r"(?:(?:the|our|this|these|that|its)\s+)?\[([^\]]+)\]\(", re.I)


def pointer_target(doc: Document, start: int, end: int) -> str | None:
    """The link text a sentence sends its reader to when it is a pointer sentence (a link that is the object of
    "see", "refer to", "consult", ...), else None: such a sentence says where something is, not what it says."""
    if doc.layout is None:
        return None
    s, e = doc.layout.to_source(start, end)
    found = _POINTER.search(doc.layout.source[max(0, s - 1):e + 2])
    return found.group(1).strip() if found else None


def navigation(doc: Document, blocks: Sequence[Block]) -> bool:
    """Whether ``blocks`` (a section's or a page's) are mostly links: a table of contents, not content."""
    prose = [b for b in blocks if b.kind in ("paragraph", "list_item")]
    if not prose or doc.layout is None:
        return False
    nav = sum(1 for b in prose if link_share(doc, b.start, b.end) >= NAV_LINK_SHARE)
    return nav >= NAV_BLOCK_SHARE * len(prose)


def prose_words(doc: Document, blocks: Sequence[Block]) -> int:
    """How many words of prose (paragraphs, list items, admonitions) ``blocks`` hold."""
    return sum(len(doc.text[b.start:b.end].split()) for b in blocks if b.kind in ("paragraph", "list_item", "admonition"))


def explained_error(sentences: Sequence[str], j: int) -> int | None:
    """For sentence ``j`` that names an error: the index of the sentence that gives its cause or fix (``j``
    itself or the next one), or None when neither does."""
    if not ERROR_NAME.search(sentences[j]):
        return None
    for k in (j, j + 1):
        if k < len(sentences) and (_CAUSE.search(ERROR_NAME.sub(" ", sentences[k])) or gives_fix(sentences[k])):
            return k
    return None


def gives_fix(sentence: str) -> bool:
    """Whether a sentence tells the reader what to do: one of its clauses opens with an imperative ("Make sure
    ...", "Instead, pass ...") or with "you need to / should / can ...". "The client waits between retries to
    avoid overwhelming the server" says why something is done, and tells no one anything."""
    for clause in _CLAUSE_CUT.split(sentence.strip()):
        words = clause.strip().split(" ", 1)
        first = words[0].strip(".!\"'").lower()
        if first == "instead" and len(words) > 1:  # "Instead use ..."
            first = words[1].split(" ", 1)[0].lower()
        if first in _FIX_VERBS or _FIX_SUBJECT.match(clause.strip()):
            return True
    return False


def error_names(sentence: str) -> set[str]:
    """The errors a sentence names (exception classes, error statuses), as written."""
    return {m.group(0) for m in ERROR_NAME.finditer(sentence)}


def points_back(text: str) -> bool:
    """Whether a sentence's subject is in the sentence before it: it opens with a pronoun or a demonstrative
    ("This includes retries ...", "It raises ...", "These errors ..."), not with an empty "it" ("It is easy
    to ...")."""
    text = text.lstrip("-*0123456789. ")
    return _POINTS_BACK.match(text) is not None and _EMPTY_IT.match(text) is None


def leads_on(text: str) -> bool:
    """Whether a sentence leads into what comes after it: it ends with a colon ("... one of the following:",
    "Run:") or names what follows ("as shown below", "the following options")."""
    return _LEADS_ON.search(text.strip()) is not None


def presents_code(lead: str | None, language: str) -> bool:
    """Whether a code block led into by ``lead`` (its language ``language``) is an answer to "how do I ...":
    the lead-in ends with a colon, is long enough to say what the code does, says to do something (an
    instruction, what "you can" do, a command) and presents neither a result, nor what not to do, nor an
    illustration of something said; the block is no output format (JSON, a log)."""
    if lead is None or language.lower() in _OUTPUT_LANGUAGES:
        return False
    lead = lead.strip()
    doing = _instruction(lead) or _DOING.search(lead) is not None
    return (lead.endswith(":") and len(lead.split()) >= MIN_LEAD_WORDS and doing
            and not _SHOWS_RESULT.search(lead) and not _ANTI.search(lead) and not _ILLUSTRATES.search(lead))


def _instruction(text: str) -> bool:
    first = re.sub(r"^(?:\(\w+\) |then |now |first |next |so |and |finally )+,?", "", text.strip(), flags=re.I)
    return first.split(" ", 1)[0].strip(",.:").lower() in _IMPERATIVE


def steps(lead: str, items: Sequence[str]) -> bool:
    """Whether a lead-in and the list items after it are steps to do something: the lead-in says how ("To ...",
    "you can ...") or most items are instructions ("Import ...", "Add ..."), after a lead-in long enough to say
    what for ("It will:" or "One of:" over "GET", "POST" is no task). "Other terms for this idea are:"
    followed by nouns, or "FastAPI will:" followed by what it does, are lists, not steps."""
    told = sum(1 for t in items if _instruction(t))
    return bool(items) and len(lead.split()) >= MIN_LEAD_WORDS and (2 * told >= len(items) or (_DOING.search(lead) is not None and told > 0))


def fence_language(text: str) -> str:
    """A fenced block's language (the word after its opening fence), "" when none."""
    first = text.lstrip().split("\n", 1)[0]
    return first.lstrip("`~").strip().split(" ")[0].lower() if first.lstrip().startswith(("```", "~~~")) else ""


def commands(body: str, language: str) -> str:
    """The code to answer with: for a console session, its commands without prompts (the output dropped); for
    a Python REPL session, its input lines without ``>>>``; otherwise ``body`` as it is. A console block
    without a prompt line is all commands unless its language is ``console`` (a shown session)."""
    lines = body.split("\n")
    if any(_REPL.match(line) for line in lines):
        return "\n".join(_REPL.sub("", line) for line in lines if _REPL.match(line)).strip()
    if language in _CONSOLE:
        prompted = [_PROMPT.sub("", line, count=1) for line in lines if _PROMPT.match(line) and line.strip() != "$"]
        if prompted:
            return "\n".join(prompted).strip()
        return "" if language == "console" else body.strip()
    return body.strip()


#: Admonition kinds whose text says what not to do or what goes wrong (Material, pymdownx and MyST names).
WARNING_KINDS = frozenset("warning warn danger caution attention error failure bug deprecated".split())
#: Admonition kinds whose text is an example (its values are samples).
EXAMPLE_KINDS = frozenset("example examples".split())
# A sentence that comments on the code shown before it: its figures are about the sample, not the product.
_ABOUT_SHOWN = re.compile(r"\b(?:this|that|the above|the previous|the preceding|our) (?:example|snippet|sample|code|"
                          r"listing)\b|\b(?:example|snippet|sample|code|listing) above\b", re.I)
#: What each role of a block may be asked, by style ("fact" is the plain single_hop question). Prose, notes and
#: tips may be asked anything. A warning tells what to avoid or what goes wrong: a troubleshooting question
#: ("What should I avoid ...?", "Why does ... fail?"), an option or a plain fact about it; its code shows what
#: not to do, so no code answer and no how-to is drawn from it. An example's values are samples: it may show how
#: (a how-to, its code as a code answer), never a fact or an option's value. Code is asked only as a code answer.
ROLE_STYLES = {
    "prose": frozenset({"fact", "how_to", "troubleshooting", "option", "code_answer"}),
    "note": frozenset({"fact", "how_to", "troubleshooting", "option", "code_answer"}),
    "warning": frozenset({"fact", "troubleshooting", "option"}),
    "example": frozenset({"how_to", "code_answer"}),
    "code": frozenset({"code_answer"}),
}


def role_at(doc: Document, start: int, end: int) -> str:
    """What the clean text ``[start, end)`` of ``doc`` is for, from the blocks it sits in: ``warning`` (inside a
    warning, danger, caution, deprecated ... admonition, or one whose title says what not to do: "Bad",
    "Don't"), ``example`` (inside an example admonition or one titled so; or a sentence that comments on the
    code shown before it in its section: "only 2 out of 10 lines of this example ..."), ``note`` (inside another
    admonition), ``code`` (inside a code block), else ``prose``. A warning around an example wins: its example
    shows what not to do."""
    if doc.layout is None:
        return "prose"
    around = [b for b in doc.layout.blocks if b.start <= start and end <= b.end and b.end > b.start]
    kinds = []
    for b in around:
        if b.kind != "admonition":
            continue
        kind, _, title = b.info.partition(":")
        kind = kind.strip().lower()
        if kind in WARNING_KINDS or _ANTI.search(title):
            return "warning"
        kinds.append("example" if kind in EXAMPLE_KINDS or re.search(r"\bexamples?\b", title, re.I) else "note")
    if any(b.kind == "code" for b in around):
        return "code"
    if "example" in kinds:
        return "example"
    if _ABOUT_SHOWN.search(doc.text[start:end]) and _code_before(doc, start):
        return "example"
    return "note" if kinds else "prose"


def _code_before(doc: Document, pos: int) -> bool:
    """Whether a code block stands before ``pos`` in its section (after the last heading before it)."""
    assert doc.layout is not None
    for b in sorted(doc.layout.blocks, key=lambda b: b.start, reverse=True):
        if b.start >= pos:
            continue
        if b.kind == "heading":
            return False
        if b.kind == "code":
            return True
    return False


def allowed(role: str, style: str) -> bool:
    """Whether a question of ``style`` may be drawn from text of ``role`` (:data:`ROLE_STYLES`)."""
    return style in ROLE_STYLES.get(role, ROLE_STYLES["prose"])


_ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*")
_TERM_END = re.compile(r"\s*(?::|\s[-\u2013\u2014]\s)")


def item_term(item: str) -> str:
    """A list item's lead term: what it opens with before a colon or a dash ("stamina.retry_num: The number of
    ..." -> "stamina.retry_num"), when that is at most five words; "" when the item has none."""
    body = _ITEM_MARK.sub("", item, count=1)
    m = _TERM_END.search(body)
    head = body[:m.start()] if m else ""
    return head.strip() if head.strip() and len(head.split()) <= 5 else ""


def _names(words: set[str], item: str, share: float) -> bool:
    term = set(content_words(item_term(item)))
    rest = set(content_words(_ITEM_MARK.sub("", item, count=1))) - term
    if term and term <= words:
        return True
    return bool(rest) and len(rest & words) >= share * len(rest)


def names_item(question: str, item: str) -> bool:
    """Whether a question names a list item: its lead term, or most of its words."""
    return _names(set(content_words(question)), item, 0.6)


def one_of_list(question: str, reference: str, items: Sequence[str]) -> bool:
    """Whether a question asks for a list as a whole and its reference gives only part of it: the question names
    none of the list's ``items`` (by its lead term, or most of its words) and the reference holds some of them,
    not all ("What extra fields does the log include?" -> "stamina.args", one field of four). A question that
    names its item ("What does stamina.retry_num count?"), or a reference that holds none of the items (an
    answer from the lead-in itself), is fine."""
    if len(items) < 2:
        return False
    asked, answered = set(content_words(question)), set(content_words(reference))
    if any(_names(asked, it, 0.6) for it in items):
        return False
    covered = sum(1 for it in items if _names(answered, it, 0.5))
    return 0 < covered < len(items)


def whole_list(reference: str, items: Sequence[str]) -> bool:
    """Whether a reference holds every one of ``items`` (by its lead term, or half its words)."""
    answered = set(content_words(reference))
    return len(items) >= 2 and all(_names(answered, it, 0.5) for it in items)
