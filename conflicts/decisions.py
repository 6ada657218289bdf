"""The automatic decisions queue: every change the hub made on its own, to confirm or revert.

Reverting is ``event_undo`` with the reviewer's reason. Confirming changes no
fact; it records a ``decision.confirm`` event whose reason starts with
``confirms event #<id>`` so the queue shows the decision as looked at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, QuerySet

from memories.audit import Actor, record_event
from memories.models import Event, Memory
from memories.services import event_undo
from memoryhub.errors import ConflictError, NotFound
from workspaces.models import Workspace

CONFIRM_VERB = "decision.confirm"
_CONFIRMS = re.compile(r"^confirms event #(\d+)")

# What each automatic verb means, in the queue's words.
LABELS = {
    "conflict.temporal_supersede": "Superseded an older fact by a newer one",
    "conflict.merge_duplicate": "Merged a duplicate",
    "conflict.confidence_dominance": "Marked the weaker side of a contradiction uncertain",
    "conflict.evidence_resolve": "Settled a dispute by reinforcement",
    "card.close": "Closed a card whose facts no longer stand",
    "card.update": "Updated a card after one of its facts retired",
}


# Opening a card or noting an ambiguity decides nothing: those are answered in the inbox.
NOT_DECISIONS = ("conflict.card", "conflict.record")


def decisions_list(*, workspace: Workspace) -> QuerySet[Event]:
    """Automatic decisions that changed facts, newest first."""
    return (
        Event.objects.filter(workspace=workspace, automatic=True, undoes__isnull=True)
        .exclude(verb__in=NOT_DECISIONS)
        .select_related("memory")
        .order_by("-created_at", "-id")
    )


def decision_get(*, workspace: Workspace, event_id: int) -> Event:
    event = Event.objects.filter(workspace=workspace, pk=event_id, automatic=True).first()
    if event is None:
        raise NotFound("no automatic decision with this id in the workspace")
    return event


@dataclass
class DecisionRow:
    event: Event
    label: str
    memories: list[Memory]
    reverted_by: Event | None
    confirmed_by: Event | None

    @property
    def settled(self) -> bool:
        return self.reverted_by is not None or self.confirmed_by is not None


def decision_rows(*, workspace: Workspace, events: list[Event]) -> list[DecisionRow]:
    """The page's decisions with the facts they touched and whether someone reverted or confirmed them."""
    ids = [e.pk for e in events]
    reverts = {e.undoes_id: e for e in Event.objects.filter(undoes_id__in=ids).select_related("user")}
    confirms: dict[int, Event] = {}
    if ids:
        wanted = Q()
        for pk in ids:
            wanted |= Q(reason=f"confirms event #{pk}") | Q(reason__startswith=f"confirms event #{pk}:")
        for confirm in Event.objects.filter(workspace=workspace, verb=CONFIRM_VERB).filter(wanted):
            match = _CONFIRMS.match(confirm.reason)
            if match:
                confirms.setdefault(int(match.group(1)), confirm)
    memory_ids = {change["pk"] for e in events for change in e.changes if change.get("model") == "memories.memory"}
    memories = {
        str(m.pk): m for m in Memory.objects.filter(pk__in=memory_ids).only("id", "text", "reliability", "status")
    }
    rows = []
    for event in events:
        touched = []
        for change in event.changes:
            if change.get("model") == "memories.memory":
                found = memories.get(str(change["pk"]))
                if found is not None and found not in touched:
                    touched.append(found)
        rows.append(
            DecisionRow(
                event, LABELS.get(event.verb, event.verb), touched, reverts.get(event.pk), confirms.get(event.pk)
            )
        )
    return rows


def decision_revert(*, event: Event, actor: Actor, reason: str = "") -> Event:
    """Undo an automatic decision, recording why (409 when a later change blocks it)."""
    return event_undo(event=event, actor=actor, reason=reason or "reverted from the automatic decisions queue")


def decision_confirm(*, event: Event, actor: Actor, note: str = "") -> Event:
    """Record that a person checked an automatic decision and agrees with it."""
    with transaction.atomic():
        Event.objects.select_for_update().filter(pk=event.pk).first()
        if Event.objects.filter(undoes=event).exists():
            raise ConflictError("this decision was reverted; there is nothing to confirm")
        prefix = f"confirms event #{event.pk}"
        already = Event.objects.filter(workspace_id=event.workspace_id, verb=CONFIRM_VERB).filter(
            Q(reason=prefix) | Q(reason__startswith=prefix + ":")
        )
        if already.exists():
            raise ConflictError("this decision was already confirmed")
        return record_event(
            workspace=event.workspace,
            actor=actor,
            verb=CONFIRM_VERB,
            memory=event.memory,
            reason=prefix + (f": {note}" if note else ""),
        )
