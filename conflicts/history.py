"""What people did and what it changed: the review history.

Every answer to a card (by a person or an agent) and every change a signed-in
person made (confirming or reverting an automatic decision, setting the
tolerance, forgetting or superseding a fact by hand), newest first, each with
its effects read back from the event's recorded row changes: which facts were
superseded, forgotten, restored or rehabilitated, and how the tolerance moved.
The event log is the single source: nothing here is stored twice.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, QuerySet

from conflicts.models import ConflictCard
from memories.event_kinds import event_label
from memories.models import Event, Memory, Reliability, Status
from workspaces.models import Workspace

ANSWER_VERB = "card.answer"

# What an answer's choice means, in the words of the history.
CHOICES = {
    "yes": "still true",
    "no": "changed",
    "both": "both true (not a conflict)",
    "skip": "skipped",
}


def history_list(*, workspace: Workspace, answers_only: bool = False) -> QuerySet[Event]:
    """Answers to cards and changes made by signed-in people, newest first."""
    wanted = Q(verb=ANSWER_VERB) if answers_only else Q(verb=ANSWER_VERB) | Q(user__isnull=False)
    return (
        Event.objects.filter(workspace=workspace)
        .filter(wanted)
        .select_related("user", "undoes")
        .prefetch_related("undone_by")
        .order_by("-created_at", "-id")
    )


@dataclass
class Effect:
    """One change an event made: ``what`` happened to ``memory`` (or to the tolerance, with no memory)."""

    what: str
    memory: Memory | None = None
    detail: str = ""


@dataclass
class HistoryRow:
    event: Event
    label: str
    card: ConflictCard | None = None
    choice: str = ""
    note: str = ""
    effects: list[Effect] = field(default_factory=list)
    undone_by: Event | None = None


def history_rows(*, workspace: Workspace, events: list[Event]) -> list[HistoryRow]:
    """The page's events with their card, the answer given and every effect, in three queries."""
    card_ids: set[str] = set()
    memory_ids: set[str] = set()
    for event in events:
        for change in event.changes:
            if change.get("model") == "conflicts.conflictcard":
                card_ids.add(str(change["pk"]))
            elif change.get("model") == "conflicts.answer":
                card_ids.add(str(change.get("after", {}).get("card_id", "")))
            elif change.get("model") == "memories.memory":
                memory_ids.add(str(change["pk"]))
                superseded_by = change.get("after", {}).get("superseded_by_id")
                if superseded_by:
                    memory_ids.add(str(superseded_by))
    cards = {
        str(c.pk): c
        for c in ConflictCard.objects.filter(workspace=workspace, pk__in=_uuids(card_ids)).only(
            "id", "question", "state"
        )
    }
    memories = {
        str(m.pk): m
        for m in Memory.objects.filter(workspace=workspace, pk__in=_uuids(memory_ids)).only(
            "id", "text", "reliability", "status"
        )
    }
    return [_row(event, cards, memories) for event in events]


def _uuids(values: set[str]) -> list[uuid.UUID]:
    found = []
    for value in values:
        try:
            found.append(uuid.UUID(value))
        except ValueError:
            continue
    return found


def _row(event: Event, cards: dict[str, ConflictCard], memories: dict[str, Memory]) -> HistoryRow:
    row = HistoryRow(event=event, label=event_label(event.verb))
    undone = list(event.undone_by.all())
    row.undone_by = undone[0] if undone else None
    for change in event.changes:
        model = change.get("model")
        before: dict[str, Any] = change.get("before") or {}
        after: dict[str, Any] = change.get("after") or {}
        if model == "conflicts.answer" and change.get("op") == "create":
            row.choice = CHOICES.get(str(after.get("choice", "")), str(after.get("choice", "")))
            row.note = str(after.get("note") or "")
            row.card = row.card or cards.get(str(after.get("card_id", "")))
        elif model == "conflicts.conflictcard":
            row.card = row.card or cards.get(str(change["pk"]))
        elif model == "conflicts.tolerance" and "value" in after:
            row.effects.append(Effect("tolerance", detail=f"{before.get('value', 0):.2f} → {after['value']:.2f}"))
        elif model == "memories.memory":
            row.effects.extend(_memory_effects(memories.get(str(change["pk"])), before, after, memories))
    return row


def _memory_effects(
    memory: Memory | None, before: dict[str, Any], after: dict[str, Any], memories: dict[str, Memory]
) -> list[Effect]:
    if memory is None:
        return []  # a fact of another workspace never appears; a deleted one has nothing to show
    effects = []
    if after.get("superseded_by_id"):
        replacement = memories.get(str(after["superseded_by_id"]))
        effects.append(Effect("superseded", memory, f"by “{replacement.text}”" if replacement else ""))
    elif "superseded_by_id" in after and before.get("superseded_by_id"):
        effects.append(Effect("restored", memory, "no longer superseded"))
    if after.get("status") == Status.FORGOTTEN:
        effects.append(Effect("forgotten", memory))
    elif "status" in after and before.get("status") == Status.FORGOTTEN:
        effects.append(Effect("restored", memory, "no longer forgotten"))
    old, new = before.get("reliability"), after.get("reliability")
    moved = ""
    if new and old and not after.get("superseded_by_id") and new != Reliability.SUPERSEDED:
        moved = f"{old} → {new}"
    kept = "reinforcement_count" in after
    if kept:
        # The fact a reviewer chose as current: one line, with its rehabilitation when it had one.
        effects.append(Effect("kept", memory, "the current fact" + (f"; {moved}" if moved else "")))
    elif moved and old in (Reliability.CONTRADICTED, Reliability.UNCERTAIN) and new == Reliability.RELIABLE:
        effects.append(Effect("rehabilitated", memory, moved))
    elif moved:
        effects.append(Effect("reliability", memory, moved))
    return effects
