from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memories import embeddings
from memories.embeddings import DIMENSIONS, Embedder, EmbeddingError, MiniLMEmbedder, embedder_named, get_embedder


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    # The process-wide instance: loading the model once keeps the suite fast.
    result = get_embedder()
    assert isinstance(result, MiniLMEmbedder)
    return result


def test_it_returns_one_normalised_float32_row_per_text(embedder: Embedder) -> None:
    vectors = embedder.embed(["The API uses REST", "Deploys happen on Tuesdays", "x"])

    assert vectors.shape == (3, DIMENSIONS)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()


def test_it_returns_an_empty_matrix_for_no_texts(embedder: Embedder) -> None:
    vectors = embedder.embed([])

    assert vectors.shape == (0, DIMENSIONS)
    assert vectors.dtype == np.float32


def test_it_puts_a_paraphrase_closer_than_an_unrelated_sentence(embedder: Embedder) -> None:
    anchor, paraphrase, unrelated = embedder.embed(
        [
            "The user moved to Lisbon last spring.",
            "Last spring the user relocated to Lisbon.",
            "The database backups run every night at 2 am.",
        ]
    )

    assert float(anchor @ paraphrase) > float(anchor @ unrelated) + 0.2


def test_it_embeds_a_batch_like_one_text_at_a_time(embedder: Embedder) -> None:
    texts = ["short", "a somewhat longer sentence about the staging database", "The rate limit is 1,000 req/s"]

    batch = embedder.embed(texts)
    single = np.vstack([embedder.embed([text]) for text in texts])

    np.testing.assert_allclose(batch, single, atol=1e-5)


def test_it_keeps_the_input_order_with_mixed_lengths(embedder: Embedder) -> None:
    texts = [
        "A very long sentence " + "that keeps going and going " * 20,
        "hi",
        "Medium length text about deployments on Tuesdays",
        "ok",
        "Another long one: " + "the cache layer sits in front of the database " * 8,
    ]

    batch = embedder.embed(texts)

    for row, text in zip(batch, texts, strict=True):
        np.testing.assert_allclose(row, embedder.embed([text])[0], atol=1e-5)


def test_it_splits_large_inputs_into_batches() -> None:
    small_batches = MiniLMEmbedder(batch_size=2)
    texts = [f"fact number {n} about topic {n % 3}" for n in range(5)]

    np.testing.assert_allclose(small_batches.embed(texts), get_embedder().embed(texts), atol=1e-5)


def test_batches_run_side_by_side_give_what_one_thread_gives() -> None:
    texts = [f"fact {n}: " + "the deploy window moved " * (n % 4) for n in range(11)]

    one_thread = MiniLMEmbedder(batch_size=2, threads=1).embed(texts)
    side_by_side = MiniLMEmbedder(batch_size=2, threads=3).embed(texts)

    np.testing.assert_array_equal(side_by_side, one_thread)
    for row, text in zip(side_by_side, texts, strict=True):
        np.testing.assert_allclose(row, get_embedder().embed([text])[0], atol=1e-5)


def test_it_truncates_texts_beyond_the_model_limit(embedder: Embedder) -> None:
    long_text = "word " * 2000

    (vector,) = embedder.embed([long_text])

    assert vector.shape == (DIMENSIONS,)
    assert np.isfinite(vector).all()


def test_it_refuses_an_unknown_embedder_setting(settings: Any) -> None:
    get_embedder.cache_clear()
    settings.MEMORYHUB_EMBEDDER = "word2vec"
    try:
        with pytest.raises(EmbeddingError, match="MEMORYHUB_EMBEDDER"):
            get_embedder()
    finally:
        get_embedder.cache_clear()


class RemoteEmbedder:
    name = "remote-model"

    def embed(self, texts: list[str]) -> Any:
        raise AssertionError("the remote model must not be asked for MiniLM vectors")


def test_the_embedder_named_is_the_configured_one_when_the_names_match() -> None:
    embedder_named.cache_clear()
    try:
        assert embedder_named(get_embedder().name) is get_embedder()
    finally:
        embedder_named.cache_clear()


def test_minilm_vectors_come_from_minilm_when_another_embedder_is_configured(monkeypatch: Any) -> None:
    embedder_named.cache_clear()
    monkeypatch.setattr(embeddings, "get_embedder", RemoteEmbedder)
    try:
        local = embedder_named(MiniLMEmbedder.name)
        with pytest.raises(EmbeddingError, match="no embedder here makes 'word2vec' vectors"):
            embedder_named("word2vec")
    finally:
        embedder_named.cache_clear()

    assert isinstance(local, MiniLMEmbedder)
    np.testing.assert_allclose(local.embed(["hello"]), get_embedder().embed(["hello"]), atol=1e-6)
