"""``ragsweep score``: score recorded RAG outputs from a file and gate on thresholds.

Reads CSV, JSONL, JSON, Parquet or a saved ``datasets`` folder whose columns use the usual
names (``question, contexts, answer, ground_truths`` or ``user_input, retrieved_contexts,
response, reference, reference_contexts``), scores every row with the chosen metrics and writes
``result.csv``, ``summary.csv`` and ``explanations.jsonl`` to ``out``. Exit code 0 when every
threshold holds, 1 when one fails, 2 on bad input (``out`` is checked before any work), 3 when
nothing could be scored (every judged score is an error). A blank or missing answer earns no credit
on the metrics that read the answer (``empty_answers=fail``) or is left out (``exclude``); the
summary counts them. A default ``out`` (named by the clock) is claimed for this run alone, and
results that cannot be written to ``out`` at the end go to a fallback folder
(:mod:`ragsweep.harness.outputs`).

Which tool wrote the file is told by its columns (ragas_once, Ragas 0.1 and 0.2+, DeepEval test
cases and goldens, LlamaIndex; :mod:`gen.formats.layouts`), and list cells are read with one
grammar -- JSON, Python and numpy literals, or the layout's delimiter (:mod:`harness.score_tables`).
Several ground truths are all kept (:mod:`metrics.scoring` says how each metric uses them). In
``result.csv`` the plain metric names are ragsweep's scores; an input column of the same name is
kept as ``input_<name>``.

Conversations: the question cell (``question``, ``user_input``, ``messages`` or ``conversation``) may
hold a list of messages -- Ragas' multi-turn shape ``[{"type": "human" | "ai", "content": ...}, ...]``
or a plain ``[{"role": "user" | "assistant", "content": ...}, ...]`` (a JSON list, in a CSV cell as
text). Its last user message is the question and the messages before it the history
(:mod:`metrics.conversation`: judged metrics see it, the others read the last turn); an assistant
message after it is the answer when no answer column is given (Ragas keeps the response so).

Citations: an answer's ``[n]`` markers, or a ``citations`` column of per-sentence sources, give the
citation metrics (:mod:`harness.score_citations`); the other metrics score the answer without markers.
"""

from __future__ import annotations

import asyncio
import csv
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ragsweep.gen import USUAL, build
from ragsweep.harness.cache import atomic_write
from ragsweep.harness.outputs import check_writable, config_yaml, named_by_clock, save
from ragsweep.harness.runs import embedder_for
from ragsweep.harness.score_citations import asks_for_citations, with_citations
from ragsweep.harness.score_tables import (  # noqa: F401 - the reading side, imported from here by callers
    ANSWER_IT,
    Table,
    conversation_cell,
    field_columns,
    note,
    read_samples,
    read_table,
    samples_from_table,
    table_of,
)
from ragsweep.metrics import (
    LLMCost,
    Meter,
    EMPTY_ANSWERS,
    EXIT_NOT_SCORED,
    FIELDS,
    InputError,
    MetricSpec,
    RagSample,
    ScoredSample,
    check_thresholds,
    concurrency_of,
    fail,
    is_unanswerable,
    metric_catalogue,
    metric_kwargs,
    outcome,
    resolve,
    score_samples,
    scrub,
    scrub_all,
    staged,
    summary_rows,
)

#: Accepted column names for each sample field, in the order they are looked for.
#: The usual column names of each sample field (the other layouts: :mod:`gen.formats.layouts`).
ALIASES = USUAL

#: The columns that feed a field no usual name covers: citations come from the answer's inline
#: markers or a citations column (:mod:`harness.score_citations`).
NEEDS = {"citations": (*ALIASES["answer"], "citations")}

DEFAULT_JUDGED = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def _test_set_hint(fields: Mapping[str, str]) -> str:
    """What to do with a test set (questions and references, no answers) given to ``score``."""
    if "question" not in fields or "answer" in fields or not {"reference", "reference_contexts"} & set(fields):
        return ""
    return f"; it looks like a test set (questions and references, no answers): {ANSWER_IT}"


