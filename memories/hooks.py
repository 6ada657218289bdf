"""What ``memories`` announces, for the apps above it to act on.

``memories`` sits below ``conflicts`` and never imports it. When something
happens that a higher app must react to, a service announces it here, and the
app subscribes in its ``AppConfig.ready()`` — the way ``django.contrib.auth``
sends ``user_logged_in`` without knowing who listens. Unlike Django's signals
these are typed: a receiver takes the one event dataclass its hook carries.

Receivers run in the sender's thread, in the order they subscribed; an
exception in one propagates to the sender, as with ``Signal.send``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from memories.actors import Actor
    from memories.models import Memory

E = TypeVar("E")


class Hook(Generic[E]):
    def __init__(self, name: str) -> None:
        self.name = name
        self._receivers: list[Callable[[E], None]] = []

    def subscribe(self, receiver: Callable[[E], None]) -> None:
        """Add ``receiver``; subscribing the same function twice keeps one."""
        if receiver not in self._receivers:
            self._receivers.append(receiver)

    def announce(self, event: E) -> None:
        for receiver in list(self._receivers):
            receiver(event)

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, {len(self._receivers)} receivers)"


@dataclass(frozen=True)
class FactsWaiting:
    """Facts stored (or restored) without a vector; announced after their transaction committed."""

    memory_ids: list[uuid.UUID]


@dataclass(frozen=True)
class FactsEmbedded:
    """Facts turned active with a vector; announced after their transaction committed."""

    memory_ids: list[uuid.UUID]


@dataclass(frozen=True)
class FactReinforced:
    """Another agent or person confirmed a fact; announced after the change committed."""

    memory: Memory
    actor: Actor


@dataclass(frozen=True)
class FactsRetired:
    """Facts that stopped being current — superseded, forgotten, merged, decayed or deprecated.

    Announced by :func:`memories.audit.record_event` after the transaction that
    retired them committed, whichever service did it, so an app that holds
    questions about facts (conflict cards) can update or close them.
    """

    memory_ids: list[uuid.UUID]


@dataclass(frozen=True)
class FactsRestored:
    """Facts that are current again — a supersede, forget, merge or decay undone; announced after commit."""

    memory_ids: list[uuid.UUID]


facts_waiting: Hook[FactsWaiting] = Hook("facts_waiting")
facts_embedded: Hook[FactsEmbedded] = Hook("facts_embedded")
fact_reinforced: Hook[FactReinforced] = Hook("fact_reinforced")
facts_retired: Hook[FactsRetired] = Hook("facts_retired")
facts_restored: Hook[FactsRestored] = Hook("facts_restored")
