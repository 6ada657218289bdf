"""Consolidation (nightly, incremental): near-duplicates become one fact with their whole lineage (seed 002).

Only facts changed since the last completed run are read (``updated_at``,
indexed). Each one's near-duplicates — same workspace and kind, live, cosine
above 0.85 — form a cluster with it. A cluster merges automatically when
nothing cheap says its facts disagree (``signals``: slots, polarity, negation,
numbers, a recorded dispute), no person undid a merge of its facts, and one of
them is more confident than 0.6: the most confident fact wins (the oldest among
equals), its ``derived_from`` lineage becomes the union of the cluster's,
evidence counts add up, and the others become ``merged`` with ``merged_into``
the winner (``memories.services.apply_merge``). One automatic ``upkeep.merge``
event per cluster: it shows on Decisions with Confirm/Revert.

The other clusters are ambiguous: their changed fact goes through detection
with ``DetectionContext.CONSOLIDATION`` (the LLM tier where one is configured
and unsure, otherwise the offline tiers, which card what they cannot settle),
at most ``MEMORYHUB_CONSOLIDATION_MAX_AMBIGUOUS`` per cycle.
"""

from __future__ import annotations

import datetime as dt
import uuid

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from pgvector.django import CosineDistance

from conflicts import hooks
from conflicts.detection.pipeline import detect_and_resolve
from conflicts.models import DetectionContext
from conflicts.services import merge_winner
from conflicts.upkeep import signals
from conflicts.upkeep.runs import Cycle, last_started
from memories.audit import Actor, Tracker, record_event
from memories.models import Event, Memory, Status
from memories.services import apply_merge
from workspaces.models import Workspace

ACTOR = Actor.system("consolidation")
NEIGHBOURS = 10
MERGE_VERBS = ("upkeep.merge", "conflict.merge_duplicate")


def _changed(cycle: Cycle, since: dt.datetime | None) -> QuerySet[Memory]:
    facts = Memory.objects.filter(status=Status.ACTIVE, embedding__isnull=False, superseded_by__isnull=True)
    if since is not None:
        facts = facts.filter(updated_at__gte=since)
    return facts.filter(workspace_id=cycle.workspace_id) if cycle.workspace_id is not None else facts


def run_consolidation(cycle: Cycle) -> None:
    since = last_started("consolidation", cycle.workspace_id)
    cycle.total(min(_changed(cycle, since).count(), settings.MEMORYHUB_UPKEEP_MAX_ROWS))
    ambiguous: list[uuid.UUID] = []
    after: tuple[dt.datetime, str] | None = None
    done = 0
    while done < settings.MEMORYHUB_UPKEEP_MAX_ROWS:
        read, after = consolidation_batch(cycle, since, after, ambiguous)
        if not read:
            break
        done += read
    _check_ambiguous(cycle, ambiguous[: settings.MEMORYHUB_CONSOLIDATION_MAX_AMBIGUOUS])
    cycle.note(ambiguous=len(ambiguous))


