from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from conflicts.detection.verdict import Relation, Verdict
from conflicts.feedback import CardAlreadyAnswered, card_answer, card_answer_undo, says_never_true
from conflicts.models import Answer, ConflictCard, Tolerance, ToleranceChange, Uncertainty
from conflicts.services import conflict_resolve
from memories.audit import Actor, snapshot
from memories.models import Event, Link, Memory
from memoryhub.errors import InvalidInput
from tests.conflicts.cards import DETECTOR, ONE_SUBJECT, pair_card, reversal_card
from tests.factories import UserFactory
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

AUDITED = [
    "reliability",
    "status",
    "superseded_by",
    "superseded_at",
    "valid_to",
    "expired_at",
    "annotation",
    "confidence",
    "reinforcement_count",
    "last_reinforced_at",
]


@pytest.fixture
def ana() -> Actor:
    return Actor.for_user(UserFactory(username="ana"))


def world(card: ConflictCard, *memories: Memory) -> dict[str, Any]:
    """Everything an answer may touch, for exact before/after comparisons."""
    card = ConflictCard.objects.get(pk=card.pk)
    record = Uncertainty.objects.get(pk=card.uncertainty_id) if card.uncertainty_id else None
    return {
        "memories": [snapshot(Memory.objects.get(pk=m.pk), AUDITED) for m in memories],
        "card": snapshot(card, ["state", "answered_at", "severity", "surfaced_count"]),
        "uncertainty": snapshot(record, ["state", "resolution_strategy", "resolved_at", "surfaced_count"])
        if record
        else None,
        "links": sorted(Link.objects.values_list("src_id", "dst_id", "rel")),
        "answers": Answer.objects.count(),
        "tolerance": Tolerance.objects.get(workspace=card.workspace).value
        if Tolerance.objects.filter(workspace=card.workspace).exists()
        else 0.5,
        "tolerance_changes": ToleranceChange.objects.count(),
    }


def test_yes_keeps_the_asked_fact_and_supersedes_the_other(workspace: Workspace, ana: Actor) -> None:
    card, old, new = pair_card(workspace)
    assert Memory.objects.get(pk=old.pk).reliability == "contradicted"

    result = card_answer(card=card, choice="yes", actor=ana)

    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.reliability, old.reinforcement_count) == ("reliable", 1)
    assert (new.reliability, new.superseded_by_id) == ("superseded", old.pk)
    assert new.annotation == "used to: The user's favourite dish is steak"
    assert Link.objects.filter(src=old, dst=new, rel="supersedes").exists()
    card.refresh_from_db()
    assert (card.state, result.answer.choice, result.answer.user.username) == ("answered", "yes", "ana")
    record = Uncertainty.objects.get(pk=card.uncertainty_id)
    assert (record.state, record.resolution_strategy) == ("resolved", "user_clarified")
    assert result.event.verb == "card.answer"
    assert Event.objects.filter(verb="card.answer").count() == 1


def test_no_supersedes_the_asked_fact_by_the_newest_other(workspace: Workspace, ana: Actor) -> None:
    card, old, new = pair_card(workspace)

    card_answer(card=card, choice="no", actor=ana, note="she eats meat since March")

    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.reliability, old.superseded_by_id, old.status) == ("superseded", new.pk, "pending_embed")
    assert old.annotation == "used to: The user is vegetarian"
    assert (new.reliability, new.reinforcement_count) == ("reliable", 1)
    assert Answer.objects.get().note == "she eats meat since March"


def test_no_on_a_joined_card_settles_every_rival_and_each_uncertainty(workspace: Workspace, ana: Actor) -> None:
    card, ivo, rhea = pair_card(
        workspace, "Ivo is the on-call engineer", "Rhea is the on-call engineer", relation=Relation.TEMPORAL_CHANGE
    )
    tomas = Memory.objects.create(
        workspace=workspace,
        text="Tomás is the on-call engineer",
        kind="trait",
        valid_from=rhea.valid_from,
        speech_act="claim",
        **ONE_SUBJECT,  # the subject the two carded facts have: a pair not shown to be one is never asked about
    )
    later = Verdict(relation=Relation.TEMPORAL_CHANGE, probability=0.8, tier="rules", current="b")
    assert conflict_resolve(older=ivo, newer=tomas, verdict=later, context="ingestion", actor=DETECTOR).card == card

    card_answer(card=card, choice="no", actor=ana)

    assert Memory.objects.get(pk=ivo.pk).superseded_by_id == tomas.pk
    assert Memory.objects.get(pk=rhea.pk).superseded_by_id == tomas.pk
    assert set(Uncertainty.objects.values_list("state", "resolution_strategy")) == {("resolved", "user_clarified")}
    assert Uncertainty.objects.count() == 2


