"""The mem0 and Engram importers, on fixtures written by hand from each project's documented export."""

from __future__ import annotations

import datetime as dt
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from memories.models import Event, Memory, Source, Status
from tests.factories import WorkspaceFactory

MEM0 = [
    {
        "id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
        "memory": "Is a vegetarian and allergic to nuts",
        "hash": "3a1b2c",
        "metadata": {"origin": "onboarding chat"},
        "categories": ["food", "health"],
        "user_id": "alice",
        "agent_id": "travel-agent",
        "created_at": "2024-07-20T01:34:01.412047-07:00",
        "updated_at": "2024-07-21T09:00:00-07:00",
    },
    {
        "id": "c5a2f7d4-91b0-4e0e-9c5d-1f0e3f6b7a21",
        "memory": "Prefers window seats",
        "user_id": "alice",
        "agent_id": None,
        "metadata": None,
        "categories": [],
        "created_at": "2024-07-22T10:00:00Z",
        "updated_at": None,
    },
]

ENGRAM = {
    "version": "1",
    "exported_at": "2025-03-02 18:00:00",
    "sessions": [
        {
            "id": "sess-1",
            "project": "shop-api",
            "directory": "/home/dev/shop-api",
            "started_at": "2025-03-01 09:00:00",
            "ended_at": "2025-03-01 11:00:00",
            "summary": "Moved auth to JWT",
        }
    ],
    "observations": [
        {
            "id": 1,
            "sync_id": "obs-aaa",
            "session_id": "sess-1",
            "type": "decision",
            "title": "Auth uses JWT",
            "content": "The shop API authenticates with JWT bearer tokens, not sessions",
            "tool_name": None,
            "project": "shop-api",
            "scope": "project",
            "topic_key": "architecture/auth",
            "revision_count": 2,
            "duplicate_count": 1,
            "created_at": "2025-03-01 10:15:00",
            "updated_at": "2025-03-01 10:40:00",
            "deleted_at": None,
        },
        {
            "id": 2,
            "session_id": "sess-1",
            "type": "bugfix",
            "title": "Old cookie auth",
            "content": "Cookie sessions are configured in settings.py",
            "project": None,
            "scope": "project",
            "created_at": "2025-02-01 08:00:00",
            "updated_at": "2025-02-01 08:00:00",
            "deleted_at": "2025-03-01 10:16:00",
        },
    ],
    "prompts": [{"id": 1, "session_id": "sess-1", "content": "switch auth to jwt", "project": "shop-api"}],
}


def _import(tmp_path: Path, data: Any, *args: str, slug: str = "acme") -> str:
    path = tmp_path / "peer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = StringIO()
    call_command("import_workspace", slug, str(path), *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_it_maps_a_mem0_export(tmp_path: Path) -> None:
    out = _import(tmp_path, MEM0)  # detected: a JSON list

    assert "(mem0): 2 memory, 2 event" in out
    nuts, seats = Memory.objects.filter(workspace__slug="acme").order_by("recorded_at")
    assert nuts.text == "Is a vegetarian and allergic to nuts"
    assert nuts.tags == ["food", "health"]
    assert nuts.scope == "user:alice"
    assert nuts.agent == "travel-agent"
    assert nuts.source == Source.INFERRED
    assert nuts.confidence == 0.6
    assert nuts.status == Status.PENDING_EMBED
    created = dt.datetime(2024, 7, 20, 8, 34, 1, 412047, tzinfo=dt.UTC)
    assert nuts.valid_from == created
    assert nuts.recorded_at == created
    assert nuts.metadata == {
        "origin": "onboarding chat",
        "mem0": {
            "id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
            "user_id": "alice",
            "hash": "3a1b2c",
            "updated_at": "2024-07-21T09:00:00-07:00",
        },
    }
    assert seats.agent == "mem0"
    assert seats.tags == []
    event = Event.objects.get(memory=nuts)
    assert event.verb == "memory.import"
    assert event.actor == "import:mem0"


@pytest.mark.django_db
def test_it_reads_mem0_get_all_results(tmp_path: Path) -> None:
    _import(tmp_path, {"results": MEM0[:1]}, "--format", "mem0")

    assert Memory.objects.get(workspace__slug="acme").text == "Is a vegetarian and allergic to nuts"


@pytest.mark.django_db
def test_it_maps_an_engram_export(tmp_path: Path) -> None:
    out = _import(tmp_path, ENGRAM)  # detected: an object with observations

    assert "(engram): 2 memory" in out
    jwt = Memory.objects.get(workspace__slug="acme", key="architecture/auth")
    assert jwt.text == "The shop API authenticates with JWT bearer tokens, not sessions"
    assert jwt.scope == "shop-api"
    assert jwt.tags == ["decision"]
    assert jwt.agent == "engram"
    assert jwt.source == Source.EXPLICIT
    assert jwt.valid_from == dt.datetime(2025, 3, 1, 10, 15, tzinfo=dt.UTC)
    assert jwt.metadata["engram"] == {
        "id": 1,
        "sync_id": "obs-aaa",
        "session_id": "sess-1",
        "title": "Auth uses JWT",
        "scope": "project",
        "revision_count": 2,
        "duplicate_count": 1,
        "updated_at": "2025-03-01 10:40:00",
        "directory": "/home/dev/shop-api",
        "session_summary": "Moved auth to JWT",
    }
    cookie = Memory.objects.get(workspace__slug="acme", tags=["bugfix"])
    # No project of its own: its session's.
    assert cookie.scope == "shop-api"
    assert cookie.status == Status.FORGOTTEN
    assert cookie.expired_at == dt.datetime(2025, 3, 1, 10, 16, tzinfo=dt.UTC)


@pytest.mark.django_db
def test_a_bad_peer_item_names_it_and_imports_nothing(tmp_path: Path) -> None:
    broken = [MEM0[0], {"memory": "", "created_at": "2024-07-22T10:00:00Z"}]

    with pytest.raises(CommandError, match="mem0 item 2: memory must be a non-empty string"):
        _import(tmp_path, broken, "--format", "mem0")
    assert not Memory.objects.exists()


@pytest.mark.django_db
def test_a_peer_import_refuses_a_workspace_that_holds_rows(tmp_path: Path) -> None:
    WorkspaceFactory(slug="acme")
    _import(tmp_path, MEM0)

    with pytest.raises(CommandError, match="already holds memories"):
        _import(tmp_path, ENGRAM)
    _import(tmp_path, ENGRAM, "--merge")
    assert Memory.objects.filter(workspace__slug="acme").count() == 4


@pytest.mark.django_db
def test_an_unknown_shape_asks_for_the_format(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot tell the file's format"):
        _import(tmp_path, {"memories": []})
