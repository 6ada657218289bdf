"""Typed answers of the MemoryHub API, one dataclass per response schema (``api/schemas.py`` on the server).

Every model is built with :func:`parse`, which reads nested models, lists,
UUIDs and ISO timestamps from the JSON, and ignores fields it does not know,
so a newer server that adds a field does not break an older client.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import types
import typing
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")

Kind = Literal["fact", "trait", "episode", "concept", "procedure"]
Source = Literal["explicit", "inferred", "researched"]
OnConflict = Literal["ignore", "warn", "supersede", "raise"]
Answer = Literal["yes", "no", "both", "skip"]


@dataclass(frozen=True)
class Memory:
    id: uuid.UUID
    kind: str
    text: str
    key: str
    scope: str
    tags: list[str]
    source: str
    agent: str
    importance: float
    confidence: float
    reliability: str
    status: str
    polarity: int
    annotation: str
    metadata: dict[str, Any]
    superseded_by: uuid.UUID | None
    superseded_at: dt.datetime | None
    access_count: int
    reinforcement_count: int
    conflict_count: int
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    recorded_at: dt.datetime
    expired_at: dt.datetime | None
    embedded_at: dt.datetime | None
    checked_at: dt.datetime | None
    # What the fact is about and whether it is a claim at all (empty on hubs older than issue 21).
    subject_entity: str = ""
    subject_attribute: str = ""
    subject_source: str = ""
    speech_act: str = ""


@dataclass(frozen=True)
class Conflict:
    """A clash the synchronous check found (``on_conflict`` warn / supersede / raise)."""

    memory_id: uuid.UUID
    text: str
    kind: str
    probability: float
    tier: str
    reason: str
    similarity: float


@dataclass(frozen=True)
class CommitResult:
    id: uuid.UUID
    status: str
    action: Literal["stored", "superseded", "merged"]
    conflicts: list[Conflict]
    checked: bool
    memory: Memory


@dataclass(frozen=True)
class BatchItem:
    index: int
    action: Literal["stored", "merged", "rejected"]
    id: uuid.UUID | None = None
    status: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class BatchResult:
    """Per-item results of a batch commit; ``index`` is the position in the list the caller passed."""

    stored: int
    merged: int
    rejected: int
    results: list[BatchItem]


@dataclass(frozen=True)
class MemoryPage:
    items: list[Memory]
    count: int
    limit: int
    offset: int
    next_offset: int | None


@dataclass(frozen=True)
class Change:
    changed: bool
    memory: Memory


@dataclass(frozen=True)
class Link:
    id: int
    src: uuid.UUID
    dst: uuid.UUID
    rel: str
    weight: float
    created_by: str
    created_at: dt.datetime


@dataclass(frozen=True)
class Subgraph:
    """The memories within ``depth`` links of some memories, and the links between them."""

    nodes: list[Memory]
    edges: list[Link]
    truncated: bool


@dataclass(frozen=True)
class Neighbor:
    memory: Memory
    rel: str
    direction: Literal["out", "in"]
    depth: int
    link_id: int
    via: uuid.UUID


@dataclass(frozen=True)
class Neighbors:
    memory_id: uuid.UUID
    neighbors: list[Neighbor]
    dangling: list[uuid.UUID]


@dataclass(frozen=True)
class Chain:
    head: uuid.UUID
    chain: list[Memory]


@dataclass(frozen=True)
class ScoreParts:
    cosine: float
    lexical: float
    recency: float
    importance: float
    confidence: float
    reliability_factor: float


@dataclass(frozen=True)
class MemoryRef:
    id: uuid.UUID
    text: str
    agent: str
    recorded_at: dt.datetime


@dataclass(frozen=True)
class RecallHit:
    memory: Memory
    score: float
    parts: ScoreParts
    reliability: str
    disputed: bool
    open_uncertainties: list[uuid.UUID]
    contradicted_by: list[MemoryRef]
    expanded: bool
    via: uuid.UUID | None
    replaces: uuid.UUID | None = None


@dataclass(frozen=True)
class IncludedMessage:
    role: str
    content: str
    tokens: int


@dataclass(frozen=True)
class IncludedText:
    content: str
    tokens: int


@dataclass(frozen=True)
class IncludedMemory(RecallHit):
    tokens: int = 0


@dataclass(frozen=True)
class Dropped:
    messages: int
    tool_results: int
    memories: int


@dataclass(frozen=True)
class Context:
    query: str
    budget_tokens: int
    used_tokens: int
    messages: list[IncludedMessage]
    tool_results: list[IncludedText]
    memories: list[IncludedMemory]
    dropped: Dropped


@dataclass(frozen=True)
class ActionCheck:
    memory_id: uuid.UUID
    proceed: bool
    reliability: str
    status: str
    confidence: float
    adjusted_confidence: float
    warning: str
    clarification: str
    open_uncertainties: list[uuid.UUID]
    conflicting: list[MemoryRef]


@dataclass(frozen=True)
class CheckActionResult:
    proceed: bool
    results: list[ActionCheck]


@dataclass(frozen=True)
class Card:
    """A conflict card: a yes/no question about facts that disagree."""

    id: uuid.UUID
    kind: str
    question: str
    asked_memory: uuid.UUID | None
    facts: list[MemoryRef]
    detector: str
    evidence: dict[str, Any]
    severity: str
    state: str
    uncertainty: uuid.UUID | None
    created_at: dt.datetime
    answered_at: dt.datetime | None


@dataclass(frozen=True)
class AnswerResult:
    card: Card
    answer: str
    current_fact: uuid.UUID | None
    event: int


@dataclass(frozen=True)
class Uncertainty:
    id: uuid.UUID
    memory_a: uuid.UUID
    memory_b: uuid.UUID | None
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


@dataclass(frozen=True)
class SurfacedUncertainty:
    uncertainty: Uncertainty
    relevance: float
    question: str
    facts: list[MemoryRef]


@dataclass(frozen=True)
class FoundConflict:
    """A candidate pair of ``find_conflicts``: two similar facts read as duplicates or as a contradiction."""

    a: MemoryRef
    b: MemoryRef
    similarity: float
    kind: Literal["duplicate", "contradiction"]
    reason: str


@dataclass(frozen=True)
class DetectiveRun:
    """One pass of the narrative detective over a workspace's history."""

    id: int
    trigger: str
    mode: str
    state: str
    facts_total: int
    facts_read: int
    batches: int
    failed_batches: int
    flags_raised: int
    cards_created: int
    tokens: int
    seconds: float | None
    error: str
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None


