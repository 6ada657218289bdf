"""Confidence upkeep (nightly): evidence accumulation and the contradiction penalty (seed 002).

- Evidence: a fact recorded since the last run supports each older live fact it
  is at least 0.75 similar to (and does not disagree with, ``signals``): the
  supported fact's evidence confidence closes 5 % of its gap to 1, its evidence
  time moves to the supporter's, and a ``derived_from`` link records it — the
  link is also what makes a second run skip the pair. Near-duplicates of the
  same kind (above the consolidation threshold) are left to consolidation,
  which merges them.
- Penalty: both sides of an open contradiction lose 50 % of their evidence
  confidence, once per contradiction (``Uncertainty.penalized_at``). Answering
  its card lifts the penalty from the facts kept (``penalty_lift``).

Time decay and the thresholds are the decay job's (``decay.py``); this job ends
with a decay pass over the facts it changed.
"""

from __future__ import annotations

import datetime as dt
import uuid

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from pgvector.django import CosineDistance

from conflicts import hooks
from conflicts.models import Uncertainty, UncertaintyState, UncertaintyType
from conflicts.upkeep import formulas, signals
from conflicts.upkeep.decay import decay_batch
from conflicts.upkeep.runs import Cycle, last_started
from memories.audit import Actor, Tracker, record_event
from memories.models import LIVE_STATUSES, Link, Memory, Status
from memories.services import apply_link, memory_decay_due_now
from workspaces.models import Workspace

ACTOR = Actor.system("confidence")
NEIGHBOURS = 10
FIRST_RUN_WINDOW = dt.timedelta(days=1)


def run_confidence(cycle: Cycle) -> None:
    since = last_started("confidence", cycle.workspace_id) or cycle.now - FIRST_RUN_WINDOW
    new = _new_facts(cycle, since)
    open_clashes = _clashes(cycle)
    cycle.total(min(new.count(), settings.MEMORYHUB_UPKEEP_MAX_ROWS) + open_clashes.count())
    after: tuple[dt.datetime, str] | None = None
    done = 0
    while done < settings.MEMORYHUB_UPKEEP_MAX_ROWS:
        batch, after = evidence_batch(cycle, since, after)
        if not batch:
            break
        done += batch
    while penalty_batch(cycle):
        pass
    # Evidence and penalties made the changed facts due (memory_decay_due_now): recompute them now.
    while decay_batch(cycle):
        pass


# ---------------------------------------------------------------- evidence accumulation


def _new_facts(cycle: Cycle, since: dt.datetime) -> QuerySet[Memory]:
    facts = Memory.objects.filter(status=Status.ACTIVE, embedding__isnull=False, recorded_at__gte=since)
    return facts.filter(workspace_id=cycle.workspace_id) if cycle.workspace_id is not None else facts


