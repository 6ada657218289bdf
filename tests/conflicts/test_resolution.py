from __future__ import annotations

from typing import Any

import pytest

from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import ConflictCard, Tolerance, Uncertainty
from conflicts.services import conflict_resolve
from memories.audit import Actor, snapshot
from memories.models import Event, Link, Memory
from memories.services import event_undo, memory_reinforce
from memoryhub.errors import ConflictError
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

DETECTOR = Actor.system("detector")
AUDITED = [
    "reliability",
    "status",
    "superseded_by",
    "superseded_at",
    "valid_to",
    "annotation",
    "confidence",
    "reinforcement_count",
    "conflict_count",
]


def verdict(relation: Relation, p: float = 0.95, **kwargs: Any) -> Verdict:
    return Verdict(relation=relation, probability=p, tier="test", reasons=("scripted",), **kwargs)


def resolve(older: Memory, newer: Memory, v: Verdict) -> str:
    return conflict_resolve(older=older, newer=newer, verdict=v, context="ingestion", actor=DETECTOR).action


def state(*memories: Memory) -> list[dict[str, Any]]:
    return [snapshot(Memory.objects.get(pk=m.pk), AUDITED) for m in memories]


def test_a_sure_temporal_change_supersedes_the_old_fact(workspace: Workspace) -> None:
    old = remember(workspace, "The user lives in Porto", kind="trait", key="home_city", valid_from=day(1))
    new = remember(workspace, "The user moved to Lisbon", kind="trait", key="home_city", valid_from=day(4))

    assert resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, current="b")) == "superseded"

    old.refresh_from_db()
    assert old.reliability == "superseded"
    assert old.superseded_by_id == new.pk
    assert old.valid_to == new.valid_from
    assert old.annotation == "used to: The user lives in Porto"
    assert set(Link.objects.values_list("src_id", "dst_id", "rel")) == {
        (new.pk, old.pk, "supersedes"),
        (old.pk, new.pk, "temporal_evolution"),
    }
    record = Uncertainty.objects.get()
    assert (record.state, record.resolution_strategy, record.temporal_signal) == (
        "resolved",
        "temporal_supersede",
        True,
    )
    event = Event.objects.get(verb="conflict.temporal_supersede")
    assert event.automatic
    assert not ConflictCard.objects.exists()


def test_a_change_of_one_part_that_says_the_rest_stays_retires_nothing(workspace: Workspace) -> None:
    old = remember(workspace, "Team plan: 10 seats, 50 GB storage.", key="team_plan", valid_from=day(1))
    new = remember(
        workspace, "Team plan cut to 8 seats from May; storage unchanged.", key="team_plan", valid_from=day(4)
    )

    # Retiring the older fact would hide the 50 GB from every agent: both stay, with an open record.
    assert resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, current="b")) == "recorded"

    old.refresh_from_db()
    assert (old.status, old.reliability, old.superseded_by_id) == ("active", "reliable", None)
    record = Uncertainty.objects.get()
    assert (record.state, record.uncertainty_type) == ("open", "stale")
    assert not ConflictCard.objects.exists()
    # The same change without saying the rest stays is a whole change.
    whole = remember(workspace, "Team plan cut to 8 seats from May.", key="team_plan", valid_from=day(5))
    assert resolve(old, whole, verdict(Relation.TEMPORAL_CHANGE, current="b")) == "superseded"


def test_undo_of_an_automatic_supersede_restores_the_exact_prior_state(workspace: Workspace) -> None:
    # About one subject (the user's home city): only then may the hub supersede on its own.
    old = remember(workspace, "The user lives in Porto", valid_from=day(1))
    new = remember(workspace, "The user moved to Lisbon", valid_from=day(3))
    before = state(old, new)
    resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, current="b"))

    undo = event_undo(event=Event.objects.get(verb="conflict.temporal_supersede"), actor=Actor.system("test"))

    assert state(old, new) == before
    assert not Link.objects.exists()
    assert not Uncertainty.objects.exists()
    assert undo.verb == "conflict.temporal_supersede.undo"
    with pytest.raises(ConflictError, match="already undone"):
        event_undo(event=undo.undoes, actor=Actor.system("test"))
    with pytest.raises(ConflictError, match="itself an undo"):
        event_undo(event=undo, actor=Actor.system("test"))


