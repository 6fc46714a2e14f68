"""``ragsweep gen``: the Hydra app. It builds the parts, runs :func:`gen.generate.generate`
and writes the test set, its report and (optionally) a Parquet copy."""

from __future__ import annotations

import dataclasses
import json
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from ragsweep.gen.citing import with_reference_citations
from ragsweep.gen.docs_defaults import AFTER_STYLES, AUTO, FACTS_ON_DOCS, for_corpus
from ragsweep.gen.documents import Corpus
from ragsweep.gen.followup import follow_up_line
from ragsweep.gen.gates import GateConfig, check_families
from ragsweep.gen.generate import GenConfig, Result, check_n, generate
from ragsweep.gen.parts import build
from ragsweep.gen.products import MODES, PRODUCT, products, summary
from ragsweep.gen.query_form import FORMS
from ragsweep.gen.reword import RewordConfig
from ragsweep.gen.supported import SCOPES
from ragsweep.gen.testset import KINDS, TestSample, read_testset, write_testset
from ragsweep.gen.topup import append_samples, fresh_ids, read_base
from ragsweep.gen.units import UNITS
from ragsweep.metrics import EXIT_NOT_SCORED, InputError, Meter, fail, staged, supports_bias

log = logging.getLogger("ragsweep")


def make_writer(llm: Any, max_tokens: int) -> Any:
    """The rule writer for ``llm=none``, else the LLM writer."""
    if llm is None:
        from ragsweep.gen.rules import RuleWriter

        return RuleWriter()
    from ragsweep.gen.writer import LLMWriter

    return LLMWriter(llm, max_tokens=max_tokens)


def gen_config(cfg: DictConfig, concurrency: int, rule_writer: bool = False) -> GenConfig:
    kinds = OmegaConf.to_container(cfg.kinds) or {}
    if not isinstance(kinds, dict) or any(k not in KINDS for k in kinds):
        raise InputError(f"kinds must map question kinds ({', '.join(KINDS)}) to weights, got {kinds!r}")
    if any(not isinstance(w, (int, float)) or w < 0 for w in kinds.values()):
        raise InputError(f"kinds weights must be numbers >= 0, got {kinds!r}")
    g = cfg.gates
    max_overlap = g.get("max_overlap")
    if max_overlap is not None and (isinstance(max_overlap, bool) or not isinstance(max_overlap, (int, float))
                                    or not 0 <= max_overlap <= 1):
        raise InputError(f"gates.max_overlap must be a share in [0, 1] or null, got {max_overlap!r}")
    facts_on_docs = cfg.get("facts_on_docs") or AFTER_STYLES
    if facts_on_docs not in FACTS_ON_DOCS:
        raise InputError(f"facts_on_docs must be one of {', '.join(FACTS_ON_DOCS)}, got {facts_on_docs!r}")
    form = cfg.get("form") or "question"
    if form not in FORMS:
        raise InputError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    if form == "claim" and rule_writer:
        raise InputError("form=claim needs a model writer (llm=local, local_small or a server): the rule writer "
                         "cannot state a question and its answer as one claim")
    return GenConfig(n=check_n(cfg.n), kinds=tuple(kinds.items()), seed=int(cfg.seed), reword=_reword(cfg.get("reword")),
                     form=str(form),
                     personas=tuple(cfg.personas or ()), styles=_styles(cfg.styles), facts_on_docs=str(facts_on_docs),
                     max_docs=cfg.max_docs,
                     min_sentence_chars=int(cfg.min_sentence_chars), max_attempts=cfg.max_attempts,
                     concurrency=concurrency,
                     # the rule writer costs nothing per candidate: no kind gives up early
                     max_tries_per_sample=None if rule_writer else _tries(cfg.get("max_tries_per_sample")),
                     gates=GateConfig(float(g.min_support), float(g.max_copy), float(g.dup_cosine),
                                      int(g.min_question_words),
                                      None if max_overlap is None else float(max_overlap),
                                      absent_cover=_share(g, "absent_cover", 0.75),
                                      absent_cosine=_share(g, "absent_cosine", 0.8),
                                      definitions=_flag(g, "definitions", False),
                                      specific=_specific(g),
                                      named_subject=_flag(g, "named_subject", True),
                                      kind_check=_flag(g, "kind_check", True), roundtrip=_flag(g, "roundtrip", True),
                                      roundtrip_hops=_flag(g, "roundtrip_hops", True),
                                      roundtrip_min_f1=_share(g, "roundtrip_min_f1", 0.5),
                                      families_off=_off(g.get("families_off")),
                                      product=_product_mode(g),
                                      evidence_support=_support(g.get("evidence_support")),
                                      support_scope=_scope(g.get("support_scope", "docs"))))


