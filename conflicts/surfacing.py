"""Surfacing: which open uncertainties an agent should bring up for a topic.

Uncertainties are raised when the conversation makes them relevant, not
eagerly: an agent about to talk about a topic asks which disputes touch it,
and weaves the question into its reply. Each surfacing is counted; after
``NAG_LIMIT`` surfacings nobody resolved, the severity drops one level so the
hub stops nagging and decay can take its course (the seed's anti-nag rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from conflicts.models import SEVERITY_RANK, Severity, Uncertainty, UncertaintyState
from memories.audit import Actor, Tracker, record_event
from memories.embeddings import embed_text
from workspaces.models import Workspace

NAG_LIMIT = 3
MIN_RELEVANCE = 0.35
LOWER_SEVERITY = {
    Severity.CRITICAL: Severity.HIGH,
    Severity.HIGH: Severity.MEDIUM,
    Severity.MEDIUM: Severity.LOW,
    Severity.LOW: Severity.LOW,
}


@dataclass
class Surfaced:
    uncertainty: Uncertainty
    relevance: float
    question: str


def uncertainties_surface(*, workspace: Workspace, topic: str, actor: Actor, limit: int = 5) -> list[Surfaced]:
    """Open uncertainties relevant to ``topic``, most severe first; each one counted as surfaced."""
    vector = embed_text(topic)
    records = list(
        Uncertainty.objects.filter(workspace=workspace, state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED])
        .filter(Q(memory_a__embedding__isnull=False))
        .select_related("memory_a", "memory_b")
    )
    scored = []
    for record in records:
        sides = [m for m in (record.memory_a, record.memory_b) if m is not None and m.embedding is not None]
        relevance = max(float(np.dot(vector, np.asarray(m.embedding))) for m in sides)
        if relevance >= MIN_RELEVANCE:
            scored.append((record, relevance))
    scored.sort(key=lambda item: (-SEVERITY_RANK[Severity(item[0].severity)], -item[1]))
    chosen = scored[:limit]
    if not chosen:
        return []
    with transaction.atomic():
        tracker = Tracker()
        now = timezone.now()
        for record, _ in chosen:
            count = record.surfaced_count + 1
            values: dict[str, object] = {
                "surfaced_count": count,
                "last_surfaced_at": now,
                "state": UncertaintyState.SURFACED,
            }
            if count >= NAG_LIMIT and count % NAG_LIMIT == 0:
                values["severity"] = LOWER_SEVERITY[Severity(record.severity)]
            tracker.update(record, **values)
            record.save()
        record_event(
            workspace=workspace,
            actor=actor,
            verb="uncertainty.surface",
            changes=tracker.changes,
            reason=f"topic: {topic[:200]}",
        )
    return [Surfaced(record, relevance, clarifying_question(record)) for record, relevance in chosen]


def clarifying_question(record: Uncertainty) -> str:
    a, b = record.memory_a, record.memory_b
    if b is None:
        return f'Can you confirm that "{a.text}"?'
    return f'Earlier I noted "{b.text}", but also "{a.text}". Which one is true now?'
