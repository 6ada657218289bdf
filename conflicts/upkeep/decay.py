"""Decay (hourly): confidence fades with time since the last evidence, faster the less reliable a fact is.

Each due fact's confidence is recomputed from its evidence (``formulas.confidence_now``)
— a function of the evidence and the clock, never of the previous run, so running
twice changes nothing the second time. A fact that falls below 0.3 becomes
``deprecated`` (out of retrieval); below the floor it is retired as ``decayed`` and
its open uncertainties close as ``decayed`` (seed 000's natural decay). Each status
change is an automatic, undoable event; an undone one counts as a person's word that
the fact still holds, so decay restarts from the undo.

Only facts whose confidence is due (``DecaySchedule``, indexed by due time) are read, in
batches claimed with ``SKIP LOCKED``, at most ``MEMORYHUB_DECAY_CYCLE_ROWS`` a cycle and the
most overdue first; a cycle that leaves facts due hands over to a successor (``run_decay``).
A cycle costs what it reads, not what is stored or due. The
due times live in that narrow side table so that the write on the wide memory row touches
no indexed column (``confidence``, ``evidence_at``; ``status`` keeps its value but for the
rare retirement) and PostgreSQL can make it a heap-only (HOT) update, with no new entry in
the HNSW graph or any other index of ``memories_memory``.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from conflicts import hooks
from conflicts.models import JobRun, JobState, ResolutionStrategy, Uncertainty, UncertaintyState
from conflicts.upkeep import formulas
from conflicts.upkeep.runs import CONTINUATION, Cycle
from memories.audit import Actor, Tracker, record_event
from memories.models import DecaySchedule, DueTime, Event, Memory, Status
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
)
# The heap page a row version sits on (its ctid's block number).
PAGE = RawSQL(f'("{Memory._meta.db_table}".ctid::text::point)[0]::bigint', [])  # noqa: S611 - the model's table
# A fact saved this long before the previous run started may still have been uncommitted then.
CATCH_UP_SLACK = dt.timedelta(hours=1)


def due(now: dt.datetime, workspace_id: int | None = None) -> QuerySet[Memory]:
    """Facts whose decay due time is empty or past, the most overdue first (empty first).

    Read through the due-time index (``DueTime``) in its order, so taking the first
    rows costs what is taken, not what is due. Facts that left decay (merged,
    forgotten) are among them until a batch drops their rows; a fact waiting for its
    vector waits for a later cycle.
    """
    facts = (
        Memory.objects.exclude(status=Status.PENDING_EMBED)
        .filter(decay_schedule__isnull=False)  # an inner join: a fact without a row is not due, whatever COALESCE says
        .alias(due=DueTime("decay_schedule__due_at"))
        .filter(due__lte=now)
    )
    if workspace_id is not None:
        facts = facts.filter(decay_schedule__workspace_id=workspace_id)
    return facts.order_by("due")


def _due_rows(cycle: Cycle) -> QuerySet[DecaySchedule]:
    """The due schedule rows alone: counted from the due-time index, without a visit to each memory row."""
    rows = DecaySchedule.objects.alias(due=DueTime("due_at")).filter(due__lte=cycle.now)
    return rows.filter(workspace_id=cycle.workspace_id) if cycle.workspace_id is not None else rows


def run_decay(cycle: Cycle) -> None:
    """One bounded cycle: at most ``MEMORYHUB_DECAY_CYCLE_ROWS`` due facts, the most overdue first.

    A cycle that read its whole bound while facts are still due hands over to a
    successor, which the task queues at once (trigger ``continuation``): an hour's
    due facts are drained in as many short cycles as they need, and a larger memory
    means more cycles, not longer ones. Only the chain's first cycle gives new facts
    their schedule rows; a continuation leaves that to the next hour. Each cycle notes
    how many schedule rows are still due after it.
    """
    bound = settings.MEMORYHUB_DECAY_CYCLE_ROWS
    details: dict[str, object] = {}
    if cycle.run.trigger != CONTINUATION:
        details["scheduled"] = schedule_unscheduled(cycle)
    cycle.total(_due_rows(cycle)[:bound].count())
    done = 0
    while done < bound:
        read = decay_batch(cycle, limit=min(settings.MEMORYHUB_UPKEEP_BATCH_SIZE, bound - done))
        if not read:
            break
        done += read
    details["still_due"] = _due_rows(cycle).count()
    if done >= bound and details["still_due"]:
        cycle.hand_over(**details)
    else:
        cycle.note(**details)


def decay_batch(cycle: Cycle, *, limit: int | None = None) -> int:
    """Recompute one batch of due facts in one transaction; how many it read (0: nothing was due).

    A fact that left decay (merged, forgotten) only loses its schedule row.
    """
    limit = limit or settings.MEMORYHUB_UPKEEP_BATCH_SIZE
    now = cycle.now
    with transaction.atomic():
        claimed = due(now, cycle.workspace_id).select_for_update(skip_locked=True, of=("self",)).only(*FIELDS)
        rows = _one_per_page(list(claimed.annotate(page=PAGE)[:limit]))
        if not rows:
            return 0
        vouched = _vouched_since(rows, now)
        due_at: dict[uuid.UUID, dt.datetime | None] = {}
        changed = 0
        for memory in rows:
            if memory.status not in DECAYING:
                due_at[memory.pk] = None
                continue
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
            due_at[memory.pk] = None if memory.status == Status.DECAYED else formulas.next_due(memory, confidence, now)
        _write(rows, due_at)
        cycle.progress(read=len(rows), changed=changed)
    return len(rows)


def _one_per_page(rows: list[Memory]) -> list[Memory]:
    """At most one fact per heap page in a batch; the others stay due for the next batch.

    A memory row is about 2 kB (the vector is stored inline), so a page has room
    for one more version of one of its rows. Within one transaction the old version
    cannot be pruned yet, and a second update on the same page would have to go to
    another page — a non-HOT update, re-inserting the row into every index. The next
    batch's transaction finds the page pruned and room again.
    """
    seen: set[int] = set()
    kept = []
    for memory in rows:
        page = memory.page  # type: ignore[attr-defined]
        if page not in seen:
            seen.add(page)
            kept.append(memory)
    return kept


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
    hooks.announce_decision(
        record_event(
            workspace=Workspace(pk=memory.workspace_id),
            actor=ACTOR,
            verb="upkeep.deprecate" if Status(status) == Status.DEPRECATED else "upkeep.decay",
            memory=memory,
            changes=tracker.changes,
            automatic=True,
            reason=reason,
        )
    )


def _vouched_since(rows: list[Memory], now: dt.datetime) -> dict[uuid.UUID, dt.datetime]:
    """Facts whose retirement a person undid: decay counts from the undo, as from new evidence."""
    undone = (
        Event.objects.filter(memory_id__in=[m.pk for m in rows], verb__in=[f"{v}.undo" for v in VERBS.values()])
        .values("memory_id")
        .annotate(at=Max("created_at"))
    )
    return {row["memory_id"]: row["at"] for row in undone}


def schedule_unscheduled(cycle: Cycle) -> int:
    """Give each decaying fact that has no schedule row one, due now; how many it gave.

    New facts (and facts written around the services, by COPY) have none. Only the
    facts saved since the previous run that scheduled started are looked at (the
    ``updated_at`` index), so this costs what was written in between, not what is
    stored; the first run ever looks at every fact once. Continuations do not
    schedule, so they do not count: a chain may outlast the hour's slack.
    """
    previous = JobRun.objects.filter(job="decay", state=JobState.DONE).exclude(trigger=CONTINUATION)
    if cycle.workspace_id is not None:
        previous = previous.filter(Q(workspace_id=cycle.workspace_id) | Q(workspace__isnull=True))
    else:
        previous = previous.filter(workspace__isnull=True)
    since = previous.exclude(pk=cycle.run.pk).order_by("-created_at").values_list("created_at", flat=True).first()
    where: list[str] = ["m.status = ANY(%s)"]
    params: list[Any] = [[str(s) for s in DECAYING]]
    if since is not None:
        where.append("m.updated_at >= %s")
        params.append(since - CATCH_UP_SLACK)
    if cycle.workspace_id is not None:
        where.append("m.workspace_id = %s")
        params.append(cycle.workspace_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {_table(DecaySchedule)} (memory_id, workspace_id, due_at)
            SELECT m.id, m.workspace_id, NULL FROM {_table(Memory)} AS m
            WHERE {" AND ".join(where)}
              AND NOT EXISTS (SELECT 1 FROM {_table(DecaySchedule)} AS s WHERE s.memory_id = m.id)
            ON CONFLICT (memory_id) DO NOTHING
            """,  # noqa: S608 - table names from the models, conditions from this function
            params,
        )
        return int(cursor.rowcount)