@pytest.mark.parametrize(
    ("note", "forget"),
    [
        ("never true, the agent misheard", True),
        ("Wrong: that was her sister", True),
        ("it was never true", True),
        ("she changed her diet", False),
        ("", False),
    ],
)
def test_the_never_true_rule(note: str, forget: bool) -> None:
    assert says_never_true(note) is forget


def test_no_with_a_never_true_note_forgets_the_asked_fact(workspace: Workspace, ana: Actor) -> None:
    card, old, new = pair_card(workspace)

    card_answer(card=card, choice="no", actor=ana, note="never true: wrong person")

    old.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("forgotten", None)
    assert old.expired_at is not None
    assert Memory.objects.get(pk=new.pk).reliability == "reliable"


def test_both_keeps_the_facts_dismisses_the_card_and_never_raises_the_pair_again(
    workspace: Workspace, ana: Actor
) -> None:
    card, old, new = pair_card(workspace)

    card_answer(card=card, choice="both", actor=ana)

    assert set(Memory.objects.values_list("reliability", flat=True)) == {"reliable"}
    card.refresh_from_db()
    assert card.state == "dismissed"
    assert Uncertainty.objects.get(pk=card.uncertainty_id).resolution_strategy == "user_clarified"
    again = Verdict(relation=Relation.TRUE_CONTRADICTION, probability=0.99, tier="rules")
    assert conflict_resolve(older=old, newer=new, verdict=again, context="drift", actor=DETECTOR).action == "none"
    # The detector's false positive is what insights count.
    from conflicts.insights import detector_precision

    assert [(d.detector, d.false_positives, d.precision) for d in detector_precision(workspace=workspace)] == [
        ("ingestion:rules", 1, 0.0)
    ]


def test_skip_counts_and_every_third_skip_lowers_severity(workspace: Workspace, ana: Actor) -> None:
    card, _, _ = pair_card(workspace)
    # Critical stakes (two beliefs about a person), capped at high by the contradiction detector's precision.
    assert card.severity == "high"

    for _ in range(3):
        card_answer(card=card, choice="skip", actor=ana)

    card.refresh_from_db()
    assert (card.state, card.surfaced_count, card.severity) == ("open", 3, "medium")
    record = Uncertainty.objects.get(pk=card.uncertainty_id)
    assert (record.state, record.surfaced_count, record.severity) == ("surfaced", 3, "medium")
    assert Answer.objects.filter(choice="skip").count() == 3


def test_a_reversal_answer_supersedes_every_fact_but_the_picked_one(workspace: Workspace, ana: Actor) -> None:
    card, (a, b, c) = reversal_card(
        workspace, ["Deploys run on Jenkins", "Deploys moved to GitHub Actions", "Deploys are back on Jenkins"]
    )

    card_answer(card=card, choice="no", actor=ana, current_memory=b.pk)

    a.refresh_from_db()
    c.refresh_from_db()
    assert (a.superseded_by_id, c.superseded_by_id) == (b.pk, b.pk)
    assert Memory.objects.get(pk=b.pk).reliability == "reliable"
    assert Answer.objects.get().current_memory_id == b.pk


def test_a_current_fact_outside_the_card_is_refused(workspace: Workspace, ana: Actor) -> None:
    card, _, _ = pair_card(workspace)
    stranger, _, _ = pair_card(workspace, "Office in Berlin", "Office in Munich", kind="fact", start=5)

    with pytest.raises(InvalidInput, match="current_fact"):
        card_answer(card=card, choice="no", actor=ana, current_memory=stranger.asked_memory_id)
    assert not Answer.objects.exists()


@pytest.mark.parametrize("choice", ["yes", "no", "both", "skip"])
def test_undo_restores_the_exact_prior_state(workspace: Workspace, ana: Actor, choice: str) -> None:
    card, old, new = pair_card(workspace)
    before = world(card, old, new)

    result = card_answer(card=card, choice=choice, actor=ana, note="never true" if choice == "no" else "")
    assert world(card, old, new) != before

    reopened = card_answer_undo(event=result.event, actor=ana)

    assert reopened.pk == card.pk
    assert world(card, old, new) == before
    assert Event.objects.filter(verb="card.answer.undo", undoes=result.event).exists()


