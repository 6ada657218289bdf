"""Only facts about one subject may change each other without a person; only claims are compared."""

from __future__ import annotations

import pytest

from conflicts.detection.candidates import NEIGHBOUR_MIN_COSINE, candidates_for, one_thing
from conflicts.detection.pipeline import detect_and_resolve
from conflicts.detection.verdict import Relation
from conflicts.models import ConflictCard, Uncertainty
from conflicts.services import conflict_resolve
from memories.audit import Actor
from memories.models import Event, Memory
from tests.conflicts.scripted import ScriptedClassifier, scripted
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

DETECTOR = Actor.system("detector")


def resolve(older: Memory, newer: Memory, relation: Relation, p: float, **kwargs: object) -> str:
    verdict = scripted(relation, p, current="b", **kwargs)
    return conflict_resolve(older=older, newer=newer, verdict=verdict, context="ingestion", actor=DETECTOR).action


def test_a_sure_change_from_the_user_to_their_sister_is_left_alone(workspace: Workspace) -> None:
    user = remember(workspace, "The user lives in Lisbon.", valid_from=day(9))
    sister = remember(workspace, "The user's sister moved to Porto.", valid_from=day(11))

    # The texts themselves say two people: however sure the model, nothing to apply, record or ask.
    assert resolve(user, sister, Relation.TEMPORAL_CHANGE, 0.97, announced=True) == "none"
    assert resolve(user, sister, Relation.TRUE_CONTRADICTION, 0.97) == "none"
    assert not ConflictCard.objects.exists()

    user.refresh_from_db()
    assert user.superseded_by_id is None
    assert user.reliability == "reliable"
    assert not Event.objects.filter(verb="conflict.temporal_supersede").exists()


@pytest.mark.parametrize("relation", [Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION, Relation.DUPLICATE])
def test_an_unsure_verdict_across_subjects_does_nothing(workspace: Workspace, relation: Relation) -> None:
    seats = remember(workspace, "Acme Corp has 200 seats on Pro.", valid_from=day(9))
    price = remember(workspace, "The Pro plan costs 59 euros per seat per month.", valid_from=day(10))

    assert resolve(seats, price, relation, 0.85) == "none"

    assert not ConflictCard.objects.exists()
    assert Memory.objects.get(pk=seats.pk).reliability == "reliable"


def test_a_sure_duplicate_across_subjects_is_never_merged(workspace: Workspace) -> None:
    rollback = remember(workspace, "To roll back a deploy, re-run the previous green pipeline.", valid_from=day(9))
    postgres = remember(workspace, "Production now runs PostgreSQL 16.", valid_from=day(10))

    assert resolve(rollback, postgres, Relation.DUPLICATE, 0.99) == "none"
    assert resolve(rollback, postgres, Relation.TEMPORAL_CHANGE, 0.99) == "recorded"

    assert Memory.objects.get(pk=rollback.pk).superseded_by_id is None
    assert Memory.objects.get(pk=postgres.pk).status == "active"


@pytest.mark.parametrize("p", [0.8, 0.97])
def test_a_change_whose_attribute_is_unknown_is_kept_neither_applied_nor_asked(workspace: Workspace, p: float) -> None:
    """Subjects not shown to agree: an open record, whatever the verdict's certainty — no card asks a person
    about two facts the hub cannot tell are about one thing."""
    learning = remember(workspace, "James is learning an instrument.", valid_from=day(9))
    sailing = remember(workspace, "James is learning to sail.", valid_from=day(10))

    assert resolve(learning, sailing, Relation.TEMPORAL_CHANGE, p) == "recorded"

    assert Memory.objects.get(pk=learning.pk).superseded_by_id is None


