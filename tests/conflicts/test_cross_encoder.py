from __future__ import annotations

import json
from collections import Counter, OrderedDict
from pathlib import Path

import numpy as np
import pytest

from conflicts.detection import classifier
from conflicts.detection.classifier import (
    LOOKUP_READER_UNSURE,
    ONE_SLOT_CHANGE,
    TIER,
    TIER_READ,
    PairInput,
    another_value_readings,
    classify_pairs,
)
from conflicts.detection.cross_encoder import (
    CONSULT_FROM,
    LOOKUP_READER_PATH,
    SLOT_READER_PATH,
    WEIGHTS_PATH,
    load_cross_encoder,
    second_reading,
)
from conflicts.detection.network import LABELS
from conflicts.detection.verdict import Relation
from memories.models import Memory
from memories.subjects import subject_of

DUPLICATE = LABELS.index("duplicate")


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
    # Same habit, other words: "never" on one side only reads like a clash to the network.
    # (Retraining moves which paraphrases the network misreads; this one it misreads since 2026-11-26.)
    a = "The user never eats pork."
    b = "Pork is something the user avoids completely."
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


@pytest.mark.parametrize("reader_path", [SLOT_READER_PATH, LOOKUP_READER_PATH])
def test_the_slot_and_lookup_readers_share_the_pair_readers_word_table_and_tokenizer(reader_path: Path) -> None:
    # One 49 MB table and one tokenizer serve every reader: each reader's metadata must name the same bytes.
    pair_reader, reader = (json.loads(path.with_suffix(".json").read_text()) for path in (WEIGHTS_PATH, reader_path))

    assert reader["word_table"] == pair_reader["word_table"]
    assert reader["tokenizer"] == pair_reader["tokenizer"]
    assert reader["labels"] == list(LABELS)
    assert load_cross_encoder(reader_path) is not load_cross_encoder()


def test_the_lookup_reader_learnt_from_every_pair_of_the_lookup_pairs_file() -> None:
    data = json.loads(LOOKUP_READER_PATH.with_suffix(".json").read_text())["training_data"]
    pairs_file = Path(__file__).resolve().parents[2] / "training" / "data" / "lookup-pairs-train.jsonl"
    labels = Counter(json.loads(line)["label"] for line in pairs_file.read_text().splitlines())

    assert data["files"][-1] == pairs_file.name
    assert data["counts"]["slots"] == dict(labels)


def _fact(text: str) -> Memory:
    return Memory(text=text, subject_entity=subject_of(text).entity, agent="agent")


def test_a_lookup_pair_goes_to_the_slot_reader_only_where_the_lookup_reader_is_unsure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unsure = ("Errors are reported to Sentry.", "Crash reports now go to Bugsnag; the Sentry project is archived.")
    staged = ("Bug MOB-88: the Android app crashes on login.", "MOB-88 fixed in app version 3.4.1.")
    unrelated = ("Team lunch is on Wednesdays at the Thai place.", "The VPN config lives in 1Password.")
    slot_reader = load_cross_encoder(SLOT_READER_PATH)
    read_by_slots: list[tuple[str, str]] = []
    read = slot_reader.probabilities
    monkeypatch.setattr(slot_reader, "probabilities", lambda pairs: read_by_slots.extend(pairs) or read(pairs))
    monkeypatch.setattr(classifier, "_readings", OrderedDict())

    readings = another_value_readings([(_fact(a), _fact(b)) for a, b in (unsure, staged, unrelated)])

    # The lookup reader gives the Sentry pair a small chance (0.16) and the slot reader reads it (0.81);
    # it is sure of the stages and of the unrelated pair, and the slot reader never sees them.
    assert read_by_slots == [unsure]
    assert readings[0] >= ONE_SLOT_CHANGE
    assert readings[1] >= ONE_SLOT_CHANGE
    assert readings[2] < LOOKUP_READER_UNSURE