def test_tolerance_moves_with_each_answer(workspace: Workspace, ana: Actor) -> None:
    expected = {"no": 0.47, "yes": 0.51, "both": 0.52, "skip": 0.51}
    for n, (choice, value) in enumerate(expected.items()):
        Tolerance.objects.update_or_create(workspace=workspace, defaults={"value": 0.5})
        card, _, _ = pair_card(workspace, f"Fact {n} a", f"Fact {n} b", start=n * 3)
        card_answer(card=card, choice=choice, actor=ana)
        assert Tolerance.objects.get(workspace=workspace).value == pytest.approx(value)
        change = ToleranceChange.objects.order_by("-id").first()
        assert change is not None
        assert (change.reason, change.value) == (f"answer:{choice}", pytest.approx(value))


@pytest.mark.parametrize(("start", "choice", "bound"), [(0.21, "no", 0.2), (0.795, "both", 0.8)])
def test_tolerance_stays_within_its_bounds(
    workspace: Workspace, ana: Actor, start: float, choice: str, bound: float
) -> None:
    Tolerance.objects.create(workspace=workspace, value=start)
    for n in range(3):
        card, _, _ = pair_card(workspace, f"Fact {n} a", f"Fact {n} b", start=n * 3)
        card_answer(card=card, choice=choice, actor=ana)
    assert Tolerance.objects.get(workspace=workspace).value == pytest.approx(bound)
    assert [c.delta for c in ToleranceChange.objects.order_by("id")][1:] == [0.0, 0.0]


def test_the_second_answer_loses_and_learns_who_answered(workspace: Workspace, ana: Actor) -> None:
    card, old, new = pair_card(workspace)
    bo = Actor.for_user(UserFactory(username="bo"))
    card_answer(card=card, choice="yes", actor=ana)

    with pytest.raises(CardAlreadyAnswered, match="already answered by ana \\(yes\\)") as lost:
        card_answer(card=card, choice="no", actor=bo)

    assert lost.value.card.state == "answered"
    assert Answer.objects.count() == 1
    assert Memory.objects.get(pk=old.pk).superseded_by_id is None
    assert Memory.objects.get(pk=new.pk).superseded_by_id == old.pk


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_at_once_first_wins_no_double_supersede() -> None:
    from tests.factories import WorkspaceFactory

    workspace = WorkspaceFactory(slug="race")
    card, old, new = pair_card(workspace)
    actors = [Actor.for_user(UserFactory(username=f"r{i}")) for i in range(2)]
    choices = ["yes", "no"]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def answer(i: int) -> None:
        barrier.wait()
        try:
            card_answer(card=card, choice=choices[i], actor=actors[i])
            outcomes.append("won")
        except CardAlreadyAnswered as exc:
            outcomes.append(f"lost: {exc.message}")
        finally:
            connection.close()

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(o.split(":")[0] for o in outcomes) == ["lost", "won"]
    assert Answer.objects.count() == 1
    assert Event.objects.filter(verb="card.answer").count() == 1
    superseded = Memory.objects.filter(pk__in=[old.pk, new.pk], superseded_by__isnull=False)
    assert superseded.count() == 1
    assert Link.objects.filter(rel="supersedes").count() == 1


def test_undo_keeps_the_tolerance_nudges_of_later_answers(workspace: Workspace, ana: Actor) -> None:
    first, _, _ = pair_card(workspace)
    second, _, _ = pair_card(workspace, "Office in Berlin", "Office in Munich", kind="fact", start=5)
    answered = card_answer(card=first, choice="no", actor=ana)  # 0.50 → 0.47
    card_answer(card=second, choice="both", actor=Actor.for_user(UserFactory(username="bo")))  # → 0.49

    card_answer_undo(event=answered.event, actor=ana)

    assert Tolerance.objects.get(workspace=workspace).value == pytest.approx(0.52)
    assert ConflictCard.objects.get(pk=first.pk).state == "open"
    assert ConflictCard.objects.get(pk=second.pk).state == "dismissed"


def test_the_unique_index_backs_up_the_card_lock(workspace: Workspace, ana: Actor) -> None:
    card, old, _ = pair_card(workspace)
    # A deciding answer written behind the service's back (the card still says open).
    Answer.objects.create(card=card, choice="both", user=UserFactory(username="bo"))

    with pytest.raises(CardAlreadyAnswered, match="already answered by bo \\(both\\)"):
        card_answer(card=card, choice="yes", actor=ana)
    assert Memory.objects.get(pk=old.pk).reinforcement_count == 0
    assert not Event.objects.filter(verb="card.answer").exists()