def test_undo_refuses_when_a_row_changed_afterwards(workspace: Workspace) -> None:
    old = remember(workspace, "The user lives in Bristol", valid_from=day(1))
    new = remember(workspace, "The user moved to Bath", valid_from=day(3))
    resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, current="b"))
    Memory.objects.filter(pk=old.pk).update(annotation="edited by hand")

    with pytest.raises(ConflictError, match="changed after this event"):
        event_undo(event=Event.objects.get(verb="conflict.temporal_supersede"), actor=Actor.system("test"))
    assert Memory.objects.get(pk=old.pk).reliability == "superseded"  # nothing half-undone


def test_an_unsure_temporal_change_becomes_a_card_instead(workspace: Workspace) -> None:
    old = remember(workspace, "Standups are at 9:00", valid_from=day(1))
    new = remember(workspace, "Standups are at 9:30", valid_from=day(2))

    assert resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, p=0.8, current="b")) == "carded"

    card = ConflictCard.objects.get()
    assert card.kind == "stale"
    assert card.question == 'Is it still true that "Standups are at 9:00"?'
    assert card.asked_memory_id == old.pk
    assert [f.memory_id for f in card.card_facts.all()] == [old.pk, new.pk]
    assert Memory.objects.get(pk=old.pk).reliability == "reliable"
    assert Memory.objects.get(pk=old.pk).conflict_count == 1


def test_later_rivals_of_an_asked_fact_join_its_open_card(workspace: Workspace) -> None:
    ivo = remember(workspace, "Ivo is the on-call engineer this week", valid_from=day(1))
    rhea = remember(workspace, "Rhea is the on-call engineer this week", valid_from=day(2))
    tomas = remember(workspace, "Tomás is the on-call engineer this week", valid_from=day(3))

    assert resolve(ivo, rhea, verdict(Relation.TEMPORAL_CHANGE, p=0.8, current="b")) == "carded"
    assert resolve(ivo, tomas, verdict(Relation.TEMPORAL_CHANGE, p=0.8, current="b")) == "carded"
    assert resolve(ivo, tomas, verdict(Relation.TEMPORAL_CHANGE, p=0.8, current="b")) == "none"

    card = ConflictCard.objects.get()  # one question about Ivo, not one per rival
    assert [f.memory_id for f in card.card_facts.all()] == [ivo.pk, rhea.pk, tomas.pk]
    assert Uncertainty.objects.filter(state="open").count() == 2
    change = Event.objects.filter(verb="conflict.card").latest("created_at")
    event_undo(event=change, actor=Actor.system("test"))
    assert [f.memory_id for f in card.card_facts.all()] == [ivo.pk, rhea.pk]


def test_a_tolerant_workspace_resolves_the_same_change_silently(workspace: Workspace) -> None:
    Tolerance.objects.create(workspace=workspace, value=0.8)
    old = remember(workspace, "Standups are at 9:00", valid_from=day(1))
    new = remember(workspace, "Standups are at 9:30", valid_from=day(2))

    assert resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, p=0.8, current="b")) == "superseded"


def test_a_change_the_newer_fact_announces_is_applied_at_lower_certainty(workspace: Workspace) -> None:
    old = remember(workspace, "The user lives in Bristol", valid_from=day(1))
    new = remember(workspace, "The user moved from Bristol to Bath", valid_from=day(3))

    assert resolve(old, new, verdict(Relation.TEMPORAL_CHANGE, p=0.55, current="b", announced=True)) == "superseded"
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk


@pytest.mark.parametrize("relation", [Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION])
def test_a_disagreement_below_the_surface_threshold_is_kept_without_a_card(
    workspace: Workspace, relation: Relation
) -> None:
    a = remember(workspace, "Standups are at 9:00", valid_from=day(1))
    b = remember(workspace, "Standups are at 9:30", valid_from=day(2))
    before = state(a, b)

    assert resolve(a, b, verdict(relation, p=0.6, current="b")) == "recorded"

    assert not ConflictCard.objects.exists()
    assert state(a, b) == before
    assert Uncertainty.objects.get().state == "open"
    assert resolve(a, b, verdict(relation, p=0.9, current="b")) == "none"  # never raised twice


