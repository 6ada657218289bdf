"""The subject guard end to end: agents commit over the API, a real Celery worker embeds and checks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from conflicts.models import ConflictCard
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


def test_the_textbook_move_ends_superseded_or_asked_never_both_silently_reliable(
    agent: AgentClient, worker: Any
) -> None:
    lisbon = agent.commit("The user lives in Lisbon.", valid_from="2026-09-10T09:00:00Z")
    _checked(lisbon["id"])
    berlin = agent.commit("The user says they moved to Berlin last month.", valid_from="2026-11-12T09:00:00Z")
    _checked(lisbon["id"], berlin["id"])

    old = Memory.objects.get(pk=lisbon["id"])
    new = Memory.objects.get(pk=berlin["id"])
    assert (old.subject_entity, old.subject_attribute) == ("user", "home city")
    assert (new.subject_entity, new.subject_attribute) == ("user", "home city")
    superseded = old.superseded_by_id == new.pk
    carded = ConflictCard.objects.filter(card_facts__memory=old).filter(card_facts__memory=new).exists()
    assert superseded != carded  # one of the two, never both, never neither
    if superseded:
        reason = Event.objects.get(verb="conflict.temporal_supersede").reason
        assert reason.startswith("Same subject — the user's home city")
    recalled = agent.post("/recall", {"query": "Where does the user live?", "k": 3}).json()
    assert recalled[0]["memory"]["id"] == berlin["id"]


def test_a_relative_never_retires_the_users_own_fact(agent: AgentClient, worker: Any) -> None:
    user = agent.commit("The user lives in Lisbon.", valid_from="2026-09-10T09:00:00Z")
    _checked(user["id"])
    sister = agent.commit("The user's sister moved to Porto.", valid_from="2026-11-12T09:00:00Z")
    _checked(user["id"], sister["id"])

    assert Memory.objects.get(pk=user["id"]).superseded_by_id is None
    assert Memory.objects.get(pk=user["id"]).reliability == "reliable"
    assert not Event.objects.filter(verb__in=["conflict.temporal_supersede", "conflict.merge_duplicate"]).exists()


def test_a_thing_of_the_users_never_retires_another_that_shares_a_word(agent: AgentClient, worker: Any) -> None:
    # "running" reads as a verb after "user's"; the two facts are about two things of the user's.
    shoes = agent.commit("The user's running shoes are Asics Novablast.", valid_from="2026-01-05T09:00:00Z")
    _checked(shoes["id"])
    club = agent.commit("The user's running club moved to Saturday mornings.", valid_from="2026-04-06T09:00:00Z")
    _checked(shoes["id"], club["id"])

    old, new = Memory.objects.get(pk=shoes["id"]), Memory.objects.get(pk=club["id"])
    assert (old.subject_attribute, new.subject_attribute) == ("running shoes", "running club")
    assert old.superseded_by_id is None
    assert not Event.objects.filter(verb__in=["conflict.temporal_supersede", "conflict.merge_duplicate"]).exists()
