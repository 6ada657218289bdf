"""Story pairs: a story's clear subjects as reader pairs (training/story_pairs.py)."""

from __future__ import annotations

from typing import Any

from training.story_pairs import SOURCE, story_pairs, story_probes


def _fact(fact_id: str, at: str, text: str, agent: str = "a") -> dict[str, Any]:
    return {"id": fact_id, "text": text, "scope": "s", "agent": agent, "at": f"{at}T09:00:00Z"}


STORY = {
    "id": "t01",
    "domain": "personal",
    "facts": [
        _fact("f1", "2026-01-05", "The user lives in Lisbon."),
        _fact("f2", "2026-01-05", "The user's sister lives in Porto."),
        _fact("f3", "2026-03-01", "The user moved to Berlin."),
        _fact("f4", "2026-03-01", "The user's dentist is Dr. Silva."),
        _fact("f5", "2026-05-01", "The user's sister visited Berlin in May.", agent="b"),
    ],
    "expected_flags": [],
    "current": [
        {"subject": "Home city", "fact_id": "f3", "status": "clear", "about": ["f1", "f3"]},
        {"subject": "Sister's city", "fact_id": "f2", "status": "unclear", "about": ["f2"]},
    ],
    "must_not_flag": [],
}


def test_an_older_fact_of_the_subject_is_updated_by_its_current_fact() -> None:
    pairs = {(p["a"], p["b"]): p["label"] for p in story_pairs([STORY])}
    assert pairs[("The user lives in Lisbon.", "The user moved to Berlin.")] == "update"


def test_other_subjects_and_later_facts_are_compatible_with_the_current_fact() -> None:
    pairs = {(p["a"], p["b"]): p["label"] for p in story_pairs([STORY])}
    assert pairs[("The user's sister lives in Porto.", "The user moved to Berlin.")] == "compatible"
    assert pairs[("The user moved to Berlin.", "The user's sister visited Berlin in May.")] == "compatible"


def test_facts_of_one_day_and_unclear_subjects_make_no_pair() -> None:
    texts = {(p["a"], p["b"]) for p in story_pairs([STORY])}
    # f4 was written the same day as the current fact: no order to learn from.
    assert not any("Dr. Silva" in a or "Dr. Silva" in b for a, b in texts)
    # The sister's city is unclear: nothing says which of her facts holds.
    assert not any(a == "The user's sister lives in Porto." and "visited" in b for a, b in texts)


def test_rows_are_in_the_pairs_format() -> None:
    row = story_pairs([STORY])[0]
    assert set(row) == {"id", "a", "b", "label", "source", "a_time", "b_time"}
    assert row["source"] == SOURCE
    assert row["a_time"] < row["b_time"]


def test_as_probes_an_update_is_a_change_another_subject_is_apart_and_a_later_fact_keeps_the_current_one() -> None:
    kinds = {(p["a"], p["b"]): p["kind"] for p in story_probes([STORY])}

    assert kinds[("The user lives in Lisbon.", "The user moved to Berlin.")] == "same_subject_change"
    assert kinds[("The user's sister lives in Porto.", "The user moved to Berlin.")] == "different_subject"
    assert kinds[("The user moved to Berlin.", "The user's sister visited Berlin in May.")] == "current_kept"
    # The same pairs as the reader's, in the same order.
    assert [(p["a"], p["b"]) for p in story_probes([STORY])] == [(p["a"], p["b"]) for p in story_pairs([STORY])]


def test_probes_carry_each_facts_time_agent_and_scope() -> None:
    probe = next(p for p in story_probes([STORY]) if p["b"].startswith("The user's sister visited"))

    assert probe["id"] == "t01-f3-f5"
    assert (probe["a_time"], probe["b_time"]) == ("2026-03-01T09:00:00Z", "2026-05-01T09:00:00Z")
    assert (probe["a_agent"], probe["b_agent"], probe["a_scope"], probe["b_scope"]) == ("a", "b", "s", "s")


def test_a_subject_without_its_about_list_makes_only_later_fact_pairs() -> None:
    # The shared dev stories name no "about" facts: which facts are another subject's is unknown.
    current = [{"subject": "Home city", "fact_id": "f3", "status": "clear"}]

    probes = story_probes([STORY | {"current": current}])

    assert {p["kind"] for p in probes} == {"current_kept"}
    assert {p["a"] for p in probes} == {"The user moved to Berlin."}
