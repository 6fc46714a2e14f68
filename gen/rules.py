"""The ``llm=none`` writer: deterministic factual questions without a model.

For a sentence it picks an answer phrase (a date, a year, a number with its unit, or a named
entity), keeps the clause around it, and turns the phrase into a wh-phrase::

    "It received its town charter in 1687, when it was ..."   (document: "Port Calder")
    -> "Port Calder received its town charter in what year?"   reference: "1687"

Instant and repeatable, for CI and quick sweeps; it writes ``single_hop``, ``unanswerable`` and
``follow_up`` questions (two such questions on one document's subject, the second with a pronoun in
place of the subject: :func:`rule_follow_up`, gates in :mod:`gen.followup`).

An ``unanswerable`` question (:func:`unanswerable_question`) keeps such a question's frame and swaps
one of its anchors, outside the wh-phrase, for one the sentence does not hold: a year (or a date's
year) moved back by 1 to 9 years, else a number scaled (x2, x3, x0.5, x1.5), else a multi-word name
for another document's name with the same head word ("Saltgate Bridge" -> "Ashby Swing Bridge")::

    "The array generated 58 gigawatt-hours of electricity in 2022, ..."
    -> "The array generated 116 gigawatt-hours of electricity in what year?"
    reference: "not in the knowledge base" (no year had 116), no evidence
    "During the 2019 flood the public warning had come only 40 minutes before high water."
    -> "During the 2012 flood the public warning had come only how many minutes before high water?"

The result is a question a user of the corpus could ask, on its topics and in its words, whose answer
the sentence it came from does not give. Whether another document gives it is not the writer's
call: the absence gate (:mod:`gen.absence`) checks the whole corpus and rejects the candidate if so.

Two styles (``styles=[...]`` in ``conf/gen.yaml``; one is drawn per question and recorded):

- ``question`` (the default): the whole clause, as above. It copies nearly every content word of
  its evidence, which flatters lexical retrieval.
- ``keywords`` (``keywords@N``: N words, default 5): a search-style query of the clause's N rarest
  content words (fewest documents of the corpus hold them) around the wh-phrase, in their order::

    -> "Port Calder town charter in what year?"

  It copies fewer words (about as many as people's claims share with their abstracts) but only
  words of its evidence, and the rarest: on SciFact and HotpotQA it did not bring
  the ranking of retrievers closer to that of people's questions (docs/trust/generated-test-sets.md, "How far to trust a
  generated test set"). Only a writer that can reword (an LLM, with ``gates.max_overlap``) can.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import Corpus
from ragsweep.gen.followup import follow_up_info, pronoun_of, pronounise
from ragsweep.gen.language import language_of
from ragsweep.gen.products import names
from ragsweep.gen.styles import code_reference
from ragsweep.gen.units import Phrase, Unit, answer_phrases
from ragsweep.gen.wording import normalise
from ragsweep.gen.writer import Draft, WriteFailed
from ragsweep.metrics import STOP, UNANSWERABLE, InputError, content_words
from ragsweep.metrics.lexicon import PREPOSITIONS, PRONOUN_OF_OPENER

log = logging.getLogger(__name__)

RULES_VERSION = "rules-1"  # bump when the question templates change (unanswerable swaps included)
_KIND_ORDER = {"date": 0, "year": 1, "number": 2, "entity": 3}
_PRONOUN = re.compile(r"^(?:It|They|He|She|The company|The city|The company's|Its)\b")
_CLAUSE_BREAK = re.compile(r"(?:, | ; |; | - | — |: )")
_WH_MARK = "\x01"  # brackets the wh-phrase while a question is assembled
KEYWORDS = 5  # content words a "keywords" question keeps by default
SHOWN_LANGUAGE = 3  # documents named when some are not English


def parse_style(style: str | None) -> int | None:
    """None for the whole-clause ``question`` style, the word count for ``keywords`` / ``keywords@N``."""
    if style in (None, "", "question"):
        return None
    m = re.fullmatch(r"keywords(?:@(\d+))?", style)
    if not m or (m.group(1) is not None and int(m.group(1)) < 1):
        raise InputError(f"styles: the rule writer (llm=none) writes 'question' or 'keywords' / 'keywords@N' "
                         f"(N >= 1 words), got {style!r}")
    return int(m.group(1)) if m.group(1) else KEYWORDS


def _wh(phrase: Phrase, before: str) -> tuple[str, int]:
    """The wh-phrase replacing ``phrase`` and how many characters before it it swallows."""
    low = before.lower()
    if phrase.kind in ("year", "date"):
        word = "year" if phrase.kind == "year" else "date"
        for prep in ("in ", "on ", "since ", "until ", "by ", "from "):
            if low.endswith(prep):
                return f"{prep}what {word}", len(prep)
        return f"what {word}", 0
    if phrase.kind == "number":
        if phrase.unit == "%":
            return "what percentage", 0
        if phrase.unit == "currency":
            return "how much", 0
        if phrase.unit:
            unit = phrase.unit.split(" ")[0]
            return f"how many {unit}", 0
        return "what number", 0
    if low.endswith("the "):
        return "what", 4
    return "what", 0


def _clause(sentence: str, phrase: Phrase) -> tuple[int, int]:
    """From the sentence start (it holds the subject) to the end of the phrase's clause."""
    ends = [m.start() for m in _CLAUSE_BREAK.finditer(sentence) if m.start() >= phrase.end]
    end = min(ends, default=len(sentence))
    if len(sentence[:end].split()) < 6:
        end = len(sentence)
    return 0, end