def choose_metrics(path: Path, names: list[str] | None, fields: dict[str, str], has_judge: bool,
                   unanswerable: bool = False) -> list[MetricSpec]:
    """The requested metrics (each checked against the columns), or every metric the file supports
    (``refusal`` only when ``unanswerable``: some sample's reference is "not in the knowledge base")."""
    if names is None:
        # Judged metrics by default: the four that answer "is it grounded, on topic, well retrieved"
        # (about 4 judge calls a sample); the others are one `metrics=[...]` away.
        # The citation metrics join when the file cites (harness.score_citations), judge or not, as in
        # ``ragsweep run``: without a judge they read the offline support evidence.
        specs = [s for s in metric_catalogue().values() if set(s.inputs) <= set(fields)
                 and (not s.needs_judge or (has_judge and s.name in DEFAULT_JUDGED)
                      or ("citations" in s.inputs and s.offline_fn is not None))
                 and (unanswerable or not s.scores_unanswerable)]
        if not specs:
            raise InputError(f"{path}: no metric can be scored from columns {', '.join(fields) or 'none'} "
                             f"(known fields: {', '.join(FIELDS)}){_test_set_hint(fields)}")
        return specs
    specs = resolve(names)
    missing = [(s.name, f) for s in specs for f in s.inputs if f not in fields]
    if missing:
        name, field = missing[0]
        columns = NEEDS.get(field, ALIASES.get(field))
        if columns is None:  # retrieved spans, gold evidence, qrels: what a ragsweep run records
            raise InputError(f"{path}: metric {name} needs {field!r}, which a ragsweep run records and a results "
                             "file does not hold; score it with ragsweep run or rescore")
        hint = _test_set_hint(fields) if field == "answer" else ""
        raise InputError(f"{path}: no column {' or '.join(columns)}, which metric {name} needs{hint}")
    return specs


def plan(where: Path, samples: Sequence[RagSample], fields: dict[str, str], names: list[str] | None, *,
         has_judge: bool, thresholds: Mapping[str, float], options: Mapping[str, Any]
         ) -> tuple[list[MetricSpec], dict[str, float]]:
    """The metrics to score (:func:`choose_metrics`) and their thresholds, every option checked: what
    ``ragsweep score`` and ``ragsweep.score`` do before any sample is scored (bad input is an InputError)."""
    specs = choose_metrics(where, names, fields, has_judge, any(is_unanswerable(s.reference) for s in samples))
    limits = check_thresholds(dict(thresholds), specs)
    for spec in specs:
        metric_kwargs(spec, options)
    return specs, limits


async def measure(samples: Sequence[RagSample], specs: list[MetricSpec], *, judge: Any, embedder: Any,
                  options: Mapping[str, Any], concurrency: int | None, progress: bool,
                  empty_answers: str) -> tuple[list[ScoredSample], dict[str, Any]]:
    """Every sample scored with every metric, and what it spent (:func:`spent`): what ``ragsweep
    score`` and ``ragsweep.score`` both run. ``concurrency`` None: as many calls as the judge serves
    at once (1 for an in-process model), 4 without one."""
    if concurrency is None:
        concurrency = concurrency_of(judge) if judge is not None else 4
    meter = Meter(judge) if judge is not None else None
    start = time.perf_counter()
    rows = await score_samples(list(samples), specs, judge=meter, embedder=embedder, options=options,
                               concurrency=int(concurrency), progress=progress, empty_answers=empty_answers)
    return rows, spent(meter, time.perf_counter() - start, len(samples))


def spent(meter: Any, seconds: float, n: int) -> dict[str, Any]:
    """What scoring cost: seconds, judge calls (and how many the cache answered or failed), prompt and
    output tokens (a cache hit counts the tokens recorded when it was computed), in total and per
    sample; written to ``cost.json`` and told on stderr."""
    cost = meter.snapshot() if meter is not None else LLMCost()
    out: dict[str, Any] = {"samples": n, "seconds": round(seconds, 3), "judge_calls": cost.calls,
                           "cache_hits": cost.cached_calls, "failed_calls": cost.failed_calls,
                           "prompt_tokens": cost.prompt_tokens, "output_tokens": cost.completion_tokens}
    # Prompt tokens the model read (the rest came from llama.cpp's prompt cache): with an in-process model,
    # reading the prompt is most of a call's time, so this, not prompt_tokens, is what seconds follow.
    evaluated = getattr(meter, "evaluated", 0) or 0
    if evaluated:
        out["evaluated_prompt_tokens"] = int(evaluated)
    if n:
        out["per_sample"] = {"seconds": round(seconds / n, 3), "judge_calls": round(cost.calls / n, 3),
                             "prompt_tokens": round(cost.prompt_tokens / n, 1),
                             "output_tokens": round(cost.completion_tokens / n, 1)}
        if evaluated:
            out["per_sample"]["evaluated_prompt_tokens"] = round(evaluated / n, 1)
    if meter is not None and meter.by_prompt:
        out["by_prompt"] = meter.prompt_table()  # where the judge's time went, the slowest prompt first
    return out


