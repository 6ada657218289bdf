"""The workspace history as a story: one line per fact, in chronological batches."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from conflicts.forgetting import StoryFact

# About 6,000 tokens of English per batch, as the seed's detective reads.
BATCH_CHARS = 24_000
OVERLAP_CHARS = 2_400


def short_id(fact: StoryFact) -> str:
    return str(fact.id).replace("-", "")[:8]


def story_line(fact: StoryFact) -> str:
    text = " ".join(fact.text.split())
    return f"{short_id(fact)} · {fact.at:%Y-%m-%d %H:%M} · {fact.scope or '-'} · {fact.agent or '-'} · {text}"


@dataclass
class Batch:
    facts: list[StoryFact]
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def by_short_id(self) -> dict[str, StoryFact]:
        return {short_id(f): f for f in self.facts}


def batches(facts: list[StoryFact], *, size: int = BATCH_CHARS, overlap: int = OVERLAP_CHARS) -> list[Batch]:
    """Split the story (already oldest first) into batches of ~``size`` characters.

    Consecutive batches share their last/first ``overlap`` characters' worth
    of lines, so an arc that straddles a boundary is read whole at least once.
    Order is never changed.
    """
    lines = [story_line(f) for f in facts]
    result: list[Batch] = []
    start = 0
    while start < len(lines):
        end, used = start, 0
        while end < len(lines) and (end == start or used + len(lines[end]) + 1 <= size):
            used += len(lines[end]) + 1
            end += 1
        result.append(Batch(facts[start:end], lines[start:end]))
        if end >= len(lines):
            break
        # Step back over about `overlap` characters of lines for the next batch.
        back, kept = end, 0
        while back > start + 1 and kept + len(lines[back - 1]) + 1 <= overlap:
            back -= 1
            kept += len(lines[back]) + 1
        start = back
    return result


@dataclass
class Flag:
    """A confusion in the story: 2+ facts and the question that settles it."""

    kind: str  # reversal | ambiguity | stale | contradiction
    fact_ids: list[uuid.UUID | str]
    question: str
    detector: str
    evidence: dict[str, object] = field(default_factory=dict)
    asked: uuid.UUID | str | None = None
