from __future__ import annotations

from datetime import date

import pytest

from conflicts.detection import rules
from conflicts.detection.rules import FEATURE_NAMES, analyse, change_markers


def test_it_flags_different_numbers_for_the_same_subject() -> None:
    s = analyse(
        "The public API rate limit is 100 requests per minute.", "The public API rate limit is 500 requests per minute."
    )
    assert s.same_subject
    assert s.number_mismatch
    assert any("numbers differ: 100 vs 500" in r for r in s.reasons)


def test_it_keeps_units_with_numbers() -> None:
    s = analyse("Each workspace gets 10 GB of storage.", "Each workspace gets 10 TB of storage.")
    assert s.number_mismatch
    assert s.numbers_a == ("10gb",)


def test_it_does_not_flag_equal_numbers() -> None:
    s = analyse("Backups are kept for 30 days.", "We keep backups for 30 days.")
    assert not s.number_mismatch


def test_it_flags_versions() -> None:
    s = analyse("The project runs on Python 3.11.", "The project runs on Python 3.12.")
    assert s.version_mismatch
    assert not s.number_mismatch  # a version is not counted twice as a number
    assert any("versions differ: 3.11 vs 3.12" in r for r in s.reasons)


def test_it_flags_dates() -> None:
    s = analyse("Version 2.0 shipped on March 3.", "Version 2.0 shipped on March 17.")
    assert s.date_mismatch
    assert any("dates differ" in r for r in s.reasons)


def test_it_reads_iso_dates_and_years() -> None:
    s = analyse("The contract ends on 2025-06-30.", "The contract ends on 2026-06-30.")
    assert s.date_mismatch
    assert s.dates_a == ("2025-06-30",)


@pytest.mark.parametrize(
    ("older", "newer", "differ"),
    [
        ("The survey closes on 6 October.", "Survey closes 6 Oct 2025.", False),  # one day, spelled two ways
        ("The survey closes on Sept. 3rd.", "The survey closes on 3 September.", False),
        ("Priya has led the team since 2021.", "Team review with Priya on 29 Sep.", False),  # a year and a day
        ("The launch is on March 24.", "The launch is on March 31.", True),
        ("The contract ends on 2025-06-30.", "The contract ends on 2026-06-30.", True),
        ("Signed on 2025-03-28.", "Signed on 3 Apr 2025.", True),
        ("Budget set in October 2025.", "Budget set in November 2025.", True),
    ],
)
def test_dates_differ_only_as_the_same_kind_of_date(older: str, newer: str, differ: bool) -> None:
    signals = analyse(older, newer)

    assert rules.dates_differ(signals.dates_a, signals.dates_b) is differ


def test_it_flags_a_negation_flip() -> None:
    s = analyse("Never use tabs in Python files.", "Use tabs in Python files.")
    assert s.negation_flip
    assert any("polarity flip" in r for r in s.reasons)


def test_a_double_negation_is_no_flip() -> None:
    s = analyse("We don't deploy on Fridays.", "We never deploy on Fridays.")
    assert not s.negation_flip


def test_it_finds_opposite_values() -> None:
    s = analyse("I love country music.", "I hate country music.")
    assert s.opposite_words == (("love", "hate"),)
    assert any("opposite values: love vs hate" in r for r in s.reasons)


def test_it_finds_change_markers_and_the_newer_side_from_wording() -> None:
    s = analyse("Maria lives in Lisbon.", "Maria moved to Berlin.")
    assert s.same_subject
    assert "moved to" in s.change_markers_b
    assert s.newer == "b"


@pytest.mark.parametrize(
    ("older", "newer", "marker"),
    [
        ("The billing service is written in Ruby.", "The billing service got rewritten in Rust.", "rewritten"),
        ("The support contract ends in March.", "The support contract was renewed for two years.", "renewed"),
        ("The launch is on 3 June.", "The launch has been postponed to July.", "postponed"),
        ("The cache holds 2 GB.", "The cache was scaled to 8 GB.", "scaled"),
    ],
)
def test_words_that_give_a_thing_another_form_or_date_mark_a_change(older: str, newer: str, marker: str) -> None:
    s = analyse(older, newer)
    assert s.change_markers_b == (marker,)
    assert s.newer == "b"


