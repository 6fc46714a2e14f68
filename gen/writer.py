"""Question writers: turn a :class:`~gen.candidates.Candidate` into a question and reference.

A writer never chooses evidence offsets: it receives sentence units and says which of them
its answer needs, so the spans written to the test set are the units' own spans.

:class:`LLMWriter` makes one call per candidate (question, answer and the sentence numbers
used, in one JSON object, schema-constrained where the backend supports it). An ``unanswerable``
candidate gets a prompt of its own (:data:`gen.prompts.WRITE_UNANSWERABLE`: a question on the
sentences' subject that they do not answer); its reference is fixed and it keeps no evidence. A broken reply
gets one repair from :mod:`metrics.llm.base`; if that fails too the candidate is rejected as
``write_failed`` and replaced, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragsweep.gen.candidates import Candidate
from ragsweep.gen.followup import (
    WRITE_FOLLOW_UP,
    FollowUpInput,
    FollowUpOutput,
    follow_up_info,
)
from ragsweep.gen.gates import QuestionStop
from ragsweep.gen.chunking import sentence_spans
from ragsweep.gen.grounding import (
    asks_earlier_step,
    claims_pointed,
    leaks,
    prompt_terms,
    states_reason,
    unseen_values,
    unstated_ask,
)
from ragsweep.gen.prompts import (
    WRITE_QUESTION,
    WRITE_UNANSWERABLE,
    UnanswerableInput,
    UnanswerableOutput,
    WriteInput,
    WriteOutput,
)
from ragsweep.gen.style_checks import names_item, one_of_list, whole_list
from ragsweep.gen.style_prompts import (
    STYLE_PROMPTS,
    WRITE_AVOID,
    CodeQuestion,
    StyleInput,
)
from ragsweep.gen.styles import DOC_STYLES, code_reference
from ragsweep.gen.units import Unit
from ragsweep.metrics import (
    LLM,
    UNANSWERABLE,
    Completion,
    JudgeError,
    Prompt,
    Usage,
    complete,
    content_words,
    lines_prompt,
    supports_lines,
    supports_stop,
)

TWO_SENTENCE_KINDS = ("multi_hop", "comparative")
#: A styled answer must hold at least this many content words its question does not, else it restates it (one:
#: an option's answer may be one name).
MIN_NEW_ANSWER_WORDS = 1
# Heading words that name no product or feature ("Usage", "Getting started"): a question that shares only these
# with the section's titles has not said what it is about.
_GENERIC_TITLE_KEYS = frozenset(content_words(
    "usage example examples overview introduction intro install installation installing quickstart quick start "
    "getting started features guide tutorial documentation docs notes basic basics advanced more reference recap "
    "summary details setup about first steps readme index contents help"))


def names_its_place(question: str, section: str) -> bool:
    """Whether a documentation question shares a content word with the titles over its text (the document's
    name first: :func:`gen.styles.named_path`), generic heading words left out: "What happens when a class
    receives unknown parameters?" over "Dataclasses JSON > Undefined fields" says of what product nowhere.
    True when the titles hold no such word (nothing to name)."""
    place = set(content_words(section)) - _GENERIC_TITLE_KEYS
    return not place or bool(place & set(content_words(question)))


class WriteFailed(Exception):
    """The writer could not produce a usable question for this candidate; ``reason`` is the report's key
    (:data:`gen.report.REASONS`) it is counted under."""

    def __init__(self, message: str, reason: str = "write_failed") -> None:
        super().__init__(message)
        self.reason = reason


_TERMS: dict[tuple[str, str], frozenset[str]] = {}


def _terms(prompt: Prompt[Any, Any]) -> frozenset[str]:
    key = (prompt.name, prompt.version)
    if key not in _TERMS:
        _TERMS[key] = prompt_terms(prompt.instruction, prompt.examples)
    return _TERMS[key]


def check_grounding(prompt: Prompt[Any, Any], question: str, answer: str, seen: str) -> None:
    """Refuse a question or answer that takes a value from ``prompt`` rather than from what the writer was
    shown (``seen``; :func:`gen.grounding.leaks`): the model copied its instruction or example."""
    if copied := leaks(f"{question} {answer}", _terms(prompt), seen):
        raise WriteFailed(f"takes {', '.join(dict.fromkeys(copied))} from the prompt, not from its text",
                          "prompt_leak")


@dataclass
class Draft:
    """A written question with its reference answer and the units it relies on."""

    question: str
    reference: str
    evidence: tuple[Unit, ...]
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    provenance: dict[str, Any] = field(default_factory=dict)  # added to the sample's (e.g. an unanswerable swap)
    # The reason of the stop rule that ended its write after the question (gen.gates.QuestionStop.reason): with no
    # answer written, the gates would meet the missing answer before what rejected the question.
    stopped: str | None = None


class Writer(Protocol):
    kinds: tuple[str, ...]
    styles: tuple[str, ...]  # the documentation styles it writes (gen.styles)
    model_id: str
    backend: str
    prompt_version: str

    async def write(self, cand: Candidate, topics: list[str], persona: str | None = None,
                    style: str | None = None) -> Draft: ...


def pick_evidence(cand: Candidate, used: list[int]) -> tuple[Unit, ...]:
    """The units the answer relies on: every shown unit for two-sentence kinds; otherwise the
    candidate's required unit plus any other shown unit the model says it used (1-based)."""
    if cand.kind in TWO_SENTENCE_KINDS:
        return cand.shown
    picked = {i - 1 for i in used if isinstance(i, int) and 1 <= i <= len(cand.shown)} | set(cand.required)
    return tuple(cand.shown[i] for i in sorted(picked))


