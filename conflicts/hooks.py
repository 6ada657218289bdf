"""What ``conflicts`` announces, for the apps above it (webhooks) to act on.

The same pattern as ``memories/hooks.py``: a service announces a typed event
and never imports who listens; the listening app subscribes in its
``AppConfig.ready()``. Every event here is announced once its transaction has
committed (``announce_on_commit``), and a receiver's exception is logged, not
raised: a webhook that cannot be queued must never undo a decision or fail a
detection drain.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TypeVar

from django.db import transaction

from memories.event_kinds import DECISION_VERBS
from memories.hooks import Hook
from memories.models import Event

E = TypeVar("E")


@dataclass(frozen=True)
class CardOpened:
    """A new conflict card waits for a person (detection or the narrative detective opened it)."""

    workspace_id: int
    card_id: uuid.UUID


@dataclass(frozen=True)
class CardAnswered:
    """A card was decided: yes, no or both (a skip leaves it open and is not announced)."""

    workspace_id: int
    card_id: uuid.UUID
    answer_id: int
    event_id: int


@dataclass(frozen=True)
class DecisionMade:
    """The hub changed facts on its own (an automatic supersede, merge, dominance or evidence resolution)."""

    workspace_id: int
    event_id: int


@dataclass(frozen=True)
class JobFailed:
    """Background work of this workspace failed: a fact's conflict check, or a detective run.

    ``job`` names it (``detection``, ``detective``); ``subject`` is what it was working on
    (a memory id, a run id); the failed work is retried as the task's own rules say.
    """

    workspace_id: int
    job: str
    subject: str
    error: str


card_opened: Hook[CardOpened] = Hook("card_opened")
card_answered: Hook[CardAnswered] = Hook("card_answered")
decision_made: Hook[DecisionMade] = Hook("decision_made")
job_failed: Hook[JobFailed] = Hook("job_failed")


def announce_on_commit(hook: Hook[E], event: E) -> None:
    """Announce ``event`` after the current transaction commits (at once outside one); receivers' errors are logged."""
    transaction.on_commit(lambda: hook.announce(event), robust=True)


def announce_decision(event: Event) -> Event:
    """An automatic decision (a verb ``memories.event_kinds`` marks as one): announced once committed."""
    if event.automatic and event.verb in DECISION_VERBS:
        announce_on_commit(decision_made, DecisionMade(workspace_id=event.workspace_id, event_id=event.pk))
    return event