def question_for(sentence: str, phrase: Phrase, topic: str) -> str | None:
    """The question asking for ``phrase`` in ``sentence``, or None when no clean one can be made."""
    marked = _marked_question(sentence, phrase, topic)
    return None if marked is None else _finish(marked)


def _finish(marked: str) -> str:
    text = marked.replace(_WH_MARK, "")
    return text[0].upper() + text[1:] + "?"


def keyword_question(marked: str, keep: int, weight: Callable[[str], float]) -> str:
    """A marked question cut to the wh-phrase and its ``keep`` heaviest content words, in their order.

    Args:
        marked: A question with its wh-phrase between two ``_WH_MARK`` characters, no "?".
        keep: Content words to keep (distinct, by their :func:`metrics.offline.content_words` key).
        weight: Key -> weight (the corpus's inverse document frequency); ties go to the earlier word.
    """
    before, wh, after = marked.split(_WH_MARK)
    words = [(part, w) for part, text in ((0, before), (2, after)) for w in text.split()]
    keyed = []
    for i, (_, w) in enumerate(words):
        keys = content_words(w.strip(".,;:()[]\"'!?"))
        if keys:
            keyed.append((-weight(keys[0]), i, keys[0]))
    chosen: dict[str, int] = {}
    for _, i, key in sorted(keyed):
        if len(chosen) < keep and key not in chosen:
            chosen[key] = i
    kept = set(chosen.values())
    out = [w.strip(".,;:()[]\"'!?") for i, (part, w) in enumerate(words) if i in kept and part == 0]
    out += [wh] + [w.strip(".,;:()[]\"'!?") for i, (part, w) in enumerate(words) if i in kept and part == 2]
    return _finish(" ".join(x for x in out if x))


def _marked_question(sentence: str, phrase: Phrase, topic: str) -> str | None:
    """:func:`question_for` with the wh-phrase bracketed by ``_WH_MARK``, not capitalised, no "?"."""
    start, end = _clause(sentence, phrase)
    before = sentence[start:phrase.start]
    after = sentence[phrase.end:end]
    if phrase.kind in ("year", "date", "number") and re.match(r"\s+[a-z]", after) and before.lower().endswith("the "):
        return None  # "the 2019 flood": a modifier, not an answer
    wh, eaten = _wh(phrase, before)
    wh_word = wh.split()[0]
    wh = _WH_MARK + wh + _WH_MARK
    if len(before) == eaten and wh_word in ("in", "on", "since", "by", "from", "until"):
        # "In 2022 the array generated ..." -> "The array generated ... in what year?"
        rest = after.lstrip(" ,")
        text = rest[:1].upper() + rest[1:].rstrip(" ,.;:") + " " + wh
    else:
        text = before[: len(before) - eaten] + wh + after
    text = re.sub(r"[\s,.;:—-]+$", "", text.strip())
    if _PRONOUN.match(text):
        if not topic:
            return None
        text = _PRONOUN.sub(topic, text, count=1)
    if not text or len(text.split()) < 5:
        return None
    return text