class _Stopping:
    """``llm`` with a stop rule (:class:`metrics.llm.base.StopRule`) on every call, for
    :func:`metrics.prompts.core.complete`, which passes none."""

    def __init__(self, llm: LLM, stop: QuestionStop | _StyleStop) -> None:
        self.llm, self.stop = llm, stop

    @property
    def model_id(self) -> str:
        return self.llm.model_id

    def identity(self) -> dict[str, Any]:
        return self.llm.identity()

    async def complete(self, messages: Any, schema: Any = None, **kwargs: Any) -> Completion:
        return await self.llm.complete(messages, schema, stop=self.stop, **kwargs)  # type: ignore[call-arg]


def _question_refusal(prompt: Prompt[Any, Any], question: str, section: str, seen: str,
                      texts: list[str], conditions: bool = True) -> WriteFailed | None:
    """Why a documentation question is refused before its answer is read, or None: it takes a value from the
    prompt (:func:`check_grounding`), names nothing of its titles (:func:`names_its_place`), or asks "why" or
    "what happens" of text that does not say (:func:`gen.grounding.unstated_ask`)."""
    try:
        check_grounding(prompt, question, "", seen)
    except WriteFailed as exc:
        return exc
    if not names_its_place(question, section):
        return WriteFailed("the question names neither the product nor anything its section's titles name")
    if asked := unstated_ask(question, texts, conditions):
        return WriteFailed(f"asks '{asked}' and its text does not say", "unstated_ask")
    return None


class _StyleStop:
    """The stop rule of a documentation style's reply: it ends the reply as soon as its question string is closed
    and the writer would refuse it (``refusal``: :func:`_question_refusal`) or the question gates reject it
    (``gates``, None when they do not judge this candidate's question as written), so its answer is never
    generated. What it reads besides the reply (the prompt, the text shown) is in the call's messages."""

    def __init__(self, refusal: Callable[[str], WriteFailed | None], gates: QuestionStop | None) -> None:
        self.refusal, self.gates = refusal, gates
        self.name = "gen.style_question:v1" + (f"+{gates.name}" if gates is not None else "")

    def __call__(self, text: str) -> bool:
        question = QuestionStop.question(text)
        if question is None:
            return False
        return self.refusal(question.replace("`", "").strip()) is not None or (
            self.gates is not None and self.gates(text))


