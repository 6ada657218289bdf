from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workspaces.models import AgentKey, Membership, Workspace

pytestmark = pytest.mark.django_db


def signed_in(workspace: Workspace, role: str, username: str = "ana") -> Client:
    user = UserFactory(username=username)
    MembershipFactory(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    return client


def test_it_creates_a_key_shown_once_and_revokes_it(workspace: Workspace) -> None:
    admin = signed_in(workspace, "admin")

    created = admin.post(
        f"/w/{workspace.slug}/keys/", {"name": "support-bot", "scopes": ["read", "write"]}
    ).content.decode()
    key = AgentKey.objects.get(name="support-bot")
    assert f"mh_{key.prefix}_" in created
    assert created.count(f"mh_{key.prefix}_") == 2  # the full key once, the prefix in the list
    assert "Copy this key now" not in admin.get(f"/w/{workspace.slug}/keys/").content.decode()

    admin.post(f"/w/{workspace.slug}/keys/{key.pk}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_it_creates_a_key_with_scopes_and_a_pinned_agent_and_lists_them(workspace: Workspace) -> None:
    admin = signed_in(workspace, "admin")
    form = admin.get(f"/w/{workspace.slug}/keys/").content.decode()
    # The form offers every scope, read and write ticked as the default.
    assert 'name="scopes" value="read" checked' in form
    assert 'name="scopes" value="write" checked' in form
    assert 'name="scopes" value="answer">' in form
    assert 'name="scopes" value="admin">' in form

    page = admin.post(
        f"/w/{workspace.slug}/keys/", {"name": "reviewer-bot", "scopes": ["read", "answer"], "agent": "triage"}
    ).content.decode()

    key = AgentKey.objects.get(name="reviewer-bot")
    assert (key.scopes, key.agent) == (["read", "answer"], "triage")
    assert "read, answer" in page
    assert "<code>triage</code> only" in page


def test_it_refuses_a_key_without_any_scope(workspace: Workspace) -> None:
    admin = signed_in(workspace, "admin")

    page = admin.post(f"/w/{workspace.slug}/keys/", {"name": "mute-bot"}, follow=True).content.decode()

    assert not AgentKey.objects.exists()
    assert "at least one scope" in page


def test_only_admins_manage_members_and_roles(workspace: Workspace) -> None:
    admin = signed_in(workspace, "admin")
    UserFactory(username="bo")
    assert signed_in(workspace, "reviewer", "rev").get(f"/w/{workspace.slug}/members/").status_code == 403

    admin.post(f"/w/{workspace.slug}/members/", {"username": "bo", "role": "viewer"})
    admin.post(f"/w/{workspace.slug}/members/", {"username": "bo", "role": "reviewer"})
    assert Membership.objects.get(user__username="bo").role == "reviewer"
    refused = admin.post(f"/w/{workspace.slug}/members/", {"username": "ana", "role": "viewer"}, follow=True)
    assert "cannot take your own admin role" in refused.content.decode()


def test_the_switcher_remembers_the_workspace(workspace: Workspace) -> None:
    client = signed_in(workspace, "viewer")
    other = WorkspaceFactory(slug="beta", name="Beta")
    MembershipFactory(user=Membership.objects.get().user, workspace=other, role="viewer")

    response = client.post("/switch/", {"workspace": "beta"})

    assert response["Location"] == "/w/beta/inbox/"
    home = client.get("/").content.decode()
    assert '<option value="beta" selected>' in home
    assert client.post("/switch/", {"workspace": "nope"}).status_code == 404
