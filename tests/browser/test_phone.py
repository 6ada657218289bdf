"""The dashboard on a phone (390×844): nothing scrolls sideways and the answer buttons stay on screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_review import screenshots, sign_in, team

__all__ = ["screenshots"]  # the fixture: README screenshots on request

PHONE = {"width": 390, "height": 844}


def page_width(page: Page) -> int:
    width: int = page.evaluate("document.documentElement.scrollWidth")
    return width


def on_screen(page: Page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"] and box["x"] + box["width"] <= PHONE["width"]


@pytest.mark.django_db(transaction=True)
def test_the_inbox_and_a_card_fit_a_phone_and_the_answers_stay_in_reach(
    live_server: Any, page: Page, screenshots: Path
) -> None:
    workspace, (diet, _, _), _ = team()
    page.set_viewport_size(PHONE)
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/inbox/")

    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    assert page_width(page) <= PHONE["width"]
    # The rows are cards now: each question is on screen, not cut off at the right.
    first = page.locator("tr.card-row").first
    assert first.evaluate("row => getComputedStyle(row).display") == "block"
    assert on_screen(page, "tr.card-row >> nth=0")

    page.locator(f"tr.card-row[data-card='{diet.pk}'] td.question a").click()
    expect(page.locator(".review-card")).to_have_attribute("data-card", str(diet.pk))
    assert page_width(page) <= PHONE["width"]
    assert on_screen(page, ".answers")
    page.screenshot(path=str(screenshots / "phone-card.png"))
    expect(page.locator(".answers button").first).to_be_in_viewport()
    # Still in reach at the bottom of the page, after scrolling past the facts and the evidence.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert on_screen(page, ".answers")
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(screenshots / "phone-card-dark.png"))

    for path in (
        "/",
        f"/w/{workspace.slug}/decisions/",
        f"/w/{workspace.slug}/memories/",
        f"/w/{workspace.slug}/inbox/?state=answered",
    ):
        page.goto(f"{live_server.url}{path}")
        assert page_width(page) <= PHONE["width"], path
