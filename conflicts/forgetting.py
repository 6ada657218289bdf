"""The forgetting curve: which facts the narrative detective reads this time.

Weighted sampling by age, so a run over a workspace of any size reads a
bounded, representative story: fresh facts survive most (20–40 % within a day),
week-old ones less (10–20 %), older ones least (5–10 %). Within each band the
rate falls linearly with age. Every earlier conflict flag doubles a fact's
rate — contentious facts keep being seen — and the fact that triggered the run
always survives. Draws use a seeded generator, so a run is reproducible.
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from memories.models import Memory

DAY = dt.timedelta(days=1)
WEEK = dt.timedelta(days=7)


@dataclass(frozen=True)
class ForgettingRates:
    """(survival at the band's young end, at its old end) for each age band."""

    first_day: tuple[float, float] = (0.40, 0.20)
    first_week: tuple[float, float] = (0.20, 0.10)
    older: tuple[float, float] = (0.10, 0.05)
    # Beyond this age the rate stays at the older band's floor.
    older_span: dt.timedelta = dt.timedelta(days=90)

    @classmethod
    def from_settings(cls) -> ForgettingRates:
        configured = settings.MEMORYHUB_FORGETTING_RATES
        return cls(**{k: tuple(v) for k, v in configured.items()}) if configured else cls()  # type: ignore[arg-type]


@dataclass(frozen=True)
class StoryFact:
    """What the detective needs of a fact (a Memory, or a fact from an eval story)."""

    id: uuid.UUID | str
    text: str
    scope: str
    agent: str
    at: dt.datetime
    conflict_count: int = 0
    key: str = ""
    # The fact's embedding when already known (saves re-embedding the story), and its model.
    vector: Any = field(default=None, compare=False, repr=False)
    embedding_model: str = ""
    # What the fact is about and whether it is a claim (memories/subjects.py, memories/speech_acts.py).
    entity: str = ""
    attribute: str = ""
    speech_act: str = ""

    @classmethod
    def of(cls, memory: Memory) -> StoryFact:
        return cls(
            id=memory.pk,
            text=memory.text,
            scope=memory.scope,
            agent=memory.agent,
            at=memory.valid_from,
            conflict_count=memory.conflict_count,
            key=memory.key,
            vector=memory.embedding,
            embedding_model=memory.embedding_model,
            entity=memory.subject_entity,
            attribute=memory.subject_attribute,
            speech_act=memory.speech_act,
        )


def survival_rate(age: dt.timedelta, conflict_flags: int, rates: ForgettingRates | None = None) -> float:
    rates = rates or ForgettingRates()
    age = max(age, dt.timedelta(0))
    if age < DAY:
        young, old = rates.first_day
        position = age / DAY
    elif age < WEEK:
        young, old = rates.first_week
        position = (age - DAY) / (WEEK - DAY)
    else:
        young, old = rates.older
        position = min(1.0, (age - WEEK) / rates.older_span)
    base = young + (old - young) * position
    return float(min(1.0, base * 2**conflict_flags))


def sample(
    facts: Iterable[StoryFact],
    *,
    now: dt.datetime,
    seed: int | str,
    trigger_id: uuid.UUID | str | None = None,
    rates: ForgettingRates | None = None,
) -> list[StoryFact]:
    """The surviving facts, oldest first; the trigger fact is always among them."""
    rng = random.Random(str(seed))
    survivors = [
        fact
        for fact in facts
        if fact.id == trigger_id or rng.random() < survival_rate(now - fact.at, fact.conflict_count, rates)
    ]
    return sorted(survivors, key=lambda f: (f.at, str(f.id)))
