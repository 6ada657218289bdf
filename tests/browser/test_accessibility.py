"""axe-core on the main pages, in both themes: no serious or critical WCAG 2.1 A/AA violation.

axe is vendored in static/vendor/axe/ (MPL-2.0) and injected here only; no product page loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_review import sign_in, team

AXE = Path(__file__).resolve().parents[2] / "static" / "vendor" / "axe" / "axe.min.js"
RUN_AXE = """async () => {
  const tags = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
  const results = await axe.run(document, {runOnly: {type: "tag", values: tags}});
  return results.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map(n => n.target.join(" ")).slice(0, 3).join(", ")}`);
}"""


def violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found: list[str] = page.evaluate(RUN_AXE)
    return found


@pytest.mark.django_db(transaction=True)
def test_the_main_pages_have_no_serious_violations_in_either_theme(live_server: Any, page: Page) -> None:
    workspace, (diet, _, _), _ = team()
    sign_in(page, live_server, "ana", "/")
    expect(page.get_by_role("heading", name="Workspaces")).to_be_visible()
    paths = [
        "/",
        f"/w/{workspace.slug}/inbox/",
        f"/w/{workspace.slug}/cards/{diet.pk}/",
        f"/w/{workspace.slug}/inbox/?state=answered",
        f"/w/{workspace.slug}/decisions/",
        f"/w/{workspace.slug}/memories/",
        f"/w/{workspace.slug}/insights/",
    ]
    found: dict[str, list[str]] = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for path in paths:
            page.goto(f"{live_server.url}{path}")
            if problems := violations(page):
                found[f"{scheme} {path}"] = problems

    assert found == {}


@pytest.mark.django_db(transaction=True)
def test_the_skip_link_comes_first_and_moves_focus_to_the_content(live_server: Any, page: Page) -> None:
    workspace, _, _ = team()
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/inbox/")
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()

    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    # The focus ring is drawn (3px outline), not left to the browser's default or removed.
    assert skip.evaluate("a => getComputedStyle(a).outlineWidth") == "3px"

    page.keyboard.press("Enter")
    expect(page.locator("main#content")).to_be_focused()
