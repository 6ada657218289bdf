"""Inviting people: an admin makes a one-time link, the invited person sets a login and joins."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tests.factories import MembershipFactory, UserFactory
from workspaces.models import Invitation, Membership, Workspace, hash_secret

pytestmark = pytest.mark.django_db

PASSWORD = "a long unusual passphrase"


def signed_in(workspace: Workspace, role: str) -> Client:
    user = UserFactory(username="ana")
    MembershipFactory(user=user, workspace=workspace, role=role)
    client = Client()
    client.force_login(user)
    return client


def invite(workspace: Workspace, recipient: str = "bo@example.com", role: str = "reviewer") -> str:
    """The path of a new invitation link, as an admin sees it once."""
    page = signed_in(workspace, "admin").post(
        f"/w/{workspace.slug}/members/invite/", {"recipient": recipient, "role": role}
    )
    assert page.status_code == 200
    found = re.search(
        r'<code class="key" id="invitation-link">http://testserver(/invite/[^<]+/)</code>', page.content.decode()
    )
    assert found, page.content.decode()
    return found.group(1)


def test_it_shows_a_link_once_and_stores_only_its_hash(workspace: Workspace) -> None:
    path = invite(workspace)

    invitation = Invitation.objects.get()
    token = path.removeprefix("/invite/").rstrip("/")
    assert invitation.token_hash == hash_secret(token)
    assert token not in invitation.token_hash
    assert (invitation.recipient, invitation.role) == ("bo@example.com", "reviewer")
    assert (
        timezone.now() + dt.timedelta(days=6, hours=23) < invitation.expires_at <= timezone.now() + dt.timedelta(days=7)
    )
    members = Client()
    members.force_login(User.objects.get(username="ana"))
    listed = members.get(f"/w/{workspace.slug}/members/").content.decode()
    assert "bo@example.com · reviewer" in listed
    assert token not in listed


def test_the_invited_person_sets_a_login_and_joins_with_the_role(workspace: Workspace) -> None:
    path = invite(workspace)
    newcomer = Client()

    form = newcomer.get(path)
    assert form.status_code == 200
    assert "You are invited as a <strong>reviewer</strong>" in form.content.decode()

    joined = newcomer.post(path, {"username": "bo", "password": PASSWORD}, follow=True)

    assert joined.redirect_chain[-1][0] == f"/w/{workspace.slug}/inbox/"
    assert "Welcome to" in joined.content.decode()
    bo = User.objects.get(username="bo")
    assert bo.email == "bo@example.com"
    assert bo.check_password(PASSWORD)
    assert Membership.objects.get(user=bo, workspace=workspace).role == "reviewer"
    assert Invitation.objects.get().accepted_by == bo


def test_a_used_link_is_refused(workspace: Workspace) -> None:
    path = invite(workspace)
    Client().post(path, {"username": "bo", "password": PASSWORD})

    again = Client().get(path)
    second = Client().post(path, {"username": "cy", "password": PASSWORD})

    assert again.status_code == second.status_code == 410
    assert "This invitation was already used" in again.content.decode()
    assert not User.objects.filter(username="cy").exists()


def test_an_expired_link_is_refused(workspace: Workspace) -> None:
    path = invite(workspace)
    Invitation.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    response = Client().post(path, {"username": "bo", "password": PASSWORD})

    assert response.status_code == 410
    assert "This invitation has expired" in response.content.decode()
    assert not User.objects.filter(username="bo").exists()


def test_an_unknown_link_is_a_404() -> None:
    response = Client().get("/invite/not-a-real-token/")

    assert response.status_code == 404
    assert "This invitation link is not valid" in response.content.decode()


def test_it_refuses_a_taken_username_or_a_weak_password_and_keeps_the_link(workspace: Workspace) -> None:
    path = invite(workspace, recipient="bo")
    assert 'name="username" value="bo"' in Client().get(path).content.decode()  # a username is prefilled

    taken = Client().post(path, {"username": "ANA", "password": PASSWORD})
    weak = Client().post(path, {"username": "bo", "password": "123"})

    assert taken.status_code == weak.status_code == 422
    assert "is taken" in taken.content.decode()
    assert "too short" in weak.content.decode()
    assert Invitation.objects.get().accepted_at is None
    assert Client().post(path, {"username": "bo", "password": PASSWORD}).status_code == 302


def test_only_admins_invite(workspace: Workspace) -> None:
    reviewer = signed_in(workspace, "reviewer")

    response = reviewer.post(f"/w/{workspace.slug}/members/invite/", {"recipient": "bo", "role": "admin"})

    assert response.status_code == 403
    assert not Invitation.objects.exists()


def test_it_refuses_an_invitation_without_a_recipient_or_role(workspace: Workspace) -> None:
    admin = signed_in(workspace, "admin")

    blank = admin.post(f"/w/{workspace.slug}/members/invite/", {"recipient": " ", "role": "viewer"}, follow=True)
    no_role = admin.post(f"/w/{workspace.slug}/members/invite/", {"recipient": "bo", "role": "owner"}, follow=True)

    assert "say whom you invite" in blank.content.decode()
    assert "Pick a role" in no_role.content.decode()
    assert not Invitation.objects.exists()