def test_a_change_within_one_subject_is_applied_with_a_reason_in_plain_words(workspace: Workspace) -> None:
    lisbon = remember(workspace, "The user lives in Lisbon.", valid_from=day(9))
    berlin = remember(workspace, "The user says they moved to Berlin last month.", valid_from=day(11))

    assert resolve(lisbon, berlin, Relation.TEMPORAL_CHANGE, 0.9) == "superseded"

    event = Event.objects.get(verb="conflict.temporal_supersede")
    assert event.reason.startswith("Same subject — the user's home city; the newer fact says they moved (")


def test_questions_and_greetings_are_never_compared(workspace: Workspace) -> None:
    remember(workspace, "The user lives in Lisbon.", valid_from=day(9))
    question = remember(workspace, "Where do you live these days?", valid_from=day(10))
    thanks = remember(workspace, "Thanks so much, that's really helpful!", valid_from=day(10))
    claim = remember(workspace, "The user lives in Porto.", valid_from=day(11))

    assert (question.speech_act, thanks.speech_act, claim.speech_act) == ("question", "greeting", "claim")
    assert candidates_for(question) == []
    assert {c.memory.pk for c in candidates_for(claim)}.isdisjoint({question.pk, thanks.pk})
    assert resolve(question, claim, Relation.TRUE_CONTRADICTION, 0.99) == "none"


def test_facts_of_one_subject_are_compared_however_far_apart_their_words(workspace: Workspace) -> None:
    lisbon = remember(workspace, "The user lives in Lisbon.", valid_from=day(9))
    berlin = remember(
        workspace,
        "User relocated to Berlin in November for a job at a robotics startup; the flat search took weeks.",
        valid_from=day(11),
    )

    found = {c.memory.pk: c for c in candidates_for(berlin)}

    assert found[lisbon.pk].similarity < NEIGHBOUR_MIN_COSINE
    assert found[lisbon.pk].why == "same_subject"


def test_facts_naming_one_thing_are_compared_below_the_neighbour_cosine(workspace: Workspace) -> None:
    jenkins = remember(workspace, "Our CI runs on Jenkins.", valid_from=day(9))
    search = remember(workspace, "The search service is written in Rust.", valid_from=day(10))
    actions = remember(workspace, "CI is on GitHub Actions since the migration.", valid_from=day(11))

    found = {c.memory.pk: c for c in candidates_for(actions)}

    assert found[jenkins.pk].similarity < NEIGHBOUR_MIN_COSINE
    assert found[jenkins.pk].why == "same_entity"  # the lexicon knows no attribute of either
    assert search.pk not in found


def test_the_pipeline_guards_what_the_classifier_says(workspace: Workspace) -> None:
    user = remember(workspace, "The user lives in Lisbon.", valid_from=day(9))
    sister = remember(workspace, "The user's sister lives in Porto.", valid_from=day(11))
    classify = ScriptedClassifier(
        {(user.text, sister.text): scripted(Relation.TEMPORAL_CHANGE, 0.8, current="b", announced=True)}
    )

    detect_and_resolve(sister, classify=classify)

    assert (user.text, sister.text) in classify.seen
    assert Memory.objects.get(pk=user.pk).superseded_by_id is None
    assert not ConflictCard.objects.exists()


def test_two_speakers_first_person_lines_never_make_a_card_or_a_mark(workspace: Workspace) -> None:
    bank = remember(workspace, "I work at a bank.", valid_from=day(9), agent="bot")
    farm = remember(workspace, "I work at a farm.", valid_from=day(9, 2), agent="human")

    # However sure the model: two people's self-descriptions cannot contradict each other.
    assert resolve(bank, farm, Relation.TRUE_CONTRADICTION, 0.99) == "none"
    assert resolve(bank, farm, Relation.TEMPORAL_CHANGE, 0.99, announced=True) == "none"
    assert bank.pk not in {c.memory.pk for c in candidates_for(farm)}

    assert not ConflictCard.objects.exists()
    assert set(Memory.objects.values_list("reliability", flat=True)) == {"reliable"}


