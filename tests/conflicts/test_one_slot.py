"""The slot reader as a reader of subjects: a dated pair it reads as one subject given another value.

Hand-written pairs (not taken from any evaluation file) for
``conflicts.detection.classifier._one_slot_change``, the guard's use of it
(``conflicts.services.subject_guard``) and the whole ingestion path.
"""

from __future__ import annotations

import datetime as dt

import pytest

from conflicts.detection.classifier import (
    Prediction,
    _one_slot_change,
    _one_slot_each,
    classify_memory_pairs,
    shared_things,
)
from conflicts.detection.pipeline import detect_and_resolve
from conflicts.detection.rules import analyse
from conflicts.detection.verdict import SLOT_READER, Relation
from conflicts.models import ConflictCard, Uncertainty
from conflicts.services import subject_guard
from memories.audit import Actor
from memories.embeddings import embed_text
from memories.models import Event, Memory
from memories.subjects import subject_of
from tests.conflicts.scripted import scripted
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

AT = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
DETECTOR = Actor.system("detector")


def fact(text: str, days_later: int = 0, *, agent: str = "notes", key: str = "") -> Memory:
    subject = subject_of(text, key)
    return Memory(
        text=text,
        key=key,
        agent=agent,
        valid_from=AT + dt.timedelta(days=days_later),
        subject_entity=subject.entity,
        subject_attribute=subject.attribute,
    )


def verdict_of(older: Memory, newer: Memory) -> tuple[Relation, bool]:
    [verdict] = classify_memory_pairs([(older, newer)])
    return verdict.relation, verdict.one_slot


def test_a_change_the_subject_reader_reads_as_two_subjects_is_read_as_one() -> None:
    older, newer = fact("The test datastore is PostgreSQL 13."), fact("Test DB upgraded to PostgreSQL 16.", 40)
    # The rule reader sees "test datastore" and "test db": not shown to agree.
    assert older.subject_entity != newer.subject_entity

    [verdict] = classify_memory_pairs([(older, newer)])

    assert (verdict.relation, verdict.one_slot, verdict.current, verdict.announced) == (
        Relation.TEMPORAL_CHANGE,
        True,
        "b",
        True,
    )
    assert verdict.tier == "cross_encoder"
    assert verdict.rule == SLOT_READER
    assert verdict.probability >= 0.6


def test_a_renewal_announces_the_change_the_slot_reader_then_reads() -> None:
    # From another agent, so only the word "renewed" announces it (not one source updating itself).
    older = fact("The support contract with Globex ends in March.", agent="sales")
    newer = fact("The support contract with Globex was renewed for two years.", 40, agent="legal")

    [verdict] = classify_memory_pairs([(older, newer)])

    assert (verdict.relation, verdict.one_slot, verdict.announced) == (Relation.TEMPORAL_CHANGE, True, True)
    assert any('change marker: "renewed"' in reason for reason in verdict.reasons)


def test_two_names_with_no_word_in_common_are_never_read_as_one_subject() -> None:
    # One kind of thing (seats), announced ("renewed"), but two customers.
    older = fact("Globex signed for 10 more seats; now 50 seats on Team.", agent="sales")
    newer = fact("Initech renewed for one more year at 20 seats.", 40, agent="sales")

    [verdict] = classify_memory_pairs([(older, newer)])

    assert not verdict.one_slot
    assert subject_guard(older, newer, verdict).automatic is False


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The design system is built in Figma.", "The design system is built in Penpot."),
        ("Our status page is hosted on Statuspage.", "Our status page is hosted on Instatus."),
    ],
)
def test_one_source_giving_its_thing_another_value_unannounced_is_an_update(older: str, newer: str) -> None:
    before, after = fact(older), fact(newer, 40)
    assert verdict_of(before, after) == (Relation.TEMPORAL_CHANGE, True)

    # From another source the same words are a disagreement, for a person to settle: never read as one slot.
    assert verdict_of(before, fact(newer, 40, agent="other-agent"))[1] is False


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Mara: The design system is built in Figma.", "Mara: The design system is built in Penpot."),
        ("The user's favourite board game is Catan.", "The user's favourite board game is Azul."),
    ],
)
def test_a_chat_speaker_or_the_user_restating_unannounced_is_not_read_as_one_slot(older: str, newer: str) -> None:
    # Wishes, purchases and favourites of a person accumulate; nothing says the first one ended.
    assert verdict_of(fact(older, agent="chat"), fact(newer, 40, agent="chat"))[1] is False


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The test database is PostgreSQL 13.", "The analytics database is ClickHouse."),
        ("Sprint reviews are on Fridays.", "Payroll runs on Fridays."),
        ("The team chat is Slack.", "The sales team tracks deals in Pipedrive."),
    ],
)
def test_two_subjects_that_share_words_are_not_read_as_one(older: str, newer: str) -> None:
    assert verdict_of(fact(older), fact(newer, 40))[1] is False


