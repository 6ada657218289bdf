"""Site-wide navigation: the current section, the icon, the way back from the API docs."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.conflicts.cards import pair_card
from tests.factories import admin_of
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "current"),
    [
        ("/w/acme/inbox/", "Inbox"),
        ("/w/acme/decisions/", "Decisions"),
        ("/w/acme/memories/", "Memories"),
        ("/w/acme/insights/", "Insights"),
        ("/w/acme/chains/", "Chains"),
        ("/w/acme/members/", "Members"),
        ("/w/acme/keys/", "Keys"),
        ("/", "MemoryHub"),
    ],
)
def test_it_marks_the_current_section_and_only_it(workspace: Workspace, path: str, current: str) -> None:
    page = admin_of(workspace).get(path).content.decode()

    assert page.count('aria-current="page"') == 1
    # The inbox link carries the open-card count after its name.
    assert re.search(rf'aria-current="page">{current}(</a>| <span class="nav-count")', page)


def test_a_card_belongs_to_the_inbox_section(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)

    page = admin_of(workspace).get(f"/w/acme/cards/{card.pk}/").content.decode()

    assert 'aria-current="page">Inbox <span class="nav-count"' in page


def test_every_page_names_the_svg_icon_and_favicon_ico_leads_to_it(workspace: Workspace) -> None:
    client = admin_of(workspace)
    for path in ("/", "/w/acme/inbox/", "/login/", "/no-such-page/"):
        assert 'rel="icon" href="/static/favicon.svg"' in client.get(path).content.decode(), path

    response = Client().get("/favicon.ico")

    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.svg"


def test_the_api_docs_lead_back_to_the_dashboard() -> None:
    page = Client().get("/api/docs").content.decode()

    assert '<a href="/">← Back to the dashboard</a>' in page
    assert "swagger-ui-init.js" in page


def test_the_skip_link_is_the_first_link_and_answers_are_announced(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)

    page = admin_of(workspace).get(f"/w/acme/cards/{card.pk}/").content.decode()

    body = page.split("<body", 1)[1]
    assert body.index('<a class="skip-link" href="#content">Skip to content</a>') < body.index(
        "<a ", body.index("skip-link") + 1
    )
    assert '<main id="content" tabindex="-1">' in body
    # HTMX swaps the next card into #review after an answer; a screen reader hears it.
    assert '<div id="review" aria-live="polite">' in body