def test_an_age_is_no_mark_of_the_past() -> None:
    """ "a 6-year-old cat" is the cat's age; "the old laptop" is a thing of the past."""
    assert analyse("Tom has a 6-year-old cat called Pickle.", "Tom adopted a kitten.").past_markers_a == ()
    assert analyse("The old laptop runs Windows 10.", "The team laptops run Windows 11.").past_markers_a == ("old",)


@pytest.mark.parametrize(
    ("text", "leaving"),
    [
        ("Joan left the agency in March.", True),
        ("Joan left on Friday.", True),
        ("We have 300 euros left in the holiday fund.", False),  # what remains
        ("Three days left before the deadline.", False),
        ("There is nothing left in the petty cash tin.", False),
    ],
)
def test_left_after_an_amount_is_what_remains_not_a_change(text: str, leaving: bool) -> None:
    assert ("left" in change_markers(text)) is leaving


def test_an_effect_on_something_else_is_no_change_marker() -> None:
    s = analyse("Annotators follow the v1 guidelines.", "The new training has cut disagreements a lot.")
    assert "cut" not in s.change_markers_b


def test_a_rise_marks_a_change_only_with_the_value_it_rose_to() -> None:
    rose_to = analyse("The gym costs 30 euros a month.", "The gym went up to 35 euros.")
    rose = analyse("Rents in Porto are high.", "I read that rents in Leeds went up again.")

    assert rose_to.change_markers_b == ("went up to",)
    assert rose.change_markers_b == ()


def test_used_to_marks_the_other_side_as_newer() -> None:
    s = analyse("I live in Texas.", "I used to live in Ohio.")
    assert s.past_markers_b == ("used to",)
    assert s.newer == "a"


def test_times_decide_the_newer_side_over_wording() -> None:
    s = analyse("Maria moved to Berlin.", "Maria lives in Lisbon.", date(2024, 5, 1), "2023-01-01")
    assert s.has_times
    assert s.days_apart is not None
    assert s.days_apart < 0
    assert s.newer == "a"
    assert any("days apart" in r for r in s.reasons)


def test_different_subjects_sharing_a_word_are_not_the_same_subject() -> None:
    s = analyse("The Berlin office opens at 9.", "Maria lives in Berlin and works remotely.")
    assert not s.same_subject
    assert not s.number_mismatch
    assert any("but not a subject" in r for r in s.reasons)


def test_rules_that_need_a_subject_stay_quiet_across_subjects() -> None:
    s = analyse("The search team never deploys on Fridays.", "Sales calls happen on Fridays at 3pm.")
    assert not s.same_subject
    assert not s.negation_flip


def test_features_match_their_names() -> None:
    s = analyse("a", "b")
    assert len(s.features()) == len(FEATURE_NAMES)
    assert s.reasons == ()


