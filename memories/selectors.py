"""Reads of memories and links."""

from __future__ import annotations

import datetime as dt
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from django.contrib.auth.models import User
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import Count, DateTimeField, Min, Q, QuerySet
from django.utils import timezone

from memories import subjects
from memories.models import LIVE_STATUSES, Event, Link, Memory, Reliability, Status
from memories.vectors import VectorBytes, vector_from_bytes
from memoryhub.errors import InvalidInput, NotFound
from memoryhub.storable import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from workspaces.models import Membership, Workspace


def memory_get(*, workspace: Workspace, memory_id: uuid.UUID | str, field: str | None = None) -> Memory:
    """A memory of this workspace; another workspace's id is reported as missing."""
    try:
        return Memory.objects.get(workspace=workspace, pk=memory_id)
    except (Memory.DoesNotExist, ValueError, TypeError):
        raise NotFound("no memory with this id in the workspace", field=field) from None


def memory_referenced(*, workspace: Workspace, memory_id: uuid.UUID | str, field: str) -> Memory:
    """A memory that an operation's input names (``by``, ``src``…): missing is a bad value of that field (422).

    Unlike the memory an operation acts on, which is missing (404).
    """
    try:
        return memory_get(workspace=workspace, memory_id=memory_id)
    except NotFound as exc:
        raise InvalidInput(exc.message, field=field) from exc


def link_get(*, workspace: Workspace, link_id: int) -> Link:
    """A link of this workspace; another workspace's id is reported as missing."""
    link = Link.objects.filter(workspace=workspace, pk=link_id).select_related("src").first()
    if link is None:
        raise NotFound("no link with this id in the workspace")
    return link


@dataclass
class MemoryFilters:
    kind: str | None = None
    scope: str | None = None
    key: str | None = None
    agent: str | None = None
    source: str | None = None
    reliability: str | None = None
    statuses: list[str] | None = None
    tags_any: list[str] = field(default_factory=list)
    tags_all: list[str] = field(default_factory=list)
    text: str | None = None
    include_superseded: bool = True
    recorded_after: dt.datetime | None = None
    recorded_before: dt.datetime | None = None


def memory_list(*, workspace: Workspace, filters: MemoryFilters) -> QuerySet[Memory]:
    """Memories matching ``filters``, newest first. Full-text works before embedding."""
    qs = Memory.objects.filter(workspace=workspace).defer("embedding", "search_vector")
    qs = qs.filter(status__in=filters.statuses or LIVE_STATUSES)
    exact = {
        "kind": filters.kind,
        "scope": filters.scope,
        "key": filters.key,
        "agent": filters.agent,
        "source": filters.source,
        "reliability": filters.reliability,
    }
    qs = qs.filter(**{name: value for name, value in exact.items() if value is not None})
    if filters.tags_any:
        qs = qs.filter(tags__overlap=filters.tags_any)
    if filters.tags_all:
        qs = qs.filter(tags__contains=filters.tags_all)
    if filters.text:
        qs = qs.filter(search_vector=SearchQuery(filters.text, config="english", search_type="websearch"))
    if not filters.include_superseded:
        qs = qs.exclude(reliability=Reliability.SUPERSEDED)
    if filters.recorded_after:
        qs = qs.filter(recorded_at__gte=filters.recorded_after)
    if filters.recorded_before:
        qs = qs.filter(recorded_at__lt=filters.recorded_before)
    return qs.order_by("-recorded_at", "-id")


# A chain is read whole up to this many facts; longer ones (none seen in practice) are cut, oldest first.
CHAIN_LIMIT = 200


def chain_order(memory: Memory) -> tuple[bool, dt.datetime]:
    """How a chain's facts are listed here and on the Chains page: replaced ones by when they became true, head last."""
    return (memory.superseded_at is None, memory.valid_from)


def memory_chain(*, memory: Memory) -> list[Memory]:
    """The whole supersede chain through ``memory``, oldest first, head last.

    A chain can branch backwards: two facts replaced by the same newer one
    (a merge of two stories) both belong to it. So this walks forward to the
    head, then takes every fact that leads to the head, level by level, the
    way the Chains page groups them; following one predecessor per step used
    to drop the others.
    """
    head = memory
    seen = {memory.pk}
    while head.superseded_by_id is not None and head.superseded_by_id not in seen:
        head = Memory.objects.defer("embedding").get(pk=head.superseded_by_id)
        seen.add(head.pk)
    members: dict[uuid.UUID, Memory] = {head.pk: head}
    frontier = [head.pk]
    while frontier and len(members) < CHAIN_LIMIT:
        level = list(
            Memory.objects.filter(superseded_by__in=frontier)
            .exclude(pk__in=list(members))
            .defer("embedding")
            .order_by("superseded_at")[: CHAIN_LIMIT - len(members)]
        )
        members.update((m.pk, m) for m in level)
        frontier = [m.pk for m in level]
    members.setdefault(memory.pk, memory)
    return sorted(members.values(), key=chain_order)


