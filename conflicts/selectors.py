"""Reads of uncertainties, cards and the audit trail."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Prefetch, Q, QuerySet
from pgvector.django import CosineDistance

from conflicts.detection.rules import negation_count, tokens
from conflicts.models import CardFact, CardState, ConflictCard, DetectiveRun, Uncertainty
from memories.models import LIVE_STATUSES, Event, Link, Memory, Rel
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


@dataclass
class Conflict:
    """Seed 003's conflict: two similar memories, a duplicate or a contradiction, and why."""

    a: Memory
    b: Memory
    similarity: float
    kind: str  # "duplicate" | "contradiction"
    reason: str  # "polarity" | "negation_diff" | "kept_both" | "similar"


DUPLICATE_SIMILARITY = 0.95
FIND_NEIGHBOURS = 20


def conflicts_find(
    *, workspace: Workspace, memory: Memory | None = None, threshold: float = 0.8, limit: int = 50
) -> list[Conflict]:
    """Candidate conflicts (seed 003): pairs at cosine ≥ ``threshold``, same kind, sharing a tag or both untagged.

    A pair is a ``contradiction`` when the writers gave it opposite polarity, when
    only one side is negated, or when a person kept both on purpose (a
    ``contradicts`` link); otherwise a ``duplicate`` from 0.95 up. Superseded
    pairs are left out. Without ``memory``: the workspace's newest live facts'
    pairs, at most ``limit``.
    """
    live = Memory.objects.filter(
        workspace=workspace, status__in=LIVE_STATUSES, superseded_by__isnull=True, embedding__isnull=False
    )
    sources = [memory] if memory is not None else list(live.order_by("-recorded_at")[:limit])
    kept_both = {
        frozenset((src, dst))
        for src, dst in Link.objects.filter(workspace=workspace, rel=Rel.CONTRADICTS).values_list("src_id", "dst_id")
    }
    found: dict[frozenset[uuid.UUID], Conflict] = {}
    for source in sources:
        if source.embedding is None:
            continue
        vector = np.asarray(source.embedding, dtype=np.float32)
        near = (
            live.filter(kind=source.kind)
            .exclude(pk=source.pk)
            .annotate(distance=CosineDistance("embedding", vector))
            .defer("embedding", "search_vector")
            .order_by("distance")[:FIND_NEIGHBOURS]
        )
        for other in near:
            similarity = round(1 - float(other.distance), 4)
            pair = frozenset((source.pk, other.pk))
            if similarity < threshold or pair in found:
                continue
            if (source.tags or other.tags) and not set(source.tags) & set(other.tags):
                continue
            kind, reason = _conflict_kind(source, other, similarity, pair in kept_both)
            if kind:
                found[pair] = Conflict(source, other, similarity, kind, reason)
        if len(found) >= limit:
            break
    return sorted(found.values(), key=lambda c: -c.similarity)[:limit]


def _conflict_kind(a: Memory, b: Memory, similarity: float, kept_both: bool) -> tuple[str, str]:
    if kept_both:
        return "contradiction", "kept_both"
    if a.polarity * b.polarity == -1:
        return "contradiction", "polarity"
    if negation_count(tokens(a.text)) % 2 != negation_count(tokens(b.text)) % 2:
        return "contradiction", "negation_diff"
    if similarity >= DUPLICATE_SIMILARITY:
        return "duplicate", "similar"
    return "", ""
