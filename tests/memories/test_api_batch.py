"""POST /memories/batch: many facts in one request, each with its own result."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Event, Memory
from tests.conftest import AgentClient
from tests.factories import memory

pytestmark = pytest.mark.django_db


def _batch(agent: AgentClient, items: list[dict[str, Any]]) -> Any:
    return agent.post("/memories/batch", {"memories": items})


def test_a_batch_stores_every_valid_fact_and_rejects_the_others_with_reasons(agent: AgentClient) -> None:
    response = _batch(
        agent,
        [
            {"text": "The API rate limit is 1,000 req/s", "scope": "api", "tags": ["limits"]},
            {"text": "   "},
            {"text": "Deploys happen on Tuesdays", "importance": 7},
            {"text": "Backups are kept 30 days", "on_conflict": "raise"},
            {"text": "Staging runs PostgreSQL 16", "agent": "ops-bot"},
        ],
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["stored"], body["merged"], body["rejected"]) == (2, 0, 3)
    actions = [r["action"] for r in body["results"]]
    assert actions == ["stored", "rejected", "rejected", "rejected", "stored"]
    assert body["results"][1]["errors"][0]["loc"] == ["body", "memories", 1, "text"]
    assert body["results"][2]["errors"][0]["loc"] == ["body", "memories", 2, "importance"]
    assert "commit alone" in body["results"][3]["errors"][0]["msg"]
    stored = Memory.objects.filter(workspace=agent.workspace).order_by("text")
    assert [m.text for m in stored] == ["Staging runs PostgreSQL 16", "The API rate limit is 1,000 req/s"]
    assert all(m.status == "pending_embed" for m in stored)
    assert Memory.objects.get(text="Staging runs PostgreSQL 16").agent == "ops-bot"
    assert Event.objects.filter(verb="memory.create").count() == 2  # one audit row per fact, as single commits


def test_the_same_fact_again_is_merged_into_the_live_one(agent: AgentClient) -> None:
    live = memory(workspace=agent.workspace, text="The API uses REST", scope="api", status="active")

    body = _batch(
        agent,
        [
            {"text": "the api  uses REST", "scope": "api"},  # the same fact, spelled a little differently
            {"text": "The API uses REST", "scope": "web"},  # another scope: a fact of its own
            {"text": "Deploys happen on Tuesdays"},
            {"text": "Deploys happen on Tuesdays"},  # twice in one batch: stored once
        ],
    ).json()

    assert [r["action"] for r in body["results"]] == ["merged", "stored", "stored", "merged"]
    assert body["results"][0]["id"] == str(live.pk)
    assert body["results"][3]["id"] == body["results"][2]["id"]
    assert Memory.objects.filter(workspace=agent.workspace).count() == 3
    assert Memory.objects.get(pk=live.pk).reinforcement_count == 1


def test_an_item_the_database_cannot_store_rejects_only_itself(agent: AgentClient) -> None:
    body = _batch(
        agent, [{"text": "fine"}, {"text": "bad\u0000text"}, {"text": "also fine", "tags": ["x\u0000"]}]
    ).json()

    assert [r["action"] for r in body["results"]] == ["stored", "rejected", "rejected"]
    assert body["results"][1]["errors"][0]["loc"] == ["body", "memories", 1, "text"]


def test_a_batch_is_bounded(agent: AgentClient) -> None:
    assert _batch(agent, []).status_code == 422
    assert _batch(agent, [{"text": f"fact {n}"} for n in range(1001)]).status_code == 422
