"""The review dashboard in a real browser: keyboard answers, HTMX swaps, undo, roles, the decisions queue."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from conflicts.models import ConflictCard
from memories.models import Memory
from tests.conflicts.cards import auto_supersede, pair_card
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workspaces.models import Workspace

# The README's screenshots: refreshed only on request (`MEMORYHUB_SCREENSHOTS=1 .venv/bin/pytest
# tests/browser`), so an ordinary test run leaves the working tree clean.
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    return DOCS_SCREENSHOTS if os.environ.get("MEMORYHUB_SCREENSHOTS") == "1" else tmp_path


def sign_in(page: Page, live_server: Any, username: str, next_path: str) -> None:
    page.goto(f"{live_server.url}/login/?next={next_path}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()


def team(role: str = "reviewer") -> tuple[Workspace, list[ConflictCard], Memory]:
    workspace = WorkspaceFactory(slug="acme", name="Acme platform")
    MembershipFactory(user=UserFactory(username="ana"), workspace=workspace, role=role)
    live = {"status": "active"}
    diet, vegetarian, _ = pair_card(
        workspace,
        "Maya is vegetarian",
        "Maya's favourite dinner is steak frites",
        start=0,
        reasons=("same person, same topic: diet", "a vegetarian does not eat steak"),
        agent="maya-assistant",
        scope="personal",
        **live,
    )
    deploys, _, _ = pair_card(
        workspace,
        "Deploys run on Jenkins",
        "Deploys run on GitHub Actions",
        kind="fact",
        start=4,
        reasons=("same key: ci_system", "different value: Jenkins → GitHub Actions"),
        agent="devops-agent",
        scope="infra",
        **live,
    )
    standup, _, _ = pair_card(
        workspace,
        "Standup is at 9:30 in the Lisbon room",
        "Standup is at 10:00 on Zoom",
        kind="episode",
        start=8,
        agent="planner",
        scope="team",
        **live,
    )
    return workspace, [diet, deploys, standup], vegetarian


@pytest.mark.django_db(transaction=True)
def test_a_reviewer_answers_with_the_keyboard_follows_the_chain_and_undoes(
    live_server: Any, page: Page, screenshots: Path
) -> None:
    workspace, (diet, deploys, _), vegetarian = team()
    page.set_viewport_size({"width": 1200, "height": 800})
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/inbox/")

    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    expect(page.locator("#counts")).to_contain_text("3 open")
    page.screenshot(path=str(screenshots / "inbox.png"), full_page=True)

    page.locator(f"tr.card-row[data-card='{diet.pk}'] td.question a").click()
    expect(page.locator(".review-card")).to_have_attribute("data-card", str(diet.pk))
    page.screenshot(path=str(screenshots / "card.png"), full_page=True)

    page.keyboard.press("n")  # the newer fact holds: "Maya's favourite dinner is steak frites"

    expect(page.locator(".review-card")).to_have_attribute("data-card", str(deploys.pk))
    expect(page.locator("#card-question")).to_be_focused()
    expect(page).to_have_url(f"{live_server.url}/w/{workspace.slug}/cards/{deploys.pk}/")
    expect(page.locator("#counts")).to_contain_text("2 open")
    expect(page.locator("#counts")).to_contain_text("1 answered")

    page.goto(f"{live_server.url}/w/{workspace.slug}/memories/{vegetarian.pk}/")
    timeline = page.locator("ol.timeline")
    expect(timeline.locator("li")).to_have_count(2)
    expect(timeline.locator("li").first).to_contain_text("Maya is vegetarian")
    expect(timeline.locator("li").last).to_contain_text("steak frites")
    expect(timeline.locator("li").last).to_contain_text("current")
    page.screenshot(path=str(screenshots / "memory.png"), full_page=True)

    page.go_back()
    expect(page.locator(".review-card")).to_have_attribute("data-card", str(deploys.pk))
    page.keyboard.press("u")

    expect(page.locator(".review-card")).to_have_attribute("data-card", str(diet.pk))
    expect(page.get_by_text("Undone")).to_be_visible()
    expect(page.locator("#counts")).to_contain_text("3 open")
    assert Memory.objects.get(pk=vegetarian.pk).reliability == "contradicted"

    page.keyboard.press("j")
    expect(page.locator(".review-card")).to_have_attribute("data-card", str(deploys.pk))


@pytest.mark.django_db(transaction=True)
def test_a_viewer_reads_cards_but_cannot_answer(live_server: Any, page: Page) -> None:
    workspace, (diet, _, _), _ = team(role="viewer")
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/cards/{diet.pk}/")

    expect(page.locator(".review-card")).to_have_attribute("data-card", str(diet.pk))
    expect(page.get_by_text("answering needs the reviewer role")).to_be_visible()
    expect(page.locator(".answers button")).to_have_count(0)
    page.keyboard.press("y")
    expect(page.locator(".review-card")).to_have_attribute("data-card", str(diet.pk))
    assert ConflictCard.objects.get(pk=diet.pk).state == "open"


RATE_LIMIT = {"subject_entity": "api", "subject_attribute": "rate limit"}


@pytest.mark.django_db(transaction=True)
def test_an_admin_reverts_an_automatic_decision(live_server: Any, page: Page) -> None:
    workspace = WorkspaceFactory(slug="acme", name="Acme platform")
    MembershipFactory(user=UserFactory(username="ana"), workspace=workspace, role="admin")
    old, _ = auto_supersede(
        workspace,
        "The API rate limit is 500 req/s",
        "The API rate limit is now 1,000 req/s",
        days_apart=5,
        status="active",
        **RATE_LIMIT,
    )
    assert Memory.objects.get(pk=old.pk).reliability == "superseded"

    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/decisions/")
    row = page.locator("tr.decision").first
    expect(row).to_contain_text("Superseded an older fact by a newer one")
    row.get_by_placeholder("why revert?").fill("the raise was rolled back")
    row.get_by_role("button", name="Revert").click()

    expect(page.locator("tr.decision").first).to_contain_text("Reverted by ana: the raise was rolled back")
    assert Memory.objects.get(pk=old.pk).reliability == "reliable"