def test_facts_of_one_day_are_not_read_for_a_change() -> None:
    older, newer = fact("The test datastore is PostgreSQL 13."), fact("Test DB upgraded to PostgreSQL 16.")

    assert verdict_of(older, newer)[1] is False


def test_two_speakers_relatives_and_two_keys_are_never_one_subject() -> None:
    # Each pair reads as a change to the cross-encoder; what is known of the subjects rules it out.
    speakers = (
        fact("I work at a bank in Leeds.", agent="alice"),
        fact("I now work on a farm near York.", 30, agent="bob"),
    )
    relatives = (fact("The user's physio is on Mondays."), fact("The user's son has physio on Wednesdays now.", 30))
    keys = (
        fact("The test datastore is PostgreSQL 13.", key="test_db"),
        fact("Test DB upgraded to PostgreSQL 16.", 40, key="warehouse_db"),
    )

    for older, newer in (speakers, relatives, keys):
        assert verdict_of(older, newer)[1] is False, newer.text


def test_only_a_fact_that_announces_its_change_is_read_as_one_subject() -> None:
    # Unannounced, "another value" is no evidence: the reader gives it to chat lines and events as well.
    older = fact("The test datastore is PostgreSQL 13.", agent="ops-bot")

    assert verdict_of(older, fact("Test DB upgraded to PostgreSQL 16.", 40, agent="support")) == (
        Relation.TEMPORAL_CHANGE,
        True,
    )
    assert verdict_of(older, fact("Test DB is PostgreSQL 16.", 40, agent="support"))[1] is False


def test_a_chat_lines_speaker_is_no_shared_subject() -> None:
    assert shared_things("Saoirse: Oh I love that for you.", "Saoirse: Haha that's so true.") == set()
    assert shared_things("Saoirse: The gym ran late again.", "Bartholomew: The gym is open now.") == {"gym"}


def test_the_guard_lets_a_one_subject_reading_act_but_never_across_relatives() -> None:
    reading = scripted(Relation.TEMPORAL_CHANGE, 0.9, current="b", announced=True, one_slot=True)
    database = fact("The test datastore is PostgreSQL 13."), fact("Test DB upgraded to PostgreSQL 16.", 40)
    sister = fact("The user lives in Lisbon."), fact("The user's sister moved to Porto.", 40)

    assert subject_guard(*database, scripted(Relation.TEMPORAL_CHANGE, 0.9, current="b")).automatic is False
    assert subject_guard(*database, reading).automatic is True
    assert subject_guard(*database, reading).different is False
    assert subject_guard(*sister, reading).automatic is False


@pytest.mark.django_db
def test_ingestion_supersedes_a_change_read_as_one_subject_and_says_why(workspace: Workspace) -> None:
    old = remember(workspace, "The test datastore is PostgreSQL 13.", valid_from=day(1))
    other = remember(workspace, "The analytics database is ClickHouse.", valid_from=day(1, 2))
    new = remember(workspace, "Test DB upgraded to PostgreSQL 16.", valid_from=day(3))

    detect_and_resolve(new)

    old.refresh_from_db()
    other.refresh_from_db()
    assert old.superseded_by_id == new.pk
    assert other.superseded_by_id is None
    assert other.reliability == "reliable"
    event = Event.objects.get(verb="conflict.temporal_supersede")
    assert event.reason.startswith("Same subject — ")
    assert "cross_encoder" in event.reason
    assert not ConflictCard.objects.exists()
    # The record keeps which reading decided it (eval_probes counts retirements by it).
    assert Uncertainty.objects.get(memory_a=old, memory_b=new).rule == SLOT_READER


