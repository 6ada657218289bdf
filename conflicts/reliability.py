"""Severity of a disagreement and the guarded reliability transitions."""

from __future__ import annotations

from conflicts.models import Severity
from memories.audit import Tracker
from memories.models import Kind, Memory, Reliability
from memories.services import memory_decay_due_now

# Facts, concepts and procedures are beliefs like concepts; traits are facts about a person.
_BELIEF_CLASS = {
    Kind.TRAIT: "trait",
    Kind.CONCEPT: "concept",
    Kind.FACT: "concept",
    Kind.PROCEDURE: "concept",
    Kind.EPISODE: "episode",
}
_SEVERITY = {
    frozenset({"trait"}): Severity.CRITICAL,
    frozenset({"concept", "trait"}): Severity.HIGH,
    frozenset({"concept"}): Severity.HIGH,
    frozenset({"episode", "trait"}): Severity.MEDIUM,
    frozenset({"episode", "concept"}): Severity.MEDIUM,
    frozenset({"episode"}): Severity.LOW,
}


def severity_for(a: Memory, b: Memory | None) -> Severity:
    """The seed's table: contradicting a belief about a person is critical, two episodes low."""
    if b is None:
        return Severity.LOW
    classes = frozenset({_BELIEF_CLASS[Kind(a.kind)], _BELIEF_CLASS[Kind(b.kind)]})
    return _SEVERITY[classes]


RANK = {
    Reliability.RELIABLE: 0,
    Reliability.UNCERTAIN: 1,
    Reliability.CONTRADICTED: 2,
    Reliability.SUPERSEDED: 3,
}


def reliability_lower(tracker: Tracker, memory: Memory, target: Reliability) -> bool:
    """Move ``memory`` down to ``target`` unless it already sits lower (the rank guard).

    A detector must never "promote" a superseded fact to contradicted, or a
    contradicted one to merely uncertain: only a person or new evidence raises
    reliability, through :func:`reliability_raise`.
    """
    if RANK[Reliability(memory.reliability)] >= RANK[target]:
        return False
    tracker.update(memory, reliability=target)
    memory_decay_due_now(memory_ids=[memory.pk])  # its decay multiplier changed: the decay job recomputes it
    return True


def reliability_raise(tracker: Tracker, memory: Memory, target: Reliability = Reliability.RELIABLE) -> bool:
    if RANK[Reliability(memory.reliability)] <= RANK[target]:
        return False
    tracker.update(memory, reliability=target)
    memory_decay_due_now(memory_ids=[memory.pk])
    return True
