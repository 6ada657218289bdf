"""Periods of time named in words: "in May 2023", "summer 2023", "the last week of May", "before March 2024".

Recall reads the period a query asks about (``query_period``) and the date a
fact gives itself in its own words (``stated_date``: "moved to Porto in May
2023" was true from May, whenever it was written down). Offline rules, no
model: a period is ``[start, end)`` in UTC.

What is read, in the order tried (the earliest match in the text wins):

- a day: ``2023-05-12``, ``May 12, 2023``, ``12 May 2023``;
- a month with its year: ``May 2023``, ``May of 2023``, ``Sept. 2023``;
- a season with its year: ``summer 2023``, ``the summer of 2023``, ``winter
  2023-24``; spring is March–May, summer June–August, autumn (fall)
  September–November, winter December–February, and ``winter 2024`` is the
  winter whose January lies in 2024 (December 2023 – February 2024);
- a year after a preposition: ``in 2023``, ``during 2023``, ``early 2024``;
- a month without its year after a preposition (``in May``, ``the last week of
  June``): the latest such month that began by the reference (the newest fact
  the query is compared with, or the fact's own date); "May" only capitalised,
  since "may" is also a verb;
- relative to the reference: ``yesterday``, ``today``, ``last week``, ``this
  month``, ``last year``, ``3 weeks ago``.

A part narrows it: ``early`` / ``the beginning of`` the first third,
``mid`` / ``the middle of`` the middle third, ``late`` / ``the end of`` the last
third, ``the first week of`` its first 7 days, ``the last week of`` its last 7,
``the first half`` / ``the second half``. A word before it opens it: ``before`` /
``prior to`` end at its start, ``until`` / ``by`` at its end, ``after`` start at its
end, ``since`` / ``from`` at its start.

Not read: periods relative to an event ("before she moved to Porto"), ranges
between two dates, time of day.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

EARLIEST = dt.datetime(1, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(9999, 12, 31, tzinfo=dt.UTC)
# A fact's own date counts when it names at most this long a stretch (a month: 31 days).
MAX_STATED_SPAN = dt.timedelta(days=31)


@dataclass(frozen=True)
class Period:
    """A stretch of time a text names: [start, end); an open side is ``EARLIEST`` / ``LATEST``."""

    start: dt.datetime
    end: dt.datetime

    @property
    def bounded(self) -> bool:
        return self.start > EARLIEST and self.end < LATEST

    def contains(self, moment: dt.datetime) -> bool:
        return self.start <= moment < self.end


MONTHS = (
    "january february march april may june july august september october november december".split()  # noqa: SIM905
)
_MONTH_WORDS = {name: i + 1 for i, name in enumerate(MONTHS)}
_MONTH_WORDS.update(
    {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10}
)
_MONTH_WORDS.update({"nov": 11, "dec": 12})
# Abbreviations only beside a year or a day ("Mar 2023"); a bare month must be spelt out.
_MONTH_ANY = r"(?:" + "|".join(sorted(_MONTH_WORDS, key=len, reverse=True)) + r")\.?"
_MONTH_FULL = r"(?:" + "|".join(MONTHS) + r")"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = r"(spring|summer|autumn|fall|winter)"
_PARTS = r"early|mid|middle|late|beginning|start|end|first half|second half|first week|last week"
_OPENINGS = r"before|prior to|until|till|by|after|since|from"

# The period itself; the words before it (a preposition, a part, an opening) are read by _CONTEXT.
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("iso", r"\b(\d{4})-(\d{2})-(\d{2})\b"),
        ("month day year", rf"\b({_MONTH_ANY})\s+{_DAY},?\s+{_YEAR}\b"),
        ("day month year", rf"\b{_DAY}\s+(?:of\s+)?({_MONTH_ANY}),?\s+{_YEAR}\b"),
        ("month year", rf"\b({_MONTH_ANY})(?:\s+of)?,?\s+{_YEAR}\b"),
        ("season year", rf"\b{_SEASON}(?:\s+of)?,?\s+{_YEAR}(?:\s*[-–/]\s*(\d{{4}}|\d{{2}}))?\b"),
        ("year", rf"\b{_YEAR}\b"),
        ("bare month", rf"\b({_MONTH_FULL})\b(?!\s*,?\s*\d)"),
        (
            "relative",
            r"\b(yesterday|today|(last|this|past)\s+(week|month|year)(?!\s+of\b)|"
            r"(\d+|a|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago)\b",
        ),
    )
)
# Forms that need a word before them to be a time: "in 2023" (not "2023 tickets"), "in May" (not "May I").
_NEEDS_CONTEXT = ("year", "bare month")
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_CONTEXT = re.compile(
    rf"(?:\b({_OPENINGS})\s+)?"
    r"(?:\b(?:in|during|throughout|over|around|for|at)\s+)?(?:\bthe\s+)?"
    rf"(?:\b({_PARTS})(?:\s+of)?[\s-]+)?"
    r"(?:\b(?:the|of|in|during)\s+)*(?:\byear\s+)?$",
    re.IGNORECASE,
)


def _month(year: int, month: int) -> Period:
    start = dt.datetime(year, month, 1, tzinfo=dt.UTC)
    return Period(start, _add_months(start, 1))


def _add_months(moment: dt.datetime, months: int) -> dt.datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1, day=1)


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        start = dt.datetime(year, month, day, tzinfo=dt.UTC)
    except ValueError:
        return None
    return Period(start, start + dt.timedelta(days=1))


def _month_number(word: str) -> int:
    return _MONTH_WORDS[word.lower().rstrip(".")]


def _latest_month_by(month: int, reference: dt.datetime) -> Period:
    year = reference.year if month <= reference.month else reference.year - 1
    return _month(year, month)


def _start_of_day(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _relative(match: re.Match[str], reference: dt.datetime) -> Period:
    text = match.group(1).lower()
    today = _start_of_day(reference)
    if text == "today":
        return Period(today, today + dt.timedelta(days=1))
    if text == "yesterday":
        return Period(today - dt.timedelta(days=1), today)
    if match.group(2):  # last/this/past week/month/year
        which, unit = match.group(2).lower(), match.group(3).lower()
        if unit == "week":
            monday = today - dt.timedelta(days=today.weekday())
            if which == "past":
                return Period(today - dt.timedelta(days=7), today + dt.timedelta(days=1))
            start = monday - dt.timedelta(days=7) if which == "last" else monday
            return Period(start, start + dt.timedelta(days=7))
        if unit == "month":
            this = today.replace(day=1)
            if which == "past":
                return Period(today - dt.timedelta(days=30), today + dt.timedelta(days=1))
            start = _add_months(this, -1) if which == "last" else this
            return Period(start, _add_months(start, 1))
        this_year = today.replace(month=1, day=1)
        if which == "past":
            return Period(today - dt.timedelta(days=365), today + dt.timedelta(days=1))
        start = this_year.replace(year=this_year.year - 1) if which == "last" else this_year
        return Period(start, start.replace(year=start.year + 1))
    count_word, unit = match.group(4).lower(), match.group(5).lower()
    count = int(count_word) if count_word.isdigit() else _NUMBERS[count_word]
    if unit == "day":
        start = today - dt.timedelta(days=count)
        return Period(start, start + dt.timedelta(days=1))
    if unit == "week":
        start = today - dt.timedelta(days=7 * count)
        monday = start - dt.timedelta(days=start.weekday())
        return Period(monday, monday + dt.timedelta(days=7))
    if unit == "month":
        start = _add_months(today.replace(day=1), -count)
        return Period(start, _add_months(start, 1))
    start = today.replace(year=today.year - count, month=1, day=1)
    return Period(start, start.replace(year=start.year + 1))


def _parse(name: str, match: re.Match[str], reference: dt.datetime | None) -> Period | None:
    g = match.groups()
    if name == "iso":
        return _day(int(g[0]), int(g[1]), int(g[2]))
    if name == "month day year":
        return _day(int(g[2]), _month_number(g[0]), int(g[1]))
    if name == "day month year":
        return _day(int(g[2]), _month_number(g[1]), int(g[0]))
    if name == "month year":
        return _month(int(g[1]), _month_number(g[0]))
    if name == "season year":
        season, year = g[0].lower(), int(g[1])
        first = SEASONS[season]
        if season == "winter":
            # "winter 2023-24" starts in December 2023; "winter 2024" is the one whose January is in 2024.
            year = year if g[2] else year - 1
        start = dt.datetime(year, first, 1, tzinfo=dt.UTC)
        return Period(start, _add_months(start, 3))
    if name == "year":
        start = dt.datetime(int(g[0]), 1, 1, tzinfo=dt.UTC)
        return Period(start, start.replace(year=start.year + 1))
    if reference is None:
        return None
    if name == "bare month":
        word = g[0]
        if word.lower() == "may" and word[0] != "M":
            return None  # "may" is a verb
        return _latest_month_by(_month_number(word), reference)
    return _relative(match, reference)


def _narrow(period: Period, part: str) -> Period:
    span = period.end - period.start
    part = part.lower()
    if part in ("early", "beginning", "start"):
        return Period(period.start, period.start + span / 3)
    if part in ("mid", "middle"):
        return Period(period.start + span / 3, period.start + 2 * span / 3)
    if part in ("late", "end"):
        return Period(period.end - span / 3, period.end)
    if part == "first half":
        return Period(period.start, period.start + span / 2)
    if part == "second half":
        return Period(period.start + span / 2, period.end)
    if part == "first week":
        return Period(period.start, min(period.end, period.start + dt.timedelta(days=7)))
    if part == "last week":
        return Period(max(period.start, period.end - dt.timedelta(days=7)), period.end)
    return period


def _open(period: Period, opening: str) -> Period:
    opening = opening.lower()
    if opening in ("before", "prior to"):
        return Period(EARLIEST, period.start)
    if opening in ("until", "till", "by"):
        return Period(EARLIEST, period.end)
    if opening == "after":
        return Period(period.end, LATEST)
    if opening in ("since", "from"):
        return Period(period.start, LATEST)
    return period


def _names_time(context: re.Match[str] | None) -> bool:
    """Whether the words before a year or a bare month say it is a time ("in", "before", "early"; not "the")."""
    return context is not None and bool(re.sub(r"\b(?:the|of|year)\b", "", context.group(0)).strip())


# What every form needs at least one of: four digits (a year, an ISO date), a month's name, or a word of a
# relative period. A text holding none is not scanned with the eight forms (~40 µs a text): 86 % of the
# conversation benchmark's lines, 40 % of the recall benchmark's facts (same periods read on all of them).
_MAY_NAME_A_TIME = re.compile(r"\d{4}|yesterday|today|ago|week|month|year|" + "|".join(MONTHS), re.IGNORECASE)


def _read(text: str, reference: dt.datetime | None) -> Period | None:
    """The earliest time expression in ``text`` (at one position, the most specific form), narrowed and opened."""
    if _MAY_NAME_A_TIME.search(text) is None:
        return None
    found: list[tuple[int, int, Period, re.Match[str] | None]] = []
    for order, (name, pattern) in enumerate(_FORMS):
        for match in pattern.finditer(text):
            context = _CONTEXT.search(text[max(0, match.start() - 60) : match.start()])
            if name in _NEEDS_CONTEXT and not _names_time(context):
                continue
            period = _parse(name, match, reference)
            if period is not None:
                found.append((match.start(), order, period, context))
                break
    if not found:
        return None
    _, _, period, context = min(found, key=lambda item: (item[0], item[1]))
    if context is not None and context.group(2):
        period = _narrow(period, re.sub(r"\s+", " ", context.group(2)))
    if context is not None and context.group(1):
        period = _open(period, re.sub(r"\s+", " ", context.group(1)))
    return period


# A question about when something happened: its answer is a statement of the past, current or not.
_ASKS_WHEN = re.compile(
    r"\b(?:when\s+(?:did|was|were|had)|(?:what|which)\s+(?:date|day|week|month|year|season)\s+(?:did|was|were)|"
    r"how\s+long\s+ago|since\s+when)\b",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether a query asks when something happened ("When did Ana move to Porto?", "What year was …")."""
    return _ASKS_WHEN.search(text) is not None


