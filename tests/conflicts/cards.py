"""Conflict cards for review tests, made the way detection makes them."""

from __future__ import annotations

import datetime as dt
from typing import Any

from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import CardKind, ConflictCard
from conflicts.services import card_create, conflict_resolve
from memories.audit import Actor, Tracker, record_event
from memories.models import Memory
from tests.factories import memory
from workspaces.models import Workspace

DETECTOR = Actor.system("detector")


def day(n: int) -> dt.datetime:
    return dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC) + dt.timedelta(days=n)


def pair_card(
    workspace: Workspace,
    older: str = "The user is vegetarian",
    newer: str = "The user's favourite dish is steak",
    *,
    relation: Relation = Relation.TRUE_CONTRADICTION,
    kind: str = "trait",
    start: int = 0,
    reasons: tuple[str, ...] = ("scripted",),
    **fields: Any,
) -> tuple[ConflictCard, Memory, Memory]:
    """Two facts and the card detection raises about them (asked: the older one)."""
    # Both about one subject, as the embedding step would find for a real pair: the review tests
    # are about what an answer does, not about which pairs may be carded (test_subject_guard.py).
    fields = {**ONE_SUBJECT, "speech_act": "claim", **fields}
    a = memory(workspace=workspace, text=older, kind=kind, valid_from=day(start), **fields)
    b = memory(workspace=workspace, text=newer, kind=kind, valid_from=day(start + 1), **fields)
    # Sure enough to card at any tolerance, not sure enough to supersede silently.
    probability = 0.95 if relation == Relation.TRUE_CONTRADICTION else 0.8
    verdict = Verdict(relation=relation, probability=probability, tier="rules", current="b", reasons=reasons)
    resolution = conflict_resolve(older=a, newer=b, verdict=verdict, context="ingestion", actor=DETECTOR)
    assert resolution.card is not None, resolution.action
    return resolution.card, a, b


ONE_SUBJECT = {"subject_entity": "the subject", "subject_attribute": "value"}


def auto_supersede(
    workspace: Workspace,
    older: str,
    newer: str,
    *,
    days_apart: int = 2,
    start: int = 0,
    probability: float = 0.97,
    reasons: tuple[str, ...] = (),
    **fields: Any,
) -> tuple[Memory, Memory]:
    """Two facts of one subject and the automatic supersede a sure temporal-change verdict makes of them."""
    fields = {**ONE_SUBJECT, **fields}
    a = memory(workspace=workspace, text=older, valid_from=day(start), **fields)
    b = memory(workspace=workspace, text=newer, valid_from=day(start + days_apart), **fields)
    sure = Verdict(
        relation=Relation.TEMPORAL_CHANGE, probability=probability, tier="rules", current="b", reasons=reasons
    )
    resolution = conflict_resolve(older=a, newer=b, verdict=sure, context="ingestion", actor=DETECTOR)
    assert resolution.action == "superseded", resolution.action
    return a, b


def reversal_card(workspace: Workspace, texts: list[str], **fields: Any) -> tuple[ConflictCard, list[Memory]]:
    """A card over 3+ facts (a reversal), asking about the first."""
    facts = [memory(workspace=workspace, text=t, valid_from=day(i), **fields) for i, t in enumerate(texts)]
    tracker = Tracker()
    card = card_create(
        tracker,
        kind=CardKind.REVERSAL,
        memories=facts,
        asked=facts[0],
        question=f'Is it still true that "{texts[0]}"?',
        detector="narrative:offline",
        evidence={"reasons": ["scripted reversal"]},
        severity="high",
    )
    assert card is not None
    record_event(workspace=workspace, actor=DETECTOR, verb="conflict.card", changes=tracker.changes, automatic=True)
    return card, facts
