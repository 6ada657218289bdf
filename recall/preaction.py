"""The pre-action check: is each memory safe to act on?

An agent about to act on remembered facts (send the invoice to the address it
remembers, deploy with the remembered flag) asks first. A memory that is
uncertain, contradicted, superseded or no longer live should not be acted on
silently: the answer says why, cuts the confidence the agent should assume by
40 %, and suggests the question to ask a person.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.db.models import Q

from conflicts.models import Uncertainty, UncertaintyState
from memories.models import LIVE_STATUSES, Memory, Reliability
from memoryhub.errors import InvalidInput
from workspaces.models import Workspace

DISPUTED_CONFIDENCE_FACTOR = 0.6


@dataclass
class ActionCheck:
    memory: Memory
    proceed: bool
    adjusted_confidence: float
    warning: str = ""
    clarification: str = ""
    open_uncertainties: list[uuid.UUID] = field(default_factory=list)
    conflicting: list[Memory] = field(default_factory=list)


def check_action(*, workspace: Workspace, memory_ids: list[uuid.UUID]) -> list[ActionCheck]:
    memories = {m.pk: m for m in Memory.objects.filter(workspace=workspace, pk__in=memory_ids).defer("embedding")}
    missing = [str(i) for i in memory_ids if i not in memories]
    if missing:
        raise InvalidInput(f"no memory with these ids in the workspace: {', '.join(missing)}", field="memory_ids")

    records = list(
        Uncertainty.objects.filter(
            Q(memory_a_id__in=memories) | Q(memory_b_id__in=memories),
            state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED],
        ).select_related("memory_a", "memory_b")
    )
    checks = []
    for memory_id in dict.fromkeys(memory_ids):
        memory = memories[memory_id]
        mine = [r for r in records if memory_id in (r.memory_a_id, r.memory_b_id)]
        others = [
            other for r in mine for other in (r.memory_a, r.memory_b) if other is not None and other.pk != memory_id
        ]
        checks.append(_check(memory, [r.pk for r in mine], others))
    return checks


def _check(memory: Memory, uncertainty_ids: list[uuid.UUID], others: list[Memory]) -> ActionCheck:
    if memory.status not in LIVE_STATUSES:
        return ActionCheck(
            memory,
            False,
            0.0,
            warning=f"this memory is {memory.status}; it is no longer held to be true",
            clarification=f'Is it still the case that "{memory.text}"?',
        )
    if memory.reliability == Reliability.SUPERSEDED:
        return ActionCheck(
            memory,
            False,
            round(memory.confidence * DISPUTED_CONFIDENCE_FACTOR, 4),
            warning="this memory was superseded by a newer one; act on the current one instead",
            clarification=f'Has "{memory.text}" really changed?',
        )
    disputed = memory.reliability in (Reliability.UNCERTAIN, Reliability.CONTRADICTED) or uncertainty_ids
    if not disputed:
        return ActionCheck(memory, True, memory.confidence)
    if others:
        other = others[0]
        warning = f'disputed: "{memory.text}" conflicts with "{other.text}"'
        clarification = f'Earlier I noted "{other.text}", but also "{memory.text}". Which one is true now?'
    elif memory.reliability == Reliability.CONTRADICTED:
        warning = f'disputed: "{memory.text}" is contradicted by another memory'
        clarification = f'Is it still true that "{memory.text}"?'
    else:
        warning = f'unverified: "{memory.text}" was {memory.source} and nobody has confirmed it'
        clarification = f'Can you confirm that "{memory.text}"?'
    return ActionCheck(
        memory,
        False,
        round(memory.confidence * DISPUTED_CONFIDENCE_FACTOR, 4),
        warning=warning,
        clarification=clarification,
        open_uncertainties=uncertainty_ids,
        conflicting=others,
    )