def list_answer(cand: Candidate, question: str, reference: str, evidence: tuple[Unit, ...]) -> tuple[Unit, ...]:
    """The evidence of an answer drawn from a list shown whole after its lead-in (``cand.items``,
    :func:`gen.structure.list_evidence`): the lead-in and every item when the reference gives the whole list, the
    lead-in and the item when the question names the item it asks about, added to ``evidence`` as picked. Raises :class:`WriteFailed` when the
    question asks for the list as a whole and the reference is part of it (:func:`gen.style_checks.one_of_list`:
    "What extra fields does the log include?" -> one field of seven), a wrong reference no gate would see."""
    if not cand.items:
        return evidence
    items = [cand.shown[k].text for k in cand.items]
    if one_of_list(question, reference, items):
        raise WriteFailed("the question asks for a whole list and its reference is only part of it")
    wanted = list(cand.items) if whole_list(reference, items) else [k for k in cand.items
                                                                   if names_item(question, cand.shown[k].text)]
    if not wanted:
        return evidence
    picked = {(u.start, u.end): u for u in (*evidence, cand.shown[0], *(cand.shown[k] for k in wanted))}
    return tuple(sorted(picked.values(), key=lambda u: u.start))


class LLMWriter:
    """Writes every kind with an :class:`~metrics.llm.base.LLM` (one call per candidate).

    Args:
        llm: The model (usually a :class:`~metrics.llm.CachedLLM`).
        prompt: The typed prompt; its version goes into every sample's provenance.
        max_tokens: Cap on generated tokens per call (the JSON is ~40-80 tokens); None: the
            prompt's own (160 for :data:`~gen.prompts.WRITE_QUESTION`).
    """

    kinds = ("single_hop", "multi_hop", "comparative", "conditional", "unanswerable", "follow_up")
    styles = DOC_STYLES
    #: It is shown a list item whole, and a list after its lead-in (gen.structure.structured).
    shows_items = True

    def __init__(self, llm: LLM, prompt: Prompt[WriteInput, WriteOutput] = WRITE_QUESTION,
                 max_tokens: int | None = None) -> None:
        self.llm, self.prompt = llm, prompt
        self.unanswerable_prompt = WRITE_UNANSWERABLE
        self.max_tokens = prompt.max_tokens if max_tokens is None else max_tokens
        self.model_id = llm.model_id
        self.backend = str(llm.identity().get("backend", type(llm).__name__))
        self.prompt_version = f"{prompt.name}@{prompt.version}"
        self.usage = Usage()
        self.calls = 0
        # A model held to the lines layout by grammar is asked for lines, which it writes in fewer tokens than JSON
        # (metrics.llm.lines); any other is asked for JSON.
        lined = supports_lines(llm)
        self._as_written = {p.name: lines_prompt(p) if lined else p for p in (prompt, self.unanswerable_prompt)}
        self.prompt_version = f"{prompt.name}@{self._as_written[prompt.name].version}"
        # Per candidate, the rule that ends a reply whose question the gates will reject (gen.gates.QuestionStop);
        # set by the generator, used only with a model that streams (metrics.llm.base.supports_stop).
        self.stop_for: Callable[[Candidate], QuestionStop | None] | None = None

    def _stop(self, cand: Candidate) -> QuestionStop | None:
        return self.stop_for(cand) if self.stop_for is not None and supports_stop(self.llm) else None

    async def _complete(self, prompt: Prompt[Any, Any], data: Any, max_tokens: int | None,
                        stop: QuestionStop | _StyleStop | None) -> Completion:
        """One call of ``prompt`` (:func:`metrics.prompts.core.complete`), ended early by ``stop``."""
        prompt = self._as_written.get(prompt.name, prompt)
        return await complete(self.llm if stop is None else _Stopping(self.llm, stop), prompt, data,
                              max_tokens=max_tokens)

    async def write(self, cand: Candidate, topics: list[str], persona: str | None = None,
                    style: str | None = None) -> Draft:
        if cand.kind == "unanswerable":
            return await self._unanswerable(cand, topics, persona, style)
        if cand.kind == "follow_up":
            return await self._follow_up(cand, topics, persona, style)
        if cand.style in STYLE_PROMPTS:
            return await self._styled(cand, topics, persona)
        data = WriteInput(kind=cand.kind, sentences=[u.text for u in cand.shown], topics=topics,  # type: ignore[arg-type]
                          persona=persona, style=style)
        self.calls += 1
        stop = self._stop(cand)
        if stop is not None and cand.kind in TWO_SENTENCE_KINDS:  # also a comparison that names one thing, ...
            stop = stop.with_kind(cand.kind, data.sentences, cand.bridge)
        try:
            done = await self._complete(self.prompt, data, self.max_tokens, stop)
        except JudgeError as exc:
            raise WriteFailed(str(exc)) from exc
        self.usage = self.usage + done.usage
        if done.stopped and stop is not None:  # its question fails whatever its answer: none was written
            question = QuestionStop.question(done.text) or ""
            return Draft(question, "", pick_evidence(cand, []), done.usage, done.cached,
                         provenance={"stopped": True}, stopped=stop.reason(question))
        out: WriteOutput = done.parsed
        question, answer = out.question.strip(), out.answer.strip()
        if not question or not answer:
            raise WriteFailed("empty question or answer")
        check_grounding(self.prompt, question, answer, " ".join([*data.sentences, *topics]))
        evidence = list_answer(cand, question, answer, pick_evidence(cand, out.used))
        return Draft(question, answer, evidence, done.usage, done.cached)

    async def _unanswerable(self, cand: Candidate, topics: list[str], persona: str | None,
                            style: str | None) -> Draft:
        """A question on the candidate's topic that its sentences leave open (:data:`WRITE_UNANSWERABLE`);
        no evidence, and the reference :data:`metrics.refusal.UNANSWERABLE` whatever the model says."""
        data = UnanswerableInput(sentences=[u.text for u in cand.shown], topics=topics, persona=persona, style=style)
        self.calls += 1
        stop = self._stop(cand)
        try:
            done = await self._complete(self.unanswerable_prompt, data,
                                        min(self.max_tokens, self.unanswerable_prompt.max_tokens), stop)
        except JudgeError as exc:
            raise WriteFailed(str(exc)) from exc
        self.usage = self.usage + done.usage
        prompt = f"{self.unanswerable_prompt.name}@{self._as_written[self.unanswerable_prompt.name].version}"
        if done.stopped and stop is not None:
            question = QuestionStop.question(done.text) or ""
            return Draft(question, UNANSWERABLE, (), done.usage, done.cached,
                         provenance={"prompt": prompt, "stopped": True}, stopped=stop.reason(question))
        out: UnanswerableOutput = done.parsed
        question = out.question.strip()
        if not question:
            raise WriteFailed("empty question")
        return Draft(question, UNANSWERABLE, (), done.usage, done.cached,
                     provenance={"prompt": prompt, "missing": out.missing.strip()[:200]})

    async def _follow_up(self, cand: Candidate, topics: list[str], persona: str | None, style: str | None) -> Draft:
        """A first question of sentence [1] and a follow-up of sentence [2] that needs it, in one call
        (:data:`gen.followup.WRITE_FOLLOW_UP`); the first turn goes into the provenance (``follow_up``)."""
        data = FollowUpInput(sentences=[u.text for u in cand.shown], topics=topics, persona=persona, style=style)
        self.calls += 1
        try:
            done = await complete(self.llm, WRITE_FOLLOW_UP, data,
                                  max_tokens=max(self.max_tokens, WRITE_FOLLOW_UP.max_tokens))
        except JudgeError as exc:
            raise WriteFailed(str(exc)) from exc
        self.usage = self.usage + done.usage
        out: FollowUpOutput = done.parsed
        texts = [t.strip() for t in (out.first_question, out.first_answer, out.follow_up, out.answer, out.subject,
                                     out.standalone)]
        if not all(texts):
            raise WriteFailed("an empty question, answer, subject or standalone question")
        info = follow_up_info(texts[0], texts[1], cand.shown[:1], texts[4], texts[5])
        return Draft(texts[2], texts[3], cand.shown[1:2], done.usage, done.cached,
                     provenance={"prompt": f"{WRITE_FOLLOW_UP.name}@{WRITE_FOLLOW_UP.version}", "follow_up": info})

    async def _styled(self, cand: Candidate, topics: list[str], persona: str | None) -> Draft:
        """A documentation style's question (:mod:`gen.styles`, :data:`gen.style_prompts.STYLE_PROMPTS`). A
        ``code_answer`` question's reference is its code block's code and its evidence the whole block. The
        writer is shown the titles over the text, the document's name first, and the product its page documents
        when the corpus says (:mod:`gen.products`); a question that names none of the titles, takes a value from
        the prompt or asks what its text does not say is refused here (:func:`_question_refusal`), before the
        round trip spends a call on it, and with a model that streams as soon as the question is written
        (:class:`_StyleStop`). Whether it names its product is the gates' to check (``gates.product``)."""
        texts = [u.text for u in cand.shown]
        # a warning that gives no reason is asked what to avoid, not why (gen.grounding.unstated_ask); an error's
        # text that gives no cause still gives its fix ("How do I fix ...?"), and a "why" of it is refused below
        prompt = (WRITE_AVOID if cand.warning and not states_reason(texts, conditions=False)
                  else STYLE_PROMPTS[str(cand.style)])
        section = " > ".join(cand.section) or (topics[-1] if topics else "")
        data = StyleInput(product=cand.product, section=section, sentences=texts, persona=persona)
        seen = " ".join([section, cand.product or "", *texts])

        def refusal(question: str) -> WriteFailed | None:
            return _question_refusal(prompt, question, section, seen, texts, not cand.warning)

        stop = _StyleStop(refusal, self._stop(cand)) if supports_stop(self.llm) else None
        self.calls += 1
        try:
            done = await self._complete(prompt, data, max(self.max_tokens, prompt.max_tokens), stop)
        except JudgeError as exc:
            raise WriteFailed(str(exc)) from exc
        self.usage = self.usage + done.usage
        provenance: dict[str, Any] = {"prompt": f"{prompt.name}@{prompt.version}"}
        # A user types a name, not its inline-code marks: the 1.5B wrote `SecurityScopes` as in the docs' source.
        question = (QuestionStop.question(done.text) or "" if done.stopped else done.parsed.question).replace("`", "").strip()
        if question and (refused := refusal(question)) is not None:
            raise refused
        if done.stopped:  # the question gates reject it: no answer written, the gates reject it as before
            return Draft(question, "", pick_evidence(cand, []), done.usage, done.cached, {**provenance, "stopped": True})
        if isinstance(done.parsed, CodeQuestion):
            code = _code_evidence(cand, question, f"{section} {cand.product or ''}")
            return Draft(question, code_reference(code.text), (code,), done.usage, done.cached, provenance)
        answer = done.parsed.answer.strip()
        if not question or not answer:
            raise WriteFailed("empty question or answer")
        check_grounding(prompt, "", answer, seen)
        if len(set(content_words(answer)) - set(content_words(question))) < MIN_NEW_ANSWER_WORDS:
            # "How can I use dataclasses for validation?" -> "Use dataclasses for validation": no answer
            raise WriteFailed("the answer restates the question")
        if added := unseen_values(answer, f"{seen} {question}"):
            raise WriteFailed(f"the answer adds {', '.join(dict.fromkeys(added))}, which its text does not hold",
                              "unseen_value")
        evidence = list_answer(cand, question, answer, pick_evidence(cand, done.parsed.used))
        _check_pointers(cand, question, answer, evidence, f"{section} {cand.product or ''}")
        return Draft(question, answer, evidence, done.usage, done.cached, provenance)


