from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Annotated, Any, Literal, get_args

from django.conf import settings
from ninja import Field, Schema
from pydantic import AfterValidator, BeforeValidator, StrictBool, StrictFloat, StrictInt, field_validator

from memories.models import CUSTOM_REL_PREFIX, Kind, Rel, Reliability, Source, Status
from memoryhub.storable import first_unstorable, json_depth_exceeds, json_size_bytes, timestamp_in_range

KindName = Literal["fact", "trait", "episode", "concept", "procedure"]
SourceName = Literal["explicit", "inferred", "researched"]
OnConflict = Literal["ignore", "warn", "supersede", "raise"]
REL_PATTERN = re.compile(rf"^(?:{'|'.join(Rel.values)}|{re.escape(CUSTOM_REL_PREFIX)}[a-z][a-z0-9_-]{{0,40}})$")
assert {k.value for k in Kind} == set(get_args(KindName))  # noqa: S101 - keeps the two lists in step
assert {s.value for s in Source} == set(get_args(SourceName))  # noqa: S101


# The deepest page a list serves: the database reads and discards every row skipped, and
# an offset past 2^63 does not fit its bigint at all. Deeper, narrow the list with filters.
MAX_OFFSET = 1_000_000
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _iso_8601_only(value: object) -> object:
    # pydantic reads a number, or a numeric string such as "0.5" in a query string, as
    # seconds since 1970: a typo would silently become a date in January 1970.
    if isinstance(value, dt.datetime) or (isinstance(value, str) and ISO_DATE.match(value)):
        return value
    raise ValueError("expected an ISO 8601 date-time such as 2026-03-01T09:00:00Z")


# Every timestamp the API accepts: ISO 8601 text, a naive time taken as UTC (rather than
# rejected), and within the years that stay readable once stored (memoryhub.storable).
Timestamp = Annotated[dt.datetime, BeforeValidator(_iso_8601_only), AfterValidator(timestamp_in_range)]
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET, description=f"Rows to skip, at most {MAX_OFFSET:,}")]


def validate_rel(value: str) -> str:
    if not REL_PATTERN.match(value):
        known = ", ".join(Rel.values)
        raise ValueError(f"unknown relation {value!r}: use one of {known}, or a custom '{CUSTOM_REL_PREFIX}name'")
    return value


class InputSchema(Schema):
    """The base of every request schema: no string in it may hold what PostgreSQL cannot store.

    Checked here, once, for every field, nested values (metadata, tag lists, dict
    keys) included, so a new text field cannot forget it: a NUL character or an
    unpaired surrogate is a 422 naming the field instead of a 500 from the database.
    """

    @field_validator("*")
    @classmethod
    def storable_strings(cls, value: object) -> object:
        found = first_unstorable(value)
        if found:
            where, problem = found
            raise ValueError(f"contains {problem}" + (f" in {where}" if where else ""))
        return value


class MemoryIn(InputSchema):
    # The rule is the validator's (it also refuses whitespace, with its own message); the schema states it.
    text: str = Field(json_schema_extra={"minLength": 1}, description="The fact, in one or a few sentences.")
    kind: KindName = "fact"
    key: str = Field("", max_length=200, description="Trait or slot name, e.g. home_city")
    scope: str = Field("", max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=32)
    source: SourceName = "explicit"
    agent: str = Field("", max_length=200, description="Defaults to the agent key's name")
    importance: StrictFloat = Field(0.5, ge=0, le=1)
    confidence: StrictFloat | None = Field(None, ge=0, le=1, description="Defaults by source")
    polarity: StrictInt = Field(0, ge=-1, le=1, description="-1 (negated), 0 or 1")
    valid_from: Timestamp | None = Field(None, description="When the fact became true; default now")
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form JSON object, bounded by MEMORYHUB_MAX_METADATA_BYTES and MEMORYHUB_MAX_METADATA_DEPTH",
    )
    on_conflict: OnConflict = Field(
        "ignore",
        description="ignore: store now, detect in the background. warn / supersede / raise: run the offline "
        "detection tiers synchronously (600 ms time box) and report, replace, or refuse on a clash.",
    )

    @field_validator("text")
    @classmethod
    def text_not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("text must not be empty")
        limit = settings.MEMORYHUB_MAX_TEXT_CHARS
        if len(value) > limit:
            raise ValueError(f"text is {len(value)} characters; the limit is {limit}")
        return value

    @field_validator("tags")
    @classmethod
    def tags_clean(cls, value: list[str]) -> list[str]:
        cleaned: list[str] = []
        for tag in value:
            tag = tag.strip().lower()
            if not tag or len(tag) > 64:
                raise ValueError("each tag must be 1 to 64 characters")
            if tag not in cleaned:
                cleaned.append(tag)
        return cleaned

    @field_validator("key", "scope", "agent")
    @classmethod
    def strip(cls, value: str) -> str:
        return value.strip()

    @field_validator("metadata")
    @classmethod
    def metadata_bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        depth = settings.MEMORYHUB_MAX_METADATA_DEPTH
        if json_depth_exceeds(value, depth):
            raise ValueError(f"metadata nests objects or arrays more than {depth} levels deep")
        try:
            size = json_size_bytes(value)
        except ValueError as exc:  # NaN or Infinity: Python's JSON reads them, PostgreSQL's jsonb refuses them
            raise ValueError("metadata holds NaN or Infinity, which JSON does not allow") from exc
        limit = settings.MEMORYHUB_MAX_METADATA_BYTES
        if size > limit:
            raise ValueError(f"metadata is {size:,} bytes as JSON; the limit is {limit:,}")
        return value


