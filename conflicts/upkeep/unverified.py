"""Solo uncertainties (seed 000): unverified facts and stale ones.

- ``unverified``: a fact an agent inferred or researched starts ``uncertain``
  (``memories.services.memory_build``) and gets a solo ``unverified``
  uncertainty as soon as it is stored (``unverified_on_commit``, a hook) — the
  nightly job catches any the hook missed (imports, a crash). ``check-action``
  then asks before acting on it. A confirmation (reinforcement) settles it:
  ``evidence_resolved``, the fact reliable.
- ``stale``: a live fact with no evidence for ``MEMORYHUB_STALE_DAYS`` (90: well
  before default decay deprecates it at ~110 days) gets a solo ``stale``
  uncertainty, once.

Each record is created at most once per fact and type (open or settled), so a
second run changes nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Iterable

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from conflicts import hooks
from conflicts.models import (
    DetectionContext,
    ResolutionStrategy,
    Severity,
    Uncertainty,
    UncertaintyState,
    UncertaintyType,
)
from conflicts.reliability import reliability_lower, reliability_raise
from conflicts.services import UNCERTAINTY_FIELDS, surface_context
from conflicts.upkeep.runs import Cycle
from memories.audit import Actor, Tracker, record_event
from memories.hooks import FactReinforced, FactsEmbedded, FactsWaiting
from memories.models import LIVE_STATUSES, Memory, Reliability, Source
from workspaces.models import Workspace

logger = logging.getLogger(__name__)
ACTOR = Actor.system("unverified")
UNVERIFIED_SOURCES = (Source.INFERRED, Source.RESEARCHED)


def _without(kind: UncertaintyType) -> Exists:
    return Exists(Uncertainty.objects.filter(memory_a=OuterRef("pk"), memory_b__isnull=True, uncertainty_type=kind))


def _unverified_facts(ids: Iterable[uuid.UUID] | None = None, workspace_id: int | None = None) -> QuerySet[Memory]:
    facts = Memory.objects.filter(
        status__in=LIVE_STATUSES, source__in=UNVERIFIED_SOURCES, reinforcement_count=0, superseded_by__isnull=True
    ).exclude(_without(UncertaintyType.UNVERIFIED))
    if ids is not None:
        facts = facts.filter(pk__in=list(ids))
    return facts.filter(workspace_id=workspace_id) if workspace_id is not None else facts


def _stale_facts(now: dt.datetime, workspace_id: int | None = None) -> QuerySet[Memory]:
    cutoff = now - dt.timedelta(days=settings.MEMORYHUB_STALE_DAYS)
    facts = (
        Memory.objects.filter(status__in=LIVE_STATUSES, superseded_by__isnull=True)
        .annotate(evidence_time=Coalesce("evidence_at", "last_reinforced_at", "recorded_at"))
        .filter(evidence_time__lt=cutoff)
        .exclude(_without(UncertaintyType.STALE))
    )
    return facts.filter(workspace_id=workspace_id) if workspace_id is not None else facts


def _settled_unverified(workspace_id: int | None = None) -> QuerySet[Uncertainty]:
    records = Uncertainty.objects.filter(
        uncertainty_type=UncertaintyType.UNVERIFIED,
        state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED],
        memory_a__reinforcement_count__gt=0,
    )
    return records.filter(workspace_id=workspace_id) if workspace_id is not None else records


def unverified_on_commit(event: FactsWaiting | FactsEmbedded) -> None:
    """Receiver of the commit hooks: an inferred or researched fact gets its ``unverified`` record now.

    The facts are committed already; if this fails the nightly job records them.
    """
    try:
        with transaction.atomic():
            facts = list(
                _unverified_facts(event.memory_ids).select_for_update(skip_locked=True, of=("self",)).defer("embedding")
            )
            for fact in facts:
                _solo(
                    fact,
                    UncertaintyType.UNVERIFIED,
                    f"{fact.source} by {fact.agent or 'an agent'}; nobody confirmed it",
                )
    except DatabaseError:
        logger.exception("could not record unverified facts %s; the nightly job will", event.memory_ids[:5])


def unverified_on_reinforce(event: FactReinforced) -> None:
    """Receiver of ``fact_reinforced``: a confirmation settles the fact's ``unverified`` record."""
    unverified_settle_for(event.memory, event.actor)