def test_a_contradiction_between_beliefs_marks_both_and_asks(workspace: Workspace) -> None:
    a = remember(workspace, "The user is vegetarian", kind="trait", valid_from=day(1))
    b = remember(workspace, "The user eats meat every day", kind="trait", valid_from=day(2))

    assert resolve(a, b, verdict(Relation.TRUE_CONTRADICTION)) == "carded"

    assert set(Memory.objects.values_list("reliability", flat=True)) == {"contradicted"}
    record = Uncertainty.objects.get()
    assert (record.uncertainty_type, record.severity, record.state) == ("contradiction", "critical", "open")
    assert record.surface_context
    card = ConflictCard.objects.get()
    # The stakes are critical (the uncertainty keeps them); the card is capped by the contradiction
    # detector's measured precision, 0.72 (conflicts/severity.py).
    assert (card.kind, card.severity, card.question) == (
        "contradiction",
        "high",
        'Is it still true that "The user is vegetarian"?',
    )
    assert card.evidence["relation"] == "true_contradiction"


def test_confidence_dominance_marks_the_weaker_inference_uncertain_without_a_card(workspace: Workspace) -> None:
    said = remember(workspace, "The customer's budget is 50k", source="explicit", confidence=0.9, valid_from=day(1))
    guessed = remember(workspace, "The customer's budget is 20k", source="inferred", confidence=0.3, valid_from=day(2))

    assert resolve(said, guessed, verdict(Relation.TRUE_CONTRADICTION)) == "dominance"

    assert Memory.objects.get(pk=guessed.pk).reliability == "uncertain"
    assert Memory.objects.get(pk=said.pk).reliability == "reliable"
    assert Uncertainty.objects.get().resolution_strategy == "confidence_dominance"
    assert not ConflictCard.objects.exists()


def test_reinforcement_settles_a_dispute_it_clearly_wins(workspace: Workspace) -> None:
    strong = remember(workspace, "The office is in Berlin", valid_from=day(1))
    weak = remember(workspace, "The office is in Munich", valid_from=day(2))
    resolve(strong, weak, verdict(Relation.TRUE_CONTRADICTION))
    Memory.objects.filter(pk=weak.pk).update(confidence=0.4)

    memory_reinforce(memory=strong, actor=Actor.system("test"))

    strong.refresh_from_db()
    weak.refresh_from_db()
    assert strong.reliability == "reliable"
    assert (weak.reliability, weak.superseded_by_id) == ("superseded", strong.pk)
    record = Uncertainty.objects.get()
    assert (record.state, record.resolution_strategy) == ("resolved", "evidence_resolved")


def test_reinforcement_leaves_an_even_dispute_open(workspace: Workspace) -> None:
    a = remember(workspace, "The office is in Berlin", valid_from=day(1))
    b = remember(workspace, "The office is in Munich", valid_from=day(2))
    resolve(a, b, verdict(Relation.TRUE_CONTRADICTION))

    memory_reinforce(memory=a, actor=Actor.system("test"))

    assert Uncertainty.objects.get().state == "open"
    assert Memory.objects.get(pk=b.pk).reliability == "contradicted"


@pytest.mark.parametrize(
    ("keys", "same_subject"),
    [(("home_city", "work_city"), True), (("", ""), False)],
)
def test_facts_about_different_subjects_never_invalidate_each_other(
    workspace: Workspace, keys: tuple[str, str], same_subject: bool
) -> None:
    a = remember(workspace, "Ana lives in Porto", key=keys[0], valid_from=day(1))
    b = remember(workspace, "Ana works in Lisbon", key=keys[1], valid_from=day(2))

    for relation in (Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION):
        v = verdict(relation, current="b", same_subject=same_subject)
        assert resolve(a, b, v) == "none"
    assert set(Memory.objects.values_list("reliability", flat=True)) == {"reliable"}
    assert not Event.objects.filter(automatic=True, verb__startswith="conflict").exists()


