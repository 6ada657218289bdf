"""Writing the audit trail: one Event per state change, in the same transaction.

Services describe what they changed as :class:`RowChange` values; the Event
stores them as JSON so that an undo can put every touched row back.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import models, transaction

from memories import hooks
from memories.actors import Actor
from memories.models import Event, Memory

if TYPE_CHECKING:
    from workspaces.models import Workspace

__all__ = ["Actor", "RowChange", "Tracker", "record_event", "retired_memory_ids", "snapshot"]


def to_json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, models.Model):
        return to_json_value(value.pk)
    if hasattr(value, "tolist"):  # numpy arrays (embeddings) are never audited in full
        return None
    return value


def snapshot(instance: models.Model, fields: list[str]) -> dict[str, Any]:
    """The audited values of ``fields`` (foreign keys by their ``*_id``)."""
    values: dict[str, Any] = {}
    for name in fields:
        field = instance._meta.get_field(name)
        attname = getattr(field, "attname", name)
        values[attname] = to_json_value(getattr(instance, attname))
    return values


@dataclass
class RowChange:
    instance: models.Model
    op: str  # "create" | "update" | "delete"
    before: dict[str, Any]
    after: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.instance._meta.label_lower,
            "pk": to_json_value(self.instance.pk),
            "op": self.op,
            "before": self.before,
            "after": self.after,
        }


class Tracker:
    """Records the before/after of the fields a service sets on a row."""

    def __init__(self) -> None:
        self.changes: list[RowChange] = []

    def update(self, instance: models.Model, **values: Any) -> list[str]:
        """Set ``values`` on ``instance``, remember the change, return the changed field names."""
        fields = list(values)
        before = snapshot(instance, fields)
        for name, value in values.items():
            setattr(instance, name, value)
        after = snapshot(instance, fields)
        changed = [f for f in fields if before[_attname(instance, f)] != after[_attname(instance, f)]]
        if changed:
            self.changes.append(
                RowChange(
                    instance,
                    "update",
                    {k: v for k, v in before.items() if k in {_attname(instance, f) for f in changed}},
                    {k: v for k, v in after.items() if k in {_attname(instance, f) for f in changed}},
                )
            )
        return changed

    def created(self, instance: models.Model, fields: list[str]) -> None:
        self.changes.append(RowChange(instance, "create", {}, snapshot(instance, fields)))

    def deleted(self, instance: models.Model, fields: list[str]) -> None:
        self.changes.append(RowChange(instance, "delete", snapshot(instance, fields), {}))


def _attname(instance: models.Model, name: str) -> str:
    return str(getattr(instance._meta.get_field(name), "attname", name))


def record_event(
    *,
    workspace: Workspace,
    actor: Actor,
    verb: str,
    memory: Memory | None = None,
    changes: list[RowChange] | None = None,
    reason: str = "",
    automatic: bool = False,
    undoes: Event | None = None,
) -> Event:
    """Append an Event; call inside the transaction that made the change.

    Facts the change retired are announced on ``hooks.facts_retired`` once the
    transaction commits, and facts it made current again (an undo) on
    ``hooks.facts_restored`` (every state change passes through here, so no
    service can retire or restore a fact without the announcement).
    """
    retired = retired_memory_ids(changes or [])
    if retired:
        transaction.on_commit(lambda: hooks.facts_retired.announce(hooks.FactsRetired(retired)))
    restored = restored_memory_ids(changes or [])
    if restored:
        transaction.on_commit(lambda: hooks.facts_restored.announce(hooks.FactsRestored(restored)))
    return Event.objects.create(
        workspace=workspace,
        actor_type=actor.type,
        actor=actor.name,
        agent_key=actor.agent_key,
        user=actor.user,
        verb=verb,
        memory=memory,
        changes=[change.as_json() for change in changes or []],
        reason=reason,
        automatic=automatic,
        undoes=undoes,
    )


def record_events(
    *,
    workspace: Workspace,
    actor: Actor,
    verb: str,
    entries: list[tuple[Memory, list[RowChange]]],
    reason: str = "",
) -> list[Event]:
    """Append one Event per ``(memory, changes)`` in one INSERT (a batch commit's ``memory.create`` rows).

    The same rows ``record_event`` writes, in the same order; one statement instead of one per fact.
    """
    return Event.objects.bulk_create(
        [
            Event(
                workspace=workspace,
                actor_type=actor.type,
                actor=actor.name,
                agent_key=actor.agent_key,
                user=actor.user,
                verb=verb,
                memory=memory,
                changes=[change.as_json() for change in changes],
                reason=reason,
            )
            for memory, changes in entries
        ]
    )


_LIVE = {"pending_embed", "active"}


def retired_memory_ids(changes: list[RowChange]) -> list[uuid.UUID]:
    """Memories that a change took out of the current set: a live status left, or a successor set."""
    return [
        pk
        for pk, before, after in _memory_updates(changes)
        if ("status" in after and after["status"] not in _LIVE and before.get("status") in _LIVE)
        or (after.get("superseded_by_id") is not None and before.get("superseded_by_id") is None)
    ]


def restored_memory_ids(changes: list[RowChange]) -> list[uuid.UUID]:
    """Memories that a change put back into the current set: a live status regained, or a successor cleared."""
    return [
        pk
        for pk, before, after in _memory_updates(changes)
        if ("status" in after and after["status"] in _LIVE and before.get("status") not in (None, *_LIVE))
        or ("superseded_by_id" in after and after["superseded_by_id"] is None and before.get("superseded_by_id"))
    ]


def _memory_updates(changes: list[RowChange]) -> list[tuple[uuid.UUID, dict[str, Any], dict[str, Any]]]:
    return [
        (change.instance.pk, change.before, change.after)
        for change in changes
        if change.op == "update" and isinstance(change.instance, Memory)
    ]