# "When did Bo last change jobs?", "her latest car": the newest statement answers. Not "last week", "last night".
_ASKS_LATEST = re.compile(
    r"\b(?:last|latest|most\s+recent(?:ly)?|recently)\b"
    r"(?!\s+(?:week|month|year|night|time|weekend|summer|winter|spring|autumn|fall|\w+day)\b)",
    re.IGNORECASE,
)


def asks_latest(text: str) -> tuple[bool, str]:
    """Whether a query asks for the newest statement, and its text without the words that say so.

    Those words are no words to match: "last" in "When did Bo last change
    jobs?" is not the "last" of "finished it last night" or "at last".
    """
    if _ASKS_LATEST.search(text) is None or query_period(text) is not None:
        return False, text
    return True, _ASKS_LATEST.sub(" ", text)


def query_period(text: str, reference: dt.datetime | None = None) -> Period | None:
    """The period a query asks about, if it names one (see the module docstring).

    ``reference``: the moment relative words count from (the newest fact the
    query is compared with); without it, only periods that name their year are read.
    """
    return _read(text, reference)


def stated_date(text: str, said_at: dt.datetime) -> dt.datetime | None:
    """When a fact says its statement became true, if its text dates it to a day, a week or a month before it was said.

    "Moved to Porto in May 2023" (or "in May", "last month"), written in June,
    was true from May. Longer or open periods ("this year", "since 2021") say
    too little to order two statements by, and a date after ``said_at`` is a plan: neither counts.
    """
    period = _read(text, said_at)
    if period is None or not period.bounded or period.end - period.start > MAX_STATED_SPAN:
        return None
    return period.start if period.start < said_at else None
