"""A written draft made a test sample and put through the deterministic gates, in order (:meth:`Gating.gate`).

Before the gates, a draft's evidence may grow to hold its reference: the shown sentences the writer answered
from (:func:`_widen_evidence`), or the sentence that names the topic its reference is (:func:`_name_topic`).
A draft that passes waits for its round trip (:mod:`gen.roundtrip`) as a :class:`Passed`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from ragsweep.gen.absence import AbsenceCheck, CorpusWords, unspecific
from ragsweep.gen.candidates import Candidate
from ragsweep.gen.documents import Corpus, Span
from ragsweep.gen.followup import check_follow_up
from ragsweep.gen.gates import GateConfig, check_sample
from ragsweep.gen.grounding import claims_pointed, unseen_names
from ragsweep.gen.products import PRODUCT, Products, products, with_product
from ragsweep.gen.report import Report
from ragsweep.gen.structure import announced_unused, cut_antecedent, unnamed_item, unnamed_row
from ragsweep.gen.style_checks import pointer_target
from ragsweep.gen.styles import named_path
from ragsweep.gen.supported import headed_evidence, in_scope
from ragsweep.gen.testset import FOLLOW_UP_KIND, UNANSWERABLE_KIND, TestSample
from ragsweep.gen.units import Unit
from ragsweep.gen.wording import DuplicateFilter, content_tokens, lexical_overlap, support_ratio
from ragsweep.gen.writer import Draft, Writer
from ragsweep.metrics import UNANSWERABLE, Usage


def misused_pointer(draft: Draft, corpus: Corpus, product: str = "") -> str | None:
    """The link of a pointer sentence in ``draft``'s evidence that its reference misuses
    (:func:`gen.grounding.claims_pointed`), for every kind: a plain fact's writer reads "Be sure to check the
    [Usage] section to ..." as any sentence. The titles over the evidence and the ``product`` are the names its
    question shares with every text of its page."""
    pointers, names = [], [re.sub(r"[-_]", " ", product)]  # a folder's name ("fastapi-users") as its words
    for i, u in enumerate(draft.evidence):
        doc = corpus.get(u.doc_id) if u.doc_id in corpus else None
        if doc is None or doc.layout is None:
            continue
        names.extend(named_path(doc, doc.layout.section_path(u.start)))
        if (target := pointer_target(doc, u.start, u.end)) is not None:
            pointers.append((i, target))
    if not pointers:
        return None
    return claims_pointed(draft.question, draft.reference, [u.text for u in draft.evidence], pointers, " ".join(names))


@dataclass
class Passed:
    """A sample through the deterministic gates, waiting for its round trip."""

    sample: TestSample
    example: dict[str, Any]             # what the report keeps if it is rejected after all
    texts: tuple[str, ...]              # its evidence sentences
    reason: str | None = None           # set by the round trip when it disagrees or fails
    outcome: str | None = None          # the round trip's: "agreed", why it disagreed, or "failed"
    usage: Usage = field(default_factory=Usage)
    calls: int = 0                      # model calls its round trip (and reword pass) made
    written: Usage = field(default_factory=Usage)  # what writing it used
    section: str = ""                   # a documentation style's titles over its evidence (the round trip reads them)
    headed: tuple[str, ...] = ()        # its evidence led by the titles over it, for the support gate (gen.supported);
                                        # empty: the gate is off or does not judge this sample



def made_up_names(draft: Draft, corpus: Corpus, product: str = "") -> list[str]:
    """The code names of a documentation question that neither its evidence pages (their paths and text) nor its
    product hold (:func:`gen.grounding.unseen_names`): a made-up subject. [] for evidence off pages without a
    layout (no documentation site: a name there is any capitalised word)."""
    docs = [corpus.get(d) for d in dict.fromkeys(u.doc_id for u in draft.evidence) if d in corpus]
    if not docs or any(d.layout is None for d in docs):
        return []
    return unseen_names(draft.question, "\n".join([product, *(d.id for d in docs), *(d.text for d in docs)]))


def _widen_evidence(draft: Draft, cand: Candidate, min_support: float) -> Draft:
    """A reference its evidence does not hold but the sentences the writer was shown do: the writer
    answered from a shown sentence it did not mark as used (a 1.5B often answers from the context
    sentence before the one asked about). Its evidence gains the shown sentences that hold reference
    words, in shown order, when they bring its support to ``min_support``; otherwise it is unchanged
    (and the answerability gate rejects it)."""
    text = " ".join(u.text for u in draft.evidence)
    if support_ratio(draft.reference, text) >= min_support:
        return draft
    ref = set(content_tokens(draft.reference))
    have = {(u.doc_id, u.start) for u in draft.evidence}
    extra = [u for u in cand.shown if (u.doc_id, u.start) not in have and ref & set(content_tokens(u.text))]
    widened = tuple(u for u in cand.shown if (u.doc_id, u.start) in have or u in extra)
    if not extra or support_ratio(draft.reference, " ".join(u.text for u in widened)) < min_support:
        return draft
    return replace(draft, evidence=widened, provenance={**draft.provenance, "evidence_widened": len(extra)})


#: A sentence that refers to something without naming it in full: a pronoun, or an opening "The <noun>".
_REFERS = re.compile(r"^The [a-z]|\b(?:[Ii]t|[Ii]ts|[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Tt]hey|[Tt]heir)\b")


def _bare(name: str) -> str:
    """A name compared loosely: lower case, without a leading article or trailing punctuation."""
    return re.sub(r"^(?:the|a|an)\s+", "", name.strip().strip(".,;:\"'").lower())


def _name_topic(draft: Draft, units: dict[str, list[Unit]], topics: dict[tuple[str, int], str],
                min_support: float) -> Draft:
    """A reference that is its sentence's topic (its document's subject, or its article's in a document that glues
    several), asked of a sentence that calls the subject by part of its name, a pronoun or "The <noun>" ("Vance
    ordered the low streets ... evacuated" -> "Who ordered ...?" -> "Teodora Vance"; "The company runs two routes
    ..." -> "Calder Ferries"): the evidence gains the first sentence of that topic that names the subject in
    full, so the reference stands in its evidence. Otherwise the draft is unchanged (and the answerability
    gate rejects it)."""
    if support_ratio(draft.reference, " ".join(u.text for u in draft.evidence)) >= min_support:
        return draft
    ref = _bare(draft.reference)
    if not ref:
        return draft
    for unit in draft.evidence:
        topic = topics.get((unit.doc_id, unit.start), "")
        if _bare(topic) != ref:
            continue
        words = {w for w in re.findall(r"[A-Z][\w'’-]{2,}", topic)} - {"The"}
        if not (_REFERS.search(unit.text) or words & set(re.findall(r"[A-Z][\w'’-]{2,}", unit.text))):
            continue
        naming = next((u for u in units.get(unit.doc_id, ())
                       if topics.get((u.doc_id, u.start)) == topic and ref in u.text.lower()), None)
        if naming is None or naming in draft.evidence:
            continue
        order = {d: i for i, d in enumerate(dict.fromkeys(u.doc_id for u in draft.evidence))}
        evidence = tuple(sorted((*draft.evidence, naming), key=lambda u: (order[u.doc_id], u.start)))
        return replace(draft, evidence=evidence, provenance={**draft.provenance, "evidence_named": True})
    return draft


@dataclass
class Gating:
    """What the gates of one run read (the corpus, the thresholds, the writer's provenance) and what they keep
    (the duplicate gate's accepted questions, the report). ``words``: the specificity gate's index of the
    corpus, None without it; ``absence``: the absence gate of unanswerable questions; ``units`` and
    ``topics``: the sampled sentences and their topics (:func:`_name_topic`)."""

    corpus: Corpus
    gates: GateConfig
    seed: int
    writer: Writer
    dups: DuplicateFilter
    report: Report
    absence: AbsenceCheck | None = None
    words: CorpusWords | None = None
    units: dict[str, list[Unit]] | None = None
    topics: dict[tuple[str, int], str] | None = None
    products: Products = field(init=False)

    def __post_init__(self) -> None:
        self.products = products(self.corpus)

    def _name_product(self, draft: Draft, cand: Candidate) -> Draft | None:
        """``draft`` with the product it asks about in its provenance and, on a corpus of several products,
        named in its question (``gates.product``: added at its end, or None to reject it). A follow-up's second
        turn leaves its subject to the first, so only its product is recorded."""
        asked = self.products.of(cand.doc_ids)
        if not asked:
            return draft
        provenance = {**draft.provenance, PRODUCT: asked[0] if len(asked) == 1 else asked}
        missing = [] if cand.kind == FOLLOW_UP_KIND else self.products.missing(draft.question, cand.doc_ids)
        if missing and self.gates.product == "refuse":
            return None
        if missing and self.gates.product == "repair":
            return replace(draft, question=with_product(draft.question, missing),
                           provenance={**provenance, "product_added": True})
        return replace(draft, provenance=provenance)

    def _other_subject(self, draft: Draft, cand: Candidate) -> bool:
        """Whether a plain question the writer named no product in asks about another project its page links to
        (:meth:`gen.products.Products.other_subject`); counted as ``other_subject`` when it does."""
        asked = draft.provenance.get(PRODUCT)
        if not draft.provenance.get("product_added") or cand.style or not isinstance(asked, str):
            return False
        other = self.products.other_subject(draft.question, draft.reference, [u.text for u in draft.evidence], asked)
        if other is not None:
            self.report.reject("other_subject", {"candidate": cand.key, "question": draft.question,
                                                 "reference": draft.reference, "other": other}, cand.kind)
        return other is not None

    def _unnamed_item(self, draft: Draft, example: dict) -> str | None:
        """``unnamed_item`` when a question's evidence is one tab (card) of a row and the question names none of
        the tab's title words (:func:`gen.structure.unnamed_item`): it asks what the row answers whole."""
        if not draft.evidence or (title := unnamed_item(self.corpus, draft.evidence, draft.question)) is None:
            return None
        example["item"] = title
        return "unnamed_item"

    def _settle_evidence(self, draft: Draft, cand: Candidate, variation: tuple[str | None, str | None]) -> Draft | None:
        """``draft`` with its evidence grown to hold its reference (:func:`_widen_evidence`, the unit an announcement
        leads into, :func:`_name_topic`), or None when its reference answers with an announcement only, asks about
        another project, or rests on a phrase whose antecedent its evidence leaves out (each counted)."""
        corpus, gates, units = self.corpus, self.gates, self.units
        draft = _widen_evidence(draft, cand, gates.min_support)
        verdict, unit = announced_unused(corpus, cand, draft.evidence, draft.reference, cand.style or variation[1])
        if verdict == "announced":
            self.report.reject("announced_only", {"candidate": cand.key, "question": draft.question,
                                                  "reference": draft.reference}, cand.kind)
            return None
        if self._other_subject(draft, cand):
            return None
        if verdict == "widen" and unit is not None:
            draft = replace(draft, evidence=tuple(sorted((*draft.evidence, unit), key=lambda u: u.start)),
                            provenance={**draft.provenance, "evidence_widened":
                                        int(draft.provenance.get("evidence_widened", 0)) + 1})
        if units is not None:
            draft = _name_topic(draft, units, self.topics or {}, gates.min_support)
        if (cut := cut_antecedent(corpus, draft.evidence)) is not None:
            # what "such enrichment" means is in the sentence left out: the reference resolved it by guess
            self.report.reject("antecedent_outside", {"candidate": cand.key, "question": draft.question,
                                                      "reference": draft.reference, "phrase": cut[0],
                                                      "antecedent": cut[1]}, cand.kind)
            return None
        return draft

    def gate(self, draft: Draft, cand: Candidate, variation: tuple[str | None, str | None]) -> Passed | None:
        """The deterministic gates (and the absence gate) in order; None when one rejected the draft (it is
        counted in the report). ``variation``: the candidate's (persona, style). A draft that passes joins the
        duplicate gate at once, so the next of its batch is checked against it."""
        corpus, gates, writer, words, absence = self.corpus, self.gates, self.writer, self.words, self.absence
        named = self._name_product(draft, cand)
        if named is None:
            self.report.reject("unnamed_product", {"candidate": cand.key, "question": draft.question,
                                                   "product": self.products.of(cand.doc_ids)}, cand.kind)
            return None
        draft = named
        if unnamed_row(cand, draft.question):
            self.report.reject("unnamed_row", {"candidate": cand.key, "question": draft.question,
                                               "reference": draft.reference}, cand.kind)
            return None
        unanswerable = cand.kind == UNANSWERABLE_KIND
        if unanswerable:  # whatever the writer said: no evidence, and the one reference
            draft = replace(draft, reference=UNANSWERABLE, evidence=())
        else:
            settled = self._settle_evidence(draft, cand, variation)
            if settled is None:
                return None
            draft = settled
        evidence = tuple(Span(u.doc_id, u.start, u.end) for u in draft.evidence)
        # The share of the question's content words found in its evidence documents (gen.wording.evidence_overlap).
        docs = dict.fromkeys(u.doc_id for u in draft.evidence)
        overlap = lexical_overlap(draft.question, [corpus.get(d).text for d in docs if d in corpus]) if docs else None
        sample = TestSample(
            id="", question=draft.question, reference=draft.reference,
            evidence=evidence, kind=cand.kind,
            provenance={"backend": writer.backend, "model": writer.model_id, "prompt": writer.prompt_version,
                        "seed": self.seed, "candidate": cand.key, **({"bridge": cand.bridge} if cand.bridge else {}),
                        **{k: v for k, v in zip(("persona", "style"), variation) if v},
                        **({"overlap": round(overlap.share, 3)} if overlap is not None else {}), **draft.provenance},
            quotes=tuple(u.text for u in draft.evidence))
        example = {"candidate": cand.key, "question": draft.question, "reference": draft.reference,
                   "overlap": sample.provenance.get("overlap")}
        if cand.kind == FOLLOW_UP_KIND:  # the pair's gates; the sample gets its conversation (gen.followup)
            sample, reason = check_follow_up(sample, corpus, gates)
        else:  # a write stopped after its question is rejected for what stopped it: it has no answer to check
            reason = draft.stopped or check_sample(sample, corpus, gates)
        product = " ".join(a) if isinstance(a := draft.provenance.get(PRODUCT, ""), list) else str(a)
        if reason is None and not unanswerable and misused_pointer(draft, corpus, product):
            reason = "points_elsewhere"
        if (reason is None and not unanswerable and cand.kind != FOLLOW_UP_KIND
                and (made := made_up_names(draft, corpus, product))):
            reason, example["unseen_name"] = "unseen_name", made
        if (reason is None and words is not None and gates.specific and sample.evidence
                and cand.kind != FOLLOW_UP_KIND):  # a follow-up's second turn leaves its subject to the first
            if (other := unspecific(draft.question, set(docs), words)) is not None:
                reason, example["unspecific_doc"] = "unspecific", other
        if reason is None and not unanswerable and cand.kind != FOLLOW_UP_KIND:
            reason = self._unnamed_item(draft, example)
        if reason is None and unanswerable and absence is not None:
            verdict = absence.check(draft.question)
            example["absence"] = {**verdict.to_dict(), "check": verdict.check}
            reason = verdict.reason
            sample = replace(sample, provenance={**sample.provenance, "absence": verdict.to_dict()})
        vec = None
        if reason is None:
            reason, vec = self.dups.check(draft.question)
        if reason is not None:
            self.report.reject(reason, example, cand.kind)
            return None
        self.dups.add(draft.question, vec)
        # An unanswerable question has no evidence: its round trip reads the sentences its writer was shown.
        texts = tuple(u.text for u in (cand.shown if unanswerable else draft.evidence))
        section = " > ".join(cand.section) if cand.style is not None else ""
        headed = (headed_evidence(sample, corpus) if gates.evidence_support is not None
                  and in_scope(sample, corpus, gates.support_scope) else ())
        return Passed(sample, example, texts, written=draft.usage, section=section, headed=headed)