@pytest.mark.parametrize(
    ("newer", "older", "value"),
    [
        ("Moved unit tests from Jest to Vitest", "Unit tests: Jest 29 with jsdom", "jest"),
        ("Moved the broker off RabbitMQ onto SQS", "Background jobs go through RabbitMQ", "rabbitmq"),
        ("Scratch the Auth0 plan: Keycloak instead", "Going with Auth0 for customer SSO", "auth0"),
        ("Moved unit tests from Jest to Vitest", "The app is bundled with Webpack", None),  # not stated before
        ("Migrated analytics from MySQL", "We migrated billing from MySQL in 2019", None),  # both leave it
        ("User and Jonas moved from Bristol to Bath in October", "User lives in Bristol with Jonas", "bristol"),
        # A bare "from" leaves nothing: "the" is not a value, and this is no change.
        (
            "Re-applied the ffmpeg preset change from the Mar 2 push on its own",
            "Suspected cause: the config push changed the ffmpeg preset",
            None,
        ),
        ("Error logs from the API gateway go to Loki", "The API gateway logs errors to CloudWatch", None),
        # A sentence's closing full stop is not part of the value.
        ("Moved the broker off RabbitMQ.", "Jobs go through RabbitMQ (3 nodes)", "rabbitmq"),
    ],
)
def test_a_newer_statement_leaving_what_the_older_states(newer: str, older: str, value: str | None) -> None:
    from conflicts.detection.rules import leaves_what_other_states

    assert leaves_what_other_states(newer, older) == value


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("Correction to the previous entry: BM25 nDCG@10 is 0.418", "correction"),
        ("Update on cause: the preset change is harmless", "update on"),
        ("Actually, the limit is 2,000 req/s", "actually"),
        ("The deploy window is Tuesday 10:00", None),
        ("Post an update on the status page", None),  # "update on" counts only as an opening
        ("Clarifying the free allowance: the one offline region is capped at 50 km²", "clarifying"),
        ("To clarify, staging deploys need no approval", "to clarify"),
        ("Ask the product owner for clarification before the deploy", None),
    ],
)
def test_a_statement_announcing_a_correction(text: str, marker: str | None) -> None:
    from conflicts.detection.rules import correction_marker

    assert correction_marker(text) == marker


@pytest.mark.parametrize(
    ("text", "targets"),
    [
        ("We switched the public API to GraphQL.", {"graphql"}),
        ("Switching the headline metric to relaxed (overlap) F1", {"relaxed"}),
        ("Moved the Celery broker off RabbitMQ onto SQS", {"sqs"}),
        ("Moved unit tests from Jest to Vitest", {"vitest"}),
        ("User moved to Lisbon in May", {"lisbon"}),
        # No verb of change, or nothing named after "to".
        ("Talked to Ana about the API", set()),
        ("Went to the GraphQL meetup", set()),
        ("Rolled the flag back to 5%", set()),
        ("Changed the limit to 500 req/s", set()),
    ],
)
def test_what_a_statement_switches_to(text: str, targets: set[str]) -> None:
    from conflicts.detection.rules import switch_targets

    assert switch_targets(text) == targets


# --- habits: abstaining, then doing it ------------------------------------------------


@pytest.mark.parametrize(
    ("abstains", "practises", "habit"),
    [
        ("User doesn't drink alcohol at all.", "User's Friday wind-down is a couple of pints of hazy IPA.", "alcohol"),
        ("User is teetotal.", "User always orders a whisky sour at the hotel bar.", "alcohol"),
        ("User doesn't have a driving licence.", "User drives to the Reading office on Mondays.", "driving"),
        ("User has no driving licence and cycles.", "User drove to Cornwall for the long weekend.", "driving"),
        ("User is vegetarian.", "User wants a recipe for beef brisket tacos.", "meat"),
        ("User does not smoke.", "User smokes two cigarettes after lunch.", "smoking"),
        (
            "User wants answers kept short: code first.",
            "User likes thorough explanations of the reasoning.",
            "long answers",
        ),
        ("User prefers concise replies.", "User asks for detailed explanations with alternatives.", "long answers"),
    ],
)
def test_abstaining_from_a_habit_and_practising_it_is_a_broken_habit(abstains: str, practises: str, habit: str) -> None:
    assert analyse(abstains, practises).broken_habit == habit
    assert analyse(practises, abstains).broken_habit == habit


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("User doesn't drink alcohol.", "User likes alcohol-free beer with dinner."),
        ("User doesn't drink alcohol.", "User is buying a bottle of wine for Jonas's birthday."),
        ("User doesn't drink alcohol.", "Jonas drinks a pint of stout on Fridays."),
        ("User doesn't drink alcohol.", "User didn't order a beer at the work dinner."),
        ("User quit drinking in January.", "User loves a pint of IPA."),
        ("User used to drive to work.", "User doesn't drive anymore."),
        ("User is vegetarian.", "User likes the veggie burger at Honest."),
        ("User is pescatarian: fish is fine, no meat.", "User wants a bacalhau recipe for Christmas Eve."),
        ("User doesn't smoke.", "User loves smoked salmon on bagels."),
        ("User doesn't drink coffee after noon.", "User drinks a glass of wine with dinner."),
        ("User doesn't drink alcohol.", "User might try the local wine in Porto."),
        ("User has no driving licence.", "User now drives to work after passing the test."),
        ("User doesn't want short answers.", "User likes thorough explanations."),
        ("User wants short commit messages.", "User likes detailed explanations in pull requests."),
        ("User wants answers kept short.", "User doesn't need detailed explanations."),
    ],
)
def test_these_are_not_broken_habits(first: str, second: str) -> None:
    assert analyse(first, second).broken_habit is None
    assert analyse(second, first).broken_habit is None


