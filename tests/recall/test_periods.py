"""Periods named in words (recall/periods.py): what a query asks about, and when a fact says it became true."""

from __future__ import annotations

import datetime as dt

import pytest

from recall.periods import EARLIEST, LATEST, query_period, stated_date

NOW = dt.datetime(2024, 3, 10, 15, 0, tzinfo=dt.UTC)


def span(text: str, reference: dt.datetime | None = NOW) -> tuple[str, str] | None:
    period = query_period(text, reference)
    if period is None:
        return None
    start = "open" if period.start == EARLIEST else period.start.date().isoformat()
    end = "open" if period.end == LATEST else period.end.date().isoformat()
    return start, end


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where was Ana working in May 2023?", ("2023-05-01", "2023-06-01")),
        ("December of 2024, who ran it?", ("2024-12-01", "2025-01-01")),
        ("the Sept. 2023 outage", ("2023-09-01", "2023-10-01")),
        ("What did we decide on 2023-05-12?", ("2023-05-12", "2023-05-13")),
        ("What happened on May 12th, 2023?", ("2023-05-12", "2023-05-13")),
        ("the call of 12 May 2023", ("2023-05-12", "2023-05-13")),
        ("What did Bo do in the summer of 2023?", ("2023-06-01", "2023-09-01")),
        ("autumn 2023", ("2023-09-01", "2023-12-01")),
        ("our trip in winter 2023-24", ("2023-12-01", "2024-03-01")),
        ("in winter 2024", ("2023-12-01", "2024-03-01")),
        ("What was true in 2023?", ("2023-01-01", "2024-01-01")),
        ("in the year 2022", ("2022-01-01", "2023-01-01")),
    ],
)
def test_a_query_names_a_period_with_its_year(text: str, expected: tuple[str, str]) -> None:
    assert span(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Where was Bo in the last week of May 2023?", ("2023-05-25", "2023-06-01")),
        ("the first week of June 2023", ("2023-06-01", "2023-06-08")),
        ("late May 2023", ("2023-05-21", "2023-06-01")),
        ("in mid-August 2023", ("2023-08-11", "2023-08-21")),
        ("at the beginning of March 2024", ("2024-03-01", "2024-03-11")),
        ("in the second half of 2023", ("2023-07-02", "2024-01-01")),
    ],
)
def test_a_part_narrows_the_period(text: str, expected: tuple[str, str]) -> None:
    assert span(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Who ran it before March 2024?", ("open", "2024-03-01")),
        ("until June 2023", ("open", "2023-07-01")),
        ("Where did she live after May 2023?", ("2023-06-01", "open")),
        ("everything since 2021", ("2021-01-01", "open")),
        ("by the end of June 2023", ("open", "2023-07-01")),
    ],
)
def test_before_after_and_since_open_the_period(text: str, expected: tuple[str, str]) -> None:
    assert span(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did we decide in May?", ("2023-05-01", "2023-06-01")),  # the latest May by the reference
        ("in the last week of February", ("2024-02-23", "2024-03-01")),
        ("What happened yesterday?", ("2024-03-09", "2024-03-10")),
        ("What happened last week?", ("2024-02-26", "2024-03-04")),
        ("this month", ("2024-03-01", "2024-04-01")),
        ("last year", ("2023-01-01", "2024-01-01")),
        ("three weeks ago", ("2024-02-12", "2024-02-19")),
        ("2 days ago", ("2024-03-08", "2024-03-09")),
    ],
)
def test_words_relative_to_the_reference(text: str, expected: tuple[str, str]) -> None:
    assert span(text) == expected
    assert span(text, reference=None) is None  # without a reference nothing relative is read


@pytest.mark.parametrize(
    "text",
    [
        "May I ask where Ana works?",  # "may" is a verb
        "Where does Ana work?",
        "We closed 2023 tickets",  # a number, not a year: no word before it names a time
        "INC-2023 root cause",
        "the march of progress",  # a bare month needs a word before it that names a time
    ],
)
def test_no_period_is_read_where_none_is_named(text: str) -> None:
    assert span(text) is None


def test_the_earliest_period_in_the_text_is_the_one_read() -> None:
    assert span("Where was Ana working in May 2023, before she moved in 2024?") == ("2023-05-01", "2023-06-01")


def test_a_fact_dates_itself_by_a_day_week_or_month_before_it_was_said() -> None:
    said = dt.datetime(2023, 6, 20, 12, tzinfo=dt.UTC)
    may = dt.datetime(2023, 5, 1, tzinfo=dt.UTC)
    assert stated_date("Moved to Porto in May 2023", said) == may
    assert stated_date("I moved to Porto in May", said) == may
    assert stated_date("Bo: we adopted a dog last month", said) == may
    assert stated_date("I started there on 2023-06-02", said) == dt.datetime(2023, 6, 2, tzinfo=dt.UTC)


def test_long_open_or_future_periods_do_not_date_a_fact() -> None:
    said = dt.datetime(2023, 6, 20, 12, tzinfo=dt.UTC)
    assert stated_date("I've lived in Porto since 2021", said) is None  # open
    assert stated_date("I changed jobs this year", said) is None  # a year says too little
    assert stated_date("We move to Porto in August 2023", said) is None  # a plan
    assert stated_date("Haha that's so true.", said) is None