class MemoryOut(Schema):
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
    superseded_by: uuid.UUID | None = Field(None, alias="superseded_by_id")
    superseded_at: dt.datetime | None
    access_count: int
    reinforcement_count: int
    conflict_count: int
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    recorded_at: dt.datetime
    expired_at: dt.datetime | None
    embedded_at: dt.datetime | None
    checked_at: dt.datetime | None = Field(
        description="when background conflict detection checked the fact; null while it waits"
    )
    subject_entity: str = Field(
        "", description='who or what the fact is about ("user", "user\'s sister", "acme corp"); set when embedded'
    )
    subject_attribute: str = Field("", description='which property of it ("home city", "seat count"); "" when unknown')
    subject_source: str = Field("", description="key, text or reviewer: where the subject came from")
    speech_act: str = Field("", description="claim, question, greeting, opinion or plan; only claims are compared")


class ConflictOut(Schema):
    memory_id: uuid.UUID
    text: str
    kind: str = Field(description="temporal_change, true_contradiction or duplicate")
    probability: float
    tier: str
    reason: str
    similarity: float


class MemoryCreateOut(Schema):
    id: uuid.UUID
    status: str
    action: Literal["stored", "superseded", "merged"]
    conflicts: list[ConflictOut]
    checked: bool = Field(description="False when no synchronous check ran (ignore) or the time box ran out")
    memory: MemoryOut


class ErrorOut(Schema):
    detail: str


class CommitRejectedOut(Schema):
    detail: str
    code: Literal["conflict"] = "conflict"
    conflicts: list[ConflictOut]


class MemoryPage(Schema):
    items: list[MemoryOut]
    count: int
    limit: int
    offset: int
    next_offset: int | None


class MemoryListQuery(InputSchema):
    kind: KindName | None = None
    scope: str | None = None
    key: str | None = None
    agent: str | None = None
    source: SourceName | None = None
    reliability: Literal["reliable", "uncertain", "contradicted", "superseded"] | None = None
    status: list[Literal["pending_embed", "active", "merged", "deprecated", "decayed", "forgotten"]] = Field(
        default_factory=list, description="Default: pending_embed and active"
    )
    tag: list[str] = Field(default_factory=list, description="Any of these tags")
    tags_all: list[str] = Field(default_factory=list, description="All of these tags")
    q: str | None = Field(None, max_length=500, description="Full-text search (works before embedding)")
    include_superseded: bool = True
    recorded_after: Timestamp | None = None
    recorded_before: Timestamp | None = None
    limit: int = Field(50, ge=1, le=200)
    offset: Offset = 0

    @field_validator("tag", "tags_all")
    @classmethod
    def tags_like_stored(cls, value: list[str]) -> list[str]:
        # Tags are stored stripped and lower-cased (MemoryIn), so "API" must find "api".
        return [tag.strip().lower() for tag in value if tag.strip()]


assert {s.value for s in Status} >= {"pending_embed", "active"}  # noqa: S101
assert {r.value for r in Reliability} == {"reliable", "uncertain", "contradicted", "superseded"}  # noqa: S101


class SupersedeIn(InputSchema):
    by: uuid.UUID = Field(description="The memory that replaces this one")
    reason: str = Field("", max_length=2000)


