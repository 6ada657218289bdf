"""Slot pairs: the notation, the dates, and the frozen validation split."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

import pytest

from training.dataset import read_pairs
from training.probes import read_probes
from training.slot_pairs import (
    SLOT_READER_BATTERIES,
    SlotPairError,
    is_validation,
    parse_slot_pairs,
    probes_as_slot_pairs,
    split_slot_pairs,
)

DATA = Path(__file__).resolve().parents[2] / "training" / "data"
SOURCE = """\
# a comment
update | The user lives in Porto. | User relocated to Rotterdam at the end of March.
duplicate | The user lives in Porto. | User is based in Porto.
contradiction | User was born in Lyon. | The user was born in Marseille.
compatible | The user lives in Porto. | The user's sister lives in Porto too.
"""


def test_each_line_is_a_labelled_pair_and_an_update_is_dated_older_first() -> None:
    rows = parse_slot_pairs([("personal", SOURCE)])

    assert [(r["id"], r["label"], r["source"]) for r in rows] == [
        ("slots-personal-2", "update", "slots"),
        ("slots-personal-3", "duplicate", "slots"),
        ("slots-personal-4", "contradiction", "slots"),
        ("slots-personal-5", "compatible", "slots"),
    ]
    update = rows[0]
    assert update["a"] == "The user lives in Porto."
    assert update["b"] == "User relocated to Rotterdam at the end of March."
    gap = dt.date.fromisoformat(update["b_time"]) - dt.date.fromisoformat(update["a_time"])
    assert dt.timedelta(days=7) <= gap <= dt.timedelta(days=240)
    # Dates alone make no update: a contradiction carries none.
    assert not {"a_time", "b_time"} & set(rows[2])


def test_the_same_sources_give_the_same_rows() -> None:
    assert parse_slot_pairs([("p", SOURCE)]) == parse_slot_pairs([("p", SOURCE)])


def test_the_split_is_a_partition_decided_by_each_pair_s_texts() -> None:
    rows = parse_slot_pairs([("p", SOURCE)])
    train, validation = split_slot_pairs(rows)

    assert sorted(r["id"] for r in train + validation) == sorted(r["id"] for r in rows)
    assert all(is_validation(r["a"], r["b"]) for r in validation)
    assert not any(is_validation(r["a"], r["b"]) for r in train)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("update | only one side", "expected 'LABEL"),
        ("renamed | a | b", "expected 'LABEL"),
        ("update | a |", "expected 'LABEL"),
        ("update | a | b | c", "expected 'LABEL"),
        ("duplicate | The user lives in Porto. | User is based in Porto.", "written twice"),
    ],
)
def test_a_malformed_line_is_refused_with_its_source_and_line(line: str, message: str) -> None:
    with pytest.raises(SlotPairError, match=rf"personal, line 6: .*{message}"):
        parse_slot_pairs([("personal", SOURCE + line + "\n")])


def test_the_built_files_are_pairs_with_every_label_and_a_third_held_out() -> None:
    train = read_pairs(DATA / "slot-pairs-train.jsonl")
    validation = read_pairs(DATA / "slot-pairs-validation.jsonl")

    assert (
        {p.label for p in train}
        == {p.label for p in validation}
        == {
            "update",
            "duplicate",
            "contradiction",
            "compatible",
        }
    )
    assert 0.25 < len(validation) / (len(train) + len(validation)) < 0.40
    assert not {(p.a, p.b) for p in train} & {(p.a, p.b) for p in validation}
    assert Counter(p.source for p in train + validation) == {"slots": len(train) + len(validation)}


def test_a_probe_battery_teaches_a_change_as_an_update_and_two_subjects_as_compatible() -> None:
    probes = [
        {
            "id": "c1",
            "kind": "same_subject_change",
            "a": "Rent is 1,100 euros.",
            "b": "Rent went up to 1,250 euros.",
            "a_time": "2026-01-05T09:00:00Z",
            "b_time": "2026-04-06T09:00:00Z",
        },
        {
            "id": "h1",
            "kind": "different_subject",
            "a": "The user's car is a Golf.",
            "b": "The user's car insurance switched to Admiral.",
            "a_time": "2026-01-05T09:00:00Z",
            "b_time": "2026-04-06T09:00:00Z",
        },
    ]

    rows = probes_as_slot_pairs(probes)

    assert [(r["id"], r["label"], r["a_time"], r["b_time"]) for r in rows] == [
        ("probe-c1", "update", "2026-01-05", "2026-04-06"),
        ("probe-h1", "compatible", "2026-01-05", "2026-04-06"),
    ]
    assert {r["source"] for r in rows} == {"slots"}


def test_the_slot_readers_training_file_is_the_slot_pairs_train_split_and_the_dev_batteries() -> None:
    rows = read_pairs(DATA / "slot-reader-train.jsonl")
    slots = read_pairs(DATA / "slot-pairs-train.jsonl")
    battery_count = sum(len(read_probes(DATA / name)) for name in SLOT_READER_BATTERIES)

    assert rows[: len(slots)] == slots
    assert len(rows) == len(slots) + battery_count
    # The validation batteries and later ones stay out: what the reader is measured on.
    held_out = [
        probe
        for name in ("probes-validation.jsonl", "probes-changes-validation.jsonl", "probes-reasons.jsonl")
        for probe in read_probes(DATA / name)
    ]
    assert not {(p.a, p.b) for p in rows} & {(probe["a"], probe["b"]) for probe in held_out}