def memory_chain_head(*, memory: Memory) -> Memory:
    return memory_chain(memory=memory)[-1] if memory.superseded_by_id else memory


Direction = Literal["out", "in", "both"]


@dataclass
class Neighbor:
    memory: Memory
    rel: str
    direction: Literal["out", "in"]
    depth: int
    link_id: int
    via: uuid.UUID


@dataclass
class Neighborhood:
    neighbors: list[Neighbor]
    dangling: list[uuid.UUID]


def memory_neighbors(
    *, memory: Memory, rels: list[str] | None = None, direction: Direction = "both", depth: int = 1
) -> Neighborhood:
    """Breadth-first walk over links up to ``depth`` hops, each memory visited once.

    Cycles are fine (the visited set stops them). Targets that are no longer
    live (forgotten, decayed) are not walked through; they are listed as
    ``dangling`` so an agent can tidy the link up.
    """
    visited = {memory.pk}
    dangling: list[uuid.UUID] = []
    found: list[Neighbor] = []
    frontier: deque[tuple[uuid.UUID, int]] = deque([(memory.pk, 0)])
    while frontier:
        level_ids = [node for node, d in frontier]
        level = frontier[0][1] + 1
        frontier.clear()
        if level > depth:
            break
        condition = Q()
        if direction in ("out", "both"):
            condition |= Q(src_id__in=level_ids)
        if direction in ("in", "both"):
            condition |= Q(dst_id__in=level_ids)
        edges = Link.objects.filter(condition)
        if rels:
            edges = edges.filter(rel__in=rels)
        batch: list[tuple[Link, uuid.UUID, Literal["out", "in"], uuid.UUID]] = []
        for link in edges.order_by("created_at", "id"):
            if direction in ("out", "both") and link.src_id in level_ids:
                batch.append((link, link.dst_id, "out", link.src_id))
            if direction in ("in", "both") and link.dst_id in level_ids:
                batch.append((link, link.src_id, "in", link.dst_id))
        targets = {
            m.pk: m
            for m in Memory.objects.filter(pk__in={t for _, t, _, _ in batch}).defer("embedding", "search_vector")
        }
        for link, target_id, edge_direction, via in batch:
            if target_id in visited:
                continue
            visited.add(target_id)
            target = targets[target_id]
            if target.status not in LIVE_STATUSES:
                dangling.append(target_id)
                continue
            found.append(Neighbor(target, link.rel, edge_direction, level, link.pk, via))
            frontier.append((target_id, level))
    return Neighborhood(neighbors=found, dangling=dangling)


def memories_stale_pending_ids(*, older_than: dt.timedelta, limit: int = 10_000) -> list[uuid.UUID]:
    """Facts still waiting for an embedding after ``older_than`` (a worker died or lagged)."""
    cutoff = timezone.now() - older_than
    return list(
        Memory.objects.filter(status=Status.PENDING_EMBED, recorded_at__lt=cutoff)
        .order_by("recorded_at")
        .values_list("id", flat=True)[:limit]
    )


def memories_load_vectors(memories: list[Memory]) -> None:
    """Fill in, with one query, the embeddings a query deferred (``.defer("embedding")``).

    Candidate queries return the cosine with each row instead of the vector,
    and only the few rows that are compared with each other need theirs. They
    come in binary (``memories/vectors.py``) as float32 arrays: parsing the
    text form cost ~0.1 ms a row.
    """
    wanted = [m for m in memories if "embedding" in m.get_deferred_fields()]
    if not wanted:
        return
    rows = Memory.objects.filter(pk__in=[m.pk for m in wanted]).annotate(vector=VectorBytes("embedding"))
    vectors = dict(rows.values_list("pk", "vector"))
    for memory in wanted:
        memory.embedding = vector_from_bytes(vectors.get(memory.pk))


def memories_with_vectors(memories: QuerySet[Memory]) -> list[Memory]:
    """The query's memories with their vectors read in binary (float32 arrays, as ``memories_load_vectors``)."""
    rows: list[Memory] = list(memories.defer("embedding").annotate(embedding_bytes=VectorBytes("embedding")))
    for memory in rows:
        memory.embedding = vector_from_bytes(getattr(memory, "embedding_bytes"))  # noqa: B009 - an annotation
    return rows


