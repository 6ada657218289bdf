"""The offline detective's timeline logic on hand-written stories.

Pair verdicts are scripted (the classifier is tested on its own); the rules
that spot announced changes and the embeddings that link facts are real.
"""

from __future__ import annotations

import datetime as dt

import pytest

from conflicts.detection.detective_offline import _words, detect
from conflicts.detection.verdict import Relation, Verdict
from conflicts.forgetting import StoryFact
from memories.subjects import subject_of

T0 = dt.datetime(2025, 10, 1, 9, 0, tzinfo=dt.UTC)


def fact(fid: str, text: str, days: float, scope: str = "backend", agent: str = "bot") -> StoryFact:
    return StoryFact(id=fid, text=text, scope=scope, agent=agent, at=T0 + dt.timedelta(days=days))


class Script:
    def __init__(self, verdicts: dict[tuple[str, str], tuple[Relation, float]]) -> None:
        self.verdicts = verdicts

    def __call__(self, pairs: list[tuple[StoryFact, StoryFact]]) -> list[Verdict]:
        out = []
        for a, b in pairs:
            relation, p = self.verdicts.get((str(a.id), str(b.id)), (Relation.COMPATIBLE, 0.9))
            out.append(Verdict(relation=relation, probability=p, tier="scripted", current="b"))
        return out


def flags(story: list[StoryFact], script: dict[tuple[str, str], tuple[Relation, float]]) -> list[tuple[str, list]]:
    return [(f.kind, f.fact_ids) for f in detect(story, classify=Script(script))]


CHANGE, CLASH, SAME = Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION, Relation.DUPLICATE

BROKER = [
    fact("f1", "Background jobs go through RabbitMQ", 0),
    fact("f2", "Moved the job broker off RabbitMQ onto SQS", 40),
    fact("f3", "Stuck jobs: check the RabbitMQ queue, that's where workers consume from", 100),
]


def test_a_reversal_is_flagged_with_all_three_facts() -> None:
    script = {("f1", "f2"): (CHANGE, 0.9), ("f2", "f3"): (CLASH, 0.8), ("f1", "f3"): (SAME, 0.8)}

    [(kind, ids)] = flags(BROKER, script)

    assert (kind, ids) == ("reversal", ["f1", "f2", "f3"])


def test_an_announced_change_back_is_not_a_reversal() -> None:
    story = [*BROKER[:2], fact("f3", "Switched the job broker back to RabbitMQ now that quorum is fixed", 100)]
    script = {("f1", "f2"): (CHANGE, 0.9), ("f2", "f3"): (CHANGE, 0.9), ("f1", "f3"): (SAME, 0.8)}

    assert flags(story, script) == []


def test_two_current_facts_at_odds_are_an_ambiguity() -> None:
    story = [
        fact("f1", "Backup retention is 30 days", 0, scope="backups", agent="sre"),
        fact("f2", "Database backups are kept for 14 days, then deleted", 8, scope="compliance", agent="policy"),
    ]

    [(kind, ids)] = flags(story, {("f1", "f2"): (CLASH, 0.85)})

    assert (kind, ids) == ("ambiguity", ["f1", "f2"])


def test_each_flag_names_the_rule_that_raised_it() -> None:
    reversal = {("f1", "f2"): (CHANGE, 0.9), ("f2", "f3"): (CLASH, 0.8), ("f1", "f3"): (SAME, 0.8)}
    backups = [
        fact("f1", "Backup retention is 30 days", 0, scope="backups", agent="sre"),
        fact("f2", "Database backups are kept for 14 days, then deleted", 8, scope="backups", agent="policy"),
    ]

    [broker_flag] = detect(BROKER, classify=Script(reversal))
    [backup_flag] = detect(backups, classify=Script({("f1", "f2"): (CLASH, 0.85)}))

    assert broker_flag.evidence["rule"] == "reversal"
    assert backup_flag.evidence["rule"] == "dispute"


def test_facts_about_the_user_at_odds_are_a_contradiction() -> None:
    story = [
        fact("f1", "User doesn't drink alcohol at all", 0, scope="prefs"),
        fact("f2", "User's favourite Friday wind-down is a couple of pints of IPA", 29, scope="prefs"),
    ]

    [(kind, _)] = flags(story, {("f1", "f2"): (CLASH, 0.8)})

    assert kind == "contradiction"


