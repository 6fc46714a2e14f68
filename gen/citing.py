"""References with their citations: which evidence spans each reference sentence rests on (no model).

``ragsweep gen reference_citations=true`` writes, per sample, ``reference_citations``: one list per
sentence of the reference (the sentences :func:`metrics.offline.sentences` reads), holding the
0-based indices into the sample's ``evidence`` of the spans that sentence rests on. Support is the
citation metrics' ``llm=none`` check (:mod:`metrics.attribution`): the calibrated number, name and
word evidence of :func:`metrics.offline.judge_claims`, a set of spans supporting a sentence when
P(supported) >= 0.5, read, as there, from the spans alone: the question is not evidence, so a reference
sentence that restates the question cites only spans that state what it restates. Per sentence, the
cited spans are:

- every span that supports it alone (each is a relevant citation in ALCE's sense), else
- the smallest set found by dropping, weakest first, each span the others support the sentence
  without, when all the spans together support it (a multi-hop sentence cites both its halves), else
- and, to either, the spans holding a content word or number of the sentence the chosen ones lack
  (the word evidence can pass a two-span sentence on one span's words), or
- none: the sentence has no content word (a bare "Yes."), or no span, alone or together, supports
  it by words (a reference the writer reworded past the word check). An empty list says so; it is
  not an error.

A sample without evidence (``unanswerable``) gets no field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragsweep.gen.documents import Corpus
from ragsweep.gen.testset import TestSample
from ragsweep.metrics import calibrate_rows, content_words, judge_claims, numbers, offline_sentences

#: P(supported) from which a set of spans supports a sentence: the citation metrics' threshold.
THRESHOLD = 0.5


def _p(sentence: str, passages: Sequence[str]) -> float:
    # No question, as metrics.attribution checks citations: a span that states part of a sentence
    # whose other words the question gave does not support it, and the metrics would say so.
    if not passages:
        return 0.0
    return float(calibrate_rows(judge_claims([sentence], list(passages), None), None)[0]["p_supported"])


def cite_sentence(sentence: str, spans: Sequence[str]) -> tuple[int, ...]:
    """The 0-based indices of the spans ``sentence`` rests on (see the module's rules)."""
    if not content_words(sentence):  # "Yes.": every span would "support" it, none is its source
        return ()
    alone = [_p(sentence, [s]) for s in spans]
    kept = [i for i, p in enumerate(alone) if p >= THRESHOLD]
    if not kept and len(spans) > 1 and _p(sentence, spans) >= THRESHOLD:
        kept = list(range(len(spans)))
        for i in sorted(kept, key=lambda j: (alone[j], j)):
            rest = [j for j in kept if j != i]
            if _p(sentence, [spans[j] for j in rest]) >= THRESHOLD:
                kept = rest
    return tuple(sorted(kept + _holding_the_rest(sentence, spans, kept))) if kept else ()


def _holding_the_rest(sentence: str, spans: Sequence[str], kept: Sequence[int]) -> list[int]:
    """Spans to add to ``kept``: those holding a content word or number of the sentence that ``kept`` lacks,
    most first. The word evidence can pass a sentence one of whose words stands in another span ("...
    designed the bridge and was born in Leeds", Leeds in the second): its citations then name both."""
    def keys(text: str) -> set[str]:
        return set(content_words(text)) | numbers(text)

    missing = keys(sentence) - set().union(*(keys(spans[i]) for i in kept))
    added: list[int] = []
    while missing:
        gain = {i: missing & keys(s) for i, s in enumerate(spans) if i not in kept and i not in added}
        best = max(gain, key=lambda i: (len(gain[i]), -i), default=None)
        if best is None or not gain[best]:
            break
        added.append(best)
        missing -= gain[best]
    return added


def cite_reference(reference: str, spans: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """Per sentence of ``reference``, the 0-based indices of the evidence ``spans`` it rests on."""
    return tuple(cite_sentence(s, spans) for s in offline_sentences(reference))


def with_reference_citations(samples: Sequence[TestSample], corpus: Corpus) -> list[TestSample]:
    """The samples, each with evidence given its ``reference_citations`` (a sample without any left as it is)."""
    out = []
    for s in samples:
        if not s.evidence:
            out.append(s)
            continue
        spans = [corpus.get(e.doc_id).text[e.start:e.end] for e in s.evidence]
        out.append(replace(s, reference_citations=cite_reference(s.reference, spans)))
    return out