def run_unverified(cycle: Cycle) -> None:
    unverified = _unverified_facts(workspace_id=cycle.workspace_id)
    stale = _stale_facts(cycle.now, cycle.workspace_id)
    settled = _settled_unverified(cycle.workspace_id)
    cycle.total(unverified.count() + stale.count() + settled.count())
    stale_why = f"no evidence for over {settings.MEMORYHUB_STALE_DAYS} days"
    for queryset, kind in ((unverified, UncertaintyType.UNVERIFIED), (stale, UncertaintyType.STALE)):
        done = 0
        while done < settings.MEMORYHUB_UPKEEP_MAX_ROWS:
            with transaction.atomic():
                batch = list(
                    queryset.select_for_update(skip_locked=True, of=("self",))
                    .defer("embedding")
                    .order_by("pk")[: settings.MEMORYHUB_UPKEEP_BATCH_SIZE]
                )
                for memory in batch:
                    why = f"{memory.source}; nobody confirmed it" if kind == UncertaintyType.UNVERIFIED else stale_why
                    _solo(memory, kind, why)
                cycle.progress(read=len(batch), changed=len(batch))
            if not batch:
                break
            done += len(batch)
    while True:
        with transaction.atomic():
            records = list(settled.select_for_update(skip_locked=True, of=("self",)).order_by("pk")[:200])
            for record in records:
                unverified_settle(record)
            cycle.progress(read=len(records), changed=len(records))
        if not records:
            break


def _solo(memory: Memory, kind: UncertaintyType, why: str) -> Uncertainty:
    tracker = Tracker()
    if kind == UncertaintyType.UNVERIFIED and reliability_lower(tracker, memory, Reliability.UNCERTAIN):
        memory.save(update_fields=["reliability"])
    record = Uncertainty.objects.create(
        workspace_id=memory.workspace_id,
        memory_a=memory,
        memory_a_kind=memory.kind,
        uncertainty_type=kind,
        severity=Severity.LOW,
        detection_context=DetectionContext.INGESTION if kind == UncertaintyType.UNVERIFIED else DetectionContext.DRIFT,
        detector=f"upkeep:{kind}",
        reasoning=why,
        surface_context=surface_context(memory, None),
    )
    tracker.created(record, UNCERTAINTY_FIELDS)
    hooks.announce_decision(
        record_event(
            workspace=Workspace(pk=memory.workspace_id),
            actor=ACTOR,
            verb="upkeep.unverified" if kind == UncertaintyType.UNVERIFIED else "upkeep.stale",
            memory=memory,
            changes=tracker.changes,
            automatic=True,
            reason=why,
        )
    )
    return record


def unverified_settle(record: Uncertainty, actor: Actor = ACTOR) -> None:
    """A confirmation came: the unverified record is resolved by evidence and the fact is reliable again."""
    memory = Memory.objects.select_for_update().get(pk=record.memory_a_id)
    tracker = Tracker()
    if reliability_raise(tracker, memory):
        memory.save(update_fields=["reliability"])
    tracker.update(
        record,
        state=UncertaintyState.RESOLVED,
        resolution_strategy=ResolutionStrategy.EVIDENCE_RESOLVED,
        resolution_detail=f"confirmed {memory.reinforcement_count} time(s)",
        resolved_at=timezone.now(),
    )
    record.save()
    hooks.announce_decision(
        record_event(
            workspace=Workspace(pk=memory.workspace_id),
            actor=actor,
            verb="upkeep.verified",
            memory=memory,
            changes=tracker.changes,
            automatic=True,
            reason="an unverified fact was confirmed",
        )
    )


def unverified_settle_for(memory: Memory, actor: Actor) -> int:
    """After ``memory`` was reinforced: settle its open ``unverified`` record, if any."""
    records = Uncertainty.objects.filter(
        Q(memory_a=memory),
        uncertainty_type=UncertaintyType.UNVERIFIED,
        state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED],
    )
    count = 0
    with transaction.atomic():
        for record in records.select_for_update():
            unverified_settle(record, actor)
            count += 1
    return count