def format_spent(cost: dict[str, Any]) -> str:
    """One line for stderr: ``spent: 26 judge calls (8 from the cache), 15,934 prompt + 120 output tokens, 64.2 s``."""
    per = cost.get("per_sample", {})
    calls = (f"{cost['judge_calls']:,} judge calls ({cost['cache_hits']:,} from the cache"
             + (f", {cost['failed_calls']:,} failed" if cost["failed_calls"] else "") + ")"
             if cost["judge_calls"] else "no judge calls")
    tokens = (f", {cost['prompt_tokens']:,} prompt + {cost['output_tokens']:,} output tokens"
              if cost["judge_calls"] else "")
    each = f" ({per['seconds']:.2f} s per sample)" if per else ""
    return f"spent: {calls}{tokens}, {cost['seconds']:.1f} s{each}"


def _cell(value: Any) -> str:
    # lists as JSON literals, which the CSV reader reads back exactly (even with a ';' inside)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            w.writerows(scrub_all([[_cell(c) for c in r] for r in rows]))  # no credential an input or judge echoed

    atomic_write(path, write)


INPUT_PREFIX = "input_"


def input_names(inputs: list[str], ours: list[str]) -> list[str]:
    """The names the input's columns get in ``result.csv``: their own, except one that is also one of
    ours (an input that holds an earlier ``faithfulness`` score), which becomes ``input_<name>`` --
    the plain name is always ragsweep's score, so a script reading that column gates on it."""
    taken = set(ours) | set(inputs)
    names = []
    for col in inputs:
        name = col
        while name in ours or (name != col and name in taken):
            name = INPUT_PREFIX + name
        if name != col:
            note(f"result.csv: the input's column {col!r} is written as {name!r}; {col!r} is ragsweep's score")
            taken.add(name)
        names.append(name)
    return names


def write_outputs(out: Path, samples: list[RagSample], table: Table, specs: list[MetricSpec],
                  scored: list, summary: list[dict[str, Any]], cfg_yaml: str,
                  cost: dict[str, Any] | None = None) -> None:
    """``result.csv``, ``summary.csv``, ``explanations.jsonl``, ``cost.json`` (what scoring spent, when
    known) and the resolved ``config.yaml``."""
    columns, rows, _ = table
    inputs = [c for c in columns if c != "id"]
    m = len(specs)
    ours = ["id", *[c for s in specs for c in (s.name, f"{s.name}_status")]]
    header = ["id", *input_names(inputs, ours), *ours[1:]]
    lines = []
    for i, (sample, row) in enumerate(zip(samples, rows)):
        results = [r.result for r in scored[i * m:(i + 1) * m]]
        lines.append([sample.id, *[row.get(c) for c in inputs],
                      *[c for r in results for c in (r.value, r.status)]])
    _write_csv(out / "result.csv", header, lines)
    keys = ["metric", "mean", "ci_low", "ci_high", "n_ok", "n_undefined", "n_error", "n_empty", "threshold",
            "passed", "reason"]
    flat = [[str(r.get(k)).lower() if isinstance(r.get(k), bool) else r.get(k) for k in keys] for r in summary]
    _write_csv(out / "summary.csv", keys, flat)
    # Explanations carry error texts from servers: scrubbed of anything that looks like a credential.
    text = "".join(json.dumps({"sample_id": r.sample_id, "metric": r.metric, "value": r.result.value,
                               "status": r.result.status, "explanation": scrub_all(r.result.explanation)},
                              ensure_ascii=False, default=str) + "\n" for r in scored)
    atomic_write(out / "explanations.jsonl", lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    if cost is not None:
        blob = json.dumps(cost, indent=1) + "\n"
        atomic_write(out / "cost.json", lambda tmp: Path(tmp).write_text(blob, encoding="utf-8"))
    if cfg_yaml:
        atomic_write(out / "config.yaml", lambda tmp: Path(tmp).write_text(scrub(cfg_yaml), encoding="utf-8"))


def format_summary(summary: list[dict[str, Any]]) -> str:
    """The summary as a fixed-width text table."""
    def num(v: Any) -> str:
        return "-" if v is None or v == "" else f"{v:.4f}" if isinstance(v, float) else str(v).lower()

    head = ("metric", "mean", "95% CI", "ok", "undef", "error", "empty", "threshold", "passed")
    body = [(r["metric"], num(r["mean"]),
             "-" if r["ci_low"] is None else f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}]",
             str(r["n_ok"]), str(r["n_undefined"]), str(r["n_error"]), num(r.get("n_empty")),
             num(r["threshold"]), num(r["passed"])) for r in summary]
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in (head, *body))


