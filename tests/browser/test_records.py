"""Decisions, history and the memory browser in a real browser: labels, compact rows, answers and their
effects, the empty search, whole chains, the link graph, supersede by search, two-step destructive actions."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from conflicts.detection.verdict import Relation, Verdict
from conflicts.feedback import card_answer
from conflicts.services import conflict_resolve
from memories.audit import Actor
from memories.models import Memory
from memories.services import link_create, memory_supersede
from tests.browser.test_accessibility import violations
from tests.browser.test_phone import PHONE, page_width
from tests.browser.test_review import sign_in, team
from tests.conflicts.cards import DETECTOR, day
from tests.factories import memory
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

ME = Actor.system("test")
DESKTOP = {"width": 1280, "height": 900}
REASON = (
    "temporal change (classifier, p=0.91): same subject: standup, time, room; numbers differ: 9:30 vs 10:00; "
    "change marker: 'moved'; valid from 2026-03-01 and 2026-03-06 (5 days apart)"
)


def many_decisions(workspace: Workspace, count: int = 25) -> None:
    sure = Verdict(relation=Relation.TEMPORAL_CHANGE, probability=0.97, tier="rules", current="b", reasons=(REASON,))
    for n in range(count):
        old = memory(
            workspace=workspace,
            text=f"Team {n}'s standup is at 9:30 in the Lisbon room, every weekday, before the planning meeting",
            valid_from=day(0),
            status="active",
            subject_entity=f"team {n}",
            subject_attribute="standup",
        )
        new = memory(
            workspace=workspace,
            text=f"Team {n}'s standup moved to 10:00 on Zoom because half of the team now works from Porto",
            valid_from=day(5),
            status="active",
            subject_entity=f"team {n}",
            subject_attribute="standup",
        )
        conflict_resolve(older=old, newer=new, verdict=sure, context="ingestion", actor=DETECTOR)


@pytest.mark.django_db(transaction=True)
def test_decisions_read_as_words_and_25_rows_fit_in_two_screens(live_server: Any, page: Page) -> None:
    workspace, _, _ = team(role="admin")  # three cards: their opening is no decision
    many_decisions(workspace)
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/decisions/")

    rows = page.locator("tr.decision")
    expect(rows).to_have_count(25)
    expect(page.locator("table.decisions")).not_to_contain_text("conflict.")
    expect(page.locator("table.decisions")).not_to_contain_text("Opened a review card")
    expect(page.get_by_role("columnheader", name="Actions")).to_be_visible()
    expect(rows.first.get_by_role("button", name="Confirm")).to_be_visible()
    table = page.locator("table.decisions").bounding_box()
    assert table is not None
    assert table["height"] <= 2 * DESKTOP["height"], table["height"]
    # Nothing sticks out of the table on the right (the revert form used to).
    assert page_width(page) <= DESKTOP["width"]
    revert = rows.last.get_by_role("button", name="Revert").bounding_box()
    assert revert is not None
    assert revert["x"] + revert["width"] <= table["x"] + table["width"]

    page.set_viewport_size(PHONE)
    page.reload()
    assert page_width(page) <= PHONE["width"]


@pytest.mark.django_db(transaction=True)
def test_an_answer_shows_in_the_history_with_what_it_changed(live_server: Any, page: Page) -> None:
    workspace, (diet, _, _), vegetarian = team()
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/cards/{diet.pk}/")
    expect(page.locator(".review-card .question")).to_be_visible()
    page.keyboard.press("n")  # it changed: the vegetarian fact is superseded
    expect(page.locator("#review")).to_contain_text("Here is the next one")

    page.get_by_role("navigation", name="Workspace").get_by_role("link", name="History").click()

    expect(page.get_by_role("heading", name="History")).to_be_visible()
    row = page.locator("tr.history-row").first
    expect(row).to_contain_text("Answered a review card: changed")
    expect(row).to_contain_text("ana")
    expect(row.get_by_role("link", name=diet.question)).to_be_visible()
    expect(row.locator(".effect-superseded")).to_be_visible()
    expect(row.locator("ul.effects")).to_contain_text(vegetarian.text)
    expect(row.locator(".effect-tolerance")).to_be_visible()
    assert violations(page) == []
    page.set_viewport_size(PHONE)
    assert page_width(page) <= PHONE["width"]


@pytest.mark.django_db(transaction=True)
def test_a_gibberish_search_shows_an_empty_state(live_server: Any, page: Page) -> None:
    workspace, _, _ = team()
    remember(workspace, "Deploys run on GitHub Actions", scope="infra", key="ci_system")
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/memories/")

    page.get_by_role("searchbox", name="Search").fill("zzqxv flibbertigibbet")

    expect(page.get_by_text("Nothing matches “zzqxv flibbertigibbet”")).to_be_visible()
    expect(page.locator("table.memories")).to_have_count(0)
    page.get_by_role("searchbox", name="Search").fill("how do we deploy")
    expect(page.locator("table.memories")).to_contain_text("Deploys run on GitHub Actions")


@pytest.mark.django_db(transaction=True)
def test_a_memory_page_shows_the_whole_chain_one_node_per_fact_and_supersedes_by_search(
    live_server: Any, page: Page
) -> None:
    workspace, _, _ = team(role="admin")
    first = remember(workspace, "Enterprise pricing starts at 90 euros per seat per month", valid_from=day(0))
    second = remember(workspace, "Acme Corp has 200 seats on the Pro plan", valid_from=day(3))
    head = remember(workspace, "The Pro plan is 59 euros per seat per month for all new customers", valid_from=day(6))
    memory_supersede(old=first, new=head, actor=ME)
    memory_supersede(old=second, new=head, actor=ME)
    link_create(src=first, dst=head, rel="temporal_evolution", actor=ME)
    stale = remember(workspace, "Support hours are 9:00 to 18:00 CET", valid_from=day(1))
    fresh = remember(workspace, "Support hours are now 8:00 to 20:00 CET", valid_from=day(7))
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/chains/")
    chain_steps = page.locator("ol.chain-steps li")
    expect(chain_steps).to_have_count(3)

    page.get_by_role("link", name=first.text).click()
    expect(page.locator("ol.timeline li")).to_have_count(3)  # the same steps as the Chains page
    expect(page.locator("ol.timeline")).to_contain_text(second.text)
    graph = page.locator("svg.chart")
    expect(graph.locator("circle")).to_have_count(2)  # supersedes + temporal_evolution: one node
    for label in graph.locator("text.node-label").all():
        box, picture = label.bounding_box(), graph.bounding_box()
        assert box is not None
        assert picture is not None
        assert picture["x"] <= box["x"]
        assert box["x"] + box["width"] <= picture["x"] + picture["width"]
    assert violations(page) == []

    page.goto(f"{live_server.url}/w/{workspace.slug}/memories/{stale.pk}/")
    page.get_by_text("Supersede…").click()
    page.get_by_role("searchbox", name="Find the fact that replaces it").fill("support hours")
    choice = page.get_by_role("radio", name=fresh.text)
    expect(choice).to_be_visible()
    expect(page.get_by_role("radio", name=stale.text)).to_have_count(0)
    choice.check()
    page.get_by_role("button", name="Supersede with the chosen fact").click()
    expect(page.get_by_text("Superseded.")).to_be_visible()
    assert Memory.objects.get(pk=stale.pk).superseded_by_id == fresh.pk


@pytest.mark.django_db(transaction=True)
def test_forget_asks_first(live_server: Any, page: Page) -> None:
    workspace, _, vegetarian = team(role="admin")
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/memories/{vegetarian.pk}/")

    page.get_by_text("Forget…").click()
    expect(page.get_by_text("Agents will no longer recall this fact.")).to_be_visible()
    assert Memory.objects.get(pk=vegetarian.pk).status == "active"  # the first click only asks
    page.get_by_role("button", name="Forget this fact").click()

    expect(page.get_by_text("Forgotten (restore brings it back).")).to_be_visible()
    assert Memory.objects.get(pk=vegetarian.pk).status == "forgotten"
    page.set_viewport_size(PHONE)
    assert page_width(page) <= PHONE["width"]


@pytest.mark.django_db(transaction=True)
def test_the_record_pages_pass_axe_in_both_themes_and_fit_a_phone(live_server: Any, page: Page) -> None:
    workspace, (diet, _, _), vegetarian = team(role="admin")
    many_decisions(workspace, count=2)
    live = Memory.objects.get(workspace=workspace, text="Deploys run on Jenkins")
    card_answer(card=diet, choice="no", actor=Actor.for_user(User.objects.get(username="ana")))  # a history row
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, "ana", f"/w/{workspace.slug}/history/")
    expect(page.locator("tr.history-row")).to_have_count(1)
    paths = [
        f"/w/{workspace.slug}/history/",
        f"/w/{workspace.slug}/decisions/",
        f"/w/{workspace.slug}/chains/",
        f"/w/{workspace.slug}/memories/?q=zzqxv+flibbertigibbet",
        f"/w/{workspace.slug}/memories/{vegetarian.pk}/",
        f"/w/{workspace.slug}/memories/{live.pk}/?replace_q=deploys",
    ]
    found: dict[str, list[str]] = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for path in paths:
            page.goto(f"{live_server.url}{path}")
            if problems := violations(page):
                found[f"{scheme} {path}"] = problems
    assert found == {}

    page.set_viewport_size(PHONE)
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        assert page_width(page) <= PHONE["width"], path
