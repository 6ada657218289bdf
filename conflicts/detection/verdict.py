"""What a detection tier says about a pair of memories."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal


class Relation(StrEnum):
    TEMPORAL_CHANGE = "temporal_change"
    TRUE_CONTRADICTION = "true_contradiction"
    DUPLICATE = "duplicate"
    COMPATIBLE = "compatible"
    # Only the LLM tier tells these apart from a contradiction.
    CONTEXT_DEPENDENT = "context_dependent"
    FIGURATIVE = "figurative"


# The classifier's readings that can decide a pair on their own (conflicts/detection/classifier.py).
SLOT_READER = "slot reader"
ANNOUNCED_WITHIN_SUBJECT = "one subject, announced"
CORRECTION = "correction"
LEFT_BEHIND = "left behind"
OPPOSITE_POLARITY = "opposite polarity"


@dataclass(frozen=True)
class Verdict:
    """The relation of ``a`` (the older fact) to ``b`` (the newer one).

    ``current`` names the side that holds now when the relation is a temporal
    change; ``same_subject`` is False when the facts only share words, and then
    neither may invalidate the other; ``announced`` is True when the current
    side says itself that something changed ("moved to", "switched", "no
    longer", or "used to" on the other side); ``values_differ`` is True when the
    rules found numbers, versions or dates that differ between the two — then a
    "duplicate" is too unsafe to merge (news paraphrases differ in figures; facts do not);
    ``one_slot`` is True when the pair reader read the two as one subject given a new value.
    """

    relation: Relation
    probability: float
    tier: str
    current: Literal["a", "b"] | None = None
    same_subject: bool = True
    announced: bool = False
    values_differ: bool = False
    # The pair reader (the cross-encoder, reading both texts as one input) read the newer fact as a
    # new value of the older one's subject: evidence of one subject beside the subject reader's.
    one_slot: bool = False
    reasons: tuple[str, ...] = ()
    reasoning: str = ""
    # Which of the classifier's readings decided the pair, when one of its rules did (the names above); "" when the
    # network's verdict stands. Stored on the record, so a retirement can be traced to the reading behind it.
    rule: str = ""
    probabilities: dict[str, float] = field(default_factory=dict)

    @property
    def is_conflict(self) -> bool:
        return self.relation in (Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION)