def test_two_replies_that_name_no_common_thing_are_not_read_as_one_subject() -> None:
    # Chat replies leave their subject in the conversation: a reader's "another value" (six → one) says nothing.
    older, newer = fact("Six, counting me.", agent="sam"), fact("Just One it is.", 7, agent="sam")
    change = Prediction(
        relation=Relation.COMPATIBLE,
        probability=0.9,
        probabilities={},
        current=None,
        signals=analyse(older.text, newer.text),
        slot_reading=(0.02, 0.1, 0.02, 0.86),
    )

    assert shared_things(older.text, newer.text) == set()
    assert _one_slot_change(older, newer, change) is None
    assert shared_things("The test database is PostgreSQL 13.", "Test DB upgraded to PostgreSQL 16.") == {
        "test",
        "postgresql",
    }
    # Values that differ are not a shared subject: figures, weekdays, months.
    assert shared_things("Physio on Tuesdays at 11.", "Only Tuesdays at 12 now.") == set()


def forced(older: Memory, newer: Memory, reading: tuple[float, ...] = (0.02, 0.1, 0.02, 0.86)) -> Prediction:
    """What the classifier would hand on had the slot reader read the pair as a change."""
    return Prediction(
        relation=Relation.COMPATIBLE,
        probability=0.9,
        probabilities={},
        current=None,
        signals=analyse(older.text, newer.text),
        slot_reading=reading,
    )


def test_a_property_the_newer_fact_names_must_be_the_older_facts_too() -> None:
    # The reader reads one person precisely, not one property: a new job, then a move, read as "an update".
    job, move = fact("Dana started working at Globex as a designer."), fact("Dana moved to Porto.", 60)
    home, moved = fact("Dana lives in Lisbon."), fact("Dana moved to Porto.", 60)

    assert _one_slot_change(job, move, forced(job, move)) is None
    verdict = _one_slot_change(home, moved, forced(home, moved))
    assert verdict is not None
    assert verdict.one_slot


def test_a_word_of_novelty_alone_needs_a_sure_reading() -> None:
    # Labels order: compatible, contradiction, duplicate, update.
    unsure, sure = (0.3, 0.1, 0.0, 0.6), (0.02, 0.05, 0.0, 0.93)
    bakery = fact("Kenji: My first week at the Elm Street bakery went well.")
    musing = fact("Kenji: Sometimes I dream about a new career, but the bakery suits me.", 60)
    switched = fact("Kenji: I switched from the bakery to the harbour café.", 60)

    assert _one_slot_change(bakery, musing, forced(bakery, musing, unsure)) is None
    assert _one_slot_change(bakery, musing, forced(bakery, musing, sure)) is not None
    # "switched" announces a change itself: the usual reading suffices.
    assert _one_slot_change(bakery, switched, forced(bakery, switched, unsure)) is not None


def test_a_chat_turn_that_also_greets_or_asks_is_not_read_as_one_property() -> None:
    # The reading would retire the first turn: its topic (the seedlings) was read, not one property of them.
    older = fact("Hi there! The basil seedlings are up, about 3 cm tall.", agent="user")
    newer = fact("The basil seedlings are 12 cm now. Should I pinch the tops?", 30, agent="user")
    plain_older = fact("The basil seedlings are up, about 3 cm tall.", agent="user")
    plain_newer = fact("The basil seedlings are 12 cm now.", 30, agent="user")

    assert _one_slot_change(older, newer, forced(older, newer)) is None
    assert _one_slot_change(plain_older, plain_newer, forced(plain_older, plain_newer)) is not None


