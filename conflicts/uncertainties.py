"""Acting on one uncertainty from the dashboard: resolve it, dismiss it, or turn it into a card.

Uncertainties without a card (an ambiguity below the surfacing threshold, an
unverified or stale fact) could be settled nowhere; the Uncertainties page uses
these. Each is one transaction and one audited, undoable event.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from conflicts.models import (
    CardKind,
    ConflictCard,
    ResolutionStrategy,
    Uncertainty,
    UncertaintyState,
    UncertaintyType,
)
from conflicts.services import card_create, card_holding
from memories.audit import Actor, Tracker, record_event
from memoryhub.errors import ConflictError, NotFound
from workspaces.models import Workspace

OPEN_STATES = (UncertaintyState.OPEN, UncertaintyState.SURFACED)
CARD_KIND = {
    UncertaintyType.CONTRADICTION: CardKind.CONTRADICTION,
    UncertaintyType.AMBIGUOUS: CardKind.AMBIGUITY,
    UncertaintyType.STALE: CardKind.STALE,
    UncertaintyType.UNVERIFIED: CardKind.STALE,
}


@dataclass
class UncertaintyFilters:
    type: str = ""
    severity: str = ""
    state: str = "open"

    @classmethod
    def from_query(cls, query: dict[str, str]) -> UncertaintyFilters:
        return cls(
            type=query.get("type", "") if query.get("type", "") in UncertaintyType.values else "",
            severity=query.get("severity", "")
            if query.get("severity", "") in ("low", "medium", "high", "critical")
            else "",
            state=query.get("state", "open")
            if query.get("state", "open") in ("open", "all", *UncertaintyState.values)
            else "open",
        )


def uncertainties_filtered(*, workspace: Workspace, filters: UncertaintyFilters) -> QuerySet[Uncertainty]:
    records = Uncertainty.objects.filter(workspace=workspace).select_related("memory_a", "memory_b")
    if filters.type:
        records = records.filter(uncertainty_type=filters.type)
    if filters.severity:
        records = records.filter(severity=filters.severity)
    if filters.state == "open":
        records = records.filter(state__in=OPEN_STATES)
    elif filters.state != "all":
        records = records.filter(state=filters.state)
    return records.order_by("-created_at")


def uncertainties_page(*, workspace: Workspace, filters: UncertaintyFilters, page: str | None) -> object:
    return Paginator(uncertainties_filtered(workspace=workspace, filters=filters), 25).get_page(page)


def uncertainty_get(*, workspace: Workspace, uncertainty_id: uuid.UUID | str) -> Uncertainty:
    record = Uncertainty.objects.filter(workspace=workspace, pk=uncertainty_id).first()
    if record is None:
        raise NotFound("no uncertainty with this id in the workspace")
    return record


def uncertainty_settle(*, record: Uncertainty, actor: Actor, dismiss: bool, note: str = "") -> Uncertainty:
    """Close an open uncertainty by a person's word: resolved (the doubt is cleared) or dismissed (not worth asking)."""
    with transaction.atomic():
        record = Uncertainty.objects.select_for_update().get(pk=record.pk)
        if record.state not in OPEN_STATES:
            raise ConflictError(f"this uncertainty is already {record.state}")
        tracker = Tracker()
        detail = ("dismissed by a reviewer: not worth asking" if dismiss else "resolved by a reviewer") + (
            f": {note}" if note else ""
        )
        tracker.update(
            record,
            state=UncertaintyState.RESOLVED,
            resolution_strategy=ResolutionStrategy.USER_CLARIFIED,
            resolution_detail=detail,
            resolved_at=timezone.now(),
        )
        record.save()
        record_event(
            workspace=record.workspace,
            actor=actor,
            verb="uncertainty.dismiss" if dismiss else "uncertainty.resolve",
            memory=record.memory_a,
            changes=tracker.changes,
            reason=detail,
        )
    return record


def uncertainty_open_card(*, record: Uncertainty, actor: Actor) -> ConflictCard:
    """The card asking about this uncertainty: the one that already holds its facts, or a new one."""
    memories = [m for m in (record.memory_a, record.memory_b) if m is not None]
    with transaction.atomic():
        existing = card_holding(memories)
        if existing is not None:
            return existing
        if record.state not in OPEN_STATES:
            raise ConflictError(f"this uncertainty is already {record.state}")
        text = record.memory_a.text.strip().rstrip(".!?")
        question = (
            f'Can you confirm that "{text}"?'
            if record.uncertainty_type == UncertaintyType.UNVERIFIED
            else f'Is it still true that "{text}"?'
        )
        tracker = Tracker()
        card = card_create(
            tracker,
            kind=CARD_KIND[UncertaintyType(record.uncertainty_type)],
            memories=memories,
            asked=record.memory_a,
            question=question,
            detector=f"{record.detection_context}:{record.detector or 'uncertainty'}",
            evidence={"uncertainty": str(record.pk), "reasoning": record.reasoning},
            severity=record.severity,
            uncertainty=record,
        )
        if card is None:  # raced: another request carded it
            found = card_holding(memories)
            if found is None:
                raise ConflictError("could not open a card for this uncertainty")
            return found
        record_event(
            workspace=record.workspace,
            actor=actor,
            verb="conflict.card",
            memory=record.memory_a,
            changes=tracker.changes,
            reason=f"opened from {record.uncertainty_type} uncertainty {record.pk}",
        )
    return card
