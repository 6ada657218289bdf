"""Reads for the insights page: card flow, time to answer, detector precision, tolerance."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import Count, F, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from conflicts.models import Answer, AnswerChoice, CardState, ConflictCard, Tolerance, ToleranceChange
from workspaces.models import Workspace


@dataclass
class DayCount:
    day: dt.date
    opened: int
    resolved: int


def cards_per_day(*, workspace: Workspace, days: int = 30) -> list[DayCount]:
    """Cards opened and resolved (answered or dismissed) on each of the last ``days`` days."""
    today = timezone.now().date()
    start = today - dt.timedelta(days=days - 1)
    since = dt.datetime.combine(start, dt.time.min, tzinfo=dt.UTC)
    cards = ConflictCard.objects.filter(workspace=workspace)
    opened = dict(
        cards.filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    resolved = dict(
        cards.filter(answered_at__gte=since)
        .exclude(state=CardState.OPEN)
        .annotate(day=TruncDate("answered_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    result = []
    for offset in range(days):
        day = start + dt.timedelta(days=offset)
        result.append(DayCount(day, opened.get(day, 0), resolved.get(day, 0)))
    return result


def median_time_to_answer(*, workspace: Workspace) -> dt.timedelta | None:
    """Median time from a card's creation to its deciding answer."""
    waits: list[dt.timedelta] = sorted(
        ConflictCard.objects.filter(workspace=workspace, answered_at__isnull=False)
        .exclude(state__in=[CardState.OPEN, CardState.CLOSED])
        .annotate(wait=F("answered_at") - F("created_at"))
        .values_list("wait", flat=True)
    )
    if not waits:
        return None
    middle = len(waits) // 2
    if len(waits) % 2:
        return waits[middle]
    return (waits[middle - 1] + waits[middle]) / 2


@dataclass
class DetectorPrecision:
    detector: str
    confirmed: int
    false_positives: int

    @property
    def answered(self) -> int:
        return self.confirmed + self.false_positives

    @property
    def precision(self) -> float | None:
        return self.confirmed / self.answered if self.answered else None


def detector_precision(*, workspace: Workspace) -> list[DetectorPrecision]:
    """Per detector: answers that confirmed a real conflict (yes/no) vs "both are true" (a false positive)."""
    rows = (
        Answer.objects.filter(card__workspace=workspace)
        .exclude(choice=AnswerChoice.SKIP)
        .values("card__detector")
        .annotate(
            confirmed=Count("id", filter=Q(choice__in=[AnswerChoice.YES, AnswerChoice.NO])),
            false_positives=Count("id", filter=Q(choice=AnswerChoice.BOTH)),
        )
        .order_by("card__detector")
    )
    return [DetectorPrecision(r["card__detector"], r["confirmed"], r["false_positives"]) for r in rows]


def tolerance_now(*, workspace: Workspace) -> float:
    value = Tolerance.objects.filter(workspace=workspace).values_list("value", flat=True).first()
    return Tolerance.BASELINE if value is None else value


def tolerance_history(*, workspace: Workspace, limit: int = 200) -> list[ToleranceChange]:
    """The latest ``limit`` nudges, oldest first (for a chart)."""
    latest = ToleranceChange.objects.filter(workspace=workspace).order_by("-created_at", "-id")[:limit]
    return list(reversed(latest))
