"""Reading a workspace out as JSON Lines (docs/PORTABILITY.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q

from conflicts.models import Answer, CardFact, ConflictCard, Tolerance, ToleranceChange, Uncertainty
from memories.models import Event, Link, Memory
from portability.codec import FORMAT_NAME, FORMAT_VERSION, MODEL_OF_TYPE, agent_key_label, encode_row
from workspaces.models import AgentKey, Workspace

# Rows fetched per query: bounded memory for a workspace of any size.
CHUNK = 500


def _line(row: dict[str, Any]) -> str:
    # allow_nan=False: PostgreSQL's jsonb cannot hold NaN, so no file of ours should either.
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def memory_ids_in_file_order(workspace: Workspace) -> list[Any]:
    """Oldest first, but each fact's successor (``superseded_by``) before it, so no line refers forward."""
    rows = list(
        Memory.objects.filter(workspace=workspace).order_by("recorded_at", "id").values_list("id", "superseded_by")
    )
    successor = dict(rows)
    placed: set[Any] = set()
    order: list[Any] = []
    for memory_id, _ in rows:
        chain: list[Any] = []
        current: Any = memory_id
        # Follow the chain up to a placed fact (or one outside the workspace); the guard stops on a cycle.
        while current is not None and current in successor and current not in placed and current not in chain:
            chain.append(current)
            current = successor[current]
        for item in reversed(chain):
            placed.add(item)
            order.append(item)
    return order


def workspace_export_counts(workspace: Workspace) -> dict[str, int]:
    return {
        "memory": Memory.objects.filter(workspace=workspace).count(),
        "uncertainty": Uncertainty.objects.filter(workspace=workspace).count(),
        "card": ConflictCard.objects.filter(workspace=workspace).count(),
        "answer": Answer.objects.filter(card__workspace=workspace).count(),
        "link": Link.objects.filter(workspace=workspace).count(),
        "tolerance": Tolerance.objects.filter(workspace=workspace).count(),
        "tolerance_change": ToleranceChange.objects.filter(workspace=workspace).count(),
        "event": Event.objects.filter(workspace=workspace).count(),
    }


def workspace_export_lines(workspace: Workspace) -> Iterator[str]:
    """The workspace as JSON Lines: a header, then every row, referenced rows first.

    A generator, read in chunks, so the API can stream it and a large workspace
    never sits in memory whole. Every query reads one snapshot, so agents
    committing meanwhile cannot make the rows disagree with the header's counts.
    """
    if connection.in_atomic_block:
        # Inside a caller's transaction (a test, a script): its snapshot rules, and
        # PostgreSQL takes no isolation level after the first query.
        yield from _export_lines(workspace)
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield from _export_lines(workspace)


def _export_lines(workspace: Workspace) -> Iterator[str]:
    counts = workspace_export_counts(workspace)
    yield _line(
        {
            "type": "header",
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "workspace": {"slug": workspace.slug, "name": workspace.name, "config": workspace.config},
            "counts": counts,
        }
    )
    user_ids = set(
        Event.objects.filter(workspace=workspace, user__isnull=False).values_list("user_id", flat=True)
    ) | set(Answer.objects.filter(card__workspace=workspace, user__isnull=False).values_list("user_id", flat=True))
    users = dict(get_user_model().objects.filter(id__in=user_ids).values_list("id", "username"))
    keys = {key.id: agent_key_label(key) for key in AgentKey.objects.filter(workspace=workspace)}

    def rows(type_name: str, instances: Iterator[Any]) -> Iterator[str]:
        for instance in instances:
            row = encode_row(type_name, instance, users=users, keys=keys)
            if type_name == "card":
                row["facts"] = [
                    {"id": fact_id, "memory": str(memory_id), "position": position}
                    for fact_id, memory_id, position in CardFact.objects.filter(card=instance)
                    .order_by("position", "id")
                    .values_list("id", "memory_id", "position")
                ]
            yield _line(row)

    order = memory_ids_in_file_order(workspace)
    for start in range(0, len(order), CHUNK):
        ids = order[start : start + CHUNK]
        by_id = Memory.objects.in_bulk(ids)
        yield from rows("memory", (by_id[i] for i in ids))
    scoped = Q(workspace=workspace)
    yield from rows("uncertainty", Uncertainty.objects.filter(scoped).order_by("created_at", "id").iterator(CHUNK))
    yield from rows("card", ConflictCard.objects.filter(scoped).order_by("created_at", "id").iterator(CHUNK))
    yield from rows("answer", Answer.objects.filter(card__workspace=workspace).order_by("id").iterator(CHUNK))
    for type_name in ("link", "tolerance", "tolerance_change", "event"):
        model = MODEL_OF_TYPE[type_name]
        yield from rows(type_name, model._default_manager.filter(scoped).order_by("pk").iterator(CHUNK))
