"""Reads for the memory browser: a memory's links and events, supersede chains across a workspace."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import Q

from memories.models import Event, Link, Memory, Status
from memories.selectors import chain_order
from memoryhub.errors import NotFound
from workspaces.models import Workspace

# What the browser's status filter offers, and the statuses each choice means.
STATUS_CHOICES: dict[str, list[str]] = {
    "live": [Status.ACTIVE.value, Status.PENDING_EMBED.value],
    "forgotten": [Status.FORGOTTEN.value],
    "merged": [Status.MERGED.value],
    "all": [s.value for s in Status],
}


@dataclass
class LinkRow:
    link: Link
    other: Memory
    outgoing: bool


def memory_links(*, memory: Memory, limit: int = 50) -> list[LinkRow]:
    """Every edge touching ``memory`` (either direction) with the memory at the other end."""
    links = (
        Link.objects.filter(Q(src=memory) | Q(dst=memory))
        .select_related("src", "dst")
        .defer("src__embedding", "dst__embedding", "src__search_vector", "dst__search_vector")
        .order_by("created_at", "id")[:limit]
    )
    return [
        LinkRow(link, link.dst if link.src_id == memory.pk else link.src, link.src_id == memory.pk) for link in links
    ]


def memory_link_get(*, workspace: Workspace, memory_id: uuid.UUID, link_id: int) -> Link:
    """A link touching the memory, in the workspace (404 otherwise)."""
    link = (
        Link.objects.filter(workspace=workspace, pk=link_id)
        .filter(Q(src_id=memory_id) | Q(dst_id=memory_id))
        .select_related("workspace", "src")
        .first()
    )
    if link is None:
        raise NotFound("no link with this id on this memory", field="link")
    return link


def memory_events(*, memory: Memory, limit: int = 50) -> list[Event]:
    """Events about ``memory``: those naming it, and those that changed its row."""
    touched = Q(changes__contains=[{"model": "memories.memory", "pk": str(memory.pk)}])
    return list(
        Event.objects.filter(workspace_id=memory.workspace_id)
        .filter(Q(memory=memory) | touched)
        .select_related("user")
        .order_by("-created_at", "-id")[:limit]
    )


@dataclass
class Chain:
    memories: list[Memory]  # oldest first, the current head last

    @property
    def head(self) -> Memory:
        return self.memories[-1]


def supersede_chains(*, workspace: Workspace, limit: int = 500) -> list[Chain]:
    """Supersede chains of the workspace, most recently extended first.

    Reads the ``limit`` latest superseded facts and their successors in two
    queries, then joins them into chains in memory.
    """
    superseded = list(
        Memory.objects.filter(workspace=workspace, superseded_by__isnull=False)
        .defer("embedding", "search_vector")
        .order_by("-superseded_at")[:limit]
    )
    by_id: dict[uuid.UUID, Memory] = {m.pk: m for m in superseded}
    missing = {m.superseded_by_id for m in superseded if m.superseded_by_id and m.superseded_by_id not in by_id}
    for head in Memory.objects.filter(pk__in=missing).defer("embedding", "search_vector"):
        by_id[head.pk] = head
    predecessors: dict[uuid.UUID, list[Memory]] = {}
    for memory in superseded:
        assert memory.superseded_by_id is not None  # noqa: S101 - filtered above
        predecessors.setdefault(memory.superseded_by_id, []).append(memory)
    heads = [m for m in by_id.values() if m.superseded_by_id is None or m.superseded_by_id not in by_id]
    chains = []
    for head in heads:
        members: list[Memory] = []
        frontier = [head]
        seen: set[uuid.UUID] = set()
        while frontier:
            current = frontier.pop()
            if current.pk in seen:
                continue
            seen.add(current.pk)
            members.append(current)
            frontier.extend(predecessors.get(current.pk, []))
        if len(members) > 1:
            chains.append(Chain(sorted(members, key=chain_order)))
    chains.sort(key=lambda c: max(m.superseded_at for m in c.memories if m.superseded_at), reverse=True)
    return chains