class SubjectIn(InputSchema):
    entity: str = Field(..., min_length=1, max_length=200, description="who or what the fact is about")
    attribute: str = Field("", max_length=120, description='which property of it; "" when the fact names none')
    note: str = Field("", max_length=2000)


class ReasonIn(InputSchema):
    reason: str = Field("", max_length=2000)


class ChangeOut(Schema):
    changed: bool
    memory: MemoryOut


class LinkIn(InputSchema):
    src: uuid.UUID
    dst: uuid.UUID
    rel: str = Field(
        "related",
        json_schema_extra={"pattern": REL_PATTERN.pattern},
        description="a known relation or a custom 'x-name'",
    )
    weight: StrictFloat = Field(1.0, ge=0, le=1)

    @field_validator("rel")
    @classmethod
    def rel_known(cls, value: str) -> str:
        return validate_rel(value)


class LinkOut(Schema):
    id: int
    src: uuid.UUID = Field(alias="src_id")
    dst: uuid.UUID = Field(alias="dst_id")
    rel: str
    weight: float
    created_by: str
    created_at: dt.datetime


class NeighborsQuery(InputSchema):
    rel: list[str] = Field(default_factory=list, description="Only these relations (repeatable)")
    direction: Literal["out", "in", "both"] = "both"
    depth: int = Field(1, ge=1, le=5)

    @field_validator("rel")
    @classmethod
    def rels_known(cls, value: list[str]) -> list[str]:
        return [validate_rel(rel) for item in value for rel in item.split(",") if rel]


class NeighborOut(Schema):
    memory: MemoryOut
    rel: str
    direction: Literal["out", "in"]
    depth: int
    link_id: int
    via: uuid.UUID


class NeighborsOut(Schema):
    memory_id: uuid.UUID
    neighbors: list[NeighborOut]
    dangling: list[uuid.UUID]


class SubgraphIn(InputSchema):
    model_config = {"extra": "forbid"}

    memory_ids: list[uuid.UUID] = Field(min_length=1, max_length=100)
    depth: StrictInt = Field(1, ge=0, le=5, description="Links to follow from the given memories, either direction")


class SubgraphOut(Schema):
    nodes: list[MemoryOut]
    edges: list[LinkOut]
    truncated: bool = Field(description="The walk stopped at 500 memories")


class ChainOut(Schema):
    head: uuid.UUID
    chain: list[MemoryOut]


class StrictSchema(InputSchema):
    # Unknown keys are refused with 422 instead of being silently ignored.
    model_config = {"extra": "forbid"}


class WeightsIn(StrictSchema):
    cosine: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)
    lexical: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)
    recency: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)
    importance: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)
    confidence: StrictFloat | None = Field(None, ge=0, allow_inf_nan=False)


class ExpandIn(StrictSchema):
    rels: list[str] = Field(default_factory=lambda: ["refines", "example_of"], min_length=1)
    depth: StrictInt = Field(1, ge=1, le=3)
    cap: StrictInt = Field(5, ge=1, le=50)
    score: StrictFloat = Field(0.7, ge=0, le=1)

    @field_validator("rels")
    @classmethod
    def rels_known(cls, value: list[str]) -> list[str]:
        return [validate_rel(rel) for rel in value]


class RecallIn(StrictSchema):
    query: str = Field(max_length=2000, json_schema_extra={"minLength": 1})
    k: StrictInt = Field(10, ge=1, le=100)
    mode: Literal["semantic", "hybrid"] = "hybrid"
    weights: WeightsIn | None = None
    kind: list[KindName] = Field(default_factory=list, description="Any of these kinds")
    scope: str | None = None
    agent: str | None = None
    tags: list[str] = Field(default_factory=list, description="Any of these tags")
    tags_all: list[str] = Field(default_factory=list)
    min_confidence: StrictFloat = Field(0.3, ge=0, le=1)
    min_importance: StrictFloat = Field(0.0, ge=0, le=1, description="Leave out facts less important than this")
    include_superseded: StrictBool = False
    as_of: Timestamp | None = Field(None, description="Answer as the hub believed then about what was true then")
    expand: ExpandIn | None = None
    diversity: StrictBool = True
    lexical: Literal["local_bm25", "postgres"] = "local_bm25"

    @field_validator("query")
    @classmethod
    def query_not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("query must not be empty")
        return value

    @field_validator("kind", mode="before")
    @classmethod
    def kind_as_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class ScorePartsOut(Schema):
    cosine: float
    lexical: float
    recency: float
    importance: float
    confidence: float
    reliability_factor: float


