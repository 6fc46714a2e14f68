"""The per-sample quality gates of generated samples.

Each gate is a family of rules (:data:`FAMILIES`: a regex or word list, a threshold, or one test of the kind
check) with the reason it rejects under (a key of :data:`gen.report.REASONS`). The generator runs them in
order on every candidate (:func:`check_sample`); a rejected candidate is counted under its first failing
reason in the run's report (:mod:`gen.report`) and replaced by the next candidate. :func:`all_reasons`
gives every family a candidate fails, and ``gates.families_off`` switches families off: what each family
catches alone is ``benchmarks/gate_audit.py``.
How a question's words compare with its evidence and with other questions is :mod:`gen.wording`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ragsweep.gen.absence import question_words
from ragsweep.gen.documents import Corpus
from ragsweep.gen.grounding import example_answer, unstated_default
from ragsweep.gen.kinds import KIND_FAMILIES, kind_problems, question_kind_problems
from ragsweep.gen.testset import UNANSWERABLE_KIND, TestSample
from ragsweep.gen.wording import content_tokens, copy_ratio, evidence_overlap, support_ratio
from ragsweep.metrics import InputError, content_words
from ragsweep.metrics.lexicon import NOT_NAMES, ORDINALS

_DEICTIC = re.compile(
    r"\b(?:according to (?:the|this) (?:passage|text|document|article|paper|study|sentence|abstract|excerpt|context)"
    r"|(?:the|this|above|given|following) (?:passage|text|excerpt|sentence|sentences|context|abstract)"
    r"|this (?:document|article|paper|study|report|trial|analysis)"
    r"|the (?:document|article|paper|study|report|authors?) (?:above|mentioned|described|says?|states?)"
    r"|mentioned above|described above|in the (?:document|article|paper)\b"
    r"|(?:first|second|last|previous|next|other) (?:sentence|passage|paragraph)\b)", re.I)
# A personal pronoun only: "This ..." opens people's riddle-style questions ("This fast-food restaurant company was
# spun off from ..."), and "This museum ..." is the unnamed-thing family's.
_PRONOUN_START = re.compile(r"^(?:it|they|he|she|its|their)\b", re.I)
# A thing the question takes as known without naming it: "What caused the town to flood?", "In which year
# did the band play at Super Bowl XXXIII?", "the gold coins on board". A generic noun after "the" / "this" /
# "that" passes when a name, a quote, a relative clause or a participle follows and says which one
# ("the band Foo Fighters", "the film based on ...", "the event that was staged at ..."). At the start too:
# "The group is headquartered in what?" (rule writer). The nouns from "terminal" on are ones generated questions
# took as known ("In what year did the terminal handle 294,000 passengers?"); people's questions do not use
# them so (benchmarks/results/2026-11-25-code-comment-measurements.md).
_UNNAMED = re.compile(
    r"\b(?:[Tt]he|[Tt]his|[Tt]hat)\s+(?:town|city|village|band|group|team|club|film|movie|song|album|book|novel|series|show|"
    r"episode|company|firm|unit|mine|event|game|season|player|ship|station|party|school|university|church|river|"
    r"lake|island|building|stadium|venue|museum|hotel|airport|bridge|road|park|festival|tournament|race|award|"
    r"magazine|newspaper|play|opera|project|program(?:me)?|product|device|singer|actor|actress|author|writer|director|"
    r"character|man|woman|person|country|state|region|area|district|duo|trio|quartet|couple|pair|"
    r"terminal|store|shop|restaurant|hospital|factory|prison|agency|organi[sz]ation|institution|college|league|"
    r"division|campaign|war|competition|network|channel|label|brand|vehicle|aircraft|car|policy|treaty)\b"
    r"(?!,?\s+(?:[A-Z\"'“‘(]|that\b|which\b|who\b|"
    r"whose\b|where\b|named\b|called\b|known\b|of\b|from\b|for\b|with\b|\w+ed\b|\w+en\b|\w+ing\b|"
    r"(?:in|on|at|by|to|into|under|through)\s+(?:which|whom)\b))|\bon board\b")
# The setting of a report, taken as known: "What is the objective of the study?", "the age range of the
# individuals examined", "between the eccentric and non-eccentric groups" (SciFact abstracts, 1.5B writer).
# Only a name, a quote, a number, a relative clause or a preposition that goes on to say which lets it
# pass; a participle does not ("the patients studied" is still any patients). People's questions do not trip it.
_UNNAMED_SETTING = re.compile(
    r"\b(?:the|this|that|these)\s+(?:study|trial|introduction|objective|aim|analysis|review|experiment|survey|"
    r"cohort|authors|researchers|investigators|participants|subjects|individuals|patients|respondents|"
    r"volunteers|sample|findings|intervention)\b(?!\s+(?:[A-Z\"'“‘(\d]|of\b|on\b|by\b|in\b|at\b|for\b|with\b|"
    r"among\b|from\b|called\b|named\b|known\b|who\b|that\b|which\b))"
    r"|\bthe\s+(?:two|three|\w+(?:-\w+)?(?:\s+and\s+\w+(?:-\w+)?)?)\s+groups\b")
# A question that names nothing: no capitalised word, number or quote after its wh-word, yet a definite "the
# ..." that takes a thing as known ("What engine did the car use?", "Who was the plaintiff in the lawsuit?",
# "What happened after the war?"). People's questions rarely trip it ("Who invented the type of script used in
# autographs?"); a claim (no wh-word, no question mark) never does.
_WH_OPENING = re.compile(r"^\W*(?:(?:in|on|at|for|from|by|to|of|with|during|after|before)\s+)?(?:what|which|who|whom|whose|"
                         r"when|where|why|how)\b(?:\s+(?:is|was|are|were|did|does|do|has|have|had|many|much))?", re.I)
_DEFINITE = re.compile(r"\bthe\s+[a-z]")
_NAMES_SOMETHING = re.compile(r"[A-Z]|\d|[\"“”‘’']")
# Capitals stand in for "says which" only where names are capitalised. Scientific text names its topics in
# lower case ("the effect of chronic variable stress on hematopoietic stem cells"), and a question that
# describes its thing in this many content words or more is left to the corpus check, which reads no
# wording: gates.specific rejects it when another document holds every one of its words.
_DESCRIBED = 4


def names_nothing(question: str) -> bool:
    """Whether a question names nothing it asks about (:data:`_WH_OPENING`, :data:`_DEFINITE`) and is too short
    a description to say which thing it means (:data:`_DESCRIBED`)."""
    q = question.strip()
    opening = _WH_OPENING.match(q)
    if opening is None:
        return False
    rest = q[opening.end():]
    return (not _NAMES_SOMETHING.search(rest) and bool(_DEFINITE.search(rest))
            and len(question_words(rest)) < _DESCRIBED)


_NAME = re.compile(r"[A-Z][\w'’.-]+")
# An evidence sentence whose subject is a pronoun: "He drew ...", "It is 84.5 km in diameter", "In 1886 he
# was made ...", "Born into a family of ... Andrey Somov, he became ...".
_PRONOUN_SUBJECT = re.compile(
    r"^\W*(?:(?:he|she|it|they|his|her|its|their)\b"
    r"|(?:in|on|by|after|before|during|from|at|later|then)\b[^,.;]{0,40}?\s(?:he|she|they)\s"
    r"|[^.;]{0,160}?,\s*(?:he|she|they)\s)", re.I)
# "Who was Kevin Mark DuBrow?", "What are CTCF and Cohesin?", "What is Canty Bay known for?": a question
# that asks what a named thing is, whose reference can only restate a sentence about it. People's questions
# are not of this form (gates.definitions).
_DEFINITION = re.compile(r"^\W*(?i:who|what)\s+(?i:is|was|are|were)\s+(?:(?i:the|an?)\s+)?(?P<name>[A-Z0-9][^?]*?)"
                         r"(?:\s+(?i:(?:best\s+|well\s+)?(?:known|famous|noted)\s+for))?\s*\?\s*$")
_DEFINITION_NOT = re.compile(r"['’]s\b|\b(?:or|of|in|on|at|by|for|from|to|with|that|which|who|whose|when|where|"
                             r"called|named|than|how|why|what)\b", re.I)


@dataclass(frozen=True)
class GateConfig:
    """Thresholds of the gates (see ``conf/gen.yaml``)."""

    min_support: float = 0.6       # answerability: share of reference content tokens in the evidence
    max_copy: float = 0.75         # trivial: longest copied run / evidence tokens
    dup_cosine: float = 0.92       # near-duplicate: embedding cosine at or above this
    min_question_words: int = 5
    max_overlap: float | None = None  # high_overlap: evidence_overlap share above this (None: no cap)
    absent_cover: float = 0.75     # answer_in_corpus: question words in a document naming all its anchors
    absent_cosine: float = 0.8     # answer_in_corpus: MiniLM cosine of a sentence of such a document
    definitions: bool = False      # definition: "Who was <name>?" questions are rejected unless true
    specific: bool = True          # unspecific: another document holds every content word of the question
    named_subject: bool = True     # single_hop, conditional, unanswerable: only sentences naming their subject
    kind_check: bool = True        # wrong_kind: multi_hop / comparative / conditional questions checked (gen.kinds)
    roundtrip: bool = True         # roundtrip_disagrees: answer from the evidence with the judge and compare
    roundtrip_hops: bool = True    # one_sentence_answers: multi_hop / comparative asked of each sentence alone
    roundtrip_min_f1: float = 0.5  # ... agreement: content-word F1 at least this (or one answer inside the other)
    families_off: tuple[str, ...] = ()  # families of FAMILIES switched off (an ablation: benchmarks/gate_audit.py)
    product: str = "repair"        # a corpus of several products: a question that names none (gen.products)
    evidence_support: float | None = None  # judge_unsupported: the judge's support of the reference below this
                                           # (gen.supported); None = off
    support_scope: str = "docs"    # ... of samples on pages with a layout (docs) or of every sample (all)


def verbatim(sample: TestSample, corpus: Corpus) -> str | None:
    for span, quote in zip(sample.evidence, sample.quotes or (None,) * len(sample.evidence)):
        if span.doc_id not in corpus:
            return "evidence_not_verbatim"
        text = corpus.get(span.doc_id).text
        if not (0 <= span.start < span.end <= len(text)) or (quote is not None and text[span.start:span.end] != quote):
            return "evidence_not_verbatim"
    return None


def evidence_text(sample: TestSample, corpus: Corpus) -> str:
    return " ".join(corpus.get(s.doc_id).text[s.start:s.end] for s in sample.evidence)


def self_contained(question: str, cfg: GateConfig) -> bool:
    q = question.strip()
    return not any(f in _SELF_CONTAINED and f not in cfg.families_off and test(q, cfg) for f, test in _QUESTION_TESTS)


def definition_question(question: str) -> bool:
    """Whether ``question`` only asks who or what a named thing is ("Who was Kevin Mark DuBrow?", "What is
    Canty Bay known for?"), not a fact about it ("Who is Yulia Zagoruychenko's dance partner?")."""
    m = _DEFINITION.match(question.strip())
    return bool(m) and not _DEFINITION_NOT.search(m.group("name"))


def restates(question: str, reference: str, min_words: int = 3) -> bool:
    """Whether ``reference`` holds every content word of ``question`` (at least ``min_words`` of them; the
    wh-phrase's nouns "name", "title", "year" left out): it restates its sentence instead of answering
    ("What was the critical success of the album Shotgun Willie?" -> "The album Shotgun Willie (1973)
    was critically successful."; "Who is the fictional character Kimberly Ann Hart?" -> "Kimberly Ann
    Hart is a fictitious character in ...")."""
    words = question_words(question)
    return len(words) >= min_words and words <= set(content_words(reference))


# A question that offers its answer among others, as people's comparisons do ("Who was born first, A or B?";
# benchmarks/results/2026-11-26-gate-ablation.md).
_CHOICE = re.compile(r"\b(?:or|between|which one|either)\b", re.I)
# "yes" and "no" are stop words, yet answers: gen.kinds accepts them for a multi_hop question.
_YES_NO = re.compile(r"(?i:yes|no)\W*")


def gives_away(question: str, reference: str) -> bool:
    """Whether the question holds every content word of its reference, a bracketed aside ("(2012)") left
    out: "What is the name of the movie Prometheus?" -> "Prometheus (2012)". A question that offers a
    choice ("Who was born first, Pablo Trapero or Aleksander Ford?") names its answer by design."""
    if _CHOICE.search(question):
        return False
    core = content_tokens(re.sub(r"\s*[(\[][^)\]]*[)\]]", "", reference)) or content_tokens(reference)
    return bool(core) and set(core) <= set(content_tokens(question))


def _names(text: str) -> set[str]:
    return {w.strip(".,;:'’\"()") for w in _NAME.findall(text)} - NOT_NAMES


def unresolved_subject(question: str, reference: str, doc_text: str, start: int, end: int) -> bool:
    """Whether the evidence sentence ``doc_text[start:end]`` has a pronoun subject that the question
    leaves unresolved: neither the question nor the reference names anything the document names before
    it (in the 300 characters before, or its first 100: the sentence the pronoun refers back to, or the
    document's opening name). A 1.5B writer given
    "He drew all illustrations to ... Tom Sawyer" asks who drew them and answers "Tom Sawyer"; given
    "It is 84.5 km in diameter" it asks for the diameter of the Earth. A paragraph that opens with a
    pronoun names its subject nowhere, so such a sentence always fails."""
    sentence = doc_text[start:end]
    if not _PRONOUN_SUBJECT.match(sentence):
        return False
    # The whole question: its opening word may be the name ("Cadmium Chloride is ..."); NOT_NAMES drops "What".
    asked = _names(question) | _names(reference)
    before = _names(doc_text[max(0, start - 300):start]) | _names(doc_text[:min(100, start)])
    # The reference may name the referent ("Who drew ...?" -> the name the sentence before gives). Names
    # are compared word by word ("Jamaal Charles" in the question, "Charles" before).
    return not ({w for n in asked for w in n.split()} & {w for n in before for w in n.split()})


_ORDINAL = "|".join(ORDINALS) + r"|\d+(?:st|nd|rd|th)"
# An ordinal that picks one of a series ("the first installment", "Kansas's fourth live album"), not an adverb
# ("Who was born first?") nor "the first time".
_ATTRIBUTIVE_ORDINAL = re.compile(rf"\b(?:the|its|his|her|their|an?|[\w'’]+['’]s)\s+({_ORDINAL})\s+(?!time\b)[a-z]",
                                  re.I)


def _ordinal_forms(ordinal: str) -> set[str]:
    """The ways a text may state an ordinal: "second" and "2nd"; "first" also as "debut", "inaugural" ..."""
    word = ordinal.lower()
    n = ORDINALS.index(word) + 1 if word in ORDINALS else int(re.match(r"\d+", word).group(0))
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    forms = {f"{n}{suffix}"} | ({ORDINALS[n - 1]} if n <= len(ORDINALS) else set())
    return forms | ({"debut", "inaugural", "maiden", "earliest", "original", "founding"} if n == 1 else set())


def unstated_ordinal(question: str, evidence: str) -> str | None:
    """The first ordinal the question uses to pick one of a series that its evidence never states, else None.

    The writer saw only the evidence, so such an ordinal is its misreading: "What is the name of the first
    installment of the Child's Play series?" -> "Seed of Chucky", of "Seed of Chucky is ... the fifth installment"."""
    text = evidence.lower()
    for m in _ATTRIBUTIVE_ORDINAL.finditer(question):
        if not any(re.search(rf"\b{f}\b", text) for f in _ordinal_forms(m.group(1))):
            return m.group(1)
    return None


_POSSESSIVE = re.compile(r"(?P<owner>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*)['’]s\s+"
                         r"(?P<rel>[a-z]+(?:\s+[a-z]+)?)\b")


def inverted_relation(question: str, reference: str, evidence: str) -> bool:
    """Whether the question asks for "X's <relation>" while its evidence says X is the <relation> of the
    reference: the writer turned the relation round ("Who was Beatrice Helen Beckett's first wife?" ->
    "Anthony Eden", of "Beatrice Helen Beckett ... was the first wife of the British statesman Anthony Eden")."""
    ref = content_tokens(reference)[:2]
    low = evidence.lower()
    for m in _POSSESSIVE.finditer(question):
        owner = m.group("owner").split()[-1].lower()
        for rel in dict.fromkeys((m.group("rel"), m.group("rel").split()[0])):
            at = low.find(f"the {rel} of ")
            if at < 0 or owner not in low[:at]:
                continue
            after = content_tokens(evidence[at + len(rel) + 8: at + len(rel) + 8 + 80])
            if ref and all(t in after for t in ref):
                return True
    return False


#: Every family of rules :func:`check_sample` runs, in order -> the reason it rejects under
#: (:data:`gen.report.REASONS`). ``gates.families_off`` switches families off by these names; ``verbatim`` is not one
#: (the evidence must be in its document for the other gates to read it).
FAMILIES: dict[str, str] = {
    "deictic": "not_self_contained",           # _DEICTIC: "according to the passage", "this study"
    "pronoun_start": "not_self_contained",     # _PRONOUN_START: "It ...", "They ..."
    "unnamed_thing": "not_self_contained",     # _UNNAMED: "the band", "the town", "on board"
    "unnamed_setting": "not_self_contained",   # _UNNAMED_SETTING: "the study", "the patients", "the two groups"
    "names_nothing": "not_self_contained",     # names_nothing: no name, number or quote after the wh-word
    "short": "not_self_contained",             # fewer than gates.min_question_words words
    "definition": "definition",                # definition_question (gates.definitions=true also lets them in)
    "support": "unsupported",                  # support_ratio below gates.min_support, or an empty reference
    "example_value": "example_value",          # gen.grounding.example_answer: an example URL, host or placeholder
    "unstated_default": "unstated_default",    # gen.grounding.unstated_default: a default read off an example
    "unstated_ordinal": "unstated_ordinal",
    "inverted_relation": "inverted_relation",
    "empty_reference": "empty_reference",      # a reference without a content word, yes or no aside
    "restated": "restated",
    "unresolved_subject": "unresolved_subject",
    "copy": "trivial",                         # copy_ratio above gates.max_copy
    "gives_away": "trivial",                   # the question holds every content word of its reference
    "high_overlap": "high_overlap",            # gates.max_overlap (None: no cap)
    **{family: "wrong_kind" for family in KIND_FAMILIES},  # gen.kinds (gates.kind_check)
}
_SELF_CONTAINED = ("deictic", "pronoun_start", "unnamed_thing", "unnamed_setting", "names_nothing",
                   "short")
_QUESTION_TESTS: tuple[tuple[str, Callable[[str, GateConfig], bool]], ...] = (
    ("deictic", lambda q, cfg: bool(_DEICTIC.search(q))),
    ("pronoun_start", lambda q, cfg: bool(_PRONOUN_START.match(q))),
    ("unnamed_thing", lambda q, cfg: bool(_UNNAMED.search(q))),
    ("unnamed_setting", lambda q, cfg: bool(_UNNAMED_SETTING.search(q))),
    ("names_nothing", lambda q, cfg: names_nothing(q)),
    ("short", lambda q, cfg: len(q.split()) < cfg.min_question_words),
    ("definition", lambda q, cfg: not cfg.definitions and definition_question(q)),
)


def question_reason(question: str, cfg: GateConfig) -> str | None:
    """The reason of the first question-only family (:data:`_QUESTION_TESTS`: self-contained, definition) that
    rejects ``question``, or None. These read the question alone, and :func:`check_sample` runs them first after
    the verbatim check (which evidence made of the corpus's own units always passes), so a question they reject
    is rejected whatever its answer says."""
    q, off = question.strip(), set(cfg.families_off)
    return next((FAMILIES[f] for f, test in _QUESTION_TESTS if f not in off and test(q, cfg)), None)


# The opening of a writer's reply, up to the end of its question's string: {"question": "...",
_QUESTION_FIELD = re.compile(r'\s*\{\s*"question"\s*:\s*"((?:[^"\\]|\\.)*)"')
# ... or, laid out as lines (metrics.llm.lines), up to the end of its question's line: question: ...\n
_QUESTION_LINE = re.compile(r"\s*question[ \t]*:[ \t]?([^\n]*)\n", re.IGNORECASE)


class QuestionStop:
    """A :class:`~metrics.llm.base.StopRule` for a writer whose reply opens with its question
    (``{"question": "...", "answer": ...}``, or its ``question: ...`` line): it ends the reply as soon as the question's string is closed and
    :func:`question_reason` rejects it, so the model does not write the answer of a question the gates will
    throw away. What the gates decide is unchanged: the stopped draft meets the same gates and is rejected
    under the same reason."""

    def __init__(self, cfg: GateConfig, kind: tuple[str, tuple[str, ...], str | None] | None = None) -> None:
        self.cfg, self.kind = cfg, kind
        # What the question tests read besides the question; the cache re-checks a stored stopped reply with the
        # rule of the day, so a changed test cannot replay a stop it would not make.
        self.name = (f"gen.question_gates:min_words={cfg.min_question_words},definitions={cfg.definitions},"
                     f"off={','.join(sorted(set(cfg.families_off) & {f for f, _ in _QUESTION_TESTS}))}")
        if kind is not None:  # the kind and sentences are in the call's messages; the families off are not
            self.name += f"+kind:v1,off={','.join(sorted(set(cfg.families_off) & set(KIND_FAMILIES)))}"

    def with_kind(self, kind: str, sentences: Sequence[str], bridge: str | None = None) -> QuestionStop:
        """The rule that also stops a question the kind check (``gates.kind_check``) rejects whatever its answer
        (:func:`gen.kinds.question_kind_problems`: a comparison that names one thing, a multi_hop question that
        names its bridge). The stopped draft is rejected under :meth:`reason`'s reason: the gates would meet its
        missing answer before the kind check."""
        return QuestionStop(self.cfg, (kind, tuple(sentences), bridge)) if self.cfg.kind_check else self

    def reason(self, question: str) -> str | None:
        """Why a question is rejected whatever its answer, or None: a question-only family's reason first (as
        :func:`check_sample` runs them first), then the kind check's."""
        if (why := question_reason(question, self.cfg)) is not None or self.kind is None:
            return why
        kind, sentences, bridge = self.kind
        off = set(self.cfg.families_off)
        return next((FAMILIES[f] for f, _ in question_kind_problems(kind, question.strip(), sentences, bridge)
                     if f not in off), None)

    @staticmethod
    def question(text: str) -> str | None:
        """The question of a reply whose question string (or line) is closed (``text`` may stop anywhere after it)."""
        if (line := _QUESTION_LINE.match(text)) is not None:
            return line.group(1).strip()
        m = _QUESTION_FIELD.match(text)
        if m is None:
            return None
        try:
            return str(json.loads(f'"{m.group(1)}"'))
        except ValueError:
            return None

    def __call__(self, text: str) -> bool:
        question = self.question(text)
        return question is not None and self.reason(question) is not None


def _failures(sample: TestSample, corpus: Corpus, cfg: GateConfig) -> Iterator[tuple[str, str]]:
    """The families ``sample`` fails, lazily and in order, as (family, reason); families in ``cfg.families_off`` are
    skipped. A failed verbatim check ends it (the other gates could not read the evidence)."""
    if reason := verbatim(sample, corpus):
        yield "verbatim", reason
        return
    q, ref, off = sample.question.strip(), sample.reference, set(cfg.families_off)
    for family, test in _QUESTION_TESTS:
        if family not in off and test(q, cfg):
            yield family, FAMILIES[family]
    if sample.kind == UNANSWERABLE_KIND and not sample.evidence:
        return
    ev = evidence_text(sample, corpus)
    tests: tuple[tuple[str, Callable[[], object]], ...] = (
        ("support", lambda: not ref.strip() or support_ratio(ref, ev) < cfg.min_support),
        # a code answer's reference is its code block, which is example text for every other question
        ("example_value", lambda: sample.provenance.get("style") != "code_answer" and bool(example_answer(
            q, ref, [(corpus.get(sp.doc_id), sp.start, sp.end) for sp in sample.evidence]))),
        ("unstated_default", lambda: sample.provenance.get("style") != "code_answer" and unstated_default(
            ref, [(corpus.get(sp.doc_id), sp.start, sp.end) for sp in sample.evidence], q)),
        ("unstated_ordinal", lambda: unstated_ordinal(q, ev)),
        ("inverted_relation", lambda: inverted_relation(q, ref, ev)),
        ("empty_reference", lambda: not content_tokens(ref) and not _YES_NO.fullmatch(ref.strip())),
        ("restated", lambda: restates(q, ref)),
        # Every evidence sentence: the question may be about one and its answer in another ("Where did
        # Shakespeare appear in ...?" from "He has also appeared on stage in ..." and "It is located in ...").
        ("unresolved_subject", lambda: any(unresolved_subject(q, ref, corpus.get(sp.doc_id).text, sp.start, sp.end)
                                           for sp in sample.evidence)),
        ("copy", lambda: copy_ratio(q, ev) > cfg.max_copy),
        ("gives_away", lambda: gives_away(q, ref)),
        ("high_overlap", lambda: cfg.max_overlap is not None and (o := evidence_overlap(sample, corpus)) is not None
         and o.share > cfg.max_overlap),
    )
    for family, test in tests:
        if family not in off and test():
            yield family, FAMILIES[family]
    if cfg.kind_check:
        for family, _ in kind_problems(sample.kind, q, ref,
                                       [corpus.get(s.doc_id).text[s.start:s.end] for s in sample.evidence],
                                       sample.provenance.get("bridge")):
            if family not in off:
                yield family, FAMILIES[family]


def check_sample(sample: TestSample, corpus: Corpus, cfg: GateConfig) -> str | None:
    """The per-sample gates, in order: verbatim, self-contained, definition, answerability, unstated ordinal,
    inverted relation, empty reference, restated, unresolved subject, trivial, overlap cap, kind (:data:`FAMILIES`).
    The reason of the first that rejects ``sample``, or None. An ``unanswerable`` sample (no evidence) gets
    the self-contained gate here; its absence gate is :class:`gen.absence.AbsenceCheck`."""
    return next((reason for _, reason in _failures(sample, corpus, cfg)), None)


def all_reasons(sample: TestSample, corpus: Corpus, cfg: GateConfig) -> list[tuple[str, str]]:
    """Every family of :data:`FAMILIES` that rejects ``sample`` (not only the first), as (family, reason) in
    :func:`check_sample`'s order: the audit of which family catches what alone (benchmarks/gate_audit.py)."""
    return list(_failures(sample, corpus, cfg))


def check_families(off: Iterable[str]) -> tuple[str, ...]:
    """``gates.families_off`` as a tuple, or :class:`InputError` naming the unknown families."""
    names = tuple(off)
    if unknown := [f for f in names if f not in FAMILIES]:
        raise InputError(f"gates.families_off: unknown gate families {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(FAMILIES)}")
    return names