_SWAP_ORDER = {"date": 0, "year": 0, "number": 1, "entity": 2}
_FACTORS = (2.0, 3.0, 0.5, 1.5)
_NAME_POOL = 200  # the most widespread names of the corpus that a swap draws from
_NUMERIC = re.compile(r"\d[\d,]*(?:\.\d+)?")
# An anchor is swapped only in the wh-phrase's own clause, at most _MAX_GAP words from it: swapping a
# detail of another clause ("... born 1952. Billy Bob Thornton (born what date)") leaves the asked
# fact in the corpus.
_SIDE_CLAUSE = re.compile(r"[,;:()\[\]\"—–]|\.(?:\s|[A-Z])| - ")
_MAX_GAP = 10
_GLUED = re.compile(r"[a-z0-9\"')][.!?][A-Za-z\"]")


def _years(year: str, h: int) -> list[str]:
    """Years to put in place of ``year``: 1 to 9 years earlier, starting at ``1 + h % 9`` (later before 1500)."""
    y = int(year)
    return [str(y - d if y - d >= 1500 else y + d) for d in (1 + (h + i) % 9 for i in range(9))]


def _scaled(number: str, h: int) -> list[str]:
    """``number`` (digits, maybe with thousands commas or decimals) times each factor, in its format."""
    plain = number.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    out = []
    for i in range(len(_FACTORS)):
        value = round(float(plain) * _FACTORS[(h + i) % len(_FACTORS)], decimals)
        text = f"{value:,.{decimals}f}" if "," in number else f"{value:.{decimals}f}"
        if float(text.replace(",", "")) not in (0.0, float(plain)):
            out.append(text)
    return out


def _replacements(p: Phrase, h: int, names: Sequence[str]) -> list[str]:
    if p.kind in ("year", "date"):
        m = re.search(r"\d{4}", p.text)
        assert m is not None
        return [p.text[: m.start()] + y + p.text[m.end():] for y in _years(m.group(0), h)]
    if p.kind == "number":
        m = _NUMERIC.search(p.text)
        return [p.text[: m.start()] + n + p.text[m.end():] for n in _scaled(m.group(0), h)] if m else []
    # A name of the same kind, as far as words tell: multi-word, ending in the same head word
    # ("Saltgate Bridge" -> "Ashby Swing Bridge"), sharing no other word.
    words = p.text.split()
    if len(words) < 2:
        return []
    pool = [n for n in names if len(n.split()) > 1 and n.split()[-1] == words[-1] and not set(n.split()[:-1]) & set(words)]
    return pool[h % len(pool):] + pool[: h % len(pool)] if pool else []


def swap_anchor(marked: str, h: int, names: Sequence[str], avoid: str = "") -> tuple[str, str, str] | None:
    """``marked`` with one anchor outside its wh-phrase replaced: (new marked text, old, new), or None.

    In this order: a year (or a date's year) goes back 1 to 9 years; else a number is scaled by a
    factor of :data:`_FACTORS`, keeping its unit (only when a year or date is asked: "handled 9,400
    tonnes in what year"); else a multi-word name becomes one of ``names`` with the same head word.
    Only anchors that key the asked fact are swapped: in the wh-phrase's clause, at most
    :data:`_MAX_GAP` words from it, not after an "and" that follows it, not "a 1931 film". Among anchors of one order, and among replacements, ``h`` picks. A replacement
    already in the question or in ``avoid`` (the sentence) is skipped. ``names`` should not occur in
    the sentence's document.
    """
    before, wh, after = marked.split(_WH_MARK)
    options = []
    for part, text in ((0, before), (2, after)):
        for p in answer_phrases(text):
            between = text[p.end:] if part == 0 else text[: p.start]
            if p.kind == "year" and p.text.endswith("s"):  # "the 1990s": a decade, no clean swap
                continue
            if _SIDE_CLAUSE.search(between) or len(between.split()) > _MAX_GAP:
                continue  # a side detail: the question would still be answerable without it
            if p.kind != "entity" and re.search(r"\b(?:a|an)\s+$", text[: p.start], re.I):
                continue  # "a 1931 film": the year names which film; swapped, it only misnames it
            if part == 2 and re.search(r"\b(?:and|or|but)\b", between):
                continue  # "in what year and 63 centimetres above ...": a second fact, not the asked one's
            if p.kind == "number" and not re.search(r"\b(?:year|date)\b", wh):
                continue  # "how many passengers and 60 cars": a number beside the asked one, not its key
            options.append((_SWAP_ORDER[p.kind], (p.start + h) % 97, part, p))
    seen = (marked + " " + avoid).lower()
    for _, _, part, p in sorted(options, key=lambda o: o[:2]):
        new = next((r for r in _replacements(p, h, names) if r.lower() not in seen), None)
        if new is None:
            continue
        parts = [before, wh, after]
        parts[part] = parts[part][: p.start] + new + parts[part][p.end:]
        return parts[0] + _WH_MARK + parts[1] + _WH_MARK + parts[2], p.text, new
    return None