def consolidation_batch(
    cycle: Cycle, since: dt.datetime | None, after: tuple[dt.datetime, str] | None, ambiguous: list[uuid.UUID]
) -> tuple[int, tuple[dt.datetime, str] | None]:
    facts = _changed(cycle, since).filter(updated_at__lte=cycle.now)
    if after is not None:
        facts = facts.filter(Q(updated_at__gt=after[0]) | Q(updated_at=after[0], id__gt=after[1]))
    batch = list(
        facts.order_by("updated_at", "id").only("id", "updated_at")[
            : max(1, settings.MEMORYHUB_UPKEEP_BATCH_SIZE // 10)
        ]
    )
    if not batch:
        return 0, after
    merged = 0
    for row in batch:
        # One transaction per cluster: a kill mid-batch leaves whole merges, never half of one.
        with transaction.atomic():
            outcome = _consolidate(row.pk)
            if outcome == "ambiguous":
                ambiguous.append(row.pk)
            merged += outcome == "merged"
            cycle.progress(read=1, changed=int(outcome == "merged"))
    last = batch[-1]
    return len(batch), (last.updated_at, str(last.pk))


def cluster_of(fact: Memory) -> list[tuple[Memory, float]]:
    """``fact``'s near-duplicates with their cosine similarity, most similar first."""
    vector = np.asarray(fact.embedding, dtype=np.float32)
    near = (
        Memory.objects.filter(
            workspace_id=fact.workspace_id,
            kind=fact.kind,
            status=Status.ACTIVE,
            superseded_by__isnull=True,
            embedding__isnull=False,
        )
        .exclude(pk=fact.pk)
        .annotate(distance=CosineDistance("embedding", vector))
        .defer("embedding", "search_vector")
        .order_by("distance")[:NEIGHBOURS]
    )
    threshold = settings.MEMORYHUB_CONSOLIDATION_SIMILARITY
    return [(m, 1 - float(m.distance)) for m in near if 1 - float(m.distance) > threshold]


def _consolidate(fact_id: uuid.UUID) -> str:
    """Merge ``fact_id``'s cluster if it is clearly one fact said twice; "merged", "ambiguous" or "none"."""
    fact = Memory.objects.select_for_update(skip_locked=True).filter(pk=fact_id, status=Status.ACTIVE).first()
    if fact is None or fact.embedding is None or fact.superseded_by_id is not None:
        return "none"
    near = cluster_of(fact)
    if not near:
        return "none"
    ids = [fact.pk, *(m.pk for m, _ in near)]
    locked = {m.pk: m for m in Memory.objects.select_for_update(skip_locked=True).filter(pk__in=ids).order_by("pk")}
    members = [locked[pk] for pk in ids if pk in locked and locked[pk].status == Status.ACTIVE]
    if len(members) < 2 or fact.pk not in {m.pk for m in members}:
        return "none"  # the rest is being changed by someone else: the next run sees it
    similarity = {fact.pk: 1.0, **{m.pk: s for m, s in near}}
    winner = merge_winner(members)
    disputed = signals.disputed_pairs(ids)
    unmerged = _merges_undone(ids)
    losers = []
    ambiguous = False
    for member in members:
        if member.pk == winner.pk:
            continue
        if (
            signals.disagreement(winner, member)
            or frozenset((winner.pk, member.pk)) in disputed
            or member.pk in unmerged
            or winner.pk in unmerged
        ):
            ambiguous = True
            continue
        losers.append(member)
    if not losers or max(m.confidence for m in [winner, *losers]) <= settings.MEMORYHUB_CONSOLIDATION_MIN_CONFIDENCE:
        return "ambiguous" if ambiguous or losers else "none"
    tracker = Tracker()
    apply_merge(tracker, winner=winner, losers=losers, actor=ACTOR)
    texts = "; ".join(f"{m.text!r} ({m.confidence:.2f}, cosine {similarity.get(m.pk, 0):.2f})" for m in losers)
    hooks.announce_decision(
        record_event(
            workspace=Workspace(pk=winner.workspace_id),
            actor=ACTOR,
            verb="upkeep.merge",
            memory=winner,
            changes=tracker.changes,
            automatic=True,
            reason=(
                f"near-duplicates above {settings.MEMORYHUB_CONSOLIDATION_SIMILARITY}: kept the most confident, "
                f"{winner.text!r} ({winner.confidence:.2f}); merged {texts}"
            ),
        )
    )
    return "ambiguous" if ambiguous else "merged"


def _merges_undone(ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Facts a person un-merged: consolidation does not merge them again on its own."""
    undone = Event.objects.filter(verb__in=[f"{v}.undo" for v in MERGE_VERBS], undoes__memory_id__in=ids).values_list(
        "undoes__changes", flat=True
    )
    found: set[uuid.UUID] = set()
    for changes in undone:
        for change in changes or []:
            if change.get("model") == "memories.memory":
                found.add(uuid.UUID(str(change["pk"])))
    return found & set(ids)


def _check_ambiguous(cycle: Cycle, fact_ids: list[uuid.UUID]) -> None:
    """Seed 000's check at consolidation time: detection decides what the cheap signals could not."""
    for fact_id in fact_ids:
        fact = Memory.objects.filter(pk=fact_id, status=Status.ACTIVE).first()
        if fact is None:
            continue
        results = detect_and_resolve(fact, context=DetectionContext.CONSOLIDATION, actor=ACTOR)
        acted = sum(1 for _, resolution in results if resolution.action != "none")
        cycle.progress(read=0, done=0, changed=acted)