def _styles(value: Any) -> tuple[str, ...]:
    """``styles`` as a tuple; ``auto`` not yet resolved against a corpus (:func:`gen.docs_defaults.for_corpus`)
    asks for none."""
    if value is None or value == AUTO:
        return ()
    if isinstance(value, str):
        raise InputError(f"styles must be a list of styles, or {AUTO}, got {value!r}")
    return tuple(value)


def _support(value: Any) -> float | None:
    """``gates.evidence_support``: a share in [0, 1], or null (the support gate off)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1):
        raise InputError(f"gates.evidence_support must be a share in [0, 1] or null, got {value!r}")
    return None if value is None else float(value)


def _scope(value: Any) -> str:
    if value not in SCOPES:
        raise InputError(f"gates.support_scope must be one of {', '.join(SCOPES)}, got {value!r}")
    return str(value)


def _product_mode(gates: DictConfig) -> str:
    value = gates.get("product", "repair")
    if value not in MODES:
        raise InputError(f"gates.product must be one of {', '.join(MODES)}, got {value!r}")
    return str(value)


def _reword(node: Any) -> RewordConfig:
    """``reword`` (gen.reword): ``bias`` a negative number or null (no pass), ``above`` a share in [0, 1]."""
    if node is None:
        return RewordConfig()
    bias, above = node.get("bias"), node.get("above", 0.6)
    if bias is not None and (isinstance(bias, bool) or not isinstance(bias, (int, float)) or not -100 <= bias < 0):
        raise InputError(f"reword.bias must be a negative number (down to -100) or null, got {bias!r}")
    if isinstance(above, bool) or not isinstance(above, (int, float)) or not 0 <= above <= 1:
        raise InputError(f"reword.above must be a share in [0, 1], got {above!r}")
    return RewordConfig(None if bias is None else float(bias), float(above))


def _tries(value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InputError(f"max_tries_per_sample must be a positive integer or null, got {value!r}")
    return value


def _flag(gates: DictConfig, key: str, default: bool) -> bool:
    value = gates.get(key, default)
    if not isinstance(value, bool):
        raise InputError(f"gates.{key} must be true or false, got {value!r}")
    return value


def _specific(gates: DictConfig) -> bool:
    """``gates.specific``: true, false, or auto (on, unless a docs run resolved it: gen.docs_defaults.for_corpus)."""
    value = gates.get("specific", AUTO)
    if value == AUTO:
        return True
    if not isinstance(value, bool):
        raise InputError(f"gates.specific must be true, false or {AUTO}, got {value!r}")
    return value


def _off(value: Any) -> tuple[str, ...]:
    """``gates.families_off``: a list of gate families (gen.gates.FAMILIES) to switch off, or null / []."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InputError(f"gates.families_off must be a list of gate families, e.g. [copy, unnamed_thing], got {value!r}")
    return check_families(str(v) for v in value)


def _share(gates: DictConfig, key: str, default: float) -> float:
    value = gates.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise InputError(f"gates.{key} must be a number in (0, 1], got {value!r}")
    return float(value)


def duplicates_report(corpus: Corpus) -> dict[str, Any]:
    """The report's entries on how the corpus was read: ``duplicates`` (the copies found among the
    documents) and ``empty_files`` (files left out for holding no text); none when nothing happened."""
    return corpus.report()


