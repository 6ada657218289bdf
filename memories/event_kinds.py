"""Every kind of audit event the hub writes, in a reviewer's words: the one label table.

The dashboard shows these labels instead of raw verbs (``conflict.narrative_card``)
on the decisions queue, the history and a memory's events. ``decision`` marks
the kinds that change facts on the hub's own authority (a supersede, a merge, a
dispute settled by evidence): only those are offered to a person to confirm or
revert. Opening a card or noting an ambiguity decides nothing.

Adding a verb anywhere in the code means adding it here:
``tests/memories/test_event_kinds.py`` reads every ``record_event`` call in the
product's source and fails on a verb this table does not name.
"""

from __future__ import annotations

from dataclasses import dataclass

UNDO_SUFFIX = ".undo"


@dataclass(frozen=True)
class EventKind:
    label: str
    decision: bool = False


EVENT_KINDS: dict[str, EventKind] = {
    # memories
    "memory.create": EventKind("Fact recorded"),
    "memory.reinforce": EventKind("Fact confirmed again"),
    "memory.forget": EventKind("Fact forgotten"),
    "memory.supersede": EventKind("Fact replaced by a newer one", decision=True),
    "memory.restore": EventKind("Fact restored"),
    "memory.embed": EventKind("Meaning vector computed"),
    "memory.repair": EventKind("Unreadable timestamps clamped"),
    "memory.import": EventKind("Fact imported from another hub"),
    "memory.commit_superseded": EventKind("Fact recorded, replacing what it contradicts"),
    "memory.commit_merged": EventKind("Fact recorded as a duplicate of one already held"),
    "memory.subject_correct": EventKind("What the fact is about corrected by a reviewer"),
    "link.create": EventKind("Facts linked"),
    "link.delete": EventKind("Link removed"),
    # conflicts
    "conflict.temporal_supersede": EventKind("Superseded an older fact by a newer one", decision=True),
    "conflict.merge_duplicate": EventKind("Merged a duplicate", decision=True),
    "conflict.confidence_dominance": EventKind("Marked the weaker side of a contradiction uncertain", decision=True),
    "conflict.evidence_resolve": EventKind("Settled a dispute by reinforcement", decision=True),
    "conflict.record": EventKind("Noted a possible conflict"),
    "conflict.card": EventKind("Opened a review card"),
    "conflict.narrative_card": EventKind("Opened a review card from the story of the facts"),
    "uncertainty.dismiss": EventKind("Dismissed an open question"),
    "uncertainty.resolve": EventKind("Resolved an open question"),
    "uncertainty.surface": EventKind("Raised an open question with an agent"),
    "card.answer": EventKind("Answered a review card"),
    "card.assign": EventKind("Assigned a review card"),
    "card.close": EventKind("Closed a card whose facts no longer stand"),
    "card.update": EventKind("Updated a card after one of its facts retired"),
    "card.reopen": EventKind("Reopened a card whose facts stand again"),
    "tolerance.set": EventKind("Changed the conflict tolerance"),
    "decision.confirm": EventKind("Confirmed an automatic decision"),
    # upkeep (the beat jobs, docs/UPKEEP.md)
    "upkeep.merge": EventKind("Merged near-duplicates (consolidation)", decision=True),
    "upkeep.deprecate": EventKind("Deprecated a fact whose confidence decayed too low", decision=True),
    "upkeep.decay": EventKind("Retired a fact that decayed below its floor", decision=True),
    "upkeep.penalty": EventKind("Halved the confidence of both sides of a contradiction", decision=True),
    "upkeep.evidence": EventKind("Raised confidence from supporting facts", decision=True),
    "upkeep.verified": EventKind("Settled an unverified fact by its confirmation", decision=True),
    "upkeep.unverified": EventKind("Marked a fact from an unverified source as uncertain"),
    "upkeep.stale": EventKind("Noted a fact that has not been confirmed for a long time"),
}

# The kinds a person may confirm or revert when the hub wrote them on its own.
DECISION_VERBS: tuple[str, ...] = tuple(verb for verb, kind in EVENT_KINDS.items() if kind.decision)


def event_label(verb: str) -> str:
    """The reviewer's words for ``verb``; an undo reads "Undone: <what it undid>"."""
    if verb.endswith(UNDO_SUFFIX):
        undone = event_label(verb.removesuffix(UNDO_SUFFIX))
        return f"Undone: {undone[:1].lower()}{undone[1:]}"
    kind = EVENT_KINDS.get(verb)
    if kind is not None:
        return kind.label
    # A verb missing from the table still reads as words, never as a dotted token.
    return verb.replace(".", ": ").replace("_", " ").capitalize()