def test_an_old_fact_newer_facts_disagree_with_is_stale() -> None:
    story = [
        fact("f1", "Frontend is bundled with Webpack 4; the build takes 6 minutes", 0, scope="build"),
        fact("f2", "Dev server cold start is 400 ms with Vite", 190, scope="build"),
        fact("f3", "CI production build takes 48 s", 240, scope="build"),
    ]
    script = {("f1", "f2"): (CLASH, 0.7), ("f1", "f3"): (CLASH, 0.7)}

    [(kind, ids)] = flags(story, script)

    assert (kind, ids) == ("stale", ["f1", "f2", "f3"])


def test_an_announced_migration_is_not_flagged() -> None:
    story = [
        fact("f1", "Unit tests run on Jest", 0, scope="test"),
        fact("f2", "Migrated unit tests from Jest to Vitest; Jest is no longer used", 120, scope="test"),
    ]

    assert flags(story, {("f1", "f2"): (CHANGE, 0.9)}) == []


def test_a_same_session_refinement_is_not_flagged() -> None:
    story = [
        fact("f1", "Root cause: the encoder preset change", 0, scope="incident"),
        fact("f2", "Root cause is the memory limit, the preset change was harmless", 0.01, scope="incident"),
    ]

    assert flags(story, {("f1", "f2"): (CLASH, 0.9)}) == []


def test_compatible_facts_and_different_subjects_are_not_flagged() -> None:
    story = [
        fact("f1", "App logs are kept for 30 days", 0, scope="ops"),
        fact("f2", "Audit logs are kept for 7 years", 10, scope="ops"),
        fact("f3", "Webhook retries use exponential backoff, max 5 attempts", 11),
        fact("f4", "Webhook retries also honour Retry-After, capped at 10 minutes", 25),
    ]

    assert flags(story, {}) == []


def test_an_unsure_verdict_raises_nothing() -> None:
    story = [fact("f1", "Standups are at 9:00", 0), fact("f2", "Standups are at 9:30", 10)]

    assert flags(story, {("f1", "f2"): (CLASH, 0.5)}) == []


def test_a_question_names_the_fact_in_doubt() -> None:
    script = {("f1", "f2"): (CHANGE, 0.9), ("f2", "f3"): (CLASH, 0.8), ("f1", "f3"): (SAME, 0.8)}

    [flag] = detect(BROKER, classify=Script(script))

    assert flag.question.startswith('Is it still true that "Stuck jobs')
    assert flag.asked == "f3"


@pytest.mark.parametrize("count", [0, 1])
def test_tiny_stories_raise_nothing(count: int) -> None:
    assert detect(BROKER[:count], classify=Script({})) == []


# The rules below need no verdict from the classifier: every pair is scripted compatible.
ALL_COMPATIBLE: dict[tuple[str, str], tuple[Relation, float]] = {}


def test_going_back_to_what_an_announced_change_left_is_a_reversal() -> None:
    [(kind, ids)] = flags(BROKER, ALL_COMPATIBLE)

    assert (kind, ids) == ("reversal", ["f1", "f2", "f3"])