def test_two_named_speakers_lines_are_two_peoples() -> None:
    ana, ben = (
        fact("Ana: the flat is unpacked, we now live in Porto!"),
        fact("Ben: the flat is unpacked, we now live in Faro!", 30),
    )

    assert _one_slot_change(ana, ben, forced(ana, ben)) is None


def test_a_newer_fact_changes_one_slot_the_older_fact_nearest_in_meaning() -> None:
    # The reader reads one thing, not which of its properties changed: read as a change of both older
    # facts, the new plan keeps that reading only for the fact it is nearest (the broadband plan).
    plan = fact("Home broadband is Vodafone Fibre 300, contract renewed yearly.")
    router = fact("The Vodafone router sits in the hallway cupboard.")
    switched = fact("Upgraded broadband to the Vodafone Fibre 900 plan now.", 90)
    for memory in (plan, router, switched):
        memory.embedding = embed_text(memory.text)
    pairs = [(router, switched), (plan, switched)]
    predictions = [forced(older, switched) for older, _ in pairs]
    verdicts = [_one_slot_change(older, switched, p) for (older, _), p in zip(pairs, predictions, strict=True)]
    assert all(v is not None and v.one_slot for v in verdicts)

    kept = _one_slot_each(pairs, [v for v in verdicts if v is not None], predictions)

    assert [v.one_slot for v in kept] == [False, True]
    assert kept[0] == predictions[0].verdict()


def after_ingesting(workspace: Workspace, older: str, newer: str) -> tuple[Memory, Memory]:
    """``older`` (day 1), then ``newer`` (three months on) checked as at ingestion; both as they end."""
    old = remember(workspace, older, valid_from=day(1))
    new = remember(workspace, newer, valid_from=day(4))
    detect_and_resolve(new)
    old.refresh_from_db()
    return old, new


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("job", "later", "retired"),
    [
        ("Saoirse works at Globex as an analyst.", "Saoirse joined the climbing club last month.", False),
        ("The user works at Initech.", "The user joined a choir in March.", False),
        ("Dana works at Globex.", "Dana joined Initech in May.", True),  # a new employer does replace the old
    ],
)
def test_joining_a_club_never_retires_a_job(workspace: Workspace, job: str, later: str, retired: bool) -> None:
    old, new = after_ingesting(workspace, job, later)

    assert (old.superseded_by_id == new.pk) is retired


@pytest.mark.django_db
@pytest.mark.parametrize(
    "later", ["The user switched to working from home on Fridays.", "User works from home twice a week now."]
)
def test_working_from_home_never_retires_where_someone_lives(workspace: Workspace, later: str) -> None:
    home, _ = after_ingesting(workspace, "The user lives in Lisbon.", later)

    assert home.superseded_by_id is None
    assert home.reliability == "reliable"


@pytest.mark.django_db
def test_a_change_to_another_belonging_never_retires_a_known_property(workspace: Workspace) -> None:
    """ "… moved its logs to Loki" is about the logs, not the region the older fact gives."""
    region, _ = after_ingesting(
        workspace, "The staging cluster runs in eu-west-1.", "The staging cluster moved its logs to Loki."
    )

    assert region.superseded_by_id is None


