from __future__ import annotations

import json

import pytest

from memories.models import Memory
from tests.conftest import AgentClient
from tests.factories import WorkspaceFactory, agent_key_for


@pytest.mark.django_db
def test_it_streams_the_workspace_as_json_lines(agent: AgentClient) -> None:
    agent.grant("admin")
    agent.commit("The user lives in Oslo")

    response = agent.get("/export")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"] == 'attachment; filename="acme.jsonl"'
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert rows[0]["type"] == "header"
    assert rows[0]["workspace"]["slug"] == "acme"
    assert [r["text"] for r in rows if r["type"] == "memory"] == ["The user lives in Oslo"]
    # The key is named, never its secret.
    assert all(r["agent_key"] == f"planner (mh_{agent.key_row.prefix}_…)" for r in rows if r["type"] == "memory")


@pytest.mark.django_db
def test_export_and_import_need_the_admin_scope(agent: AgentClient) -> None:
    assert agent.get("/export").status_code == 403
    response = agent.client.post("/api/v1/import", data="[]", content_type="application/json")
    assert response.status_code == 403
    assert "'admin' scope" in response.json()["detail"]


@pytest.mark.django_db
def test_it_imports_an_export_into_another_workspace(agent: AgentClient) -> None:
    agent.grant("admin")
    agent.commit("The user lives in Oslo")
    exported = b"".join(agent.get("/export").streaming_content)
    key_row, key = agent_key_for(WorkspaceFactory(slug="globex"), "mover")
    mover = AgentClient(key, key_row).grant("admin")

    response = mover.client.post("/api/v1/import", data=exported, content_type="application/x-ndjson")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["workspace"] == "globex"
    assert body["format"] == "memoryhub"
    assert body["counts"]["memory"] == 1
    assert body["renamed_ids"] == 1  # the fact's UUID is acme's in this hub
    assert Memory.objects.get(workspace__slug="globex").text == "The user lives in Oslo"


@pytest.mark.django_db
def test_a_refused_import_is_a_422_naming_the_line(agent: AgentClient) -> None:
    agent.grant("admin")
    agent.commit("The user lives in Oslo")
    exported = b"".join(agent.get("/export").streaming_content)

    response = agent.client.post("/api/v1/import", data=exported, content_type="application/x-ndjson")
    assert response.status_code == 422
    assert "already holds memories" in response.json()["detail"][0]["msg"]

    broken = exported + b"{oops\n"
    response = agent.client.post("/api/v1/import?merge=true", data=broken, content_type="application/x-ndjson")
    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"].startswith("line 4: not valid JSON")
    assert Memory.objects.filter(workspace__slug="acme").count() == 1


@pytest.mark.django_db
def test_it_imports_a_mem0_export(agent: AgentClient) -> None:
    agent.grant("admin")
    mem0 = [{"id": "m1", "memory": "Prefers window seats", "user_id": "alice", "created_at": "2024-07-22T10:00:00Z"}]

    response = agent.client.post("/api/v1/import", data=json.dumps(mem0), content_type="application/json")

    assert response.status_code == 201, response.content
    assert response.json()["format"] == "mem0"
    assert Memory.objects.get(workspace__slug="acme").scope == "user:alice"
