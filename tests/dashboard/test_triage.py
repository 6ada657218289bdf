"""The inbox's triage views without a browser: pulse, search, history, bulk dismiss, assign, reopen."""

from __future__ import annotations

import pytest

from conflicts.feedback import card_answer
from conflicts.models import Answer, ConflictCard, Severity
from conflicts.severity import severity_calibrated
from memories.audit import Actor
from tests.conflicts.cards import pair_card
from tests.dashboard.test_review import HTMX, signed_in, three_cards
from tests.factories import UserFactory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_the_pulse_counts_cards_and_its_version_moves_when_one_closes(workspace: Workspace) -> None:
    cards = three_cards(workspace)
    client = signed_in(workspace)

    before = client.get(f"/w/{workspace.slug}/inbox/pulse/").json()
    card_answer(card=cards[0], choice="both", actor=Actor.system("test"))
    after = client.get(f"/w/{workspace.slug}/inbox/pulse/").json()

    assert (before["open"], before["dismissed"]) == (3, 0)
    assert (after["open"], after["dismissed"]) == (2, 1)
    assert before["version"] != after["version"]


def test_the_header_and_title_carry_the_open_count(workspace: Workspace) -> None:
    three_cards(workspace)
    page = signed_in(workspace).get(f"/w/{workspace.slug}/inbox/").content.decode()
    assert "<title>(3) Inbox · " in page
    assert 'id="nav-open-count">3<' in page
    assert f'data-pulse="/w/{workspace.slug}/inbox/pulse/"' in page


def test_search_matches_words_in_the_facts(workspace: Workspace) -> None:
    _critical, high, _low = three_cards(workspace)
    client = signed_in(workspace)
    page = client.get(f"/w/{workspace.slug}/inbox/", {"q": "github"}).content.decode()
    assert page.count('class="card-row"') == 1
    assert str(high.pk) in page
    assert "Inbox zero" in client.get(f"/w/{workspace.slug}/inbox/", {"q": "zzqxv"}).content.decode()


def test_the_history_says_who_answered_what_and_when(workspace: Workspace) -> None:
    critical, _, _ = three_cards(workspace)
    client = signed_in(workspace)
    ana = UserFactory._meta.model.objects.get(username="ana")  # type: ignore[attr-defined]
    card_answer(card=critical, choice="yes", actor=Actor.for_user(ana))

    page = client.get(f"/w/{workspace.slug}/inbox/", {"state": "answered"}).content.decode()

    assert '<a href="/w/acme/inbox/?state=answered" class="count answered"><strong>1</strong> answered</a>' in page
    assert "Still true" in page
    assert '<td class="by">ana</td>' in page
    assert "Reopen" in page


def test_bulk_dismiss_answers_both_for_each_card_and_ignores_bad_ids(workspace: Workspace) -> None:
    critical, high, low = three_cards(workspace)
    client = signed_in(workspace)

    response = client.post(
        f"/w/{workspace.slug}/cards/dismiss/", {"cards": [str(critical.pk), str(low.pk), "not-a-uuid"]}, **HTMX
    )

    assert response.status_code == 200
    assert "Dismissed 2 cards as not conflicts." in response.content.decode()
    assert set(Answer.objects.values_list("choice", flat=True)) == {"both"}
    assert ConflictCard.objects.get(pk=high.pk).state == "open"
    empty = client.post(f"/w/{workspace.slug}/cards/dismiss/", {"cards": ["nope"]}, **HTMX)
    assert "Select cards first" in empty.content.decode()


def test_a_viewer_cannot_dismiss_assign_or_reopen(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    viewer = signed_in(workspace, role="viewer", username="vic")
    assert viewer.post(f"/w/{workspace.slug}/cards/dismiss/", {"cards": [str(card.pk)]}).status_code == 403
    assert viewer.post(f"/w/{workspace.slug}/cards/{card.pk}/assign/").status_code == 403
    assert viewer.post(f"/w/{workspace.slug}/cards/{card.pk}/reopen/").status_code == 403


def test_assign_to_me_then_mine_then_unassign(workspace: Workspace) -> None:
    _critical, high, _ = three_cards(workspace)
    client = signed_in(workspace)

    client.post(f"/w/{workspace.slug}/cards/{high.pk}/assign/")
    mine = client.get(f"/w/{workspace.slug}/inbox/", {"assigned": "me"}).content.decode()
    assert mine.count('class="card-row"') == 1
    assert str(high.pk) in mine
    client.post(f"/w/{workspace.slug}/cards/{high.pk}/assign/", {"to": "nobody"})
    assert ConflictCard.objects.get(pk=high.pk).assignee_id is None


def test_reopen_undoes_the_answer_and_a_closed_card_cannot_be_reopened(workspace: Workspace) -> None:
    card, vegetarian, steak = pair_card(workspace)
    client = signed_in(workspace)
    client.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": f"no:{steak.pk}"})
    vegetarian.refresh_from_db()
    assert vegetarian.superseded_by_id == steak.pk

    response = client.post(f"/w/{workspace.slug}/cards/{card.pk}/reopen/")

    assert response.status_code == 302
    vegetarian.refresh_from_db()
    assert (ConflictCard.objects.get(pk=card.pk).state, vegetarian.superseded_by_id) == ("open", None)
    ConflictCard.objects.filter(pk=card.pk).update(state="closed")
    refused = client.post(f"/w/{workspace.slug}/cards/{card.pk}/reopen/", follow=True).content.decode()
    assert "nothing to reopen" in refused


def test_an_answer_naming_a_fact_outside_the_card_is_refused_with_a_message(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    other, _, _ = pair_card(workspace, "Deploys run on Jenkins", "Deploys run on Actions", start=5)
    outsider = other.asked_memory_id
    response = signed_in(workspace).post(
        f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": f"no:{outsider}"}, **HTMX
    )
    assert response.status_code == 200
    assert "current_fact must be one of the card&#x27;s facts" in response.content.decode()


def test_reviewers_answers_recalibrate_the_severity(workspace: Workspace) -> None:
    evidence = {"relation": "temporal_change", "probability": 0.99}
    detector = "ingestion:classifier"
    assert (
        severity_calibrated(stakes=Severity.CRITICAL, workspace_id=workspace.pk, detector=detector, evidence=evidence)
        == Severity.HIGH
    )
    for n in range(10):
        card, _, _ = pair_card(workspace, f"Fact {n} old", f"Fact {n} new", kind="fact", start=n * 3)
        ConflictCard.objects.filter(pk=card.pk).update(detector=detector)
        card_answer(card=ConflictCard.objects.get(pk=card.pk), choice="yes", actor=Actor.system("test"))
    # Ten confirmed, none "both hold": (10 + 1) / (10 + 2) = 0.92 ≥ 0.9, so the stakes stand.
    assert (
        severity_calibrated(stakes=Severity.CRITICAL, workspace_id=workspace.pk, detector=detector, evidence=evidence)
        == Severity.CRITICAL
    )
