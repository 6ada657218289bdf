"""A later fact about one subject that says it changed is an update, even where the model reads a duplicate.

Hand-written pairs (not taken from the probe files) for the tier-0 rule
``conflicts.detection.classifier._announced_within_subject`` and the values it
compares (``new_values``).
"""

from __future__ import annotations

import datetime as dt

from conflicts.detection.classifier import classify_memory_pairs, new_values
from conflicts.detection.verdict import Relation
from memories.models import Memory
from memories.subjects import subject_of

AT = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


def fact(text: str, days_later: int = 0) -> Memory:
    subject = subject_of(text)
    return Memory(
        text=text,
        valid_from=AT + dt.timedelta(days=days_later),
        subject_entity=subject.entity,
        subject_attribute=subject.attribute,
    )


def is_subject_update(older: Memory, newer: Memory) -> bool:
    [verdict] = classify_memory_pairs([(older, newer)])
    return (verdict.relation, verdict.tier, verdict.announced, verdict.current) == (
        Relation.TEMPORAL_CHANGE,
        "rules",
        True,
        "b",
    )


def test_a_later_value_with_a_change_word_is_an_update() -> None:
    assert is_subject_update(
        fact("The book club meeting is on Mondays."), fact("Book club meetings are on Wednesdays now.", days_later=40)
    )
    assert is_subject_update(
        fact("Printer paper comes from Staples."), fact("Printer paper now comes from Viking.", days_later=30)
    )
    assert is_subject_update(
        fact("The user takes 5 mg ramipril."), fact("The cardiologist lowered the user's ramipril to 2.5 mg.", 60)
    )


def test_the_same_value_said_again_is_not_an_update() -> None:
    older = fact("The book club meeting is on Mondays.")

    assert not is_subject_update(older, fact("Book club meetings are still on Mondays now.", days_later=40))


def test_facts_on_the_same_day_are_not_an_update() -> None:
    assert not is_subject_update(
        fact("The book club meeting is on Mondays."), fact("Book club meetings are on Wednesdays now.")
    )


def test_another_subject_is_not_an_update() -> None:
    assert not is_subject_update(
        fact("The book club meeting is on Mondays."), fact("Pottery class is on Wednesdays now.", days_later=40)
    )


def test_new_values_are_figures_names_and_days_the_older_fact_lacks() -> None:
    assert new_values("Bins go out on Tuesdays.", "Bins go out on Thursdays now.") == ["thursday"]
    assert new_values("Bins go out on Tuesdays.", "Bins still go out on Tuesday.") == []
    assert new_values("The quota is 40 GB.", "The quota is 40 GB for Pro.") == ["pro"]
    assert new_values("The quota is 40 GB.", "The quota is 50 GB.") == ["50"]
