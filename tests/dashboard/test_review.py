from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from conflicts.models import Answer, ConflictCard, ToleranceChange
from memories.models import Event, Memory
from memoryhub.llm import BREAKER
from memoryhub.models import CircuitBreaker
from tests.conflicts.cards import auto_supersede, pair_card
from tests.factories import MembershipFactory, UserFactory, memory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def signed_in(workspace: Workspace, role: str = "reviewer", username: str = "ana") -> Client:
    user = UserFactory(username=username)
    MembershipFactory(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    return client


def three_cards(workspace: Workspace) -> list[ConflictCard]:
    low, _, _ = pair_card(workspace, "Ana ran 5k on Monday", "Ana ran 10k on Monday", kind="episode", start=0)
    critical, _, _ = pair_card(workspace, start=3)
    high, _, _ = pair_card(workspace, "Deploys run on Jenkins", "Deploys run on GitHub Actions", kind="fact", start=6)
    return [critical, high, low]


def test_it_lists_open_cards_by_severity_with_counts(workspace: Workspace) -> None:
    cards = three_cards(workspace)
    response = signed_in(workspace).get(f"/w/{workspace.slug}/inbox/")

    assert response.status_code == 200
    html = response.content.decode()
    positions = [html.index(str(card.pk)) for card in cards]
    assert positions == sorted(positions)
    assert "<strong>3</strong> open" in html


def test_it_filters_and_pages_with_htmx(workspace: Workspace) -> None:
    three_cards(workspace)
    client = signed_in(workspace)

    filtered = client.get(f"/w/{workspace.slug}/inbox/", {"severity": "low"}, HTTP_HX_TARGET="inbox-list", **HTMX)
    assert filtered.content.decode().count('class="card-row"') == 1
    by_agent = client.get(f"/w/{workspace.slug}/inbox/", {"agent": "nobody"})
    assert "Inbox zero" in by_agent.content.decode()

    from conflicts import inbox

    inbox_page_size = inbox.PAGE_SIZE
    try:
        inbox.PAGE_SIZE = 2
        first = client.get(f"/w/{workspace.slug}/inbox/")
        assert 'hx-trigger="revealed"' in first.content.decode()
    finally:
        inbox.PAGE_SIZE = inbox_page_size


def test_an_outsider_gets_404_and_a_viewer_cannot_answer(workspace: Workspace, other_workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    assert signed_in(other_workspace, username="eve").get(f"/w/{workspace.slug}/inbox/").status_code == 404

    viewer = signed_in(workspace, role="viewer", username="vic")
    page = viewer.get(f"/w/{workspace.slug}/cards/{card.pk}/").content.decode()
    assert "answering needs the reviewer role" in page
    assert 'data-key="y"' not in page
    assert viewer.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "yes"}).status_code == 403
    assert not Answer.objects.exists()


def test_answering_swaps_in_the_next_card_and_updates_counts_out_of_band(workspace: Workspace) -> None:
    critical, high, _ = three_cards(workspace)
    client = signed_in(workspace)

    response = client.post(
        f"/w/{workspace.slug}/cards/{critical.pk}/answer/", {"answer": "no", "note": "changed in May"}, **HTMX
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert f'data-card="{high.pk}"' in html
    assert 'id="counts" class="counts" hx-swap-oob="true"' in html
    assert "<strong>2</strong> open" in html
    assert "<strong>1</strong> answered" in html
    assert response["HX-Push-Url"] == f"/w/{workspace.slug}/cards/{high.pk}/"
    assert Answer.objects.get().note == "changed in May"


def test_without_htmx_an_answer_redirects_to_the_next_card(workspace: Workspace) -> None:
    critical, high, _ = three_cards(workspace)
    response = signed_in(workspace).post(f"/w/{workspace.slug}/cards/{critical.pk}/answer/", {"answer": "yes"})
    assert response.status_code == 302
    assert response["Location"] == f"/w/{workspace.slug}/cards/{high.pk}/"


def test_the_second_reviewer_sees_who_answered_first(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    signed_in(workspace, username="ana").post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "yes"})

    late = signed_in(workspace, username="bo").post(
        f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "no"}, **HTMX
    )

    html = late.content.decode()
    assert "already answered by ana (yes)" in html
    assert "This card is <strong>answered</strong>" in html
    assert Answer.objects.count() == 1


def test_undo_reopens_the_card(workspace: Workspace) -> None:
    card, old, _ = pair_card(workspace)
    client = signed_in(workspace)
    client.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "no"}, **HTMX)
    assert Memory.objects.get(pk=old.pk).reliability == "superseded"

    response = client.post(f"/w/{workspace.slug}/undo/", **HTMX)

    assert f'data-card="{card.pk}"' in response.content.decode()
    assert ConflictCard.objects.get(pk=card.pk).state == "open"
    assert Memory.objects.get(pk=old.pk).reliability == "contradicted"
    assert not Answer.objects.exists()
    assert not ToleranceChange.objects.exists()


