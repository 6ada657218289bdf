from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Literal

from ninja import Field, Schema
from pydantic import StrictInt

from api.schemas import InputSchema, MemoryRefOut, Offset


class UncertaintyOut(Schema):
    id: uuid.UUID
    memory_a: uuid.UUID = Field(alias="memory_a_id")
    memory_b: uuid.UUID | None = Field(None, alias="memory_b_id")
    uncertainty_type: str
    severity: str
    detection_context: str
    detector: str
    classification: str
    probability: float | None
    reasoning: str
    temporal_signal: bool
    surface_context: str
    state: str
    resolution_strategy: str
    resolution_detail: str
    resolved_at: dt.datetime | None
    surfaced_count: int
    created_at: dt.datetime


class CardOut(Schema):
    id: uuid.UUID
    kind: str
    question: str
    asked_memory: uuid.UUID | None = Field(None, alias="asked_memory_id")
    facts: list[MemoryRefOut]
    detector: str
    evidence: dict[str, Any]
    severity: str
    state: str
    uncertainty: uuid.UUID | None = Field(None, alias="uncertainty_id")
    created_at: dt.datetime
    answered_at: dt.datetime | None


class ConflictListQuery(InputSchema):
    state: Literal["open", "answered", "dismissed", "closed"] | None = None
    kind: Literal["reversal", "ambiguity", "stale", "contradiction"] | None = None
    limit: int = Field(50, ge=1, le=200)
    offset: Offset = 0


class UncertaintyListQuery(InputSchema):
    state: Literal["open", "surfaced", "resolved", "decayed"] | None = None
    memory: uuid.UUID | None = None
    limit: int = Field(50, ge=1, le=200)
    offset: Offset = 0


class EventOut(Schema):
    id: int
    created_at: dt.datetime
    actor_type: str
    actor: str
    verb: str
    memory: uuid.UUID | None = Field(None, alias="memory_id")
    changes: list[dict[str, Any]]
    reason: str
    automatic: bool
    undoes: int | None = Field(None, alias="undoes_id")


class EventListQuery(InputSchema):
    automatic: bool | None = None
    verb: str | None = Field(None, max_length=64)
    memory: uuid.UUID | None = None
    limit: int = Field(50, ge=1, le=200)
    offset: Offset = 0


class UndoIn(InputSchema):
    reason: str = Field("", max_length=2000)


class DetectiveRunOut(Schema):
    id: int
    trigger: str
    mode: str
    state: str = Field(description="queued / running / done / partial (some LLM batches failed) / failed")
    facts_total: int
    facts_read: int
    batches: int
    failed_batches: int = Field(description="LLM batches without a usable answer; the offline detective read them")
    flags_raised: int
    cards_created: int
    tokens: int
    seconds: float | None
    error: str
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None


class AnswerIn(InputSchema):
    answer: Literal["yes", "no", "both", "skip"]
    current_fact: uuid.UUID | None = None
    note: str = Field("", max_length=2000)


class AnswerOut(Schema):
    card: CardOut
    answer: str
    current_fact: uuid.UUID | None
    event: int


class SurfaceIn(InputSchema):
    topic: str = Field(min_length=1, max_length=2000)
    limit: StrictInt = Field(5, ge=1, le=20)


class SurfacedOut(Schema):
    uncertainty: UncertaintyOut
    relevance: float
    question: str
    facts: list[MemoryRefOut]


class FindConflictsQuery(InputSchema):
    memory_id: uuid.UUID | None = Field(
        None, description="Conflicts of this memory; without it, the workspace's newest"
    )
    threshold: float = Field(0.8, ge=0, le=1, description="Lowest cosine similarity of a pair")
    limit: StrictInt = Field(50, ge=1, le=200)


class FoundConflictOut(Schema):
    a: MemoryRefOut
    b: MemoryRefOut
    similarity: float
    kind: Literal["duplicate", "contradiction"]
    reason: str
