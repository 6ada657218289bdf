"""Cards follow their facts: a retired fact updates its open cards, or closes them with a note."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conflicts.models import ConflictCard
from conflicts.retirement import standing
from memories.audit import Actor
from memories.models import Event, Memory
from memories.services import event_undo, memory_forget, memory_supersede
from tests.conflicts.cards import pair_card, reversal_card
from tests.factories import memory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
AGENT = Actor.system("agent")


def open_cards_with_retired_facts_only() -> list[ConflictCard]:
    """The invariant: every open card still has two facts that stand."""
    return [
        card
        for card in ConflictCard.objects.filter(state="open")
        if sum(1 for m in Memory.objects.filter(card_facts__card=card) if standing(m)) < 2
    ]


def test_a_superseded_fact_closes_a_two_fact_card_with_a_note(
    workspace: Workspace, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    card, vegetarian, _steak = pair_card(workspace, "Maya is vegetarian", "Maya eats steak")
    newest = memory(workspace=workspace, text="Maya eats fish now", status="active")

    with django_capture_on_commit_callbacks(execute=True):
        memory_supersede(old=vegetarian, new=newest, actor=AGENT)

    card.refresh_from_db()
    assert card.state == "closed"
    assert card.answered_at is not None
    assert card.hub_note == (
        "Closed by the hub: “Maya is vegetarian” was replaced by “Maya eats fish now”. Nothing is left to ask."
    )
    event = Event.objects.get(verb="card.close")
    assert (event.actor, event.automatic) == ("hub", True)
    assert open_cards_with_retired_facts_only() == []


def test_a_forgotten_fact_closes_its_card_and_the_close_can_be_undone(
    workspace: Workspace, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    card, vegetarian, _ = pair_card(workspace)

    with django_capture_on_commit_callbacks(execute=True):
        memory_forget(memory=vegetarian, actor=AGENT)

    card.refresh_from_db()
    assert card.state == "closed"
    assert "was forgotten" in card.hub_note
    event_undo(event=Event.objects.get(verb="card.close"), actor=AGENT)
    card.refresh_from_db()
    assert (card.state, card.hub_note) == ("open", "")


def test_a_card_over_three_facts_keeps_asking_about_the_facts_that_stand(
    workspace: Workspace, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    card, (first, _second, third) = reversal_card(
        workspace, ["Ivo is on call", "Rhea is on call", "Ivo is on call again"], status="active"
    )

    with django_capture_on_commit_callbacks(execute=True):
        memory_forget(memory=first, actor=AGENT)

    card.refresh_from_db()
    assert card.state == "open"
    assert card.asked_memory_id == third.pk  # the asked one was forgotten: it asks about the newest standing fact
    assert card.hub_note == "Updated by the hub: “Ivo is on call” was forgotten."
    assert Event.objects.filter(verb="card.update").count() == 1


def test_other_cards_are_untouched_and_a_live_fact_changes_nothing(
    workspace: Workspace, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    diet, vegetarian, _ = pair_card(workspace)
    deploys, _jenkins, _actions = pair_card(workspace, "Deploys run on Jenkins", "Deploys run on Actions", start=5)

    with django_capture_on_commit_callbacks(execute=True):
        memory_forget(memory=vegetarian, actor=AGENT)

    assert ConflictCard.objects.get(pk=deploys.pk).state == "open"
    assert ConflictCard.objects.get(pk=diet.pk).state == "closed"


def test_a_card_is_not_raised_over_facts_that_no_longer_stand(workspace: Workspace) -> None:
    from conflicts.services import card_create
    from memories.audit import Tracker

    old = memory(workspace=workspace, text="Ivo is on call", status="forgotten")
    new = memory(workspace=workspace, text="Rhea is on call", status="active")

    card = card_create(
        Tracker(), kind="stale", memories=[old, new], asked=old, question="?", detector="narrative:offline", evidence={}
    )

    assert card is None


def test_undoing_the_supersede_that_closed_a_card_reopens_it(
    workspace: Workspace, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    card, vegetarian, steak = pair_card(workspace, "Maya is vegetarian", "Maya eats steak")
    newest = memory(workspace=workspace, text="Maya eats fish now", status="active")
    with django_capture_on_commit_callbacks(execute=True):
        memory_supersede(old=vegetarian, new=newest, actor=AGENT)
    card.refresh_from_db()
    assert card.state == "closed"

    with django_capture_on_commit_callbacks(execute=True):
        event_undo(event=Event.objects.get(verb="memory.supersede"), actor=AGENT)

    card.refresh_from_db()
    assert card.state == "open"
    assert card.answered_at is None
    assert card.hub_note == "Reopened by the hub: “Maya is vegetarian” stands again."
    assert {card.asked_memory_id} <= {vegetarian.pk, steak.pk}
    event = Event.objects.get(verb="card.reopen")
    assert (event.actor, event.automatic) == ("hub", True)
    assert open_cards_with_retired_facts_only() == []


def test_a_restored_fact_leaves_a_card_closed_while_fewer_than_two_of_its_facts_stand(
    workspace: Workspace, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    card, vegetarian, steak = pair_card(workspace, "Maya is vegetarian", "Maya eats steak")
    with django_capture_on_commit_callbacks(execute=True):
        memory_forget(memory=vegetarian, actor=AGENT)
        memory_forget(memory=steak, actor=AGENT)
    forget_vegetarian = Event.objects.filter(verb="memory.forget", memory=vegetarian).get()

    with django_capture_on_commit_callbacks(execute=True):
        event_undo(event=forget_vegetarian, actor=AGENT)

    card.refresh_from_db()
    assert card.state == "closed"
    assert not Event.objects.filter(verb="card.reopen").exists()
