"""The inbox as a triage list, in a real browser: keyboard from the list, search, sort, assignment,
bulk dismiss, the answered history with reopen, shortcut help, and live updates without reload."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from conflicts.models import Answer, ConflictCard
from tests.browser.test_review import sign_in, team
from tests.conflicts.cards import pair_card

SELECTED = "tr.card-row[aria-selected='true']"


def open_inbox(page: Page, live_server: Any, slug: str = "acme") -> None:
    page.set_viewport_size({"width": 1200, "height": 800})
    sign_in(page, live_server, "ana", f"/w/{slug}/inbox/")
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_j_and_k_move_a_visible_selection_and_enter_opens_it(live_server: Any, page: Page) -> None:
    _workspace, (_diet, _deploys, _standup), _ = team()
    open_inbox(page, live_server)
    rows = page.locator("tr.card-row")
    expect(rows).to_have_count(3)
    first_id = rows.nth(0).get_attribute("data-card")
    second_id = rows.nth(1).get_attribute("data-card")
    expect(rows.nth(0)).to_have_attribute("aria-selected", "true")

    page.keyboard.press("j")
    expect(page.locator(SELECTED)).to_have_attribute("data-card", str(second_id))
    expect(page.locator(SELECTED)).to_be_focused()
    page.keyboard.press("k")
    page.keyboard.press("k")  # stays on the first row
    expect(page.locator(SELECTED)).to_have_attribute("data-card", str(first_id))
    page.keyboard.press("j")
    page.keyboard.press("Enter")

    expect(page).to_have_url(f"{live_server.url}/w/acme/cards/{second_id}/")
    page.go_back()
    expect(page.locator(SELECTED)).to_have_count(1)
    page.keyboard.press("o")
    expect(page).to_have_url(f"{live_server.url}/w/acme/cards/{first_id}/")


@pytest.mark.django_db(transaction=True)
def test_y_n_b_s_answer_the_selected_card_from_the_list(live_server: Any, page: Page) -> None:
    _workspace, _cards, _ = team()
    open_inbox(page, live_server)
    rows = page.locator("tr.card-row")
    first = rows.nth(0).get_attribute("data-card")
    second = rows.nth(1).get_attribute("data-card")

    page.keyboard.press("s")  # skip: the card stays, the selection with it
    expect(page.locator("[data-announce]")).to_contain_text("Skipped")
    assert ConflictCard.objects.get(pk=first).surfaced_count == 1

    page.keyboard.press("y")
    expect(rows).to_have_count(2)
    expect(page.locator("#announce")).to_contain_text("Answered")
    assert Answer.objects.get(card_id=first, choice="yes")
    # The selection moved to the card now in that place, and the counts followed.
    expect(page.locator(SELECTED)).to_have_attribute("data-card", str(second))
    expect(page.locator(SELECTED)).to_be_focused()
    expect(page.locator("#counts")).to_contain_text("1 answered")

    page.keyboard.press("b")
    expect(rows).to_have_count(1)
    assert ConflictCard.objects.get(pk=second).state == "dismissed"
    page.keyboard.press("n")
    expect(page.get_by_role("heading", name="Inbox zero")).to_be_visible()
    assert Answer.objects.exclude(choice="skip").count() == 3


@pytest.mark.django_db(transaction=True)
def test_x_marks_cards_and_they_are_dismissed_together(live_server: Any, page: Page) -> None:
    _workspace, _cards, _ = team()
    open_inbox(page, live_server)
    rows = page.locator("tr.card-row")
    marked = [rows.nth(0).get_attribute("data-card"), rows.nth(2).get_attribute("data-card")]

    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.locator("[data-selected-count]")).to_have_text("2 selected")
    page.keyboard.press("#")

    expect(page.locator("[data-announce]")).to_have_text("Dismissed 2 cards as not conflicts.")
    expect(rows).to_have_count(1)
    assert set(ConflictCard.objects.filter(state="dismissed").values_list("pk", flat=True)) == {
        ConflictCard.objects.get(pk=pk).pk for pk in marked
    }


@pytest.mark.django_db(transaction=True)
def test_slash_searches_the_facts_and_sort_orders_by_subject(live_server: Any, page: Page) -> None:
    _workspace, (_diet, deploys, standup), _ = team()
    open_inbox(page, live_server)

    page.keyboard.press("/")
    search = page.get_by_label("Search the facts")
    expect(search).to_be_focused()
    page.keyboard.type("jenkins")
    expect(page.locator("tr.card-row")).to_have_count(1)
    expect(page.locator("tr.card-row")).to_have_attribute("data-card", str(deploys.pk))
    expect(page).to_have_url(f"{live_server.url}/w/acme/inbox/?q=jenkins")
    page.keyboard.press("Escape")
    search.fill("")
    search.dispatch_event("input")
    expect(page.locator("tr.card-row")).to_have_count(3)

    page.get_by_label("Sort").select_option("subject")
    expect(page).to_have_url(f"{live_server.url}/w/acme/inbox/?sort=subject")
    subjects = page.locator("tr.card-row .subject")
    expect(subjects).to_have_count(3)
    texts = subjects.all_inner_texts()
    assert texts == sorted(texts, key=str.lower), texts
    page.get_by_label("Sort").select_option("newest")
    expect(page).to_have_url(f"{live_server.url}/w/acme/inbox/?sort=newest")
    expect(page.locator("tr.card-row").first).to_have_attribute("data-card", str(standup.pk))


@pytest.mark.django_db(transaction=True)
def test_a_assigns_the_selected_card_to_me_and_mine_shows_only_mine(live_server: Any, page: Page) -> None:
    _workspace, (_diet, _deploys, _), _ = team()
    open_inbox(page, live_server)
    page.keyboard.press("j")
    chosen = page.locator(SELECTED).get_attribute("data-card")

    page.keyboard.press("a")
    expect(page.locator("[data-announce]")).to_have_text("Assigned to you.")
    expect(page.locator(f"tr.card-row[data-card='{chosen}'] td.assignee")).to_have_text("me")
    assert ConflictCard.objects.get(pk=chosen).assignee.username == "ana"  # type: ignore[union-attr]

    page.get_by_label("Assigned").select_option("me")
    expect(page.locator("tr.card-row")).to_have_count(1)
    expect(page.locator("tr.card-row")).to_have_attribute("data-card", str(chosen))


@pytest.mark.django_db(transaction=True)
def test_answered_cards_are_browsable_with_who_and_what_and_can_be_reopened(live_server: Any, page: Page) -> None:
    _workspace, (diet, _, _), vegetarian = team()
    open_inbox(page, live_server)
    page.goto(f"{live_server.url}/w/acme/cards/{diet.pk}/")
    page.get_by_role("button", name="Maya's favourite dinner is steak frites").click()
    expect(page.locator("#counts")).to_contain_text("1 answered")

    page.get_by_role("link", name="1 answered").click()
    row = page.locator("tr.history-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Changed: now “Maya's favourite dinner is steak frites”")
    expect(row.locator("td.by")).to_have_text("ana")
    row.get_by_role("button", name="Reopen").click()

    expect(page.get_by_text("Reopened")).to_be_visible()
    expect(page.locator(".review-card")).to_have_attribute("data-card", str(diet.pk))
    assert ConflictCard.objects.get(pk=diet.pk).state == "open"
    assert vegetarian.__class__.objects.get(pk=vegetarian.pk).superseded_by_id is None


@pytest.mark.django_db(transaction=True)
def test_question_mark_lists_every_shortcut(live_server: Any, page: Page) -> None:
    _workspace, (diet, _, _), _ = team()
    open_inbox(page, live_server)

    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    for key in ("j", "k", "Enter", "o", "y", "n", "b", "s", "x", "#", "a", "u", "/", "?", "1"):
        expect(dialog.locator("kbd", has_text=key).first).to_be_visible()
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.goto(f"{live_server.url}/w/acme/cards/{diet.pk}/")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_the_inbox_and_the_header_count_update_without_reload(live_server: Any, page: Page) -> None:
    workspace, (_diet, _, _), _ = team()
    open_inbox(page, live_server)
    expect(page).to_have_title("(3) Inbox · Acme platform")
    expect(page.locator("#nav-open-count")).to_contain_text("3")
    page.evaluate("window.__sameDocument = true")

    pair_card(workspace, "Backups are kept 30 days", "Backups are kept 14 days", kind="fact", start=20)

    expect(page.locator("tr.card-row")).to_have_count(4, timeout=15_000)
    expect(page).to_have_title("(4) Inbox · Acme platform")
    expect(page.locator("#nav-open-count")).to_contain_text("4")
    expect(page.locator("#counts")).to_contain_text("4 open")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