def test_a_lifted_prohibition_restated_later_is_a_reversal() -> None:
    story = [
        fact("f1", "No production deploys on Fridays; the prod pipeline is locked", 0, scope="release"),
        fact("f2", "Friday freeze is lifted: prod deploys are allowed any weekday", 80, scope="release"),
        fact("f3", "Reminder: don't deploy to production on a Friday", 160, scope="release"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


API = [
    fact("f1", "We use REST for the public API", 0, scope="api"),
    fact("f2", "We switched the public API to GraphQL", 60, scope="api"),
]


def test_restating_what_a_switch_replaced_is_a_reversal() -> None:
    """The seed's story: REST, then "switched to GraphQL" (leaving nothing by name), then REST again."""
    story = [*API, fact("f3", "The public API is REST-based", 150, scope="api")]

    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


@pytest.mark.parametrize(
    "later",
    [
        "The public API is GraphQL; the schema lives in api/schema.graphql",  # the new value
        "Switched the public API back to REST after the pilot",  # an announced move back
        "Invoices are rendered as PDF by a nightly job",  # another subject
        "Mobile clients still call the REST API until the app update ships",  # the old value, in passing
        "The old REST API docs are archived at /legacy",
    ],
)
def test_after_a_switch_these_are_not_reversals(later: str) -> None:
    story = [*API, fact("f3", later, 150, scope="api")]

    assert flags(story, ALL_COMPATIBLE) == []


def test_a_visit_to_the_old_value_is_no_return_to_it() -> None:
    story = [
        fact("f1", "User lives in Porto", 0, scope="profile"),
        fact("f2", "User moved to Lisbon in March", 60, scope="profile"),
        fact("f3", "User lives in Porto, near the river", 150, scope="profile"),
    ]
    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]

    story[2] = fact("f3", "User is visiting friends in Porto next weekend", 150, scope="profile")
    assert flags(story, ALL_COMPATIBLE) == []


def test_a_fact_about_the_old_system_does_not_restate_it() -> None:
    story = [
        fact("f1", "The billing service stores data in MySQL", 0),
        fact("f2", "Migrated the billing service to Postgres", 60),
        fact("f3", "MySQL backups for billing are kept for 30 days", 150),
    ]
    assert flags(story, ALL_COMPATIBLE) == []

    story[2] = fact("f3", "The billing service stores its data in MySQL", 150)
    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


def test_a_later_fact_on_the_new_value_is_not_a_reversal() -> None:
    story = [*BROKER[:2], fact("f3", "SQS queue depth drives the worker autoscaler", 100)]

    assert flags(story, ALL_COMPATIBLE) == []


def test_two_sources_giving_different_values_of_one_measure_are_an_ambiguity() -> None:
    story = [
        fact("f1", "Backup retention is 30 days; older backups expire", 0, scope="backups", agent="sre"),
        fact("f2", "Database backups are kept for 14 days, then deleted", 8, scope="compliance", agent="policy"),
    ]

    [(kind, ids)] = flags(story, ALL_COMPATIBLE)

    assert (kind, ids) == ("ambiguity", ["f1", "f2"])


def test_opposite_instructions_from_two_agents_are_an_ambiguity() -> None:
    story = [
        fact("f1", "Never commit generated protobuf code; CI regenerates the stubs", 0, scope="repo", agent="a"),
        fact("f2", "Commit the regenerated protobuf stubs in the same PR as the proto change", 30, "ci", "b"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("ambiguity", ["f1", "f2"])]


@pytest.mark.parametrize(
    ("older", "newer", "agents"),
    [
        # a budget and a measurement
        ("Main chunk budget: 250 KB gzipped", "Main chunk is at 238 KB gzipped after lazy loading", ("a", "b")),
        # the same source moving its own number on
        ("Backup retention is 30 days; older backups expire", "Backup retention is 45 days now", ("sre", "sre")),
        # shares of different things
        ("smart_inbox is on for 5% of workspaces", "smart_inbox workspaces reply 11% faster", ("a", "b")),
        # different units
        ("Application logs are kept 90 days", "Audit logs are kept for 1 year", ("a", "b")),
        # one day, written two ways
        (
            "The quarterly board pack is due on 6 October.",
            "Quarterly board pack due 6 Oct; finance has the draft.",
            ("a", "b"),
        ),
        # a year and a day: when something began, and when something happens
        ("Dad has had type 2 diabetes since 2019.", "Dad's diabetes review is on Mon 29 Sep.", ("a", "b")),
    ],
)
def test_what_looks_like_a_value_clash_but_is_not(older: str, newer: str, agents: tuple[str, str]) -> None:
    story = [fact("f1", older, 0, scope="x", agent=agents[0]), fact("f2", newer, 20, scope="y", agent=agents[1])]

    assert flags(story, ALL_COMPATIBLE) == []


def test_two_sources_giving_one_event_two_days_clash() -> None:
    story = [
        fact("f1", "The quarterly board pack is due on 6 October.", 0, "finance", "a"),
        fact("f2", "The quarterly board pack is due on 13 October.", 20, "calendar", "b"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("ambiguity", ["f1", "f2"])]


def test_two_sources_stating_different_limits_clash() -> None:
    story = [
        fact("f1", "The public API rate limit on the Pro plan is 1,000 req/s", 0, "pricing", "sales"),
        fact("f2", "Pro plan customers hit the public API rate limit at 500 req/s", 25, "support", "bot"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("ambiguity", ["f1", "f2"])]


@pytest.mark.parametrize(
    ("newer", "days", "stale"),
    [
        ("Round 4 annotators were trained on the v2.1 guidelines; dosage spans include the unit", 200, True),
        ("Annotation guidelines upgraded from v1.3 to v2.1 for round 4", 200, False),  # announced
        ("Round 2 annotators were trained on the v2.1 guidelines; dosage spans include the unit", 3, False),
    ],
)
def test_a_fact_naming_an_old_version_goes_stale_when_a_later_one_uses_another(
    newer: str, days: int, stale: bool
) -> None:
    story = [
        fact("f1", "Annotators follow guidelines v1.3; dosage spans exclude the unit", 0, "annotation", "notes"),
        fact("f2", newer, days, "annotation", "notes"),
    ]

    assert flags(story, ALL_COMPATIBLE) == ([("stale", ["f1", "f2"])] if stale else [])


LEAVE = fact("f1", "User is on parental leave: don't schedule any work calls", 0, scope="work")
BACK_AT_WORK = [
    fact("f2", "Standing team meeting: Mondays 09:30 in the Reading office", 110, scope="work"),
    fact("f3", "Back-to-back client workshops on Tuesdays and Thursdays this quarter", 300, scope="work"),
]


def test_a_temporary_condition_with_no_end_goes_stale_when_its_subject_carries_on() -> None:
    [flag] = detect([LEAVE, *BACK_AT_WORK], classify=Script(ALL_COMPATIBLE))

    assert (flag.kind, flag.fact_ids) == ("stale", ["f1", "f2", "f3"])
    assert flag.asked == "f1"  # the claim in doubt; the later facts are the evidence
    assert flag.question.startswith('Is it still true that "User is on parental leave')


@pytest.mark.parametrize(
    "story",
    [
        # It names its end: the chronology settles it.
        [fact("f1", "User is on parental leave until 3 March: no work calls", 0, scope="work"), *BACK_AT_WORK],
        # Restated later: still current.
        [LEAVE, *BACK_AT_WORK, fact("f4", "Still on parental leave, so keep the calendar clear", 320, scope="work")],
        # Later facts, but weeks rather than months.
        [LEAVE, fact("f2", "Standing team meeting: Mondays 09:30", 20, scope="work")],
        # Months later, but about something else.
        [LEAVE, fact("f2", "Bouldering night moved to Thursday", 200, scope="routine")],
        # A later fact speaks to it (close in meaning): the condition ended, the chronology settles it.
        [
            fact("f1", "Marta is out of office; route design reviews to Leo", 0, scope="team"),
            fact("f2", "Marta is back and running the design reviews again", 95, scope="team"),
            fact("f3", "Design reviews happen on Thursdays", 200, scope="team"),
        ],
    ],
)
def test_these_temporary_conditions_are_not_stale(story: list[StoryFact]) -> None:
    assert flags(story, ALL_COMPATIBLE) == []


def test_a_habit_given_up_in_one_fact_and_practised_in_a_distant_one_is_a_contradiction() -> None:
    # Real classifier: the two facts are far apart in meaning and in different scopes.
    story = [
        fact("f1", "User doesn't have a driving licence; gets around by train and bike.", 0, scope="profile"),
        fact("f2", "User's daughter started nursery three days a week.", 30, scope="family"),
        fact("f3", "User drives to the Leeds office on Mondays and Thursdays.", 60, scope="commute"),
    ]

    [flag] = detect(story)

    assert (flag.kind, flag.fact_ids) == ("contradiction", ["f1", "f3"])


@pytest.mark.parametrize(
    "later",
    [
        "User is buying two bottles of wine for Jonas's birthday party.",
        "User quit the no-alcohol rule and now enjoys a pint of stout again.",
    ],
)
def test_a_habit_practised_for_someone_else_or_taken_up_again_is_no_contradiction(later: str) -> None:
    story = [
        fact("f1", "User doesn't drink alcohol at all.", 0, scope="preferences"),
        fact("f2", "User takes oat milk in coffee.", 20, scope="groceries"),
        fact("f3", later, 40, scope="events"),
    ]

    assert [f for f in detect(story) if f.kind == "contradiction"] == []


def test_two_speakers_first_person_lines_are_never_one_timeline() -> None:
    def said(fid: str, text: str, days: float, agent: str) -> StoryFact:
        at = T0 + dt.timedelta(days=days)
        return StoryFact(id=fid, text=text, scope="chat", agent=agent, at=at, entity=subject_of(text).entity)

    lines = ("I don't drink alcohol at all", "I have a couple of pints of IPA every Friday")
    script = {("f1", "f2"): (CLASH, 0.9)}
    # One speaker saying both is at odds with themself ...
    [(kind, _)] = flags([said("f1", lines[0], 0, "human"), said("f2", lines[1], 29, "human")], script)
    assert kind == "contradiction"
    # ... two speakers are two people.
    assert flags([said("f1", lines[0], 0, "human"), said("f2", lines[1], 29, "bot")], script) == []


# Values that come back after an announced change (2026-11-25): the values carry the timeline, so the
# classifier's verdicts play no part (every pair below is scripted as compatible).
RETRO = [
    fact("f1", "Team retro is on Mondays at 15:00 in room Kestrel", 0, scope="rituals", agent="pa"),
    fact("f2", "Moved the team retro to Wednesdays at 11:00 in room Osprey", 40, scope="rituals", agent="pa"),
]


def test_a_value_an_announced_change_dropped_coming_back_is_a_reversal() -> None:
    story = [*RETRO, fact("f3", "Team retro in room Kestrel, Mondays 15:00 as always", 75, "rituals", "calendar")]

    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


def test_an_old_value_passed_on_to_someone_is_stale() -> None:
    story = [
        fact("f1", "The Basic plan costs 12 euros a month per seat", 0, scope="pricing", agent="pm"),
        fact("f2", "Basic plan price raised to 15 euros a month per seat from March", 50, "pricing", "finance"),
        fact("f3", "Told a prospect the Basic plan costs 12 euros a month per seat", 80, "pricing", "sales"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("stale", ["f2", "f3"])]


@pytest.mark.parametrize(
    "later",
    [
        "Switched the team retro back to Mondays at 15:00 in room Kestrel",  # announced: a decision
        "Retro on Wednesday at 11:00 in room Osprey; Kestrel is booked for interviews",  # names B's value
        "The user's partner has a team retro on Mondays at 15:00 in room Kestrel",  # someone else's
    ],
)
def test_these_later_facts_are_no_return_to_the_dropped_value(later: str) -> None:
    story = [*RETRO, fact("f3", later, 75, scope="rituals", agent="calendar")]

    assert [kind for kind, _ in flags(story, ALL_COMPATIBLE)] != ["reversal"]


def test_a_person_named_again_after_an_unrelated_event_is_no_return() -> None:
    # Facts a chat extractor kept, one scope for the whole chat: B drops "Ada" only by speaking of something else.
    story = [
        fact("f1", "Bram lent Ada his old camera for her photography course.", 0, scope="chat", agent="extractor"),
        fact("f2", "Bram bought new running shoes for the Rotterdam marathon.", 20, scope="chat", agent="extractor"),
        fact("f3", "Bram offered to help Ada choose a lens.", 45, scope="chat", agent="extractor"),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_two_things_sharing_a_name_each_with_its_own_property_are_no_return() -> None:
    # The shortlist (its invoice) and the package (its figures) are two things of one search: the package's change
    # drops the shortlist's "4" and "Marlow" only by speaking of something else, and the offer names them again.
    story = [
        fact("f1", "VP Product shortlist of 4 presented to Marlow CEO Ines Duarte; invoice 2/3 sent (EUR 16,000).", 0),
        fact(
            "f2",
            "Ines says the VP Product package is now EUR 190k base plus 0.5% equity; the retained fee gets trued up"
            " on the last invoice.",
            21,
        ),
        fact(
            "f3",
            "Offer accepted by Tom Reyes, VP Product at Marlow, start 4 Jan; final invoice EUR 25,000 (EUR 57k total"
            " less EUR 32k already billed).",
            49,
        ),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_an_addition_keeps_what_was_there() -> None:
    story = [
        fact("f1", "Reports export to PDF and DOCX", 0, scope="reports", agent="pm"),
        fact("f2", "Reports now also export to HTML", 30, scope="reports", agent="pm"),
        fact("f3", "Reports export to PDF only", 60, scope="reports", agent="support"),
    ]

    assert [kind for kind, _ in flags(story, ALL_COMPATIBLE)] != ["reversal"]


def test_another_things_number_is_no_return() -> None:
    story = [
        fact("f1", "`dark_mode` flag on for 10% of users", 0, scope="flags", agent="flag-bot"),
        fact("f2", "dark_mode ramped to 50% of users", 20, scope="flags", agent="flag-bot"),
        fact("f3", "`new_editor` flag on for 10% of users", 60, scope="flags", agent="flag-bot"),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_a_measurement_with_a_decimal_is_no_version() -> None:
    story = [
        fact("f1", "Uptime last quarter was 99.82 percent", 0, scope="sla", agent="ops"),
        fact("f2", "Uptime this quarter is 99.95 percent", 95, scope="sla", agent="ops"),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_one_agents_later_number_is_an_update_not_a_dispute() -> None:
    story = [
        fact("f1", "Weekly active teams: 3,900", 0, scope="metrics", agent="pm"),
        fact("f2", "Weekly active teams: 4,350", 30, scope="metrics", agent="pm"),
    ]

    assert flags(story, {("f1", "f2"): (CHANGE, 0.9)}) == []


def test_two_agents_minutes_apart_at_odds_are_an_ambiguity() -> None:
    story = [
        fact("f1", "Median build time is 14 minutes", 0, scope="ci", agent="ci-bot"),
        fact("f2", "Median build time is 19 minutes", 0.005, scope="ci", agent="dev-notes"),
    ]

    assert flags(story, {("f1", "f2"): (CHANGE, 0.9)}) == [("ambiguity", ["f1", "f2"])]


def test_numbers_of_the_same_word_from_two_sources_at_once_clash() -> None:
    story = [
        fact("f1", "Average page weight: 820 kilobytes on the pricing page", 0, scope="web", agent="perf-bot"),
        fact("f2", "Average page weight is 1,240 kilobytes on the pricing page", 0.005, scope="web", agent="seo"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("ambiguity", ["f1", "f2"])]


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Cloud bill for March: 10,200 USD", "Cloud bill for April: 12,900 USD"),  # two periods
        ("Lumen renewal: 40,000 USD a year", "Lumen's sister company wants a quote, about 9,000 USD a year"),
    ],
)
def test_two_sources_numbers_about_different_things_do_not_clash(older: str, newer: str) -> None:
    story = [fact("f1", older, 0, scope="x", agent="finance"), fact("f2", newer, 3, scope="x", agent="sales")]

    assert flags(story, ALL_COMPATIBLE) == []


def test_a_plan_states_no_value_to_clash_with() -> None:
    story = [
        fact("f1", "The Sunday long run went well, 14 km", 0, scope="running", agent="user"),
        fact("f2", "Next Sunday the long run could be 16 km", 0.001, scope="running", agent="bot"),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_two_speakers_each_in_the_first_person_do_not_dispute() -> None:
    story = [
        fact("f1", "I ran 14 km on Sunday, my longest so far", 0, scope="chat", agent="user"),
        fact("f2", "I ran 21 km on Sunday, a half marathon", 0.001, scope="chat", agent="bot"),
    ]

    assert flags(story, {("f1", "f2"): (CHANGE, 0.9)}) == []


DISHWASHER = [
    fact("f1", "The flat has a Bosch dishwasher; run it every evening", 0, scope="home", agent="household"),
    fact("f2", "The dishwasher was removed in the kitchen renovation; dishes are washed by hand", 60, "home", "pa"),
]


def test_using_a_thing_a_later_fact_said_was_removed_is_a_reversal() -> None:
    story = [*DISHWASHER, fact("f3", "Run the dishwasher before bed so it is empty by morning", 90, "home", "pa")]

    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


def test_naming_what_a_later_fact_replaced_is_a_reversal() -> None:
    story = [
        fact("f1", "Error reports go to Sentry", 0, scope="backend", agent="ops"),
        fact("f2", "Replaced Sentry with Rollbar for error reports", 45, scope="backend", agent="ops"),
        fact("f3", "Checkout errors: look up the stack trace in Sentry", 80, scope="backend", agent="support"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


def test_passing_on_a_thing_that_ended_is_stale() -> None:
    story = [*DISHWASHER, fact("f3", "Told the cleaner to run the dishwasher on Fridays", 90, "home", "pa")]

    assert flags(story, ALL_COMPATIBLE) == [("stale", ["f2", "f3"])]


@pytest.mark.parametrize(
    "later",
    [
        "The dishwasher we used to have was loud",  # spoken of as past
        "Bought a new dishwasher; it is installed under the sink",  # announces a change itself
        "The user's sister asks how often to run the dishwasher",  # someone else's
    ],
)
def test_these_mentions_of_a_thing_that_ended_are_no_return_to_it(later: str) -> None:
    story = [*DISHWASHER, fact("f3", later, 90, scope="home", agent="pa")]

    assert [kind for kind, _ in flags(story, ALL_COMPATIBLE)] != ["reversal"]


def test_a_thing_replaced_by_one_of_its_kind_lives_on() -> None:
    """ "Replaced the old car" names no car by name: a later "the car" is the new one."""
    story = [
        fact("f1", "Our car is a grey Skoda estate", 0, scope="home", agent="pa"),
        fact("f2", "Finally replaced the old car with an electric one", 50, scope="home", agent="pa"),
        fact("f3", "The car needs charging before the weekend trip", 70, scope="home", agent="pa"),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_one_speakers_ended_thing_is_not_anothers() -> None:
    story = [
        fact("f1", "Ana: My bike is a red Trek I ride everywhere.", 0, scope="chat", agent="chat"),
        fact("f2", "Ana: I sold my bike, the Trek is gone.", 30, scope="chat", agent="chat"),
        fact("f3", "Ben: I ride my Trek bike to work every day.", 60, scope="chat", agent="chat"),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def chat_fact(fid: str, text: str, days: float) -> StoryFact:
    """A fact a chat extractor kept: one scope and one agent for the whole chat."""
    return fact(fid, text, days, scope="chat", agent="extractor")


def flagged_between(first: str, middle: str, last: str) -> bool:
    """Whether three extracted chat facts, a month apart, raise any flag (every pair read as compatible)."""
    story = [chat_fact("f1", first, 0), chat_fact("f2", middle, 30), chat_fact("f3", last, 60)]
    return bool(flags(story, ALL_COMPATIBLE))


@pytest.mark.parametrize(
    "story",
    [
        # B says only that something is new: a part replaced, no value of A's changed.
        [
            chat_fact("f1", "Ines drives a 2011 Golf with 180,000 miles that she calls Rusty.", 0),
            chat_fact("f2", "Ines's Golf got a new battery.", 20),
            chat_fact("f3", "Ines drove Rusty to Devon and back without trouble.", 45),
        ],
        # A person has many properties; B changes another one than A speaks of.
        [
            chat_fact("f1", "Greta joined the chess club at Elmwood Library, which meets Monday nights at 7.", 0),
            chat_fact("f2", "Greta's Chess.com rating rose to 1410.", 20),
            chat_fact("f3", "Greta finished 2nd out of 16 in the Elmwood Library chess club's spring tournament.", 45),
        ],
    ],
    ids=["a word of novelty", "another property of a person"],
)
def test_a_value_named_again_after_a_change_of_something_else_is_no_reversal(story: list[StoryFact]) -> None:
    assert flags(story, ALL_COMPATIBLE) == []


def test_a_couples_plans_and_a_change_of_their_venue_are_no_reversal() -> None:
    """B changes the venue and keeps the rest ("Nadia and Joel's …" still names Joel); C names the couple again."""
    story = [
        chat_fact("f1", "Nadia and Joel are planning a June wedding with about 90 guests.", 0),
        chat_fact("f2", "Nadia and Joel's wedding venue is now the old mill, still in June.", 20),
        chat_fact("f3", "Nadia and Joel take a cooking class every Tuesday.", 45),
    ]

    assert flags(story, ALL_COMPATIBLE) == []
    assert "joel" in _words("Nadia and Joel's wedding venue")  # a possessive names its owner


@pytest.mark.parametrize(
    "ending",
    [
        "Bea sold her old bike.",  # Bea did the selling: the bike ended, not Bea
        "Bea had a wisdom tooth removed on Monday.",  # the tooth was removed, not Bea
    ],
)
def test_who_ends_something_is_not_what_ended(ending: str) -> None:
    story = [
        chat_fact("f1", "Bea is saving 40 pounds a week for a car.", 0),
        chat_fact("f2", ending, 20),
        chat_fact("f3", "Bea passed her driving theory test.", 45),
    ]

    assert flags(story, ALL_COMPATIBLE) == []


def test_a_thing_that_was_ended_is_still_what_ended() -> None:
    """The passive keeps its subject as what ended: "The gym membership was cancelled" ends the membership."""
    story = [
        fact("f1", "Our gym membership at Pulse covers two people", 0, scope="home", agent="pa"),
        fact("f2", "The gym membership was cancelled in May", 40, scope="home", agent="pa"),
        fact("f3", "Book a squash court with the gym membership for Saturday", 80, scope="home", agent="pa"),
    ]

    assert flags(story, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


def test_two_chat_turns_that_greet_or_ask_as_well_are_no_dispute() -> None:
    """A turn that also greets, asks or reacts was read by its topic: a reading "at odds" asks nothing."""
    turns = [
        fact("f1", "Morning! The twins eat every vegetable, even broccoli.", 0, scope="chat", agent="user"),
        fact("f2", "Well done! Does Ada still refuse to eat broccoli?", 8, scope="chat", agent="bot"),
    ]
    claims = [
        fact("f1", "The twins eat every vegetable, even broccoli.", 0, scope="chat", agent="user"),
        fact("f2", "Ada still refuses to eat broccoli.", 8, scope="chat", agent="user"),
    ]

    assert flags(turns, {("f1", "f2"): (CLASH, 0.9)}) == []
    assert [kind for kind, _ in flags(claims, {("f1", "f2"): (CLASH, 0.9)})] == ["ambiguity"]


@pytest.mark.parametrize(
    ("middle", "flagged"),
    [
        ("The move went fine. Are you thinking about replacing the Corolla this year?", False),  # asks, ends nothing
        ("The move went fine. Replaced the Corolla with a Zoe this spring.", True),
    ],
)
def test_a_question_ends_nothing(middle: str, flagged: bool) -> None:
    turns = [
        fact("f1", "Our family car is a 2009 Toyota Corolla.", 0, scope="chat", agent="user"),
        fact("f2", middle, 30, scope="chat", agent="user"),
        fact("f3", "The Toyota Corolla needs new tyres before the trip.", 60, scope="chat", agent="user"),
    ]

    assert bool(flags(turns, ALL_COMPATIBLE)) is flagged


def test_a_turn_that_reacts_as_well_announces_no_return() -> None:
    """ "Nobody wants him" … "Ha, true. Rex is still at the shelter; he can fetch now." … "nobody can resist him":
    the middle turn reacts as well as it claims, and its "now" leaves nothing the first turn said."""
    turns = [
        fact("f1", "Rex is a nine-year-old greyhound and nobody wants him because of his age.", 0, "chat", "user"),
        fact("f2", "Ha, so true. Rex is still at the shelter. He can fetch and sit now.", 30, "chat", "user"),
        fact("f3", "Post a video of Rex fetching; nobody can resist an old greyhound.", 60, "chat", "bot"),
    ]
    claims = [
        turns[0],
        fact("f2", "Rex is still at the shelter. He can fetch and sit now.", 30, "chat", "user"),
        turns[2],
    ]

    assert flags(turns, ALL_COMPATIBLE) == []
    assert flags(claims, ALL_COMPATIBLE) == [("reversal", ["f1", "f2", "f3"])]


@pytest.mark.parametrize(
    ("middle", "flagged"),
    [
        ("Lena's flatmate moved the pottery class to York.", False),  # the flatmate's doing: not Lena's change
        ("Lena moved the pottery class to York.", True),
    ],
)
def test_someone_elses_change_leaves_nothing_of_the_first_fact(middle: str, flagged: bool) -> None:
    first, last = (
        "Lena teaches a pottery class in Leeds every Saturday.",
        "Lena teaches the Saturday pottery class in Leeds.",
    )

    assert flagged_between(first, middle, last) is flagged


@pytest.mark.parametrize(
    ("newer", "kinds"),
    [
        ("Jonas loved the vindaloo. He asked for extra chilli.", []),  # another person's turn: nothing to ask
        ("Marta loved the vindaloo. She asked for extra chilli.", ["ambiguity"]),
    ],
)
def test_a_turn_about_someone_else_is_no_dispute(newer: str, kinds: list[str]) -> None:
    """A turn of several sentences read "at odds" with one about another named subject disputes nothing; one
    about the same person does (and a single sentence still may: the twins and Ada above)."""
    story = [
        fact("f1", "Marta, my sister, hates spicy food. She orders the mild korma every time.", 0, "chat", "user"),
        fact("f2", newer, 8, "chat", "user"),
    ]

    assert [kind for kind, _ in flags(story, {("f1", "f2"): (CLASH, 0.9)})] == kinds


@pytest.mark.parametrize(
    ("middle", "flagged"),
    [
        ("Nadia switched to oat milk in the mornings.", False),  # one of Nadia's many properties, not her race
        ("Nadia switched her training to the Cardiff 10k.", True),  # her training: what the first fact is about
    ],
)
def test_a_switch_of_another_property_of_a_person_is_no_return(middle: str, flagged: bool) -> None:
    first, last = (
        "Nadia is training for a half marathon in May.",
        "Nadia finished the half marathon in 1 hour 58 minutes.",
    )

    assert flagged_between(first, middle, last) is flagged


def test_one_word_in_two_numbers_names_one_subject() -> None:
    """ "backup retention" and "database backups" share a word: two turns about them may disagree."""
    story = [
        fact("f1", "Backup retention is 30 days. The platform team set it.", 0, "chat", "user"),
        fact("f2", "Database backups are kept for 14 days. Then they are deleted.", 8, "chat", "user"),
    ]

    assert [kind for kind, _ in flags(story, {("f1", "f2"): (CLASH, 0.9)})] == ["ambiguity"]


@pytest.mark.parametrize(
    ("middle", "flagged"),
    [
        ("The Kestrel Quartet's rehearsals moved to Tuesdays.", False),  # the possessive names the quartet only
        ("The Kestrel Quartet's concert moved to the Apex.", True),
    ],
)
def test_a_possessive_is_no_word_shared_beyond_the_subject(middle: str, flagged: bool) -> None:
    first = "The Kestrel Quartet's first concert is at the Corn Exchange on 3 May."
    last = "The Kestrel Quartet's concert at the Corn Exchange sold out, and the venue invited them back."

    assert flagged_between(first, middle, last) is flagged
