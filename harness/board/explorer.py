"""``explorer.html``: every question of a finished sweep or run, one page, no network.

The leaderboard says which variant lost; this page says on which questions, and why. It lists the
questions with each variant's score on a chosen metric (filter by kind or text, sort, or keep the
questions where variant A scores below variant B), and opens a question to show its reference and
evidence, then per variant the ranked contexts with the evidence overlap marked and the cut drawn
(what the variant passed on, and for a budget the part of the last context it cut away), its answer,
and every metric with its explanation.

The data are read from the job folders (``runs.jsonl``, ``scores.jsonl``, ``summary.json``), never
from the pipeline, and embedded in the page gzip-compressed and base64-encoded: the browser inflates
them with its own ``DecompressionStream``, so a sweep of a thousand questions and twenty variants stays
a file one can mail. Chunk texts are stored once however many variants retrieve them.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragsweep.harness.board.explorer_page import CSS, JS
from ragsweep.harness.board.model import Row, score_lines, varying_params
from ragsweep.harness.records import Cut, Retrieved, RunSample, read_runs
from ragsweep.metrics import InputError, higher_is_better

FILE = "explorer.html"


class _Whys:
    """The page's explanation table: each distinct explanation once (the rank metrics of one question
    and variant share theirs), referred to by its index."""

    def __init__(self) -> None:
        self.rows: list[Any] = []
        self._index: dict[str, int] = {}

    def add(self, why: Any, key: str | None = None) -> int | None:
        """The index of ``why``; ``key``: its JSON text as read, when known (serialising it again costs
        more than the rest of the page)."""
        if why is None:
            return None
        key = key if key is not None else json.dumps(why, sort_keys=True, ensure_ascii=False)
        if key not in self._index:
            self._index[key] = len(self.rows)
            self.rows.append(why)
        return self._index[key]


class _Chunks:
    """The page's chunk table: each distinct retrieved text once, referred to by its index."""

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self._index: dict[tuple[str, int, int, str], int] = {}

    def add(self, r: Retrieved) -> int:
        key = (r.doc_id, r.start, r.end, r.text or "")
        if key not in self._index:
            self._index[key] = len(self.rows)
            self.rows.append([r.doc_id, r.start, r.end, r.text or ""])
        return self._index[key]


def overlaps(r: Retrieved, run: RunSample) -> list[list[int]]:
    """Character ranges of ``r``'s text that hold the question's evidence (offsets into the text).

    With span evidence, the overlap of the span relevance is judged on (the original's, for a copy)
    with each evidence span; with document judgements (qrels), the whole text when its document is
    judged relevant. Nothing when the text's length does not match its span (a context an
    application returned that was located only approximately).
    """
    doc, start, end = r.judged_span
    size = len(r.text or "")
    if run.evidence is not None:
        if size != end - start:
            return []
        got = sorted([max(s, start) - start, min(e, end) - start] for d, s, e in run.evidence
                     if d == doc and s < end and e > start)
        return got
    if run.qrels and float(run.qrels.get(doc, 0) or 0) > 0:
        return [[0, size]]
    return []


def _cut_of(variant: dict[str, Any]) -> Cut | None:
    try:
        return Cut.of(variant)
    except (KeyError, TypeError, ValueError, InputError):
        # An application run passes on what it returned: no cut, every context.
        return None


def _passed(cut: Cut | None, run: RunSample) -> dict[str, Any]:
    """How many ranked items the cut passes on, and for a budget the kept range of the last one."""
    if cut is None:
        return {"n": len(run.retrieved)}
    try:
        passed = cut.passed(run.retrieved)
    except InputError:  # a token budget over records written without texts
        return {"n": None}
    out: dict[str, Any] = {"n": len(passed)}
    if passed and passed[-1].span != run.retrieved[len(passed) - 1].span:
        full, kept = run.retrieved[len(passed) - 1], passed[-1]
        out["kept"] = [kept.start - full.start, kept.end - full.start]
    return out