def write_outputs(result: Result, corpus: Corpus, out: Path, extra: dict[str, Any], parquet: bool,
                  base: Path | None = None) -> dict[str, Path]:
    """The test set (JSONL), the report beside it, and optionally Parquet, all or none of them
    (:func:`metrics.staging.staged`: a full disk half way leaves the previous files as they were).

    With ``base`` (a top-up) the test set is ``base``'s lines and then the new samples, and the report
    (of this run's samples) is ``<out>.topup.report.json``.
    """
    out = Path(out)
    report_name = out.stem + (".report.json" if base is None else ".topup.report.json")
    names = {"testset": out.name, "report": report_name, **({"parquet": out.with_suffix(".parquet").name}
                                                             if parquet else {})}
    with staged(out.parent) as into:
        if base is None:
            write_testset(result.samples, into / out.name, corpus)
        else:
            append_samples(base, result.samples, into / out.name, corpus)
        body = result.report.to_dict({"seconds": round(result.seconds, 2), "attempts": result.attempts,
                                      "llm_tokens": {"prompt": result.usage.prompt_tokens,
                                                     "completion": result.usage.completion_tokens}, **extra})
        (into / report_name).write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if parquet:
            import datasets

            rows = [s.to_dict(corpus) for s in (read_testset(into / out.name) if base is not None
                                                else result.samples)]
            columns = dict.fromkeys(k for r in rows for k in r)  # from_list reads the first row's keys only
            rows = [{k: r.get(k) for k in columns} for r in rows]
            datasets.Dataset.from_list(rows).to_parquet(str(into / names["parquet"]))
    return {kind: out.parent / name for kind, name in names.items()}


def gates_record(gates: GateConfig, embed: bool) -> dict[str, Any]:
    """Every gate setting as a report records it (``gates``), with whether the embedding checks ran."""
    record = {**dataclasses.asdict(gates), "embed": embed}
    if not record["families_off"]:  # so that a set written before families could be switched off is not stale
        del record["families_off"]
    else:
        record["families_off"] = list(record["families_off"])
    return record


