"""The bar of issue 26 on the shipped demo: five cards answered by keyboard from the inbox list, every
card's buttons the literal answers to its question, real waiting times, no card left over retired facts."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from conflicts.models import Answer, ConflictCard
from conflicts.retirement import standing
from memories.models import Memory
from memoryhub.demo import demo_seed
from tests.browser.test_review import sign_in
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory

STILL_TRUE = ["Still true", "Changed", "Both hold", "Skip"]


def short(text: str, limit: int = 120) -> str:
    text = text.strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@pytest.mark.django_db(transaction=True)
def test_the_demo_cards_ask_plain_questions_and_five_are_answered_by_keyboard(live_server: Any, page: Page) -> None:
    demo = WorkspaceFactory(slug="demo", name="Demo team")
    MembershipFactory(user=UserFactory(username="ana"), workspace=demo, role="reviewer")
    demo_seed(workspace=demo)
    open_cards = list(ConflictCard.objects.filter(workspace=demo, state="open").order_by("created_at"))
    assert len(open_cards) >= 5
    # No open card is left asking about facts that no longer stand.
    for card in open_cards:
        facts = Memory.objects.filter(card_facts__card=card)
        assert sum(1 for fact in facts if standing(fact)) >= 2, card.question

    page.set_viewport_size({"width": 1200, "height": 900})
    sign_in(page, live_server, "ana", "/w/demo/inbox/")
    expect(page.locator("tr.card-row").first).to_be_visible()
    waits = page.locator("tr.card-row td.waiting").all_inner_texts()
    assert "waiting just now" not in waits, waits
    assert not any("0 minutes" in w for w in waits), waits

    # Each card's buttons are the literal answers to the question it asks.
    for card in open_cards:
        page.goto(f"{live_server.url}/w/demo/cards/{card.pk}/")
        prompt = page.locator("#card-question").inner_text()
        labels = page.locator(".answers button .label").all_inner_texts()
        if prompt.startswith("Is it still true that"):
            assert labels == STILL_TRUE, (prompt, labels)
            continue
        assert prompt in ("Which holds now?", "Which is true?"), prompt
        standing_texts = [
            short(fact.text)
            for fact in sorted(Memory.objects.filter(card_facts__card=card), key=lambda m: m.valid_from)
            if standing(fact)
        ]
        both = "Both hold" if len(standing_texts) == 2 else "All of them hold"
        assert labels == [*standing_texts, both, "Skip"], (prompt, labels)

    # From the inbox list, keyboard only: open the selected card, answer five in a row.
    page.goto(f"{live_server.url}/w/demo/inbox/")
    expect(page.locator("tr.card-row[aria-selected='true']")).to_have_count(1)
    page.keyboard.press("o")
    answered: list[str] = []
    for _ in range(5):
        card = page.locator(".review-card")
        expect(card).to_be_visible()
        current = str(card.get_attribute("data-card"))
        assert current not in answered
        page.keyboard.press("y")
        expect(page.locator(f".review-card[data-card='{current}']")).to_have_count(0)
        expect(page.locator("#card-question")).to_be_focused()
        answered.append(current)

    decided = set(Answer.objects.exclude(choice="skip").values_list("card_id", flat=True))
    assert {str(pk) for pk in decided} == set(answered)
