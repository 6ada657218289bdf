"""The subject guard end to end: agents commit over the API, a real Celery worker embeds and checks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from conflicts.models import ConflictCard, Uncertainty
from memories.models import Event, Memory
from memoryhub.celery import app
from tests.conftest import AgentClient

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 60


@pytest.fixture(scope="module")
def worker() -> Iterator[Any]:
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=20) as w:
        yield w


def _checked(*ids: str) -> list[Memory]:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        memories = list(Memory.objects.filter(pk__in=ids))
        if all(m.checked_at is not None for m in memories) or time.monotonic() > deadline:
            return memories
        time.sleep(0.2)


def _committed_in_turn(agent: AgentClient, older: tuple[str, str], newer: tuple[str, str]) -> tuple[Memory, Memory]:
    """Commit ``(text, valid_from)`` pairs one after the other, each checked by the worker before the next."""
    first = agent.commit(older[0], valid_from=older[1])
    _checked(first["id"])
    second = agent.commit(newer[0], valid_from=newer[1])
    _checked(first["id"], second["id"])
    return Memory.objects.get(pk=first["id"]), Memory.objects.get(pk=second["id"])


def test_the_textbook_move_ends_superseded_or_asked_never_both_silently_reliable(
    agent: AgentClient, worker: Any
) -> None:
    old, new = _committed_in_turn(
        agent,
        ("The user lives in Lisbon.", "2026-09-10T09:00:00Z"),
        ("The user says they moved to Berlin last month.", "2026-11-12T09:00:00Z"),
    )
    assert (old.subject_entity, old.subject_attribute) == ("user", "home city")
    assert (new.subject_entity, new.subject_attribute) == ("user", "home city")
    superseded = old.superseded_by_id == new.pk
    carded = ConflictCard.objects.filter(card_facts__memory=old).filter(card_facts__memory=new).exists()
    assert superseded != carded  # one of the two, never both, never neither
    if superseded:
        reason = Event.objects.get(verb="conflict.temporal_supersede").reason
        assert reason.startswith("Same subject — the user's home city")
    recalled = agent.post("/recall", {"query": "Where does the user live?", "k": 3}).json()
    assert recalled[0]["memory"]["id"] == str(new.pk)


def test_a_relative_never_retires_the_users_own_fact(agent: AgentClient, worker: Any) -> None:
    user, _ = _committed_in_turn(
        agent,
        ("The user lives in Lisbon.", "2026-09-10T09:00:00Z"),
        ("The user's sister moved to Porto.", "2026-11-12T09:00:00Z"),
    )

    assert user.superseded_by_id is None
    assert user.reliability == "reliable"
    assert not Event.objects.filter(verb__in=["conflict.temporal_supersede", "conflict.merge_duplicate"]).exists()


def test_a_thing_of_the_users_never_retires_another_that_shares_a_word(agent: AgentClient, worker: Any) -> None:
    # "running" reads as a verb after "user's"; the two facts are about two things of the user's.
    old, new = _committed_in_turn(
        agent,
        ("The user's running shoes are Asics Novablast.", "2026-01-05T09:00:00Z"),
        ("The user's running club moved to Saturday mornings.", "2026-04-06T09:00:00Z"),
    )
    assert (old.subject_attribute, new.subject_attribute) == ("running shoes", "running club")
    assert old.superseded_by_id is None
    assert not Event.objects.filter(verb__in=["conflict.temporal_supersede", "conflict.merge_duplicate"]).exists()


def test_the_team_saying_it_moved_a_thing_retires_what_was_said_of_the_thing(agent: AgentClient, worker: Any) -> None:
    # "We moved …" is about expense reports, as the note "Moved expense reports …" is — not about "the team".
    old, new = _committed_in_turn(
        agent,
        ("Expense reports are filed in Expensify.", "2026-01-05T09:00:00Z"),
        ("We moved expense reports from Expensify to Ramp.", "2026-04-06T09:00:00Z"),
    )
    assert (old.subject_entity, new.subject_entity) == ("expense reports", "expense reports")
    assert old.superseded_by_id == new.pk


def test_a_change_of_one_part_that_says_the_rest_stays_retires_nothing(agent: AgentClient, worker: Any) -> None:
    old, new = _committed_in_turn(
        agent,
        ("Team plan: 10 seats, 50 GB storage.", "2026-03-02T09:00:00Z"),
        ("Team plan cut to 8 seats from May; storage unchanged.", "2026-04-20T09:00:00Z"),
    )
    # The 50 GB still holds: the older fact stays, with an open record beside the newer one — no card.
    assert (old.superseded_by_id, old.reliability) == (None, "reliable")
    assert Uncertainty.objects.filter(memory_a=old, memory_b=new, uncertainty_type="stale", state="open").exists()
    assert not ConflictCard.objects.exists()


def test_a_thing_named_after_another_never_retires_it(agent: AgentClient, worker: Any) -> None:
    # The slot reader reads the key of "ci-deployer-staging" as another value of ci-deployer's key (0.88);
    # from a blind dev story (training/data/stories-fresh-dev-3.jsonl, t04), where it retired the rotation.
    old, new = _committed_in_turn(
        agent,
        (
            "ci-deployer access key rotated (new key id ends ...Q7XM); old key deactivated, deleted after 7 days.",
            "2025-05-19T09:00:00Z",
        ),
        (
            "Staging still deploys with IAM user ci-deployer-staging's access key — accepted exception until staging"
            " moves to OIDC in Q4.",
            "2025-09-02T09:00:00Z",
        ),
    )
    assert (old.superseded_by_id, new.superseded_by_id) == (None, None)
    assert not Event.objects.filter(verb="conflict.temporal_supersede").exists()