def written_with(corpus: Corpus, writer: Any, gcfg: GenConfig, embed: bool) -> dict[str, Any]:
    """What a generation report records of how its set was written, so that it can be written again: the
    corpus, seed, writer, prompt version, kinds, every gate threshold, how documents were cut into sentence
    units (:data:`gen.units.UNITS`) and the ragsweep version; and the
    copies found among the documents."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("ragsweep")
    except PackageNotFoundError:  # run from a source tree that was never installed
        ours = None
    return {"corpus": corpus.source, "seed": gcfg.seed, "backend": writer.backend, "model": writer.model_id,
            "prompt": writer.prompt_version, "kinds_configured": dict(gcfg.kinds),
            "gates": gates_record(gcfg.gates, embed), "units": UNITS, "ragsweep": ours,
            # not "form": the report's own "form" counts what the claim pass did
            **({"query_form": gcfg.form} if gcfg.form != "question" else {}), **duplicates_report(corpus)}


def out_path(cfg: DictConfig, run_dir: Path) -> Path:
    """Where the test set goes (``out``, else ``append_to``'s file, else the run folder), checked for
    writing before any work: a folder, or a place that cannot be written, is an InputError (exit 2)."""
    out = Path(cfg.out) if cfg.out else Path(cfg.append_to) if cfg.get("append_to") else run_dir / "testset.jsonl"
    if out.is_dir():
        raise InputError(f"out={out}: is a folder; name the test-set file, e.g. out={out / 'testset.jsonl'}")
    folder = out.parent
    while not folder.exists() and folder != folder.parent:  # made when the set is written
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"out={out}: {folder} is a file, not a folder")
    try:  # a probe file is the one test that holds everywhere (permissions, read-only mounts, root)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ragsweep-probe-"):
            pass
    except OSError as exc:
        raise InputError(f"out={out}: cannot write in {folder} ({exc.strerror or exc})") from None
    return out


def write_or_keep(write: Any, out: Path, run_dir: Path) -> dict[str, Path]:
    """``write(out)``; when that fails at the end (a full disk, a folder made read-only meanwhile), the
    finished work is written to the run folder instead and the error (exit 2) names where it is."""
    try:
        return write(out)
    except OSError as exc:
        problem = f"out={out}: could not write the test set ({exc.strerror or exc})"
    kept = run_dir / out.name if out.parent.resolve() != run_dir.resolve() else run_dir / f"kept-{out.name}"
    try:
        paths = write(kept)
    except OSError as exc:
        raise InputError(f"{problem}; nor in {kept} ({exc.strerror or exc})") from None
    raise InputError(f"{problem}; the generated test set is kept in {paths['testset']} "
                     f"(report: {paths['report']})")


def writing_parts(cfg: DictConfig, llm: Any, known: Sequence[TestSample] = ()) -> tuple[Any, GenConfig, Any]:
    """The writer, the generator's settings and the gates' embedder (None: ``gates.embed`` is off) that
    ``cfg`` asks for, with ``llm`` as the writer (None: the rule writer); ``known``: the samples of a test
    set being topped up, whose questions and candidates are not written again."""
    from ragsweep.metrics import concurrency_of

    writer = make_writer(llm, int(cfg.max_tokens))
    gcfg = gen_config(cfg, concurrency_of(llm) if llm is not None else 1, rule_writer=llm is None)
    if known:
        gcfg = replace(gcfg, known_questions=tuple(s.question for s in known),
                       known_candidates=frozenset(str(s.provenance.get("candidate")) for s in known
                                                  if s.provenance.get("candidate")))
    embed = None
    if cfg.gates.embed:
        from ragsweep.metrics import OnnxMiniLM

        embed = OnnxMiniLM().embed
    return writer, gcfg, embed


def produce(cfg: DictConfig, corpus: Corpus, llm: Any, known: Sequence[TestSample] = (),
            progress: bool = False) -> tuple[Result, dict[str, Any]]:
    """The test set ``cfg`` asks for, from ``corpus``: what ``ragsweep gen`` and ``ragsweep.generate`` both run.
    Returns the result and what it was written with (:func:`written_with`)."""
    writer_llm = Meter(llm) if llm is not None else None  # counts each prompt's calls, seconds and tokens
    cfg, decided = for_corpus(cfg, corpus, llm is not None)
    if decided:
        log.info("a documentation corpus: %s (docs/how-to/documentation-corpora.md)",
                 ", ".join(f"{k}={v}" for k, v in decided.items()))
    gen_config(cfg, 1, rule_writer=llm is None)  # a bad setting fails here, before the model starts loading
    preload(llm)
    writer, gcfg, embed = writing_parts(cfg, writer_llm, known)
    if gcfg.reword.bias is not None and not supports_bias(getattr(writer, "llm", None)):
        log.warning("reword.bias is ignored: the reword pass needs the in-process model as the writer "
                    "(llm=local or local_small); this writer cannot bias words")
    # Questions are written from originals only, so no evidence is pinned to one of several copies.
    # The round trip's judge is the writer's model (none for the rule writer, whose references are cut from
    # its evidence).
    result = generate(corpus.originals(), writer, gcfg, embed=embed, judge=writer_llm, progress=progress)
    if cfg.get("reference_citations"):
        result = replace(result, samples=with_reference_citations(result.samples, corpus))
    extra = {**written_with(corpus, writer, gcfg, embed is not None), **model_time(writer_llm),
             **({"docs_defaults": decided} if decided else {})}
    if found := summary(products(corpus), result.samples, gcfg.gates.product, result.report.tried_by_product):
        extra["products"] = found
    return result, extra


def preload(llm: Any) -> None:
    """Start loading the in-process model (wrapped in a cache or not) in the background: it loads while the
    embedder loads and the corpus's sentences, candidates and indexes are built, not after them."""
    for _ in range(8):
        if llm is None or hasattr(llm, "preload"):
            break
        llm = getattr(llm, "inner", None)
    if llm is not None:
        llm.preload()


def model_time(meter: Meter | None) -> dict[str, Any]:
    """The report's ``model_time``: seconds to find and load the model, and per prompt the calls, seconds and
    tokens (prompt tokens sent, those llama.cpp ``evaluated`` rather than took from its prompt cache, generated)."""
    if meter is None:
        return {}
    inner = meter.inner
    while not hasattr(inner, "load_seconds") and getattr(inner, "inner", None) is not None:
        inner = inner.inner
    return {"model_time": {"resolve_seconds": round(getattr(inner, "resolve_seconds", 0.0), 2),
                           "load_seconds": round(getattr(inner, "load_seconds", 0.0), 2),
                           "prompts": meter.prompt_table()}}


def run(cfg: DictConfig, run_dir: Path) -> dict[str, Any]:
    """Generate and write the test set; return the files written and ``n_new``, the samples this run added."""
    check_n(cfg.n)
    out = out_path(cfg, run_dir)
    corpus: Corpus = build(cfg.corpus, "corpus")
    llm = build(cfg.llm, "llm")
    base = Path(cfg.append_to) if cfg.get("append_to") else None
    known = read_base(base, corpus) if base is not None else []
    result, extra = produce(cfg, corpus, llm, known, progress=bool(cfg.progress))
    if base is not None:
        result = replace(result, samples=fresh_ids(result.samples, known))
    extra = {**extra, "cache": {"hits": getattr(llm, "hits", None), "misses": getattr(llm, "misses", None)}}
    paths = write_or_keep(lambda to: write_outputs(result, corpus, to, extra, bool(cfg.parquet), base), out, run_dir)
    rep = result.report
    print(rep.message())
    if left := rep.units.get("not_english_documents"):
        print(f"language: {left} documents not in English left out (the rule writer writes English only; "
              "llm=local questions them)")
    print("by kind: " + ", ".join(f"{k}={v}" for k, v in sorted(rep.accepted_by_kind.items())))
    if set(rep.accepted_by_style) - {"fact"} or rep.styles_not_written:
        print("by style: " + ", ".join(f"{k}={v}" for k, v in sorted(rep.accepted_by_style.items()))
              + "".join(f"; {s} not written ({n} candidates: the writer does not write it)"
                        for s, n in rep.styles_not_written.items()))
    print("rejected: " + (", ".join(f"{k}={v}" for k, v in rep.rejected.items() if v) or "none"))
    if line := rep.unanswerable_line():
        print(line)
    if line := follow_up_line(rep):
        print(line)
    if (made := extra.get("products", {})).get("several"):
        print(f"products: {len(made['pages'])} ({', '.join(f'{k} {v}' for k, v in made['pages'].items())} pages); "
              f"of the questions on one, {made['named']} name it, {made['added']} had it added "
              f"({made['named_by_identifier']} of them an identifier of its own only; gates.product={made['mode']})")
        if made.get("candidates"):  # a page of no product ("") holds the questions that carry none
            got = {**made["accepted"], "": sum(not s.provenance.get(PRODUCT) for s in result.samples)}
            print("questions per product (candidates): " + ", ".join(
                f"{k or '(no product)'} {got.get(k, 0)} ({v})" for k, v in made["candidates"].items()))
    print(rep.checks_line())
    print(rep.time_line() + _load_line(extra))
    print(rep.overlap_line())
    print(f"report:   {paths['report']}")
    if "parquet" in paths:
        print(f"parquet:  {paths['parquet']}")
    if base is not None:
        print(f"topped up: {len(result.samples)} new after the {len(known)} of {base}")
    print(f"test set: {paths['testset']}")
    return {**paths, "n_new": len(result.samples)}


def _load_line(extra: dict[str, Any]) -> str:
    """The model's load time for the summary's time line ("" without a model)."""
    load = (extra.get("model_time") or {}).get("load_seconds")
    return f"; model load {load:.0f} s" if load else ""


def gen_app(cfg: DictConfig) -> None:
    logging.getLogger().setLevel(logging.INFO)
    try:
        paths = run(cfg, Path(HydraConfig.get().runtime.output_dir))
    except InputError as exc:
        fail(str(exc))
    if not paths.get("n_new"):  # nothing generated: exit 3, as every command that measured nothing
        fail("no question was accepted, so the test set gained nothing; the report says "
             f"why each candidate was rejected: {paths['report']}", EXIT_NOT_SCORED)
