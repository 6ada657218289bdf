"""Reads of uncertainties, cards and the audit trail."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import Count, Prefetch, Q, QuerySet

from conflicts.models import CardFact, CardState, ConflictCard, DetectiveRun, Uncertainty
from memories.models import Event
from memoryhub.errors import NotFound
from workspaces.models import Workspace


def cards_list(*, workspace: Workspace, state: str | None = None, kind: str | None = None) -> QuerySet[ConflictCard]:
    qs = ConflictCard.objects.filter(workspace=workspace).prefetch_related(
        Prefetch("card_facts", queryset=CardFact.objects.select_related("memory").order_by("position"))
    )
    if state:
        qs = qs.filter(state=state)
    if kind:
        qs = qs.filter(kind=kind)
    return qs.order_by("-created_at")


def open_card_counts(*, workspaces: Iterable[Workspace]) -> dict[int, int]:
    """Open cards per workspace id, in one query for the home page's list (0 where none are open)."""
    ids = [workspace.pk for workspace in workspaces]
    counts = dict.fromkeys(ids, 0)
    rows = (
        ConflictCard.objects.filter(workspace_id__in=ids, state=CardState.OPEN)
        .values("workspace_id")
        .annotate(n=Count("*"))
        .order_by()
    )
    for row in rows:
        counts[row["workspace_id"]] = row["n"]
    return counts


def card_get(*, workspace: Workspace, card_id: uuid.UUID) -> ConflictCard:
    card = cards_list(workspace=workspace).filter(pk=card_id).first()
    if card is None:
        raise NotFound("no conflict card with this id in the workspace")
    return card


def uncertainties_list(
    *, workspace: Workspace, state: str | None = None, memory_id: uuid.UUID | None = None
) -> QuerySet[Uncertainty]:
    qs = Uncertainty.objects.filter(workspace=workspace)
    if state:
        qs = qs.filter(state=state)
    if memory_id:
        qs = qs.filter(Q(memory_a_id=memory_id) | Q(memory_b_id=memory_id))
    return qs.order_by("-created_at")


def events_list(
    *, workspace: Workspace, automatic: bool | None = None, verb: str | None = None, memory_id: uuid.UUID | None = None
) -> QuerySet[Event]:
    qs = Event.objects.filter(workspace=workspace)
    if automatic is not None:
        qs = qs.filter(automatic=automatic)
    if verb:
        qs = qs.filter(verb=verb)
    if memory_id:
        qs = qs.filter(memory_id=memory_id)
    return qs.order_by("-created_at", "-id")


def event_get(*, workspace: Workspace, event_id: int) -> Event:
    event = Event.objects.filter(workspace=workspace, pk=event_id).first()
    if event is None:
        raise NotFound("no event with this id in the workspace")
    return event


def detective_runs_recent(*, workspace: Workspace, limit: int = 50) -> list[DetectiveRun]:
    """The workspace's latest detective runs, newest first (failed and partial ones carry their error)."""
    return list(DetectiveRun.objects.filter(workspace=workspace).order_by("-created_at")[:limit])
