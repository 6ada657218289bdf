"""Drift reconcile (every 15 minutes): a budgeted sample of facts checked against the rest (seed 000).

Never everything against everything: each cycle draws a pool of candidates
cheaply — the newest facts (an index walk) and a block sample of the table
(``TABLESAMPLE SYSTEM`` sized to about ``POOL`` rows, whatever the table's size)
— takes those of this cycle's topic partition first (topic rotation: scope, else slot,
else first tag, hashed into ``MEMORYHUB_DRIFT_TOPIC_PARTITIONS``; cycle *n* takes
partition *n* mod P; a partition short of the budget is topped up from the others),
and draws 10–20 of them weighted by recency, access and strength. The budget
follows the workspace's tolerance: an intolerant workspace (0.2) checks 20 facts
a cycle, a tolerant one (0.8) 10. Each sampled fact goes through detection
with ``DetectionContext.DRIFT``; what it finds is resolved,
carded or recorded as on ingestion (a pair already considered is not raised
again, so a second cycle over the same facts changes nothing).
"""

from __future__ import annotations

import datetime as dt
import math
import random
import uuid
import zlib
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from conflicts.detection.pipeline import detect_and_resolve
from conflicts.models import DetectionContext, JobRun, Tolerance
from conflicts.upkeep.runs import Cycle
from memories.audit import Actor
from memories.models import Memory, Status
from workspaces.models import Workspace

ACTOR = Actor.system("drift")
POOL = 200


@dataclass(frozen=True)
class Sampled:
    id: uuid.UUID
    topic: str
    recorded_at: dt.datetime
    access_count: int
    confidence: float
    importance: float


def budget(tolerance: float) -> int:
    """10 facts a cycle at the most tolerant (0.8), 20 at the least (0.2), linear between."""
    low, high = settings.MEMORYHUB_DRIFT_MIN_FACTS, settings.MEMORYHUB_DRIFT_MAX_FACTS
    share = (Tolerance.MAXIMUM - tolerance) / (Tolerance.MAXIMUM - Tolerance.MINIMUM)
    return round(low + (high - low) * min(1.0, max(0.0, share)))


def weight(fact: Sampled, now: dt.datetime) -> float:
    """Recency × access × strength: new, used and believed facts are the costly ones to have wrong."""
    age_days = max(0.0, (now - fact.recorded_at).total_seconds() / 86_400)
    recency = math.exp(-settings.MEMORYHUB_DECAY_LAMBDA * age_days)
    return (0.25 + recency) * (1 + math.log1p(fact.access_count)) * (0.1 + fact.confidence * (0.5 + fact.importance))


def partition(topic: str) -> int:
    return zlib.crc32(topic.encode()) % max(1, settings.MEMORYHUB_DRIFT_TOPIC_PARTITIONS)


def run_drift(cycle: Cycle) -> None:
    workspaces = (
        Workspace.objects.filter(pk=cycle.workspace_id)
        if cycle.workspace_id is not None
        else Workspace.objects.filter(memories__status=Status.ACTIVE).distinct()
    )
    # Topic rotation: the cycle's number picks the partition.
    turn = JobRun.objects.filter(job="drift").count()
    plan = []
    for workspace in workspaces:
        tolerance = Tolerance.objects.filter(workspace=workspace).values_list("value", flat=True).first()
        sample = drift_sample(workspace.pk, turn=turn, size=budget(tolerance or Tolerance.BASELINE), now=cycle.now)
        plan.append((workspace, sample))
    cycle.total(sum(len(s) for _, s in plan))
    cycle.note(partition=turn % max(1, settings.MEMORYHUB_DRIFT_TOPIC_PARTITIONS))
    for _workspace, sample in plan:
        for fact_id in sample:
            fact = Memory.objects.filter(pk=fact_id, status=Status.ACTIVE).first()
            if fact is None:
                cycle.progress(read=1)
                continue
            results = detect_and_resolve(fact, context=DetectionContext.DRIFT, actor=ACTOR)
            cycle.progress(read=1, changed=sum(1 for _, r in results if r.action != "none"))


def drift_sample(workspace_id: int, *, turn: int, size: int, now: dt.datetime) -> list[uuid.UUID]:
    """Up to ``size`` fact ids, drawn as the module says; the same turn of the same pool draws the same.

    The turn's topic partition comes first; when it holds fewer facts than the budget,
    the rest of the budget is drawn from the other partitions, so a cycle checks as
    many facts as its budget says whatever the spread of topics.
    """
    pool = list({f.id: f for f in _pool(workspace_id)}.values())
    wanted = turn % max(1, settings.MEMORYHUB_DRIFT_TOPIC_PARTITIONS)
    rng = random.Random(f"{workspace_id}:{turn}")
    chosen = _draw([f for f in pool if partition(f.topic) == wanted], size, rng, now)
    return chosen + _draw([f for f in pool if partition(f.topic) != wanted], size - len(chosen), rng, now)


def _draw(candidates: list[Sampled], size: int, rng: random.Random, now: dt.datetime) -> list[uuid.UUID]:
    """Up to ``size`` ids drawn without replacement, weighted by :func:`weight`."""
    chosen: list[uuid.UUID] = []
    remaining = list(candidates)
    while remaining and len(chosen) < size:
        weights = [weight(f, now) for f in remaining]
        pick = rng.choices(range(len(remaining)), weights=weights)[0]
        chosen.append(remaining.pop(pick).id)
    return chosen


def _pool(workspace_id: int) -> list[Sampled]:
    table = connection.ops.quote_name(Memory._meta.db_table)
    topic = "COALESCE(NULLIF(scope, ''), NULLIF(key, ''), tags[1], kind)"
    columns = f"id, {topic}, recorded_at, access_count, confidence, importance"
    live = "workspace_id = %s AND status = 'active' AND embedding IS NOT NULL AND superseded_by_id IS NULL"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {columns} FROM {table} WHERE {live} ORDER BY recorded_at DESC LIMIT %s",  # noqa: S608
            [workspace_id, POOL // 2],
        )
        rows = cursor.fetchall()
        cursor.execute("SELECT GREATEST(reltuples, 1) FROM pg_class WHERE oid = %s::regclass", [Memory._meta.db_table])
        estimate = float(cursor.fetchone()[0])
        percent = min(100.0, 100.0 * POOL / estimate)
        cursor.execute(
            f"SELECT {columns} FROM {table} TABLESAMPLE SYSTEM (%s) WHERE {live} LIMIT %s",  # noqa: S608
            [percent, workspace_id, POOL],
        )
        rows += cursor.fetchall()
    return [Sampled(r[0], r[1] or "", r[2], r[3], r[4], r[5]) for r in rows]
