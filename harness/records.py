"""What a run produces per sample: the retrieved chunks (and, with an answerer, the answer)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Retrieved:
    """One retrieved chunk, located in its source document."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    score: float
    text: str


@dataclass(frozen=True)
class RunSample:
    """A test sample run through one pipeline variant (retrieved at the job's largest K)."""

    sample_id: str
    variant: str
    retrieved: tuple[Retrieved, ...]
    answer: str | None = None

    def to_dict(self, keep_text: bool = True) -> dict[str, Any]:
        rows = [asdict(r) for r in self.retrieved]
        if not keep_text:
            for r in rows:
                r.pop("text")
        return {"sample_id": self.sample_id, "variant": self.variant, "retrieved": rows, "answer": self.answer}