def _table(model: type[Memory] | type[DecaySchedule]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _write(rows: list[Memory], due_at: dict[uuid.UUID, dt.datetime | None]) -> None:
    """One UPDATE for the batch's changed rows, one upsert of their due times (a retired fact's row goes).

    ``updated_at`` stays, as decay is no edit (consolidation reads edits). No column
    the memory UPDATE sets is indexed, and ``status`` is rewritten with its own value
    but for a retirement, so PostgreSQL keeps the new row version on the same page
    (fillfactor 75) without touching any index: a heap-only update.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE {_table(Memory)} AS m SET confidence = v.confidence, status = v.status,
                evidence_at = COALESCE(v.evidence_at, m.evidence_at)
            FROM (SELECT unnest(%s::uuid[]) AS id, unnest(%s::float8[]) AS confidence,
                         unnest(%s::text[]) AS status, unnest(%s::timestamptz[]) AS evidence_at) AS v
            WHERE m.id = v.id AND (m.confidence <> v.confidence OR m.status <> v.status
                                   OR m.evidence_at IS DISTINCT FROM COALESCE(v.evidence_at, m.evidence_at))
            """,  # noqa: S608 - the table name comes from the model
            [
                [m.pk for m in rows],
                [m.confidence for m in rows],
                [m.status for m in rows],
                [m.evidence_at for m in rows],
            ],
        )
        scheduled = [m for m in rows if due_at[m.pk] is not None]
        cursor.execute(
            f"""
            INSERT INTO {_table(DecaySchedule)} (memory_id, workspace_id, due_at)
            SELECT unnest(%s::uuid[]), unnest(%s::int[]), unnest(%s::timestamptz[])
            ON CONFLICT (memory_id) DO UPDATE SET due_at = EXCLUDED.due_at
            """,
            [[m.pk for m in scheduled], [m.workspace_id for m in scheduled], [due_at[m.pk] for m in scheduled]],
        )
        retired = [m.pk for m in rows if due_at[m.pk] is None]
        if retired:
            cursor.execute(
                f"DELETE FROM {_table(DecaySchedule)} WHERE memory_id = ANY(%s::uuid[])",  # noqa: S608
                [retired],
            )