def evidence_batch(
    cycle: Cycle, since: dt.datetime, after: tuple[dt.datetime, str] | None
) -> tuple[int, tuple[dt.datetime, str] | None]:
    """Count one batch of new facts as evidence for what they support, in one transaction."""
    facts = _new_facts(cycle, since)
    if after is not None:
        facts = facts.filter(Q(recorded_at__gt=after[0]) | Q(recorded_at=after[0], id__gt=after[1]))
    batch = list(facts.order_by("recorded_at", "id")[: max(1, settings.MEMORYHUB_UPKEEP_BATCH_SIZE // 10)])
    if not batch:
        return 0, after
    changed = 0
    with transaction.atomic():
        support: dict[uuid.UUID, list[Memory]] = {}
        supported: dict[uuid.UUID, Memory] = {}
        for new in batch:
            for fact in supported_by(new):
                support.setdefault(fact.pk, []).append(new)
                supported.setdefault(fact.pk, fact)
        locked = {
            m.pk: m
            for m in Memory.objects.select_for_update()
            .filter(pk__in=list(supported), status=Status.ACTIVE)
            .order_by("pk")
        }
        for pk, supporters in support.items():
            if pk in locked:
                changed += _add_evidence(locked[pk], supporters, cycle.now)
        cycle.progress(read=len(batch), changed=changed)
    last = batch[-1]
    return len(batch), (last.recorded_at, str(last.pk))


def supported_by(new: Memory) -> list[Memory]:
    """Older live facts ``new`` supports: similar enough, not disagreeing, not yet linked to it."""
    vector = np.asarray(new.embedding, dtype=np.float32)
    near = list(
        Memory.objects.filter(
            workspace_id=new.workspace_id,
            status=Status.ACTIVE,
            superseded_by__isnull=True,
            embedding__isnull=False,
            recorded_at__lt=new.recorded_at,
        )
        .exclude(pk=new.pk)
        .annotate(distance=CosineDistance("embedding", vector))
        .defer("embedding", "search_vector")
        .order_by("distance")[:NEIGHBOURS]
    )
    threshold = settings.MEMORYHUB_EVIDENCE_SIMILARITY
    duplicate = settings.MEMORYHUB_CONSOLIDATION_SIMILARITY
    candidates = [
        m
        for m in near
        if 1 - m.distance >= threshold
        and not (m.kind == new.kind and 1 - m.distance > duplicate)
        and not signals.disagreement(m, new)
    ]
    if not candidates:
        return []
    disputed = signals.disputed_pairs([new.pk, *(m.pk for m in candidates)])
    linked = set(
        Link.objects.filter(src_id__in=[m.pk for m in candidates], dst=new, rel="derived_from").values_list(
            "src_id", flat=True
        )
    )
    return [m for m in candidates if frozenset((m.pk, new.pk)) not in disputed and m.pk not in linked]


def _add_evidence(fact: Memory, supporters: list[Memory], now: dt.datetime) -> int:
    tracker = Tracker()
    linked = []
    anchor, at = formulas.evidence_of(fact)
    for supporter in supporters:
        link = Link.objects.filter(src=fact, dst=supporter, rel="derived_from").first()
        if link is not None:
            continue  # a parallel run counted it
        apply_link(tracker, src=fact, dst=supporter, rel="derived_from", actor=ACTOR)
        anchor = formulas.evidence_step(anchor)
        at = max(at, supporter.recorded_at)
        linked.append(supporter)
    if not linked:
        return 0
    anchor = round(anchor, 6)
    tracker.update(fact, evidence_confidence=anchor, evidence_at=at)
    tracker.update(fact, confidence=round(formulas.confidence_now(fact, now), 6))
    fact.save(update_fields=["evidence_confidence", "evidence_at", "confidence"])
    memory_decay_due_now(memory_ids=[fact.pk])
    hooks.announce_decision(
        record_event(
            workspace=Workspace(pk=fact.workspace_id),
            actor=ACTOR,
            verb="upkeep.evidence",
            memory=fact,
            changes=tracker.changes,
            automatic=True,
            reason=(
                f"{len(linked)} later fact(s) at similarity ≥ {settings.MEMORYHUB_EVIDENCE_SIMILARITY} support it: "
                f"c += {settings.MEMORYHUB_EVIDENCE_RATE}·(1 − c) each, now {anchor:.3f}"
            ),
        )
    )
    return 1


# ---------------------------------------------------------------- contradiction penalty


def _clashes(cycle: Cycle) -> QuerySet[Uncertainty]:
    clashes = Uncertainty.objects.filter(
        uncertainty_type=UncertaintyType.CONTRADICTION,
        state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED],
        memory_b__isnull=False,
        penalized_at__isnull=True,
    )
    return clashes.filter(workspace_id=cycle.workspace_id) if cycle.workspace_id is not None else clashes


def penalty_batch(cycle: Cycle) -> int:
    """Halve both sides of one batch of unpenalized open contradictions; how many it read."""
    clashes = _clashes(cycle)
    with transaction.atomic():
        batch = list(clashes.select_for_update(skip_locked=True).order_by("created_at")[:100])
        if not batch:
            return 0
        changed = 0
        for clash in batch:
            changed += _penalize(clash, cycle.now)
        cycle.progress(read=len(batch), changed=changed)
    return len(batch)


def _penalize(clash: Uncertainty, now: dt.datetime) -> int:
    ids = [pk for pk in (clash.memory_a_id, clash.memory_b_id) if pk is not None]
    sides = list(Memory.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
    # Marked whatever happens, so a clash is weighed once (an undone penalty is not applied again).
    Uncertainty.objects.filter(pk=clash.pk).update(penalized_at=now)
    if len(sides) != 2 or any(m.status not in LIVE_STATUSES for m in sides):
        return 0
    tracker = Tracker()
    for memory in sides:
        anchor, _ = formulas.evidence_of(memory)
        tracker.update(memory, evidence_confidence=round(formulas.contradiction_penalty(anchor), 6))
        tracker.update(memory, confidence=round(formulas.confidence_now(memory, now), 6))
        memory.save(update_fields=["evidence_confidence", "confidence"])
    memory_decay_due_now(memory_ids=[memory.pk for memory in sides])
    hooks.announce_decision(
        record_event(
            workspace=Workspace(pk=clash.workspace_id),
            actor=ACTOR,
            verb="upkeep.penalty",
            memory=sides[0],
            changes=tracker.changes,
            automatic=True,
            reason=(
                f"contradiction: {sides[0].text!r} vs {sides[1].text!r}; both keep "
                f"{settings.MEMORYHUB_CONTRADICTION_PENALTY:.0%} of their confidence until it is settled"
            ),
        )
    )
    return 2


def penalty_lift(tracker: Tracker, memory: Memory) -> None:
    """A person settled the clash in this fact's favour (or kept both): give back what the penalty took."""
    anchor, _ = formulas.evidence_of(memory)
    lifted = round(min(1.0, anchor / float(settings.MEMORYHUB_CONTRADICTION_PENALTY)), 6)
    tracker.update(memory, evidence_confidence=lifted)
    tracker.update(memory, confidence=round(formulas.confidence_now(memory, timezone.now()), 6))
    memory_decay_due_now(memory_ids=[memory.pk])
