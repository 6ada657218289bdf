"""The README's screenshots, and a check that each of those pages renders and fits its screen.

One command regenerates every picture in docs/screenshots/ from the demo history
(the workspace ``make run`` shows, seeded here into the test database; 4–7
minutes on the shared 2-core machine at load 12–20):

    make screenshots        # = MEMORYHUB_SCREENSHOTS=1 .venv/bin/pytest tests/browser/test_screenshots.py

An ordinary run uses a three-card workspace instead, writes the pictures to a
temporary folder and still checks what the pictures show: each page's heading,
no sideways scrolling on a desktop or at 390 px, the answer buttons on screen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from conflicts.feedback import card_answer
from conflicts.inbox import InboxFilters, inbox_page
from memories.audit import Actor
from memoryhub.demo import demo_seed
from tests.browser.test_phone import PHONE, page_width
from tests.browser.test_review import DOCS_SCREENSHOTS, sign_in, team
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workspaces.models import Workspace

DESKTOP = {"width": 1280, "height": 860}
REGENERATE = os.environ.get("MEMORYHUB_SCREENSHOTS") == "1"


def demo_workspace() -> Workspace:
    """The demo history as ``make run`` seeds it, with a reviewer ``ana`` who has answered three cards."""
    workspace: Workspace = WorkspaceFactory(slug="demo", name="Demo team")
    user = UserFactory(username="ana")
    MembershipFactory(user=user, workspace=workspace, role="admin")
    demo_seed(workspace=workspace)
    cards, _ = inbox_page(workspace=workspace, filters=InboxFilters.from_query({}), page=1)
    for card, choice in zip(cards[:3], ("yes", "both", "no"), strict=False):
        try:
            card_answer(card=card, choice=choice, actor=Actor.for_user(user))
        except Exception:  # noqa: S112 - a card whose facts changed meanwhile: answer the next one
            continue
    return workspace


@pytest.mark.django_db(transaction=True)
def test_the_readme_screenshots(live_server: Any, page: Page, tmp_path: Path) -> None:
    folder = DOCS_SCREENSHOTS if REGENERATE else tmp_path
    if REGENERATE:
        workspace = demo_workspace()
    else:
        workspace, (diet, _, _), _ = team(role="admin")
        card_answer(card=diet, choice="no", actor=Actor.for_user(User.objects.get(username="ana")))  # a chain
    slug = workspace.slug
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ana", f"/w/{slug}/inbox/")

    def shoot(name: str, path: str, shown: str, *, full_page: bool = False) -> None:
        page.goto(f"{live_server.url}{path}")
        expect(page.locator(shown).first).to_be_visible()
        assert page_width(page) <= (page.viewport_size or DESKTOP)["width"], path
        page.screenshot(path=str(folder / f"{name}.png"), full_page=full_page)

    shoot("inbox", f"/w/{slug}/inbox/", "tr.card-row")
    first_card = page.locator("tr.card-row a").first.get_attribute("href")
    assert first_card is not None
    shoot("card", first_card, ".review-card .question", full_page=True)
    shoot("history", f"/w/{slug}/history/", "tr.history-row")
    shoot("decisions", f"/w/{slug}/decisions/", "tr.decision" if REGENERATE else ".card.empty")
    shoot("memories", f"/w/{slug}/memories/", "table.memories")
    page.goto(f"{live_server.url}/w/{slug}/chains/")
    chain_step = page.locator("ol.chain-steps a").first.get_attribute("href")
    assert chain_step is not None
    shoot("memory", chain_step, "ol.timeline", full_page=True)

    page.set_viewport_size(PHONE)
    shoot("phone-inbox", f"/w/{slug}/inbox/", "tr.card-row")
    shoot("phone-card", first_card, ".review-card .question")
    expect(page.locator(".answers")).to_be_in_viewport()
    page.emulate_media(color_scheme="dark")
    shoot("phone-card-dark", first_card, ".review-card .question")