def _code_evidence(cand: Candidate, question: str, names: str) -> Unit:
    """A code answer's block, when the question asks for what its lead-in's last sentence introduces (the block
    that follows the cue), not for an earlier sentence's step (:func:`gen.grounding.asks_earlier_step`)."""
    k = cand.required[0]
    code = cand.shown[k]
    if not question:
        raise WriteFailed("empty question")
    lead = [u.text[s:e] for u in cand.shown[:k] for s, e in sentence_spans(u.text)]
    if asks_earlier_step(question, lead, code.text, names):
        raise WriteFailed("the question asks for an earlier step than the code its text leads into", "earlier_step")
    return code


def _check_pointers(cand: Candidate, question: str, answer: str, evidence: tuple[Unit, ...], names: str) -> None:
    """Refuses a reference that claims what its evidence only points to (:func:`gen.grounding.claims_pointed`)."""
    if not cand.pointers:
        return
    where = {(cand.shown[k].start, cand.shown[k].end): t for k, t in cand.pointers}
    used = [u.text for u in evidence]
    pointers = [(i, where[(u.start, u.end)]) for i, u in enumerate(evidence) if (u.start, u.end) in where]
    if (target := claims_pointed(question, answer, used, pointers, names)) is not None:
        raise WriteFailed(f"the reference misuses what its text only points to ({target})", "points_elsewhere")
