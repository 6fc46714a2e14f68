"""ragsweep: synthetic test sets, retriever sweeps and explained metrics for RAG, offline by default.

The Python API (each call does what its command does, with the same defaults)::

    import ragsweep

    testset = ragsweep.generate("shipped", n=20)                     # ragsweep gen
    testset = ragsweep.TestSet.read("goldens.json", corpus="docs/")  # a Ragas, DeepEval or LlamaIndex file
    board = ragsweep.sweep("chunker.size=256,512")                   # ragsweep sweep
    scores = ragsweep.score("results.csv", ["faithfulness"], judge=ragsweep.llm.local())
    board = ragsweep.rescore(board.dir, ["faithfulness"], judge=ragsweep.llm.local())
    board = ragsweep.board("outputs/sweeps/<stamp>", sort_by="recall@10")
    board = ragsweep.run(app=my_answer_function, dir="outputs/runs/mine")  # ragsweep run

Importing ``ragsweep`` is cheap: the modules behind these names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Board", "RagSample", "Scores", "TestSet", "ascore", "board", "generate", "llm", "rescore", "run",
           "score", "sweep"]

if TYPE_CHECKING:  # pragma: no cover
    from ragsweep.harness.api import Board, Scores, TestSet, ascore, board, generate, llm, rescore, run, score, sweep
    from ragsweep.metrics import RagSample


def __getattr__(name: str) -> Any:
    if name == "RagSample":
        from ragsweep.metrics import RagSample

        return RagSample
    if name in __all__:
        from ragsweep.harness import api

        return getattr(api, name)
    raise AttributeError(f"module 'ragsweep' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