class MemoryRefOut(Schema):
    id: uuid.UUID
    text: str
    agent: str
    recorded_at: dt.datetime


class RecallHitOut(Schema):
    memory: MemoryOut
    score: float
    parts: ScorePartsOut
    reliability: str
    disputed: bool
    open_uncertainties: list[uuid.UUID]
    contradicted_by: list[MemoryRefOut]
    expanded: bool
    via: uuid.UUID | None
    replaces: uuid.UUID | None = Field(None, description="The superseded hit this chain head stands in for")


class MessageIn(StrictSchema):
    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(max_length=20_000)


class ContextIn(StrictSchema):
    recent_messages: list[MessageIn] = Field(max_length=100)
    tool_results: list[str] = Field(default_factory=list, max_length=50)
    budget_tokens: StrictInt = Field(1500, ge=0, le=200_000)
    facts: StrictInt = Field(5, ge=0, le=20)
    episodes: StrictInt = Field(5, ge=0, le=20)
    scope: str | None = None


class IncludedMessageOut(Schema):
    role: str
    content: str
    tokens: int


class IncludedTextOut(Schema):
    content: str
    tokens: int


class IncludedMemoryOut(RecallHitOut):
    tokens: int


class DroppedOut(Schema):
    messages: int
    tool_results: int
    memories: int


class ContextOut(Schema):
    query: str
    budget_tokens: int
    used_tokens: int
    messages: list[IncludedMessageOut]
    tool_results: list[IncludedTextOut]
    memories: list[IncludedMemoryOut]
    dropped: DroppedOut


class CheckActionIn(StrictSchema):
    memory_ids: list[uuid.UUID] = Field(min_length=1, max_length=100)


class ActionCheckOut(Schema):
    memory_id: uuid.UUID
    proceed: bool
    reliability: str
    status: str
    confidence: float
    adjusted_confidence: float
    warning: str
    clarification: str
    open_uncertainties: list[uuid.UUID]
    conflicting: list[MemoryRefOut]


class CheckActionOut(Schema):
    proceed: bool
    results: list[ActionCheckOut]


class BacklogOut(Schema):
    waiting: int
    oldest_seconds: float | None = Field(description="how long the longest-waiting fact has waited; null when none")


class BrokerOut(Schema):
    waiting: dict[str, int] = Field(description="messages not yet taken by a worker, by queue (fresh, background)")
    delivered: int = Field(description="delivered messages not yet pruned from the broker's table")


class LLMTierOut(Schema):
    configured: bool = Field(description="an LLM endpoint is set (OPENAI_API_KEY)")
    paused_until: dt.datetime | None = Field(
        description="while the circuit breaker is open: until when detection runs offline only"
    )
    failures: int = Field(description="calls in a row without a usable answer that opened the breaker (0 when closed)")


class StatusOut(Schema):
    embedding: BacklogOut = Field(description="the key's workspace: facts committed and waiting for a vector")
    checking: BacklogOut = Field(description="the key's workspace: facts embedded and waiting for the conflict check")
    subjects_to_reread: int = Field(
        description="the key's workspace: facts an older subject reader read, to be read again (after an upgrade)"
    )
    broker: BrokerOut | None = Field(description="the embedded SQL broker's queue (all workspaces); null for another")
    llm: LLMTierOut


MAX_BATCH = 1000


class BatchIn(InputSchema):
    memories: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description=f"Up to {MAX_BATCH} facts, each with the fields of POST /memories (on_conflict: ignore only); "
        "each is validated on its own, so one bad item does not stop the others",
    )

    @field_validator("*")
    @classmethod
    def storable_strings(cls, value: object) -> object:
        # Each item goes through MemoryIn (an InputSchema) on its own: a bad item rejects itself only.
        return value


class BatchItemOut(Schema):
    index: int = Field(description="position of the item in the request")
    action: Literal["stored", "merged", "rejected"]
    id: uuid.UUID | None = Field(None, description="the stored fact, or the live fact the item was merged into")
    status: str | None = None
    errors: list[dict[str, Any]] = Field(
        default_factory=list, description="why a rejected item was rejected: [{loc, msg, type}] as in a 422"
    )


class BatchOut(Schema):
    stored: int
    merged: int
    rejected: int
    results: list[BatchItemOut]
