from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory


@pytest.mark.django_db(transaction=True)
def test_it_signs_in_and_lists_the_workspaces(live_server: Any, page: Page) -> None:
    user = UserFactory(username="ana")
    MembershipFactory(user=user, workspace=WorkspaceFactory(slug="acme", name="Acme platform"), role="reviewer")

    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/login/?next=/")
    page.get_by_label("Username").fill("ana")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Workspaces")).to_be_visible()
    workspace = page.locator("li.workspace")
    expect(workspace.get_by_role("heading", name="Acme platform acme")).to_be_visible()
    expect(workspace.locator(".role")).to_have_text("reviewer")
    expect(workspace.get_by_role("link", name="0 open cards")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_wrong_password(live_server: Any, page: Page) -> None:
    UserFactory(username="ana")

    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("ana")
    page.get_by_label("Password").fill("not it")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_text("didn't match")).to_be_visible()