def test_a_sure_duplicate_is_merged_into_the_older_fact(workspace: Workspace) -> None:
    first = remember(workspace, "Support hours are 9 to 5", valid_from=day(1))
    again = remember(workspace, "Support is open from 9 to 5", valid_from=day(2))

    assert resolve(first, again, verdict(Relation.DUPLICATE, p=0.97)) == "merged"

    assert Memory.objects.get(pk=again.pk).status == "merged"
    assert Link.objects.filter(src=again, dst=first, rel="merged_into").exists()
    assert Memory.objects.get(pk=first.pk).reinforcement_count == 1


def test_a_duplicate_stating_another_value_is_recorded_not_merged(workspace: Workspace) -> None:
    first = remember(workspace, "The public API rate limit is 1,000 requests per second", valid_from=day(1))
    again = remember(workspace, "The public API rate limit is 500 requests per second", valid_from=day(2))

    assert resolve(first, again, verdict(Relation.DUPLICATE, p=0.97, values_differ=True)) == "recorded"

    assert [m.status for m in Memory.objects.filter(pk__in=[first.pk, again.pk])] == ["active", "active"]
    assert not Link.objects.filter(rel="merged_into").exists()
    uncertainty = Uncertainty.objects.get()
    assert {uncertainty.memory_a_id, uncertainty.memory_b_id} == {first.pk, again.pk}
    assert uncertainty.state == "open"


def test_a_value_said_again_after_a_change_is_recorded_not_merged(workspace: Workspace) -> None:
    first = remember(workspace, "The support desk is open 9 to 5", valid_from=day(1))
    remember(workspace, "The support desk now opens 8 to 8", valid_from=day(3))
    again = remember(workspace, "The support desk is still open 9 to 5", valid_from=day(5))

    assert resolve(first, again, verdict(Relation.DUPLICATE, p=0.97)) == "recorded"

    assert [m.status for m in Memory.objects.filter(pk__in=[first.pk, again.pk])] == ["active", "active"]
    assert not Link.objects.filter(rel="merged_into").exists()


def test_a_fact_about_another_entity_in_between_does_not_stop_a_merge(workspace: Workspace) -> None:
    first = remember(workspace, "The support desk is open 9 to 5", valid_from=day(1))
    remember(workspace, "The sales desk now opens 8 to 8", valid_from=day(3))
    again = remember(workspace, "The support desk is open from 9 to 5", valid_from=day(5))

    assert resolve(first, again, verdict(Relation.DUPLICATE, p=0.97)) == "merged"


def test_an_unsure_duplicate_is_left_alone(workspace: Workspace) -> None:
    first = remember(workspace, "Support hours are 9 to 5", valid_from=day(1))
    again = remember(workspace, "Support is open from 9 to 5", valid_from=day(2))

    assert resolve(first, again, verdict(Relation.DUPLICATE, p=0.6)) == "none"


def test_a_pair_is_never_raised_twice(workspace: Workspace) -> None:
    a = remember(workspace, "The user is vegetarian", valid_from=day(1))
    b = remember(workspace, "The user eats meat every day", valid_from=day(2))
    resolve(a, b, verdict(Relation.TRUE_CONTRADICTION))

    assert resolve(a, b, verdict(Relation.TRUE_CONTRADICTION)) == "none"
    assert ConflictCard.objects.count() == 1


def test_an_llm_only_ambiguity_is_recorded_without_touching_the_facts(workspace: Workspace) -> None:
    a = remember(workspace, "Ana hates mornings", valid_from=day(1))
    b = remember(workspace, "Ana runs at 6am every day", valid_from=day(2))

    assert resolve(a, b, verdict(Relation.FIGURATIVE, p=0.8)) == "recorded"

    assert Uncertainty.objects.get().uncertainty_type == "ambiguous"
    assert set(Memory.objects.values_list("reliability", flat=True)) == {"reliable"}
