"""The evidence-support gate: the project's own judge asked whether a sample's evidence, read under its headings,
states its reference as the answer to its question (issue #34).

The word gates count the reference's words in its evidence; a documentation reference fails in ways words do
not show: a "why" asked of a notice that gives no reason, a condition that only the heading states ("use a tilde"
under the ``GLOBTILDE`` flag's heading), a part read as the whole. The faithfulness metric's claim judge
(``faithfulness`` with ``claims="sentences"``: one ``claim_check`` call per reference sentence, its verdict token's
probability blended with the deterministic evidence and calibrated; a blind call and slot checks when the verdict
is yes) reads the question and its reference as one claim ("Why is X deprecated: X has been deprecated since
2.0.") against the evidence sentences, each led by the titles over it, and a sample whose value is below
``gates.evidence_support`` is rejected as ``judge_unsupported``. It is off by default: on the read questions of
the tune sets, the packaged 1.5B's verdicts ranked right references above wrong ones little better than chance.

Which samples: ``docs`` (the default) asks it of samples whose evidence lies on a page with a layout (Markdown,
HTML), ``all`` of every sample with evidence. Never of an unanswerable question (no evidence) nor of a code answer,
whose reference is its evidence's code verbatim (the round trip skips it for the same reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragsweep.gen.documents import Corpus
from ragsweep.gen.styles import named_path
from ragsweep.gen.testset import UNANSWERABLE_KIND, TestSample
from ragsweep.metrics import LLM, Meter, Usage, resolve

#: Which samples the gate asks the judge about (see the module docstring).
SCOPES = ("docs", "all")


def in_scope(sample: TestSample, corpus: Corpus, scope: str) -> bool:
    """Whether the gate judges ``sample``: it has evidence, is no code answer, and (``docs``) some evidence of it
    lies on a page with a layout."""
    if (sample.kind == UNANSWERABLE_KIND or not sample.evidence
            or sample.provenance.get("style") == "code_answer"):
        return False
    if scope == "all":
        return True
    return any(s.doc_id in corpus and corpus.get(s.doc_id).layout is not None for s in sample.evidence)


def headed_evidence(sample: TestSample, corpus: Corpus) -> tuple[str, ...]:
    """Each evidence span's text, led by the titles over it on its page ("wcmatch > Flags > GLOBTILDE: ..."), so
    that a condition or a subject only a heading states is in what the judge reads; the text alone on a page
    without a layout."""
    out = []
    for span in sample.evidence:
        doc = corpus.get(span.doc_id)
        text = doc.text[span.start:span.end]
        titles = named_path(doc, doc.layout.section_path(span.start)) if doc.layout is not None else ()
        out.append(f"{' > '.join(titles)}: {text}" if titles else text)
    return tuple(out)


@dataclass(frozen=True)
class Support:
    """The judge's verdict on one sample: its faithfulness value (None: undefined), each reference sentence's
    probability and verdict, and what it cost."""

    value: float | None
    claims: list[dict[str, Any]]
    calls: int
    usage: Usage

    def to_dict(self) -> dict[str, Any]:
        return {"p": None if self.value is None else round(self.value, 3), "calls": self.calls,
                "claims": [{"claim": str(c.get("claim", ""))[:160], "p": round(float(c.get("p_supported", 0.0)), 3),
                            "judge": c.get("judge_verdict"), "p_judge": c.get("p_judge"),
                            "p_offline": c.get("p_offline"), "p_blind": c.get("p_blind")} for c in self.claims]}


#: How the question and reference are put to the judge: ``joined`` (the gate's) = one claim, the question and then
#: the reference, with no question slot, so that a reference is never judged apart from what it answers ("since
#: 2.0" is true of a notice, not of "why"); ``answer`` = the reference as the statement and the question in the
#: prompt's question slot (the judge reads a short statement as the answer to it). What each form measured is in
#: benchmarks/results/2026-11-26-docs-s37.md.
FORMS = ("answer", "joined")


async def evidence_support(judge: LLM, question: str, reference: str, contexts: Sequence[str],
                           form: str = "joined") -> Support:
    """The faithfulness metric's value of ``reference`` as the answer to ``question`` against ``contexts``."""
    counted = Meter(judge)  # what this one check cost, cached replies included
    spec = resolve(["faithfulness"])[0]
    if form == "joined":
        # one sentence, so that the metric's sentence split keeps the question and its answer together
        got = await spec.fn(question=None, answer=f"{question.strip().rstrip('?').rstrip()}: {reference.strip()}",
                            contexts=list(contexts), judge=counted)
    else:
        got = await spec.fn(question=question, answer=reference, contexts=list(contexts), judge=counted)
    claims = list((got.explanation or {}).get("claims", [])) if isinstance(got.explanation, dict) else []
    return Support(got.value, claims, counted.calls, counted.usage)