# A harmless later fact beside a core fact (the batteries of ``probes-harmless.jsonl``), each with a real change
# of the same subject that must still retire it.
LATER_FACTS = [
    # A shared qualifier alone makes no one thing: a deploy window is no deploy notification …
    pytest.param(
        "The deploy window is Tuesday to Thursday.",
        "Deploy notifications moved to the #releases channel.",
        False,
        id="shared qualifier",
    ),
    # … while classes and sessions of yoga are one thing named two ways.
    pytest.param("Yoga classes are on Monday evenings.", "Yoga sessions moved to Wednesday evenings.", True, id="yoga"),
    # A thing named after a property is not that property.
    pytest.param(
        "Acme Corp has 200 seats on Pro.",
        "Acme Corp's seat request form moved to the portal.",
        False,
        id="named after a property",
    ),
    pytest.param(
        "The user's phone is an iPhone 13.",
        "The user's phone plan switched to Vodafone.",
        False,
        id="named after a property 2",
    ),
    # A thing named after another: alerts about backups are no backups …
    pytest.param("Backups are kept for 30 days.", "Backup alerts moved to PagerDuty.", False, id="named after"),
    pytest.param("Nightly builds run at 02:00 UTC.", "Nightly build logs moved to S3.", False, id="named after 2"),
    # … unless the new noun names what the older fact does to the thing: one subject named two ways.
    pytest.param(
        "Logs are shipped to Splunk.", "Log shipping moved to Datadog; Splunk contract ended.", True, id="done to it"
    ),
    # An addition is no change.
    pytest.param("The user is vegetarian.", "The user now also avoids dairy.", False, id="addition"),
    pytest.param("The user is vegetarian.", "The user now eats meat again.", True, id="change of diet"),
    # What a subject now has is not the property its name gives.
    pytest.param("Standups are at 9:30 on weekdays.", "Standup now has a rotating facilitator.", False, id="now has"),
    # A belonging of the older fact's value keeps the value.
    pytest.param(
        "The user's son goes to St. Mary's school.",
        "The user's son switched to the school's football club.",
        False,
        id="belonging of the value",
    ),
    pytest.param(
        "The user's son goes to St. Mary's school.",
        "The user's son switched to Hillside Academy.",
        True,
        id="new school",
    ),
    # Where a thing was put is not which thing it is.
    pytest.param(
        "The user's car is a blue Volvo XC40.",
        "The user's car was moved to the underground garage.",
        False,
        id="where, not which",
    ),
    pytest.param(
        "The user's car is parked in the street.",
        "The user's car was moved to the underground garage.",
        True,
        id="where it is",
    ),
    # Two things of one kind told apart by their qualifiers.
    pytest.param("The free plan allows 3 projects.", "The team plan now allows 20 projects.", False, id="siblings"),
    pytest.param("The free plan allows 3 projects.", "The free plan now allows 5 projects.", True, id="one plan"),
    # A property of the thing is the thing's own matter: the days deploys go out on are when deploys go out.
    pytest.param(
        "Deploys go out on Tuesdays and Thursdays.",
        "Deploy days changed to Mondays and Wednesdays.",
        True,
        id="a property of the thing",
    ),
    # Numbered things of one series are two things; one of them can change.
    pytest.param("Sprint 14 ends on Friday.", "Sprint 15 now starts on Tuesday.", False, id="numbered"),
    pytest.param("Release 4.2 shipped on 3 March.", "Release 4.3 is now planned for May.", False, id="numbered 2"),
    pytest.param("Sprint 14 ends on Friday.", "Sprint 14 now ends on Monday.", True, id="one numbered thing"),
    # What the older fact gives as its value can change its own properties and stay the value …
    pytest.param(
        "Tomás works from the Madrid office.",
        "The Madrid office moved to Calle de Alcalá.",
        False,
        id="the value's own property",
    ),
    pytest.param("Tomás works from the Madrid office.", "Tomás moved to the Lisbon office.", True, id="another office"),
    # … unless the newer fact gives the value a new figure, or the value gave way.
    pytest.param("Styling is Tailwind 3.", "Tailwind upgraded to v4.", True, id="the value's figure"),
    pytest.param("Our CI runs on Jenkins.", "Jenkins was replaced by GitHub Actions.", True, id="the value gave way"),
    # A thing named after a singular one, where the newer fact adds a noun before its verb.
    pytest.param("Production runs on AWS.", "Production alerts now go to Opsgenie.", False, id="named after one"),
    pytest.param(
        "The database runs in eu-central-1.", "Database backups moved to eu-west-1.", False, id="named after one 2"
    ),
    pytest.param("The API gateway runs on Kong.", "API gateway logs now go to Loki.", False, id="named after one 3"),
    pytest.param("The database runs in eu-central-1.", "The database moved to eu-west-1.", True, id="one database"),
    pytest.param("The API gateway runs on Kong.", "The API gateway now runs on Envoy.", True, id="one gateway"),
    # What a belonging does is one of its properties: another doing may be another property.
    pytest.param(
        "The user's book club meets monthly.",
        "The user's book club switched to sci-fi this year.",
        False,
        id="another doing of a belonging",
    ),
    pytest.param(
        "The user's phone number ends in 4411.",
        "The user's phone was replaced under warranty.",
        False,
        id="another doing of a belonging 2",
    ),
    pytest.param(
        "Maya's band has a gig at the Roundhouse on Friday.",
        "Maya's band is auditioning new singers.",
        False,
        id="something a belonging has, then what it is doing",
    ),
    pytest.param(
        "The user's book club meets monthly.", "The user's book club now meets weekly.", True, id="the same doing"
    ),
    # A move back is a move.
    pytest.param("The user lives in Lisbon.", "The user moved back to Porto.", True, id="moved back"),
    # A short name of a thing is that thing.
    pytest.param(
        "The staging database runs Postgres 14.",
        "Staging DB is on Postgres 16 after the upgrade.",
        True,
        id="a short name",
    ),
    # Where a meeting is held is not when it is.
    pytest.param("The board meeting is held in Room 4.", "The board meeting moved to Tuesday.", False, id="where"),
    pytest.param(
        "The board meeting is held in Room 4.", "The board meeting is now held in Room 7.", True, id="another room"
    ),
    # A quantity given a new value with a direction names its new value.
    pytest.param(
        "The user's resting heart rate is 72 bpm.",
        "The user's resting heart rate came down to 61 bpm.",
        True,
        id="came down to",
    ),
    pytest.param("Median build time is 14 minutes.", "Median build time rose to 19 minutes.", True, id="rose to"),
    pytest.param(
        "The team's velocity is 40 points.", "The team's velocity dropped to 28 points.", True, id="dropped to"
    ),
    pytest.param("Monthly churn is 3%.", "Monthly churn fell to 1.8%.", True, id="fell to"),
    # Another thing named by a word of the older one's: a billing dashboard is no billing service …
    pytest.param(
        "The billing service runs on Node 18.",
        "The billing dashboard moved to Grafana Cloud.",
        False,
        id="another thing by a shared word",
    ),
    pytest.param(
        "The weekly newsletter goes out on Tuesdays.",
        "The newsletter template switched to a two-column layout.",
        False,
        id="another thing by a shared word 2",
    ),
    # … unless the older fact says the newer one's noun: the partitions it gives a number of.
    pytest.param(
        "Topic orders.v2 has 24 partitions.", "orders.v2 partitions raised to 48.", True, id="a noun the older says"
    ),
    # A common thing's property the older fact leaves unnamed is no other property: the reader decides …
    pytest.param(
        "Our mobile app is written in Flutter.",
        "The mobile app was rewritten in React Native.",
        True,
        id="a thing's unnamed property",
    ),
    # … but a person has many: a trip is no home city.
    pytest.param(
        "Saoirse travelled to Zanzibar for a wedding.", "Saoirse moved to Trondheim.", False, id="a person's trip"
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("older", "newer", "retired"), LATER_FACTS)
def test_a_later_fact_retires_an_older_one_only_when_it_changes_that_subject(
    workspace: Workspace, older: str, newer: str, retired: bool
) -> None:
    old, new = after_ingesting(workspace, older, newer)

    assert (old.superseded_by_id == new.pk) is retired


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The free plan allows 3 projects.", "The team plan now allows 20 projects."),
        ("The user lives in Porto.", "The user's brother moved to Braga."),
    ],
)
def test_two_things_the_texts_tell_apart_leave_nothing_open(workspace: Workspace, older: str, newer: str) -> None:
    old, new = after_ingesting(workspace, older, newer)

    assert old.superseded_by_id is None
    assert not Uncertainty.objects.filter(memory_a__in=[old, new]).exists()
    assert not Uncertainty.objects.filter(memory_b__in=[old, new]).exists()