def test_a_broken_habit_is_named_among_the_reasons() -> None:
    signals = analyse("User is teetotal.", "User orders a gin and tonic at every wedding.")

    assert "broken habit: doesn't drink alcohol, yet drinks" in signals.reasons


@pytest.mark.parametrize(
    ("a", "b", "differ"),
    [
        ("The rate limit is 1,000 requests per second.", "We cap the API at 1,000 req/s.", False),
        ("The rate limit is 1,000 req/s.", "The rate limit is 500 req/s.", True),
        ("The quota is 10 GB per user.", "The quota is 10 TB per user.", True),
        ("We run Python 3.11 in production.", "We run Python 3.12 in production.", True),
        ("The launch is on 2024-03-24.", "The launch is on 2024-03-31.", True),
        ("Support is open 9 to 5.", "Support is open from 9 to 5 on weekdays.", False),
    ],
)
def test_stated_values_differ_by_value_and_by_units_both_sides_give(a: str, b: str, differ: bool) -> None:
    assert analyse(a, b).stated_values_differ is differ


@pytest.mark.parametrize(
    ("text", "adds"),
    [
        ("The user now also avoids dairy.", True),
        ("Payments are handled in EUR as well.", True),
        ("We ship to Norway too.", True),
        ("SMS moved to a Sidekiq job too, 5 retries.", False),  # a move, compared with another
        ("The user switched to oat milk as well.", False),
        ("Too many retries trip the breaker.", False),  # not a clause-final "too"
        ("The user now avoids dairy.", False),
    ],
)
def test_a_statement_that_adds_without_moving_anything(text: str, adds: bool) -> None:
    assert rules.adds_without_moving(text) is adds


@pytest.mark.parametrize(
    ("text", "keeps"),
    [
        ("Team plan cut to 8 seats from May; storage unchanged.", True),
        ("On top of the weekday classes, the user now swims on Saturdays.", True),
        ("Billing moved to Paddle; invoices look as before.", True),
        ("The user still lives in Lisbon.", False),  # a restatement, no part of a change
        ("Moved the broker to SQS: the old cluster kept losing quorum.", False),  # "kept" as "went on"
        ("Plan cut to 8 seats from May.", False),
    ],
)
def test_a_statement_of_change_that_says_part_of_what_held_stays(text: str, keeps: bool) -> None:
    assert rules.keeps_part(text) is keeps


@pytest.mark.parametrize(
    ("text", "moved"),
    [
        ("Moved the user's phone plan to giffgaff.", True),
        ("We moved the standup to 10:00.", True),
        ("Priya moved the 1:1 over to Thursdays.", True),
        ("The user moved to Berlin.", True),
        ("They moved in together.", False),
        ("Moved fast and broke things to get there.", False),  # no object moved anywhere
    ],
)
def test_a_move_with_its_object_between_marks_a_change(text: str, moved: bool) -> None:
    assert ("moved to" in change_markers(text)) is moved


def test_a_resize_marks_a_change() -> None:
    assert analyse("Staging DB: db.t3.medium.", "Staging DB resized to db.t3.large.").change_markers_b == ("resized",)