@dataclass(frozen=True)
class Event:
    """One row of the audit trail."""

    id: int
    created_at: dt.datetime
    actor_type: str
    actor: str
    verb: str
    memory: uuid.UUID | None
    changes: list[dict[str, Any]]
    reason: str
    automatic: bool
    undoes: int | None


@dataclass(frozen=True)
class Backlog:
    waiting: int
    oldest_seconds: float | None


@dataclass(frozen=True)
class BrokerDepth:
    waiting: dict[str, int]
    delivered: int


@dataclass(frozen=True)
class LLMTier:
    configured: bool
    paused_until: dt.datetime | None
    failures: int


@dataclass(frozen=True)
class PipelineStatus:
    embedding: Backlog
    checking: Backlog
    broker: BrokerDepth | None
    llm: LLMTier
    subjects_to_reread: int = 0  # a hub older than 2026-11-29 does not send it


def parse(model: type[T], data: Any) -> T:
    """Build ``model`` (a dataclass above) from decoded JSON."""
    return typing.cast(T, _convert(model, data))


def _convert(annotation: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        options = [a for a in get_args(annotation) if a is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        return [_convert(item, v) for v in value]
    if origin is dict or origin is Literal or annotation is Any:
        return value
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        hints = _hints(annotation)
        known = {f.name for f in dataclasses.fields(annotation)}
        return annotation(**{name: _convert(hints[name], v) for name, v in value.items() if name in known})
    if annotation is uuid.UUID:
        return uuid.UUID(str(value))
    if annotation is dt.datetime:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if annotation is float and isinstance(value, int):
        return float(value)
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


class NewMemory(typing.TypedDict, total=False):
    """One fact for :meth:`MemoryHub.remember_batch`: the fields of ``POST /memories``; only ``text`` is required."""

    text: typing.Required[str]
    kind: Kind
    key: str
    scope: str
    tags: list[str]
    source: Source
    agent: str
    importance: float
    confidence: float
    polarity: int
    valid_from: dt.datetime | str
    metadata: dict[str, Any]
