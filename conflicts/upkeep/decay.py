"""Decay (hourly): confidence fades with time since the last evidence, faster the less reliable a fact is.

Each due fact's confidence is recomputed from its evidence (``formulas.confidence_now``)
— a function of the evidence and the clock, never of the previous run, so running
twice changes nothing the second time. A fact that falls below 0.3 becomes
``deprecated`` (out of retrieval); below the floor it is retired as ``decayed`` and
its open uncertainties close as ``decayed`` (seed 000's natural decay). Each status
change is an automatic, undoable event; an undone one counts as a person's word that
the fact still holds, so decay restarts from the undo.

Only facts whose confidence is due (``decay_due_at``, indexed) are read, in batches
claimed with ``SKIP LOCKED``: a cycle costs what is due, not what is stored.
"""

from __future__ import annotations

import datetime as dt
import uuid

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from conflicts.models import ResolutionStrategy, Uncertainty, UncertaintyState
from conflicts.upkeep import formulas
from conflicts.upkeep.runs import Cycle
from memories.audit import Actor, Tracker, record_event
from memories.models import Event, Memory, Status
from workspaces.models import Workspace

ACTOR = Actor.system("decay")
DECAYING = (Status.ACTIVE, Status.DEPRECATED)
VERBS = {Status.DEPRECATED: "upkeep.deprecate", Status.DECAYED: "upkeep.decay"}
FIELDS = (
    "id",
    "workspace_id",
    "text",
    "confidence",
    "evidence_confidence",
    "evidence_at",
    "last_reinforced_at",
    "recorded_at",
    "reliability",
    "status",
    "decay_due_at",
)


def due(now: dt.datetime, workspace_id: int | None = None) -> QuerySet[Memory]:
    facts = Memory.objects.filter(status__in=DECAYING).filter(Q(decay_due_at__isnull=True) | Q(decay_due_at__lte=now))
    return facts.filter(workspace_id=workspace_id) if workspace_id is not None else facts


def run_decay(cycle: Cycle) -> None:
    cycle.total(min(due(cycle.now, cycle.workspace_id).count(), settings.MEMORYHUB_UPKEEP_MAX_ROWS))
    done = 0
    while done < settings.MEMORYHUB_UPKEEP_MAX_ROWS:
        read = decay_batch(cycle)
        if not read:
            break
        done += read


def decay_batch(cycle: Cycle, *, limit: int | None = None) -> int:
    """Recompute one batch of due facts in one transaction; how many it read (0: nothing was due)."""
    limit = limit or settings.MEMORYHUB_UPKEEP_BATCH_SIZE
    now = cycle.now
    with transaction.atomic():
        rows = list(due(now, cycle.workspace_id).select_for_update(skip_locked=True).only(*FIELDS)[:limit])
        if not rows:
            return 0
        vouched = _vouched_since(rows, now)
        changed = 0
        for memory in rows:
            since = vouched.get(memory.pk)
            confidence = round(formulas.confidence_now(memory, now, since=since), 6)
            status = _status_for(memory, confidence)
            if status != memory.status:
                changed += 1
                _retire(memory, status, confidence, since)
            elif abs(confidence - memory.confidence) > 1e-9:
                changed += 1
            memory.confidence = confidence
            if since is not None:
                memory.evidence_at = since
            memory.decay_due_at = (
                None if memory.status == Status.DECAYED else formulas.next_due(memory, confidence, now)
            )
        _write(rows)
        cycle.progress(read=len(rows), changed=changed)
    return len(rows)


def _status_for(memory: Memory, confidence: float) -> str:
    if confidence < settings.MEMORYHUB_DECAY_FLOOR:
        return Status.DECAYED
    if confidence < settings.MEMORYHUB_CONFIDENCE_DEPRECATE:
        return Status.DEPRECATED
    return memory.status  # a deprecated fact comes back only through new evidence or an undo


def _retire(memory: Memory, status: str, confidence: float, since: dt.datetime | None) -> None:
    tracker = Tracker()
    before = memory.confidence
    tracker.update(memory, status=status, confidence=confidence)
    anchor, at = formulas.evidence_of(memory)
    reason = (
        f"confidence {before:.3f} → {confidence:.3f}: {anchor:.3f} · exp(−{formulas.decay_rate(memory.reliability):.4f}"
        f" · days since evidence on {(since or at).date()}) "
        + (
            f"fell below the floor {settings.MEMORYHUB_DECAY_FLOOR}"
            if status == Status.DECAYED
            else f"fell below {settings.MEMORYHUB_CONFIDENCE_DEPRECATE}: out of retrieval"
        )
    )
    if status == Status.DECAYED:
        open_records = Uncertainty.objects.select_for_update().filter(
            Q(memory_a_id=memory.pk) | Q(memory_b_id=memory.pk),
            state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED],
        )
        for record in open_records:
            tracker.update(
                record,
                state=UncertaintyState.DECAYED,
                resolution_strategy=ResolutionStrategy.DECAYED,
                resolution_detail=f"{memory.text!r} decayed below the floor",
                resolved_at=timezone.now(),
            )
            record.save()
    record_event(
        workspace=Workspace(pk=memory.workspace_id),
        actor=ACTOR,
        verb="upkeep.deprecate" if Status(status) == Status.DEPRECATED else "upkeep.decay",
        memory=memory,
        changes=tracker.changes,
        automatic=True,
        reason=reason,
    )


def _vouched_since(rows: list[Memory], now: dt.datetime) -> dict[uuid.UUID, dt.datetime]:
    """Facts whose retirement a person undid: decay counts from the undo, as from new evidence."""
    undone = (
        Event.objects.filter(memory_id__in=[m.pk for m in rows], verb__in=[f"{v}.undo" for v in VERBS.values()])
        .values("memory_id")
        .annotate(at=Max("created_at"))
    )
    return {row["memory_id"]: row["at"] for row in undone}


def _write(rows: list[Memory]) -> None:
    """One UPDATE for the batch; ``updated_at`` stays, as decay is no edit (consolidation reads edits)."""
    table = connection.ops.quote_name(Memory._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {table} AS m SET confidence = v.confidence, status = v.status,
                decay_due_at = v.due, evidence_at = COALESCE(v.evidence_at, m.evidence_at)
            FROM (SELECT unnest(%s::uuid[]) AS id, unnest(%s::float8[]) AS confidence,
                         unnest(%s::text[]) AS status, unnest(%s::timestamptz[]) AS due,
                         unnest(%s::timestamptz[]) AS evidence_at) AS v
            WHERE m.id = v.id
            """,  # noqa: S608 - the table name comes from the model
            [
                [m.pk for m in rows],
                [m.confidence for m in rows],
                [m.status for m in rows],
                [m.decay_due_at for m in rows],
                [m.evidence_at for m in rows],
            ],
        )