def test_one_chat_speakers_line_never_retires_anothers(workspace: Workspace) -> None:
    lisbon = remember(workspace, "Ana: The user lives in Lisbon.", valid_from=day(9), agent="chat")
    berlin = remember(workspace, "Ben: The user moved to Berlin.", valid_from=day(11), agent="chat")
    also_berlin = remember(workspace, "Ana: The user moved to Berlin.", valid_from=day(11), agent="chat")
    assert (lisbon.subject_entity, lisbon.subject_attribute) == ("user", "home city")

    # Sure enough to act had one speaker said both: kept as an open record instead.
    assert resolve(lisbon, berlin, Relation.TEMPORAL_CHANGE, 0.97, announced=True) == "recorded"
    assert Memory.objects.get(pk=lisbon.pk).superseded_by_id is None
    assert resolve(lisbon, also_berlin, Relation.TEMPORAL_CHANGE, 0.97, announced=True) == "superseded"


@pytest.mark.parametrize(
    ("older_filing", "newer_filing", "action"),
    [
        ({"scope": "personal"}, {"scope": "travel"}, "recorded"),  # two scopes: an open record, nothing changed
        ({"scope": "personal"}, {"scope": "personal"}, "superseded"),
        ({"scope": "personal"}, {}, "superseded"),  # a fact filed nowhere says nothing about where it belongs
        ({"scope": "personal", "key": "home_city"}, {"scope": "travel", "key": "home_city"}, "superseded"),
    ],
)
def test_facts_filed_under_two_scopes_never_change_each_other_by_themselves(
    workspace: Workspace, older_filing: dict[str, str], newer_filing: dict[str, str], action: str
) -> None:
    lisbon = remember(workspace, "The user lives in Lisbon.", valid_from=day(9), **older_filing)
    berlin = remember(workspace, "The user says they moved to Berlin last month.", valid_from=day(11), **newer_filing)

    assert resolve(lisbon, berlin, Relation.TEMPORAL_CHANGE, 0.97, announced=True) == action

    superseded_by = Memory.objects.get(pk=lisbon.pk).superseded_by_id
    assert superseded_by == (berlin.pk if action == "superseded" else None)
    assert not ConflictCard.objects.exists()
    if action == "recorded":  # the open record says why nothing was applied
        record = Uncertainty.objects.get()
        assert record.reasoning.endswith(
            'not applied: filed under two scopes ("personal", "travel"), so a person decides'
        )
        assert Event.objects.get(verb="conflict.record").reason.endswith("so a person decides")


def test_one_speakers_first_person_lines_are_still_compared(workspace: Workspace) -> None:
    bank = remember(workspace, "I work at a bank.", valid_from=day(9), agent="human")
    farm = remember(workspace, "I work at a farm.", valid_from=day(9, 2), agent="human")

    assert resolve(bank, farm, Relation.TRUE_CONTRADICTION, 0.8) == "carded"

    assert Memory.objects.get(pk=bank.pk).reliability == "contradicted"


@pytest.mark.parametrize("text", ["Hi!", "Good night!", "Thanks so much!"])
def test_a_greeting_never_marks_a_fact_contradicted(workspace: Workspace, text: str) -> None:
    claim = remember(workspace, "Lena runs three days a week.", valid_from=day(9))
    greeting = remember(workspace, text, valid_from=day(9, 2))

    assert greeting.speech_act == "greeting"
    assert resolve(claim, greeting, Relation.TRUE_CONTRADICTION, 0.99) == "none"

    assert set(Memory.objects.values_list("reliability", flat=True)) == {"reliable"}
    assert not ConflictCard.objects.exists()


def test_a_misread_subject_that_begins_with_the_user_is_not_one_thing_with_the_user() -> None:
    # "User says from this month she …" read as a phrase that starts with "user": it agrees with "user" by its first
    # word, but the user is a person, whichever of the two facts names them.
    garbled = Memory(
        text="User says from this month she walks to work.", subject_entity="user says from this month she"
    )
    plain = Memory(text="The user cycles to work.", subject_entity="user")

    assert not one_thing(plain, garbled)
    assert not one_thing(garbled, plain)
