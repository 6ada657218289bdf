"""The decisions queue (automatic decisions only, readable, compact) and the history of people's answers."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils.html import escape

from conflicts.feedback import card_answer, card_answer_undo
from conflicts.history import history_list, history_rows
from memories.audit import Actor
from memories.models import Event, Memory
from tests.conflicts.cards import auto_supersede, day, pair_card
from tests.factories import MembershipFactory, UserFactory, memory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def signed_in(workspace: Workspace, role: str = "admin", username: str = "ana") -> Client:
    user = UserFactory(username=username)
    MembershipFactory(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    return client


def supersede(workspace: Workspace, older: str, newer: str) -> Event:
    a, _ = auto_supersede(workspace, older, newer)
    return Event.objects.get(verb="conflict.temporal_supersede", memory=a)


def test_the_queue_lists_decisions_not_the_opening_of_cards(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    decision = supersede(workspace, "Standup is at 9:00", "Standup moved to 9:30")
    opened = Event.objects.get(verb="conflict.card")
    client = signed_in(workspace)

    page = client.get(f"/w/{workspace.slug}/decisions/").content.decode()

    assert f'id="decision-{decision.pk}"' in page
    assert f'id="decision-{opened.pk}"' not in page
    assert "Opened a review card" not in page
    # Labels, never raw verbs; both facts of the supersede, the old one first.
    assert "conflict.temporal_supersede" not in page
    assert page.index("Standup is at 9:00") < page.index("Standup moved to 9:30")
    assert '<th scope="col">Actions</th>' in page
    # Confirming or reverting the opening of a card is refused: it is not a decision.
    assert client.post(f"/w/{workspace.slug}/decisions/{opened.pk}/confirm/").status_code == 302
    assert not Event.objects.filter(verb="decision.confirm").exists()
    assert client.post(f"/w/{workspace.slug}/decisions/{opened.pk}/revert/", **HTMX).status_code == 200
    assert not Event.objects.filter(undoes=opened).exists()
    assert card.pk  # the card itself is untouched


def test_the_history_shows_who_answered_which_card_and_what_changed(workspace: Workspace) -> None:
    card, old, new = pair_card(workspace, "Ana lives in Lisbon", "Ana moved to Porto")
    client = signed_in(workspace, role="reviewer")
    client.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "no", "note": "moved in May"})

    page = client.get(f"/w/{workspace.slug}/history/").content.decode()

    assert "Answered a review card" in page
    assert "changed" in page
    assert escape(card.question) in page
    assert "moved in May" in page
    assert '<td class="who">ana</td>' in page
    row = history_rows(workspace=workspace, events=list(history_list(workspace=workspace)))[0]
    effects = {(effect.what, effect.memory.pk if effect.memory else None) for effect in row.effects}
    assert ("superseded", old.pk) in effects
    assert ("kept", new.pk) in effects
    assert any(effect.what == "tolerance" and "→" in effect.detail for effect in row.effects)
    assert row.card is not None
    assert row.card.pk == card.pk
    assert row.choice == "changed"


def test_a_both_true_answer_rehabilitates_the_facts_and_an_undo_is_shown(workspace: Workspace) -> None:
    card, old, new = pair_card(workspace)
    user = UserFactory(username="bo")
    MembershipFactory(user=user, workspace=workspace, role="reviewer")
    answered = card_answer(card=card, choice="both", actor=Actor.for_user(user))
    card_answer_undo(event=answered.event, actor=Actor.for_user(user))

    rows = history_rows(workspace=workspace, events=list(history_list(workspace=workspace, answers_only=True)))
    assert len(rows) == 1
    assert {e.what for e in rows[0].effects if e.memory is not None} == {"rehabilitated"}
    assert rows[0].undone_by is not None
    page = signed_in(workspace, role="viewer").get(f"/w/{workspace.slug}/history/?show=answers").content.decode()
    assert "Undone by bo" in page
    assert Memory.objects.get(pk=old.pk).reliability == "contradicted"
    assert new.pk


def test_the_history_is_in_the_navigation_and_empty_says_so(workspace: Workspace) -> None:
    client = signed_in(workspace, role="viewer")
    page = client.get(f"/w/{workspace.slug}/history/").content.decode()
    assert f'href="/w/{workspace.slug}/history/" aria-current="page">History</a>' in page
    assert "Nobody has answered a card or changed a fact yet." in page


def test_a_manual_change_by_a_person_is_in_the_history_but_an_agents_commit_is_not(workspace: Workspace) -> None:
    a = memory(workspace=workspace, text="The office is in Berlin", valid_from=day(0))
    memory(workspace=workspace, text="Noise from an agent", valid_from=day(1))
    admin = signed_in(workspace)
    admin.post(f"/w/{workspace.slug}/memories/{a.pk}/forget/", {"reason": "closed"})

    rows = history_rows(workspace=workspace, events=list(history_list(workspace=workspace)))

    assert [row.label for row in rows] == ["Fact forgotten"]
    assert [(e.what, e.memory) for e in rows[0].effects] == [("forgotten", a)]