def _names(value: Any) -> list[str] | None:
    """``metrics`` as a list of names: a list, a comma-separated string, or None (choose from the file)."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else [str(n) for n in value]
    if not any(names):
        raise InputError("metrics selects no metric; name some, or leave metrics unset for all the file supports")
    return [n for n in names if n]


def dry_run(samples: list[RagSample], specs: list[MetricSpec], options: Any, path: Path, concurrency: int,
            has_judge: bool = True) -> int:
    """Run the metrics against a recording fake judge: print the calls and tokens a real run would spend
    (none without a judge: judged metrics then run their offline stand-ins)."""
    from ragsweep.metrics import DryRunEmbedder, DryRunLLM, dry_run_report

    print(f"dry run: {len(samples)} samples from {path}")
    print(f"metrics: {', '.join(s.name for s in specs)}")
    judged = [s for s in specs if s.needs_judge] if has_judge else []
    if not judged:
        print("judge calls: 0")
        return 0
    judge = DryRunLLM()
    asyncio.run(score_samples(samples, judged, judge=judge, embedder=DryRunEmbedder(), options=options,
                              concurrency=concurrency, progress=False))
    print(dry_run_report(judge.calls, n_samples=len(samples)))
    return 0


def _out(cfg: DictConfig) -> tuple[Path, bool]:
    """``out`` checked for writing before any work (InputError if it cannot be), and whether it is
    named by the clock (then claimed for this run alone when the results are written)."""
    raw = OmegaConf.to_container(cfg, resolve=False).get("out")  # type: ignore[union-attr]
    if cfg.out is None or not str(cfg.out).strip():
        raise InputError("out is empty: name the folder for the results, e.g. out=reports/today")
    out, claim = Path(str(cfg.out)), named_by_clock(raw)
    check_writable(out.parent if claim else out)  # a clock-named out may be another run's already
    return out, claim


def run(cfg: DictConfig) -> int:
    """Score ``cfg.input``; returns the exit code (0 thresholds hold, 1 one fails, 3 nothing scored)."""
    if not cfg.input:
        raise InputError("which file? ragsweep score input=FILE")
    path = Path(str(cfg.input))
    out, claim = _out(cfg)
    empty_answers = str(cfg.empty_answers)
    if empty_answers not in EMPTY_ANSWERS:
        raise InputError(f"empty_answers must be one of {', '.join(EMPTY_ANSWERS)}, got {empty_answers!r}")
    samples, fields, table = read_samples(path, cfg.split)
    names = _names(cfg.metrics)
    samples, fields = with_citations(samples, fields, table, str(path), asks_for_citations(names))
    # The llm config group builds the judge (its `none` option builds None); unset, no judge.
    judge = build(cfg.llm, "llm") if cfg.llm is not None else None
    options = OmegaConf.to_container(cfg.metric_options)
    # options are checked before a dry run reports success
    specs, thresholds = plan(path, samples, fields, names, has_judge=judge is not None,
                             thresholds=OmegaConf.to_container(cfg.thresholds), options=options)
    judged = [s.name for s in specs if s.needs_judge]
    if cfg.dry_run:
        return dry_run(samples, specs, options, path, int(cfg.concurrency or 4), judge is not None)
    if judged and judge is not None:
        judge.identity()  # fail fast (exit 2) when the model is missing, before any sample is scored
    embedder = embedder_for(specs, cfg.embedder, options)
    try:
        scored, cost = asyncio.run(measure(samples, specs, judge=judge, embedder=embedder, options=options,
                                     concurrency=cfg.concurrency, progress=bool(cfg.progress),
                                     empty_answers=empty_answers))
    finally:
        for part in (judge, getattr(judge, "inner", None)):
            if callable(getattr(part, "close", None)):
                part.close()
    summary = summary_rows(scored, specs, thresholds, seed=int(cfg.seed))
    code, lines = outcome(scored, specs, summary)
    if code == EXIT_NOT_SCORED and "answer" in fields and not any((s.answer or "").strip() for s in samples):
        lines.append(f"the answer column {fields['answer']!r} is empty in every row: if {path.name} is a test set, "
                     f"{ANSWER_IT}")
    folder, problem = save(out, lambda into, final: write_outputs(into, samples, table, specs, scored, summary,
                                                                  config_yaml(cfg, out=str(final)), cost),
                           claim=claim, command="score")
    print(format_spent(cost), file=sys.stderr)
    print(format_summary(summary))
    print(f"\nscores: {folder}")
    for line in lines:
        print(line, file=sys.stderr if code == EXIT_NOT_SCORED else sys.stdout)
    if problem:  # the work is kept elsewhere; the exit code says the results are not where asked
        print(f"ragsweep: error: {problem}; {out} is left as it was; the results are in {folder}", file=sys.stderr)
        return problem.code
    return code


def score_app(cfg: DictConfig) -> None:
    try:
        code = run(cfg)
    except InputError as exc:
        fail(str(exc))
    raise SystemExit(code)


@dataclass
class Scores:
    """Per-sample scores of one ``score`` call, with their evidence.

    Attributes:
        samples: The samples scored, in input order.
        metrics: The metric specs, in column order.
        rows: One :class:`ScoredSample` per sample x metric, sample-major.
        thresholds: Metric -> threshold (minimum, or maximum for lower-is-better metrics).
        seed: Bootstrap seed of the summary's confidence intervals.
        cost: What scoring spent (:func:`spent`): seconds, judge calls, cache hits, tokens.
    """

    samples: list[RagSample]
    metrics: list[MetricSpec]
    rows: list[ScoredSample]
    thresholds: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    table: Any = field(default=None, repr=False)
    cost: dict[str, Any] | None = None

    def summary_rows(self) -> list[dict[str, Any]]:
        return summary_rows(self.rows, self.metrics, self.thresholds, seed=self.seed)

    def summary(self) -> Any:
        """A DataFrame: per metric, mean, 95% bootstrap CI, ok / undefined / error counts, threshold, passed."""
        import pandas as pd

        return pd.DataFrame(self.summary_rows()).set_index("metric")

    def to_pandas(self) -> Any:
        """A DataFrame with a row per sample: its id, then ``<metric>`` and ``<metric>_status`` columns."""
        import pandas as pd

        m = len(self.metrics)
        records = []
        for i, sample in enumerate(self.samples):
            rec: dict[str, Any] = {"id": sample.id}
            for r in self.rows[i * m:(i + 1) * m]:
                rec[r.metric] = r.result.value
                rec[f"{r.metric}_status"] = r.result.status
            records.append(rec)
        return pd.DataFrame.from_records(records)

    @property
    def explanations(self) -> list[dict[str, Any]]:
        """Every score's evidence: sample id, metric, value, status and explanation."""
        return [{"sample_id": r.sample_id, "metric": r.metric, "value": r.result.value,
                 "status": r.result.status, "explanation": r.result.explanation} for r in self.rows]

    @property
    def passed(self) -> bool:
        """Whether every threshold holds (True when there are none)."""
        return all(r["passed"] is not False for r in self.summary_rows())

    @property
    def exit_code(self) -> int:
        """What ``ragsweep score`` exits with on these scores: 0 every threshold holds, 1 one fails,
        3 nothing was measured (every judged score is an error)."""
        return outcome(self.rows, self.metrics, self.summary_rows())[0]

    def mean(self, metric: str) -> float | None:
        """The mean of one metric over its ok values (None when it has none)."""
        return next(r["mean"] for r in self.summary_rows() if r["metric"] == metric)

    def write(self, out: str | Path) -> Path:
        """Write ``result.csv``, ``summary.csv`` and ``explanations.jsonl`` (as ``ragsweep score``) into ``out``."""
        out = Path(out)
        table = self.table or table_of(self.samples)
        with staged(out) as into:  # all or nothing, as ragsweep score writes them
            write_outputs(into, self.samples, table, self.metrics, self.rows, self.summary_rows(), "", self.cost)
        (out / "config.yaml").unlink(missing_ok=True)
        return out

    def __repr__(self) -> str:
        return f"Scores({len(self.samples)} samples)\n" + format_summary(self.summary_rows())
