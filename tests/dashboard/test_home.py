"""The home page: each workspace with its open cards and the links a member may follow."""

from __future__ import annotations

import pytest
from django.test import Client

from conflicts.models import ConflictCard
from tests.conflicts.cards import pair_card
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory

pytestmark = pytest.mark.django_db


def test_it_shows_open_cards_per_workspace_and_the_admin_links_only_to_admins() -> None:
    acme = WorkspaceFactory(slug="acme", name="Acme")
    beta = WorkspaceFactory(slug="beta", name="Beta")
    pair_card(acme, "Deploys run on Jenkins", "Deploys run on GitHub Actions", start=0)
    answered, _, _ = pair_card(acme, "Standup is at 9:30", "Standup is at 10:00", start=4)
    ConflictCard.objects.filter(pk=answered.pk).update(state="answered")
    user = UserFactory(username="ana")
    MembershipFactory(user=user, workspace=acme, role="admin")
    MembershipFactory(user=user, workspace=beta, role="viewer")
    client = Client()
    client.force_login(user)

    page = client.get("/").content.decode()

    acme_part, beta_part = page.split("<h2>")[1:3]
    assert "<strong>1</strong> open card</a>" in acme_part  # the answered card is not counted
    assert "<strong>0</strong> open cards</a>" in beta_part
    for section in ("inbox", "decisions", "memories", "insights"):
        assert f'href="/w/acme/{section}/"' in acme_part
        assert f'href="/w/beta/{section}/"' in beta_part
    assert 'href="/w/acme/members/"' in acme_part
    assert 'href="/w/acme/keys/"' in acme_part
    assert "/w/beta/members/" not in beta_part
    assert "/w/beta/keys/" not in beta_part


def test_it_counts_open_cards_in_one_query_whatever_the_number_of_workspaces(
    django_assert_max_num_queries: object,
) -> None:
    user = UserFactory(username="ana")
    for n in range(5):
        workspace = WorkspaceFactory(slug=f"w{n}")
        MembershipFactory(user=user, workspace=workspace, role="reviewer")
        pair_card(workspace, start=n)
    client = Client()
    client.force_login(user)

    with django_assert_max_num_queries(8):  # type: ignore[operator]
        page = client.get("/").content.decode()

    assert page.count("<strong>1</strong> open card</a>") == 5