class RuleWriter:
    """A :class:`gen.writer.Writer` that needs no model (``llm=none``).

    :meth:`prepare` (called by the generator before writing) counts in how many documents each
    content word occurs, which ranks the words a ``keywords`` question keeps; without it every word
    weighs the same and the first ones are kept.
    """

    kinds = ("single_hop", "unanswerable", "follow_up")
    # Documentation styles: the code is its own reference and the section titles say what it does; steps,
    # errors and options need their text reworded, which takes a model.
    styles = ("code_answer",)
    model_id = "rules"
    backend = "rules"
    prompt_version = RULES_VERSION

    def __init__(self) -> None:
        self.left_out: dict[str, int] = {}  # documents it does not read, by why (the generation report's units)
        self.doc_freq: Counter[str] = Counter()
        self.n_docs = 0
        self.names: list[tuple[str, set[str]]] = []
        self.pronouns: dict[str, str] = {}  # document -> the pronoun of its subject (follow-ups)

    def readable(self, corpus: Corpus, doc_ids: Sequence[str]) -> list[str]:
        """The documents this writer can question: the English ones (:mod:`gen.language`). Others are
        left out with a count and a warning; when none is English, an InputError says why and what to use."""
        self.left_out = {}
        problems = {d: p for d in doc_ids if (p := language_of(corpus.get(d).text).problem()) is not None}
        if not problems:
            return list(doc_ids)
        named = "; ".join(f"{d}: {p}" for d, p in list(problems.items())[:SHOWN_LANGUAGE])
        if len(problems) == len(doc_ids):
            raise InputError(f"{corpus.source}: the rule writer (llm=none) writes English questions only, and none "
                             f"of the {len(doc_ids)} documents is English ({named}). Write them with a model "
                             "that reads their language: llm=local (or llm=openai ...)")
        log.warning("the rule writer (llm=none) writes English questions only: left out %d of %d documents "
                    "not in English (%s%s); llm=local questions them too", len(problems), len(doc_ids), named,
                    ", ..." if len(problems) > SHOWN_LANGUAGE else "")
        self.left_out = {"not_english_documents": len(problems)}
        return [d for d in doc_ids if d not in problems]

    def prepare(self, units: Mapping[str, Sequence[Unit]], styles: Sequence[str]) -> None:
        """Check the configured styles; count each content word's documents over ``units``."""
        for style in styles:
            parse_style(style)
        self.doc_freq = Counter(w for doc in units.values() for w in {k for u in doc for k in content_words(u.text)})
        self.n_docs = len(units)
        # Names to swap in (unanswerable): each with the documents that hold it, most widespread first,
        # so a swapped-in name is one the corpus is about; ties in name order.
        holders: dict[str, set[str]] = {}
        for doc_id, doc in units.items():
            for u in doc:
                for name in u.entities:
                    if name.split()[0].lower() not in STOP | PREPOSITIONS:  # "Under the Authority": no name
                        holders.setdefault(name, set()).add(doc_id)
        self.names = sorted(holders.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        self.pronouns = {doc_id: pronoun_of(doc) for doc_id, doc in units.items()}

    def weight(self, key: str) -> float:
        """Inverse document frequency of a content-word key (rarer words weigh more)."""
        return math.log((self.n_docs + 1) / (self.doc_freq.get(key, 0) + 1))

    async def write(self, cand: Candidate, topics: list[str], persona: str | None = None,
                    style: str | None = None) -> Draft:
        del persona  # no voice without a model
        if cand.kind == "follow_up":  # a conversation reads as questions: the style is not applied
            doc_id = cand.shown[0].doc_id
            return rule_follow_up(cand, topics[0], self.pronouns.get(doc_id) or pronoun_of(cand.shown))
        if cand.style == "code_answer":
            return code_question(cand, topics[-1] if topics else "")
        keep = parse_style(style)
        unit = cand.shown[cand.required[0]]
        phrases = sorted(answer_phrases(unit.text), key=lambda p: (_KIND_ORDER[p.kind], p.start))
        if not phrases:
            raise WriteFailed("no number, date or named entity in the sentence")
        # Seeded by the sentence itself: the same sentence always gives the same question.
        h = int(hashlib.sha256(cand.key.encode()).hexdigest()[:8], 16)
        order = phrases[h % len(phrases):] + phrases[: h % len(phrases)]
        order.sort(key=lambda p: _KIND_ORDER[p.kind] > 1)  # dates and years first, then the rest
        names = [n for n, docs in self.names[:_NAME_POOL] if unit.doc_id not in docs]
        for phrase in order:
            marked = _marked_question(unit.text, phrase, topics[cand.required[0]])
            if marked is None:
                continue
            if cand.kind == "unanswerable":
                # The same question with an anchor swapped (swap_anchor), no evidence; never from two
                # sentences run together ("... actor.William ..."), whose frame is no question.
                if _GLUED.search(marked.replace(_WH_MARK, "")):
                    break
                swapped = swap_anchor(marked, h, names, unit.text)
                if swapped is None:
                    continue
                marked, old, new = swapped
            q = _finish(marked) if keep is None else keyword_question(marked, keep, self.weight)
            if cand.kind == "unanswerable" and new.lower() in q.lower():
                return Draft(q, UNANSWERABLE, (), provenance={"swap": {"from": old, "to": new}})
            if cand.kind != "unanswerable" and phrase.text.lower() not in q.lower():
                return Draft(q, phrase.text, (unit,))
        raise WriteFailed("no answer phrase gave a clean question" if cand.kind != "unanswerable" else
                          "no clean question with a year, number or name to swap outside its wh-phrase")


# --- code answers (gen.styles) ---------------------------------------------------------------------

#: Verbs a docs heading opens with when it names a task ("Install FastAPI", "Run the server"): it becomes "How do I ...?".
_TASK_VERBS = frozenset("add build call change check configure create declare define deploy disable enable generate "
                        "get handle import include install mount open override pass read return run send serve set "
                        "start test update upgrade use validate write".split())
_LANGUAGE_WORDS = {"console": "command", "bash": "command", "sh": "command", "shell": "command", "powershell": "command",
                   "json": "JSON", "python": "Python code", "toml": "TOML", "yaml": "YAML", "html": "HTML"}


def code_question(cand: Candidate, topic: str) -> Draft:
    """A ``code_answer`` question from the titles over a code block: "How do I <task> (<page>)?" when the section
    title names a task, else "What is the <language> code for <title> (<page>)?"; the reference is the code. The
    page's product (:mod:`gen.products`), when known and not in the titles, goes before the page: "(Hatch:
    <page>)"."""
    code = cand.shown[cand.required[0]]
    fence = code.text.lstrip().split("\n", 1)[0].lstrip("`~").strip()
    body = code_reference(code.text)
    titles = [re.sub(r"\s+", " ", t).strip().rstrip("?:. ") for t in cand.section if t.strip()] or [topic]
    title, page = titles[-1], titles[0]
    where = f" ({page})" if page.lower() not in title.lower() else ""
    if cand.product and not names(" ".join(titles), cand.product):
        where = f" ({cand.product}: {page})" if where else f" ({cand.product})"
    words = title.split()
    if not body or not words:
        raise WriteFailed("no code or no section title to ask it by")
    if words[0].lower() in _TASK_VERBS and not _PRONOUN_WORD.search(title):
        question = f"How do I {words[0].lower()} {' '.join(words[1:])}{where}?"
    else:
        language = _LANGUAGE_WORDS.get(fence.lower(), f"{fence} code" if fence else "code")
        question = f"What is the {language} for {title}{where}?"
    return Draft(question, body, (code,))


_PRONOUN_WORD = re.compile(r"\b(?:it|this|that|them|these|those)\b", re.I)


# --- follow-ups (gen.followup) -----------------------------------------------------------------

_SUBJECT = "\x02"  # stands for the document's subject while a follow-up's questions are made


def _questions(unit: Unit, topic: str, pronoun: str) -> list[tuple[str, str]]:
    """Every clean (question, answer) the rule writer makes of ``unit``, dates
    and years first. Where the writer put the subject in place of an opening "Its" ("Its ferries
    carried ..."), the subject gets its "'s"; where the opening pronoun is not the subject's
    (``pronoun``), the question is left out."""
    out = []
    for phrase in sorted(answer_phrases(unit.text), key=lambda p: (_KIND_ORDER[p.kind] > 1, p.start)):
        marked = _marked_question(unit.text, phrase, _SUBJECT)
        if marked is None:
            continue
        q = _finish(marked)
        if q.startswith(_SUBJECT):
            rest = marked[len(_SUBJECT):].split(_WH_MARK)[0][:20]
            m = re.search(r"\b(its|it|they|he|she|the company's|the company|the city)" + re.escape(rest),
                          unit.text, re.I)
            opener = m.group(1).lower() if m else ""
            if PRONOUN_OF_OPENER.get(opener, pronoun) != pronoun:
                continue  # "She will carry 380 passengers" in a document about a company: another subject
            possessive = opener in ("its", "the company's")
            q = (topic + ("'" if topic.endswith("s") else "'s") if possessive else topic) + q[len(_SUBJECT):]
        if phrase.text.lower() not in q.lower():
            out.append((q, phrase.text))
    return out


def subjects(topic: str) -> list[str]:
    """Names a question may call the document's subject by: its title, then a person's surname."""
    words = topic.split()
    out = [topic]
    if len(words) == 2 and all(w[:1].isupper() for w in words):
        out.append(words[-1])  # "Ines Marrow" -> "Marrow"
    return out


def rule_follow_up(cand: Candidate, topic: str, pronoun: str) -> Draft:
    """A first question of ``cand.shown[0]`` and a follow-up of ``cand.shown[1]`` that both name the
    document's subject, the follow-up with a pronoun in its place (:mod:`gen.followup`): ``it`` / ``its``,
    or ``she`` / ``her``, ``he`` / ``his`` / ``him`` as the document speaks of its subject (``pronoun``)."""
    if not topic:
        raise WriteFailed("the document's subject is not known (its text opens with a pronoun)")
    u1, u2 = cand.shown[0], cand.shown[1]
    firsts, seconds = _questions(u1, topic, pronoun), _questions(u2, topic, pronoun)
    h = int(hashlib.sha256(cand.key.encode()).hexdigest()[:8], 16)  # the same pair, the same questions
    if seconds:
        seconds = seconds[h % len(seconds):] + seconds[: h % len(seconds)]
    called = subjects(topic)
    mentions = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in called) + r")(?!\w)")
    for q2, a2 in seconds:
        if any(n.lower() in a2.lower() for n in called):
            continue  # the answer is the subject itself
        follow = pronounise(q2, called, pronoun)
        if follow is None:
            continue
        for q1, a1 in firsts:
            if not mentions.search(q1) or any(n.lower() in a1.lower() for n in called):
                continue  # the first turn must name the subject the pronoun stands for
            if normalise(a1) == normalise(a2) or a2.lower() in (q1 + " " + a1).lower():
                continue
            return Draft(follow, a2, (u2,), provenance={"follow_up": follow_up_info(q1, a1, (u1,), topic, q2)})
    raise WriteFailed("no pair of questions on the document's subject")