def test_decisions_can_be_confirmed_and_reverted_by_admins(workspace: Workspace) -> None:
    old, _ = auto_supersede(workspace, "Standup is at 9:00", "Standup moved to 9:30")
    auto_supersede(
        workspace, "Office is in Berlin", "Office moved to Munich", subject_entity="office", subject_attribute="city"
    )
    first, second = Event.objects.filter(verb="conflict.temporal_supersede").order_by("id")
    admin = signed_in(workspace, role="admin")
    reviewer = signed_in(workspace, role="reviewer", username="rev")

    page = admin.get(f"/w/{workspace.slug}/decisions/").content.decode()
    assert "Superseded an older fact by a newer one" in page
    assert reviewer.post(f"/w/{workspace.slug}/decisions/{first.pk}/revert/").status_code == 403

    reverted = admin.post(f"/w/{workspace.slug}/decisions/{first.pk}/revert/", {"reason": "still 9:00"}, **HTMX)
    assert "Reverted by ana: still 9:00" in reverted.content.decode()
    assert Memory.objects.get(pk=old.pk).reliability == "reliable"
    confirmed = admin.post(f"/w/{workspace.slug}/decisions/{second.pk}/confirm/", **HTMX)
    assert "Confirmed by ana" in confirmed.content.decode()
    assert Event.objects.filter(verb="decision.confirm", reason=f"confirms event #{second.pk}").exists()
    again = admin.post(f"/w/{workspace.slug}/decisions/{second.pk}/confirm/")
    assert again.status_code == 302


def test_insights_render_charts(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    client = signed_in(workspace)
    client.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "both"})

    html = client.get(f"/w/{workspace.slug}/insights/").content.decode()

    assert html.count("<svg") == 3
    assert "ingestion:rules" in html
    assert "0.52" in html


def test_insights_show_the_facts_waiting_for_embedding_and_checking(workspace: Workspace) -> None:
    memory(workspace=workspace, text="The API uses REST")  # committed, not yet embedded

    html = signed_in(workspace).get(f"/w/{workspace.slug}/insights/").content.decode()

    backlog = html[html.index('id="backlog"') :]
    assert "<strong>1</strong><span>facts waiting for embedding (oldest" in backlog
    assert "<strong>0</strong><span>facts waiting for their conflict check</span>" in backlog


def test_insights_say_when_the_llm_tier_is_paused(workspace: Workspace, settings: Any) -> None:
    until = timezone.now() + dt.timedelta(minutes=5)
    CircuitBreaker.objects.create(name=BREAKER, consecutive_failures=3, open_until=until, last_error="timed out")
    client = signed_in(workspace)

    settings.OPENAI_API_KEY = ""  # no LLM configured: nothing to say
    assert "LLM tier paused" not in client.get(f"/w/{workspace.slug}/insights/").content.decode()

    settings.OPENAI_API_KEY = "sk-test"
    html = client.get(f"/w/{workspace.slug}/insights/").content.decode()
    local = timezone.localtime(until)
    assert f"LLM tier paused until {local:%H:%M} after 3 failures; detection runs offline." in html

    CircuitBreaker.objects.update(open_until=None, consecutive_failures=0)
    assert "LLM tier paused" not in client.get(f"/w/{workspace.slug}/insights/").content.decode()


def test_agents_answer_over_the_api(workspace: Workspace, agent: Any) -> None:
    card, old, new = pair_card(workspace)
    agent.grant("answer")

    response = agent.post(f"/conflicts/{card.pk}/answer", {"answer": "no", "current_fact": str(new.pk)})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["answer"], body["card"]["state"], body["current_fact"]) == ("no", "answered", str(new.pk))
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk
    assert Answer.objects.get().agent_key == agent.key_row
    again = agent.post(f"/conflicts/{card.pk}/answer", {"answer": "yes"})
    assert again.status_code == 409
    assert "already answered by agent planner" in again.json()["detail"]
    assert agent.post(f"/conflicts/{card.pk}/answer", {"answer": "maybe"}).status_code == 422


def test_admins_set_the_tolerance_within_bounds(workspace: Workspace) -> None:
    from conflicts.models import Tolerance

    admin = signed_in(workspace, role="admin")
    admin.post(f"/w/{workspace.slug}/insights/tolerance/", {"tolerance": "0.65"})
    assert Tolerance.objects.get(workspace=workspace).value == 0.65
    refused = admin.post(f"/w/{workspace.slug}/insights/tolerance/", {"tolerance": "0.9"}, follow=True)
    assert "between 0.2 and 0.8" in refused.content.decode()
    assert Event.objects.filter(verb="tolerance.set").count() == 1
    reviewer = signed_in(workspace, role="reviewer", username="rev")
    assert reviewer.post(f"/w/{workspace.slug}/insights/tolerance/", {"tolerance": "0.3"}).status_code == 403


def test_skipping_the_only_open_card_shows_it_again(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    response = signed_in(workspace).post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "skip"}, **HTMX)
    html = response.content.decode()
    assert f'data-card="{card.pk}"' in html
    assert "Skipped" in html
    assert "skipped 1×" in html


def test_a_card_of_another_workspace_is_a_404(workspace: Workspace, other_workspace: Workspace) -> None:
    card, _, _ = pair_card(other_workspace)
    client = signed_in(workspace)
    assert client.get(f"/w/{workspace.slug}/cards/{card.pk}/").status_code == 404
    assert client.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "yes"}).status_code == 404
    assert client.get(f"/w/{workspace.slug}/memories/{card.asked_memory_id}/").status_code == 404
