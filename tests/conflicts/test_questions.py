"""Each card kind asks one question whose buttons are its literal answers, with the same keys everywhere."""

from __future__ import annotations

import pytest

from conflicts.evidence import card_evidence, sentence
from conflicts.inbox import InboxFilters, inbox_page
from conflicts.models import ConflictCard, Severity
from conflicts.questions import card_subject, parse_answer, question_form
from conflicts.severity import severity_calibrated, severity_cap
from tests.conflicts.cards import pair_card, reversal_card
from tests.factories import memory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def labels(form: object) -> list[tuple[str, str]]:
    return [(o.label, o.data_key) for o in form.options]  # type: ignore[attr-defined]


def test_a_stale_card_asks_if_it_is_still_true_and_answers_still_true_or_changed(workspace: Workspace) -> None:
    card, old, new = pair_card(workspace, "Rhea is on call", "Ivo is on call", relation="temporal_change")
    card.kind = "stale"

    form = question_form(card, [old, new])

    assert form.form == "still_true"
    assert form.prompt == "Is it still true that “Rhea is on call”?"
    assert labels(form) == [("Still true", "y"), ("Changed", "n"), ("Both hold", "b"), ("Skip", "s")]
    assert form.options[1].value == f"no:{new.pk}"
    assert form.options[1].detail == "now: Ivo is on call"


def test_a_contradiction_offers_the_facts_themselves_as_answers(workspace: Workspace) -> None:
    card, vegetarian, steak = pair_card(
        workspace,
        "Maya is vegetarian.",
        "Maya's favourite dinner is steak.",
        subject_entity="maya",
        subject_attribute="diet",
    )

    form = question_form(card, [vegetarian, steak])

    assert form.form == "which_holds"
    assert form.prompt == "Which is true?"
    # y is the asked fact on every card, n the newest other one: the same meaning as on a stale card.
    assert labels(form) == [
        ("Maya is vegetarian", "1 y"),
        ("Maya's favourite dinner is steak", "2 n"),
        ("Both hold", "b"),
        ("Skip", "s"),
    ]
    assert [o.value for o in form.options[:2]] == ["yes", f"no:{steak.pk}"]
    assert form.subject == "Maya's diet"
    assert form.line == "Which is true? “Maya is vegetarian” or “Maya's favourite dinner is steak”"


def test_a_reversal_lists_the_standing_facts_only(workspace: Workspace) -> None:
    card, facts = reversal_card(workspace, ["On Jenkins", "Moved to Actions", "On Jenkins again"], status="active")
    facts[1].status = "forgotten"

    form = question_form(card, facts)

    assert form.prompt == "Which holds now?"
    assert labels(form) == [("On Jenkins", "1 y"), ("On Jenkins again", "2 n"), ("Both hold", "b"), ("Skip", "s")]


def test_the_subject_is_the_key_when_the_facts_have_one(workspace: Workspace) -> None:
    a = memory(workspace=workspace, text="Ivo is on call", key="on_call")
    b = memory(workspace=workspace, text="Rhea is on call", key="on_call")
    assert card_subject([a, b]) == "on call"


def test_without_a_key_the_subject_is_what_the_facts_agree_to_be_about(workspace: Workspace) -> None:
    lisbon = memory(
        workspace=workspace, text="The user lives in Lisbon.", subject_entity="user", subject_attribute="home city"
    )
    berlin = memory(
        workspace=workspace, text="The user moved to Berlin.", subject_entity="user", subject_attribute="home city"
    )
    sister = memory(
        workspace=workspace,
        text="The user's sister lives in Porto.",
        subject_entity="user's sister",
        subject_attribute="home city",
    )

    assert card_subject([lisbon, berlin]) == "the user's home city"
    assert card_subject([lisbon, sister]) != "the user's home city"  # two subjects: the shared words, not one subject


