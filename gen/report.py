"""The report of a generation run: what the gates rejected and why (:data:`REASONS`), what was accepted,
and the lines the end-of-run summary prints."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from ragsweep.gen.testset import UNANSWERABLE_KIND
from ragsweep.gen.wording import HUMAN_OVERLAP

FACT = "fact"  # the style of a question asked of no cue (gen.styles)

REASONS: dict[str, str] = {
    "write_failed": "the writer produced no usable output (model error, broken JSON after one repair)",
    "prompt_leak": "the question or reference holds a value or name of the writer's prompt (its instruction or its "
                   "example) that the text it was shown does not: copied, not read (gen.grounding.leaks)",
    "unstated_ask": "a documentation question asks 'why' or 'what happens' and its text gives no reason or "
                    "consequence (a warning that only says what not to do; gen.grounding.unstated_ask)",
    "unseen_value": "a documentation reference holds a value (a number, an identifier) its text does not: added "
                    "detail (gen.grounding.unseen_values)",
    "points_elsewhere": "a documentation reference claims what its text only points to ('See the [guide](...) "
                        "to ...') without naming the link, or names the link for a question that asks for none "
                        "of what the text says the link is for (gen.grounding.claims_pointed)",
    "earlier_step": "a code answer's question asks for what an earlier sentence of its lead-in says, not for what "
                    "the sentence that introduces the block does (gen.grounding.asks_earlier_step)",
    "example_value": "the reference answers with a value its evidence gives only as an example (an example URL or "
                     "host, a placeholder, a 'for example' clause, an example block; gen.grounding.example_answer)",
    "evidence_not_verbatim": "an evidence span is not found verbatim in its document",
    "unsupported": "the reference answer is not supported by its evidence (lexical support below threshold)",
    "not_self_contained": "the question points at an unseen text ('according to the passage', 'this study') or at a "
                          "thing it does not name ('the town', 'the band', 'on board')",
    "trivial": "the question copies its evidence, or gives its own answer away (a choice, 'A or B?', may name it)",
    "empty_reference": "the reference names nothing: a pronoun ('He') or stop words only (a yes or no is an answer)",
    "unresolved_subject": "the evidence sentence's subject is a pronoun ('He drew all the illustrations ...') and "
                          "the question names nobody the document names before it, so it may pin the fact on "
                          "another name in the sentence",
    "follow_up_self_contained": "follow_up: the second turn names its subject, or has no pronoun or ellipsis that "
                                "refers to the first turn, so it needs no history (gen.followup)",
    "unnamed_product": "a corpus of several products: the question names neither the product it asks about nor "
                       "its folder (gates.product=refuse; gen.products)",
    "unnamed_row": "a question of one table row that does not name the row (its first cell): it asks what the whole "
                   "table answers (gen.structure.unnamed_row)",
    "unstated_default": "the reference calls something a default, or the question asks for one, that its evidence "
                        "does not state outside an example (a value read off an example's argument, or one of "
                        "several listed values: gen.grounding.unstated_default)",
    "other_subject": "a question the writer did not name its product in asks about another project its page "
                     "links to (its site documents it), from text that does not name the product",
    "unseen_name": "a documentation question names code (an identifier, a file name) that neither its pages nor "
                   "its product hold as a whole name: a made-up subject (gen.drafts.made_up_names)",
    "antecedent_outside": "a documentation evidence sentence refers back ('these classes', 'such tests') to a "
                          "sentence of its paragraph that the evidence leaves out: the reference guessed what the "
                          "phrase means (gen.structure.cut_antecedent)",
    "announced_only": "the reference answers with a sentence that announces what follows it (a lead-in, or a "
                      "how-to's sentence before its code block) and not with what follows, which the writer was "
                      "shown (gen.structure.announced_unused)",
    "duplicate_text": "the question equals an accepted one after normalisation",
    "duplicate_embedding": "the question is a near-duplicate of an accepted one (embedding cosine)",
    "high_overlap": "the question shares more of its content words with its evidence documents than gates.max_overlap",
    "restated": "the reference holds every content word of its question: it restates a sentence instead of "
                "answering ('What was the critical success of the album Shotgun Willie?' -> 'The album Shotgun "
                "Willie (1973) was critically successful.')",
    "definition": "the question only asks who or what a named thing is ('Who was Kevin Mark DuBrow?', 'What is "
                  "Canty Bay known for?'): its reference can only restate a sentence (gates.definitions)",
    "unnamed_item": "a documentation question of one tab (card) of a row that names none of the tab's title words: it "
                    "asks what the row answers whole, or what the other tab says (gen.structure.unnamed_item)",
    "unspecific": "another document holds every content word of the question, so it does not say which document it "
                  "asks about ('When was the album released?'; gates.specific)",
    "answer_in_corpus": "unanswerable: a document naming all the question's names and numbers holds most of its words "
                        "(gates.absent_cover) or a sentence close to it (gates.absent_cosine), so it may answer it; "
                        "or the round trip answered it from the sentences its writer was shown",
    "unstated_ordinal": "the question states an ordinal its evidence does not ('the first installment' of a sentence "
                        "about 'the fifth installment'): the writer misread which one (gen.gates.unstated_ordinal)",
    "inverted_relation": "the question asks for X's relation where its evidence says X is that relation of the "
                         "reference ('Who is Jerry Van Dyke's younger brother?' -> 'Dick Van Dyke', of 'Jerry Van Dyke "
                         "... is the younger brother of Dick Van Dyke')",
    "wrong_kind": "the question is not of its kind: a multi_hop or comparative one that uses one sentence, a "
                  "conditional one without a condition (gates.kind_check; gen.kinds)",
    "roundtrip_disagrees": "answered from its evidence alone, the question gets another answer than its reference "
                           "(gates.roundtrip; gen.roundtrip)",
    "one_sentence_answers": "multi_hop, comparative: one of its two evidence sentences alone gives the reference "
                            "in the round trip, so the question does not need both (gates.roundtrip_hops)",
    "roundtrip_failed": "the round-trip call failed (model error, broken JSON after one repair)",
    "judge_unsupported": "the judge (faithfulness' claim check) finds the reference, read as the answer to the "
                         "question, supported by its evidence under its titles below gates.evidence_support "
                         "(gen.supported)",
    "support_failed": "the support check's call failed (model error, broken JSON after one repair)",
}

#: Above this mean overlap a generated set gets a warning: its questions copy their evidence.
WARN_OVERLAP = 0.85


@dataclass
class Report:
    """Counts of accepted and rejected candidates, with a few rejected examples per reason."""

    requested: int
    accepted_by_kind: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=lambda: {r: 0 for r in REASONS})
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    exhausted: list[str] = field(default_factory=list)  # kinds whose candidates ran out
    overlaps: list[float] = field(default_factory=list)  # evidence_overlap share of each accepted question
    tried_by_kind: dict[str, int] = field(default_factory=dict)  # candidates written and gated, per kind
    rejected_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> reason -> count
    # The round-trip check: questions checked and agreed, and why the others disagreed (gen.roundtrip).
    roundtrip: dict[str, int] = field(default_factory=dict)
    gave_up: dict[str, int] = field(default_factory=dict)  # kind -> candidates tried when it gave up
    # On a folder of several products: candidates each product was given in its turns (gen.products.Turns).
    tried_by_product: dict[str, int] = field(default_factory=dict)
    # The sampled documents' sentence units, and how many of them do not name their subject (gen.units).
    units: dict[str, int] = field(default_factory=dict)
    # The accepted questions' styles (gen.styles; "fact": none), and the documentation styles asked for that the
    # writer does not write, with the candidates their cues gave.
    accepted_by_style: dict[str, int] = field(default_factory=dict)
    styles_not_written: dict[str, int] = field(default_factory=dict)
    # The reword pass (gen.reword): questions reworded, and those that kept their first wording, and why.
    reworded: dict[str, int] = field(default_factory=dict)
    # The query form (gen.query_form): questions stated as claims, and those that stayed questions.
    forms: dict[str, int] = field(default_factory=dict)
    # Where the run's time went: seconds per stage (setup, write, gates, round trip), and the model calls and
    # generated tokens spent on candidates per outcome ("accepted", or the reason they were rejected for).
    seconds: dict[str, float] = field(default_factory=dict)
    spent: dict[str, dict[str, int]] = field(default_factory=dict)
    last_reason: str | None = None  # the reason of the last rejection (what the candidate's cost is counted under)
    max_examples: int = 5

    @property
    def accepted(self) -> int:
        return sum(self.accepted_by_kind.values())

    @property
    def n_rejected(self) -> int:
        return sum(self.rejected.values())

    def accept(self, kind: str, overlap: float | None = None, style: str | None = None) -> None:
        self.accepted_by_kind[kind] = self.accepted_by_kind.get(kind, 0) + 1
        self.accepted_by_style[style or FACT] = self.accepted_by_style.get(style or FACT, 0) + 1
        if overlap is not None:
            self.overlaps.append(overlap)

    def overlap(self) -> dict[str, Any]:
        """The accepted questions' overlap with their evidence documents: mean, median, count, and a
        warning when the mean is far above people's questions (None when it is not)."""
        if not self.overlaps:
            return {"mean": None, "median": None, "n": 0, "human": dict(HUMAN_OVERLAP), "warning": None}
        mean = statistics.fmean(self.overlaps)
        warning = None
        if mean > WARN_OVERLAP:
            people = " and ".join(f"{v:.2f} for {k}" for k, v in HUMAN_OVERLAP)
            warning = (f"the questions share {mean:.2f} of their content words with their evidence documents "
                       f"(people's: {people}): lexical retrieval (BM25, hybrid) may look better on this set than "
                       "on real questions. An LLM writer with gates.max_overlap keeps only questions worded "
                       "otherwise (llm=none cannot: it copies its evidence); check the ranking against a few real "
                       "questions (docs/trust/generated-test-sets.md: How far to trust a generated test set)")
        return {"mean": round(mean, 3), "median": round(statistics.median(self.overlaps), 3), "n": len(self.overlaps),
                "human": dict(HUMAN_OVERLAP), "warning": warning}

    def overlap_line(self) -> str:
        """One plain line for the end-of-run summary."""
        o = self.overlap()
        if o["mean"] is None:
            return "overlap:  no accepted question"
        people = ", ".join(f"{k} {v:.2f}" for k, v in HUMAN_OVERLAP)
        return (f"overlap:  {o['mean']:.2f} of a question's content words are in its evidence documents "
                f"(median {o['median']:.2f}; people's questions: {people})")

    def unanswerable_line(self) -> str | None:
        """One plain line on the unanswerable kind (None when none was written): how many written
        questions the gates turned down, and how many because a document may answer them."""
        tried = self.tried_by_kind.get(UNANSWERABLE_KIND, 0)
        if not tried:
            return None
        by = self.rejected_by_kind.get(UNANSWERABLE_KIND, {})
        failed = by.get("write_failed", 0)
        written = tried - failed
        found = by.get("answer_in_corpus", 0)
        share = f" ({found / written:.0%})" if written else ""
        return (f"unanswerable: {self.accepted_by_kind.get(UNANSWERABLE_KIND, 0)} accepted; of {written} written, "
                f"{found}{share} rejected because a document may answer them (answer_in_corpus), "
                f"{sum(by.values()) - failed - found} for other reasons; {failed} candidates gave no question")

    def count_roundtrip(self, outcome: str) -> None:
        """One round trip: ``agreed``, a disagreement reason of :class:`gen.roundtrip.Agreement`, or ``failed``."""
        self.roundtrip["checked"] = self.roundtrip.get("checked", 0) + 1
        self.roundtrip[outcome] = self.roundtrip.get(outcome, 0) + 1

    def checks_line(self) -> str:
        """One plain line on the kind and round-trip checks."""
        rt = self.roundtrip
        line = f"checks:   wrong_kind rejected {self.rejected.get('wrong_kind', 0)}"
        if not rt.get("checked"):
            return line + "; no round trip"
        why = ", ".join(f"{k} {v}" for k, v in rt.items() if k not in ("checked", "agreed"))
        return line + f"; round trip agreed on {rt.get('agreed', 0)} of {rt['checked']}" + (f" ({why})" if why else "")

    def time(self, stage: str, seconds: float) -> None:
        """Add ``seconds`` to a stage of the run (``setup``, ``write``, ``gates``, ``roundtrip``)."""
        self.seconds[stage] = self.seconds.get(stage, 0.0) + seconds

    def spend(self, outcome: str, calls: int, generated: int) -> None:
        """One candidate's cost (model calls, generated tokens), under ``accepted`` or its rejection reason."""
        row = self.spent.setdefault(outcome, {"candidates": 0, "calls": 0, "generated_tokens": 0})
        row["candidates"] += 1
        row["calls"] += calls
        row["generated_tokens"] += generated

    def time_line(self) -> str:
        """One plain line: seconds per stage, and the calls spent on candidates the gates or round trip rejected."""
        stages = ", ".join(f"{k} {v:.0f} s" for k, v in self.seconds.items())
        calls = {k: v["calls"] for k, v in self.spent.items()}
        wasted = sum(v for k, v in calls.items() if k != "accepted")
        total = sum(calls.values())
        line = f"time:     {stages or 'none'}"
        if total:
            line += (f"; {total} model calls, {calls.get('accepted', 0)} of them for accepted questions, {wasted} "
                     "for rejected ones")
        return line

    def reject(self, reason: str, example: dict[str, Any], kind: str | None = None) -> None:
        self.last_reason = reason
        self.rejected[reason] = self.rejected.get(reason, 0) + 1
        if kind is not None:
            by = self.rejected_by_kind.setdefault(kind, {})
            by[reason] = by.get(reason, 0) + 1
        kept = self.examples.setdefault(reason, [])
        if len(kept) < self.max_examples:
            kept.append(example)

    def message(self) -> str:
        """One plain line: what was written, and why it is short when it is."""
        line = f"accepted {self.accepted} of {self.requested} requested ({self.n_rejected} candidates rejected)"
        if self.accepted < self.requested:
            line += (f"; the corpus is exhausted: no more candidates for {', '.join(self.exhausted) or 'any kind'}"
                     f", so the test set has {self.requested - self.accepted} fewer samples than requested")
            if left := self.units.get("left_out"):
                line += (f" ({left} of its {self.units['sentences']} sentences were not asked: they do not name "
                         "their subject; gates.named_subject=false asks them)")
        elif self.exhausted:
            line += f"; candidates ran out for {', '.join(self.exhausted)}, other kinds filled their share"
        if self.gave_up:
            line += ("; gave up (max_tries_per_sample) on " + ", ".join(f"{k} after {v} candidates"
                                                                     for k, v in self.gave_up.items()))
        return line

    def to_dict(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"requested": self.requested, "accepted": self.accepted, "accepted_by_kind": self.accepted_by_kind,
                "accepted_by_style": self.accepted_by_style, "styles_not_written": self.styles_not_written,
                "rejected_total": self.n_rejected, "rejected": self.rejected,
                "tried_by_kind": self.tried_by_kind, "rejected_by_kind": self.rejected_by_kind,
                "roundtrip": self.roundtrip, "reword": self.reworded, "form": self.forms, "gave_up": self.gave_up,
                "sentence_units": self.units,
                "stage_seconds": {k: round(v, 2) for k, v in self.seconds.items()}, "spent": self.spent,
                "reasons": REASONS, "exhausted_kinds": self.exhausted, "complete": self.accepted >= self.requested,
                "message": self.message(), "overlap": self.overlap(), **(extra or {}),
                "rejected_examples": self.examples}