@dataclass
class WorkspaceSummary:
    workspace: Workspace
    role: str
    live_memories: int
    pending_embed: int


def workspaces_for_user(*, user: User) -> list[WorkspaceSummary]:
    """The workspaces a person belongs to (all of them for a superuser), with fact counts."""
    if getattr(user, "is_superuser", False):
        workspaces = Workspace.objects.all()
        roles = {m.workspace_id: m.role for m in Membership.objects.filter(user=user)}
    else:
        workspaces = Workspace.objects.filter(memberships__user=user)
        roles = {m.workspace_id: m.role for m in Membership.objects.filter(user=user)}
    workspaces = workspaces.annotate(
        live=Count("memories", filter=Q(memories__status__in=LIVE_STATUSES)),
        pending=Count("memories", filter=Q(memories__status="pending_embed")),
    ).order_by("name")
    return [WorkspaceSummary(ws, roles.get(ws.pk, "admin"), ws.live, ws.pending) for ws in workspaces]


def facts_waiting_for_vector() -> bool:
    """Any committed fact still waiting for its embedding (a scan of the pending_embed partial index)."""
    return Memory.objects.filter(status=Status.PENDING_EMBED).exists()


def fresh_work_waiting() -> bool:
    """Facts committed and not yet embedded, or embedded and not yet checked: work before any background job."""
    return Memory.objects.filter(
        Q(status=Status.PENDING_EMBED) | Q(status=Status.ACTIVE, checked_at__isnull=True)
    ).exists()


def memories_subjects_read_from_text() -> QuerySet[Memory]:
    """Facts whose subject came from a reader: embedded (read then), not corrected by a person."""
    return Memory.objects.exclude(subject_source__in=[subjects.SOURCE_REVIEWER, ""])


def memories_stale_subjects() -> QuerySet[Memory]:
    """Facts whose subject an older reader read (``subjects.READER``); a reviewer's correction is never stale."""
    return memories_subjects_read_from_text().exclude(subject_reader=subjects.READER)


@dataclass(frozen=True)
class Backlog:
    waiting: int
    oldest_seconds: float | None


@dataclass(frozen=True)
class PipelineBacklog:
    embedding: Backlog  # committed, waiting for a vector
    checking: Backlog  # embedded, waiting for the conflict check
    subjects_to_reread: int  # read by an older subject reader, waiting to be read again in the background


def pipeline_backlog(*, workspace: Workspace | None = None) -> PipelineBacklog:
    """How many facts wait for embedding and for checking, and how long the oldest has waited."""
    memories = Memory.objects.all() if workspace is None else Memory.objects.filter(workspace=workspace)
    stale_subjects = (
        memories_stale_subjects() if workspace is None else memories_stale_subjects().filter(workspace=workspace)
    )
    now = timezone.now()

    def backlog(rows: QuerySet[Memory], since: str) -> Backlog:
        summary = rows.aggregate(n=Count("id"), oldest=Min(since))
        oldest = summary["oldest"]
        return Backlog(summary["n"], round((now - oldest).total_seconds(), 1) if oldest else None)

    return PipelineBacklog(
        embedding=backlog(memories.filter(status=Status.PENDING_EMBED), "recorded_at"),
        checking=backlog(memories.filter(status=Status.ACTIVE, checked_at__isnull=True), "embedded_at"),
        subjects_to_reread=stale_subjects.count(),
    )


@dataclass(frozen=True)
class UnreadableTimestamps:
    """A memory with timestamps outside the readable window: each such column, as PostgreSQL prints it."""

    memory_id: uuid.UUID
    workspace_id: int
    values: dict[str, str]


def memory_timestamp_columns() -> list[str]:
    return [f.column for f in Memory._meta.concrete_fields if isinstance(f, DateTimeField) and f.column]