def _scores(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """variant -> sample_id -> metric -> score row, from a job's ``scores.jsonl``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if not path.is_file():
        return out
    for line, row in score_lines(path):
        # Score rows are written with their explanation last: its text is the key of the table.
        at = line.rfind(_WHY)
        if at > 0 and line.rstrip().endswith("}"):
            row["_why"] = line[at + len(_WHY):line.rstrip().rfind("}")]
        out.setdefault(row["variant"], {}).setdefault(row["sample_id"], {})[row["metric"]] = row
    return out


_WHY = '"explanation": '


def _question(run: RunSample) -> dict[str, Any]:
    q: dict[str, Any] = {"id": run.sample_id, "question": run.question or "", "reference": run.reference,
                         "evidence": list(run.evidence_texts or []), "kind": run.kind or ""}
    if run.history:
        q["history"] = [dict(t) for t in run.history]
    if run.qrels:
        q["qrels"] = {str(k): v for k, v in run.qrels.items()}
    return q


def collect(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, title: str = "") -> dict[str, Any]:
    """The page's data from the board's ranked rows and their job folders."""
    chunks, whys = _Chunks(), _Whys()
    questions: dict[str, dict[str, Any]] = {}
    jobs: dict[str, int] = {}
    job_data: list[dict[str, Any]] = []
    runs_of: dict[str, dict[str, RunSample]] = {}
    summaries: dict[str, dict[str, Any]] = {}
    scores_of: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    ok_rows = [r for r in rows if r.error is None]
    labels = varying_params(ok_rows) if len(ok_rows) > 1 else []
    variants, cells = [], []
    for rank, row in enumerate(ok_rows, 1):
        folder = Path(row.job)
        if row.job not in jobs:
            jobs[row.job] = len(job_data)
            runs = read_runs(folder / "runs.jsonl") if (folder / "runs.jsonl").is_file() else []
            runs_of[row.job] = {}
            retrieved: dict[str, list[list[Any]]] = {}
            for run in runs:
                runs_of[row.job].setdefault(run.sample_id, run)
                questions.setdefault(run.sample_id, _question(run))
                retrieved[run.sample_id] = [[chunks.add(r), round(r.score, 4), overlaps(r, run)]
                                            for r in run.retrieved]
            job_data.append({"folder": folder.name, "retrieved": retrieved})
            summaries[row.job] = _summary(folder)
            scores_of[row.job] = _scores(folder / "scores.jsonl")
        summary_variant = next((v for v in summaries[row.job].get("variants", []) if v.get("variant") == row.variant),
                               {"params": row.params})
        cut = _cut_of(summary_variant)
        label = ", ".join(f"{k}={row.params.get(k)}" for k in labels if row.params.get(k) is not None)
        variants.append({"name": row.variant, "label": label or row.variant, "rank": rank, "job": jobs[row.job],
                         "cut": None if cut is None else cut.label})
        per_sample: dict[str, Any] = {}
        scored = scores_of[row.job].get(row.variant, {})
        for sid, run in runs_of[row.job].items():
            cell: dict[str, Any] = _passed(cut, run)
            answer = run.answers.get(cut.label) if cut is not None else None
            if answer is None and run.raw is not None and cut is None:
                answer = _answer_of(run)
            cell["answer"] = answer
            if run.status != "ok":
                cell["error"] = run.error
            cell["scores"] = {m: [s.get("value"), s.get("status"), whys.add(s.get("explanation"), s.get("_why"))]
                              for m, s in scored.get(sid, {}).items()}
            per_sample[sid] = cell
        cells.append(per_sample)
    if not variants:
        raise InputError("no variant with results to explore")
    return {"title": title, "sort_by": sort_by, "metrics": list(metrics),
            "higher": {m: _higher(m) for m in metrics}, "variants": variants, "questions": list(questions.values()),
            "chunks": chunks.rows, "whys": whys.rows, "jobs": job_data, "cells": cells}


def _answer_of(run: RunSample) -> str | None:
    raw = run.raw
    if isinstance(raw, dict):
        for key in ("answer", "response", "output", "text"):
            if isinstance(raw.get(key), str):
                return raw[key]
    return raw if isinstance(raw, str) else None


def _higher(metric: str) -> bool:
    try:
        return higher_is_better(metric)
    except (KeyError, InputError, ValueError):
        return True


def _summary(folder: Path) -> dict[str, Any]:
    path = folder / "summary.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc.msg})") from exc


def encode(data: dict[str, Any]) -> str:
    """The data as the page carries them: compact JSON, gzip (fixed mtime: same data, same bytes), base64."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def render(data: dict[str, Any]) -> str:
    """The self-contained page."""
    title = html.escape(f"Questions — {data.get('title') or 'ragsweep'}")
    n_q, n_v = len(data["questions"]), len(data["variants"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style></head>
<body>
<header><h1>{title}</h1><p class="note">{n_q} questions × {n_v} variants.
<a href="leaderboard.html">Back to the leaderboard</a></p></header>
<div id="controls"></div>
<div id="status" class="note">Reading the data…</div>
<div id="main"><div id="list"></div><div id="detail"></div></div>
<script id="data" type="application/octet-stream">{encode(data)}</script>
<script>{JS}</script>
</body></html>
"""


def page(rows: Sequence[Row], metrics: Sequence[str], sort_by: str, title: str = "") -> str:
    """The page of the board's ranked rows (written with the leaderboard files, all or nothing)."""
    return render(collect(rows, metrics, sort_by, title=title))