def test_answers_are_posted_as_choice_and_fact() -> None:
    assert parse_answer("no:1234") == ("no", "1234")
    assert parse_answer("yes") == ("yes", None)


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("same subject: acme, corp, seats", "Both speak of the same thing (acme, corp, seats)."),
        ("numbers differ: 120seats vs 200seats", "The numbers differ: 120seats against 200seats."),
        (
            "valid from 2026-10-20 and 2026-11-10 (21 days apart)",
            "They were stated 21 days apart (2026-10-20 and 2026-11-10).",
        ),
        (
            "two current facts at odds (temporal_change, p=0.62)",
            "Two current facts at odds (read as a change over time, 62% likely).",
        ),
        (
            "two current sources give different durations (cosine 0.83)",
            "Two current sources give different durations (similar in meaning: 0.83).",
        ),
    ],
)
def test_evidence_reads_as_sentences_without_raw_tokens(raw: str, plain: str) -> None:
    assert sentence(raw) == plain


def test_every_detector_gets_the_same_three_rows(workspace: Workspace) -> None:
    card, _, _ = pair_card(
        workspace, reasons=("same subject: diet", "polarity flip: only the first statement is negated")
    )
    card.evidence = {
        "relation": "true_contradiction",
        "probability": 0.95,
        "tier": "rules",
        "reasons": ["same subject: diet"],
    }
    narrative = {"reason": "two current facts at odds (temporal_change, p=0.62)", "facts": ["a", "b"]}

    pairwise = card_evidence(card)
    card.detector, card.evidence = "narrative:offline", narrative
    story = card_evidence(card)

    assert pairwise.found_by == "The check when a fact arrived, with wording rules."
    assert pairwise.how_sure == (
        "It read this as a contradiction, 95% likely. This detector is right about 72% of the time (measured offline)."
    )
    assert story.found_by == "The story detective, reading the workspace's history, with its offline rules."
    assert story.reasons == ["Two current facts at odds (read as a change over time, 62% likely)."]
    assert "[" not in story.how_sure + " ".join(story.reasons)


@pytest.mark.parametrize(
    ("precision", "cap"),
    [
        (0.95, Severity.CRITICAL),
        (0.9, Severity.CRITICAL),
        (0.72, Severity.HIGH),
        (0.62, Severity.MEDIUM),
        (0.4, Severity.LOW),
    ],
)
def test_the_severity_cap_follows_the_expected_precision(precision: float, cap: Severity) -> None:
    assert severity_cap(precision) == cap


def test_a_sixty_two_percent_narrative_flag_is_not_critical(workspace: Workspace) -> None:
    evidence = {"reason": "two current facts at odds (temporal_change, p=0.62)"}
    calibrated = severity_calibrated(
        stakes=Severity.CRITICAL, workspace_id=workspace.pk, detector="narrative:offline", evidence=evidence
    )
    assert calibrated == Severity.MEDIUM
    sure = {"relation": "temporal_change", "probability": 0.97}
    assert (
        severity_calibrated(stakes=Severity.LOW, workspace_id=workspace.pk, detector="ingestion:rules", evidence=sure)
        == Severity.LOW
    )


def test_the_inbox_sorted_by_subject_follows_the_subject_shown(workspace: Workspace) -> None:
    def card_about(text: str, entity: str, attribute: str, start: int) -> ConflictCard:
        card, _, _ = pair_card(
            workspace, text, text + " again", subject_entity=entity, subject_attribute=attribute, start=start
        )
        return card

    # Texts sort zoe, user, acme; subjects sort acme, user, zoe.
    zoe = card_about("A new manager for Zoe", "zoe", "manager", 0)
    acme = card_about("Seats at Acme Corp", "acme corp", "seat count", 2)
    user = card_about("Moved to Berlin", "user", "home city", 4)

    cards, _ = inbox_page(workspace=workspace, filters=InboxFilters.from_query({"sort": "subject"}))

    assert [card.pk for card in cards] == [acme.pk, user.pk, zoe.pk]