def memories_with_unreadable_timestamps(*, lock: bool = False) -> list[UnreadableTimestamps]:
    """Memories with a timestamp outside years 1900–2200 in UTC (``memoryhub.storable``), oldest id first.

    Rows written before the API checked its timestamps may hold a year past 9999
    in UTC, which psycopg cannot read: every read of such a memory fails. So the
    comparison happens in SQL and the values come back as text, never as
    ``datetime``. ``lock`` takes the rows ``FOR UPDATE`` (inside a transaction).
    """
    quote = connection.ops.quote_name
    outside = {c: f"{quote(c)} NOT BETWEEN %(earliest)s AND %(latest)s" for c in memory_timestamp_columns()}
    as_text = ", ".join(f"CASE WHEN {condition} THEN {quote(c)}::text END" for c, condition in outside.items())
    # Column and table names come from the model, never from input; the bounds are parameters.
    sql = (
        f"SELECT id, workspace_id, {as_text} FROM {quote(Memory._meta.db_table)} "  # noqa: S608
        f"WHERE {' OR '.join(outside.values())} ORDER BY id"
    )
    if lock:
        sql += " FOR UPDATE"
    with connection.cursor() as cursor:
        cursor.execute(sql, {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP})
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    found: list[UnreadableTimestamps] = []
    for memory_id, workspace_id, *printed in rows:
        values = {column: str(text) for column, text in zip(outside, printed, strict=True) if text is not None}
        found.append(UnreadableTimestamps(memory_id=memory_id, workspace_id=workspace_id, values=values))
    return found


@dataclass
class Graph:
    """Seed 003's ``subgraph``: the memories reached and every link between them."""

    nodes: dict[uuid.UUID, Memory]
    edges: list[Link]
    truncated: bool = False


SUBGRAPH_MAX_NODES = 500


def memory_subgraph(*, workspace: Workspace, memory_ids: list[uuid.UUID], depth: int = 1) -> Graph:
    """The memories within ``depth`` links of ``memory_ids`` (either direction) and the links among them.

    Forgotten or decayed memories are nodes too (a graph is for inspecting), but
    the walk does not go through them. At most ``SUBGRAPH_MAX_NODES`` nodes:
    past that the walk stops and ``truncated`` says so.
    """
    start = {m.pk: m for m in Memory.objects.filter(workspace=workspace, pk__in=memory_ids).defer("embedding")}
    missing = [str(pk) for pk in memory_ids if pk not in start]
    if missing:
        raise InvalidInput(f"no memory with these ids in the workspace: {', '.join(missing)}", field="memory_ids")
    nodes = dict(start)
    frontier = [pk for pk, m in start.items() if m.status in LIVE_STATUSES]
    truncated = False
    for _level in range(depth):
        if not frontier:
            break
        edges = Link.objects.filter(Q(src_id__in=frontier) | Q(dst_id__in=frontier), workspace=workspace)
        reached = {pk for link in edges for pk in (link.src_id, link.dst_id)} - set(nodes)
        if len(nodes) + len(reached) > SUBGRAPH_MAX_NODES:
            reached = set(sorted(reached, key=str)[: SUBGRAPH_MAX_NODES - len(nodes)])
            truncated = True
        found = Memory.objects.filter(pk__in=reached).defer("embedding")
        nodes.update({m.pk: m for m in found})
        frontier = [m.pk for m in found if m.status in LIVE_STATUSES]
        if truncated:
            break
    links = list(
        Link.objects.filter(workspace=workspace, src_id__in=list(nodes), dst_id__in=list(nodes)).order_by("id")
    )
    return Graph(nodes=nodes, edges=links, truncated=truncated)


def subject_corrections(*, workspace: Workspace | None = None) -> list[dict[str, str]]:
    """Reviewers' subject corrections as training rows: the text, what the hub read, what the reviewer set.

    Read from the ``memory.subject_correct`` events (append-only), oldest first; a
    fact corrected twice gives two rows, the later one the better label.
    """
    events = Event.objects.filter(verb="memory.subject_correct").select_related("memory").order_by("created_at", "pk")
    if workspace is not None:
        events = events.filter(workspace=workspace)
    rows = []
    for event in events:
        change = next((c for c in event.changes if c.get("model") == "memories.memory"), None)
        if change is None or event.memory is None:
            continue
        before, after = change.get("before", {}), change.get("after", {})
        # A field the correction left as it was is in neither: it was right, and is what the row says now.
        entity = str(after.get("subject_entity", before.get("subject_entity", event.memory.subject_entity)))
        attribute = str(after.get("subject_attribute", before.get("subject_attribute", event.memory.subject_attribute)))
        rows.append(
            {
                "memory_id": str(event.memory.pk),
                "text": event.memory.text,
                "key": event.memory.key,
                "read_entity": str(before.get("subject_entity", entity)),
                "read_attribute": str(before.get("subject_attribute", attribute)),
                "entity": entity,
                "attribute": attribute,
                "corrected_at": event.created_at.isoformat(),
            }
        )
    return rows
