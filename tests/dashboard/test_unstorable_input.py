"""A NUL character in a dashboard filter or form is a 400 naming the field, never a 500, and stores nothing."""

from __future__ import annotations

import pytest
from django.http import HttpResponse

from conflicts.models import Answer
from memories.models import Event
from tests.conflicts.cards import pair_card
from tests.conftest import AgentClient
from tests.factories import admin_of
from tests.memories.recall_helpers import remember
from workspaces.models import AgentKey, Membership, Workspace

pytestmark = pytest.mark.django_db
NUL = "\u0000"


def _refused(response: HttpResponse, field: str) -> None:
    assert response.status_code == 400
    assert f"The field '{field}' contains a NUL character" in response.content.decode()


@pytest.mark.parametrize("param", ["q", "scope", "agent", "kind", "reliability", "status"])
def test_a_nul_character_in_a_memory_filter_is_a_400(workspace: Workspace, param: str) -> None:
    remember(workspace, "The build server is in Frankfurt")

    _refused(admin_of(workspace).get(f"/w/{workspace.slug}/memories/", {param: f"x{NUL}"}), param)


@pytest.mark.parametrize("param", ["kind", "severity", "detector", "scope", "agent"])
def test_a_nul_character_in_an_inbox_filter_is_a_400(workspace: Workspace, param: str) -> None:
    _refused(admin_of(workspace).get(f"/w/{workspace.slug}/inbox/", {param: f"x{NUL}"}), param)


def test_a_nul_character_in_a_form_stores_nothing(workspace: Workspace) -> None:
    admin = admin_of(workspace)
    fact = remember(workspace, "The build server is in Frankfurt")
    card, _, _ = pair_card(workspace, start=3)
    events = Event.objects.count()

    _refused(admin.post(f"/w/{workspace.slug}/keys/", {"name": f"bot{NUL}"}), "name")
    _refused(admin.post(f"/w/{workspace.slug}/members/", {"username": f"bo{NUL}", "role": "viewer"}), "username")
    _refused(admin.post(f"/w/{workspace.slug}/memories/{fact.pk}/forget/", {"reason": f"old{NUL}"}), "reason")
    _refused(admin.post(f"/w/{workspace.slug}/cards/{card.pk}/answer/", {"answer": "yes", "note": NUL}), "note")
    _refused(admin.post("/switch/", {"workspace": f"{workspace.slug}{NUL}"}), "workspace")
    _refused(admin.post(f"/w/{workspace.slug}/keys/", {f"na{NUL}me": "bot"}), "na\\x00me")  # a field's name too

    assert not AgentKey.objects.exists()
    assert Membership.objects.filter(workspace=workspace).count() == 1
    assert not Answer.objects.exists()
    assert Event.objects.count() == events
    fact.refresh_from_db()
    assert fact.status == "active"


def test_the_api_is_left_to_its_own_422(agent: AgentClient) -> None:
    response = agent.get("/memories", {"q": f"x{NUL}"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "q"]
