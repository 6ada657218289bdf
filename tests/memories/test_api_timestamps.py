"""Every timestamp the API accepts lies in years 1900–2200 in UTC, so every stored one reads back."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from memories.models import Memory
from tests.conftest import AgentClient
from tests.factories import MembershipFactory, UserFactory
from tests.memories.recall_helpers import remember

# Each is in range as written, and out of range (or unrepresentable) in UTC.
OUT_OF_RANGE = [
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+14:00",
    "2200-12-31T23:59:59-00:01",
    "1900-01-01T00:00:00+00:01",
    "1899-12-31T23:59:59Z",
    "2201-01-01T00:00:00Z",
    "9999-12-31T23:59:59",
]


@pytest.mark.parametrize("valid_from", OUT_OF_RANGE)
def test_it_rejects_a_valid_from_outside_1900_to_2200_utc(
    agent: AgentClient, field_errors: Any, valid_from: str
) -> None:
    errors = field_errors(agent.post("/memories", {"text": "x", "valid_from": valid_from}))

    assert "between 1900 and 2200" in errors["valid_from"]
    assert Memory.objects.count() == 0


@pytest.mark.parametrize("valid_from", ["1900-01-01T00:00:00Z", "2200-12-31T23:59:59.999999Z", "2200-12-31T23:59:59"])
def test_it_accepts_the_ends_of_the_range(agent: AgentClient, valid_from: str) -> None:
    memory = agent.commit("The ends of the range are in", valid_from=valid_from)

    assert agent.get(f"/memories/{memory['id']}").json()["valid_from"][:4] in {"1900", "2200"}


@pytest.mark.parametrize("valid_from", [0.5, 1_700_000_000, "0.5", "1700000000", True])
def test_it_rejects_a_number_for_a_timestamp(agent: AgentClient, field_errors: Any, valid_from: object) -> None:
    # pydantic would read these as seconds since 1970.
    errors = field_errors(agent.post("/memories", {"text": "x", "valid_from": valid_from}))

    assert "ISO 8601" in errors["valid_from"]
    assert Memory.objects.count() == 0


@pytest.mark.parametrize("param", ["recorded_before", "recorded_after"])
@pytest.mark.parametrize("value", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "0.5"])
def test_the_list_rejects_an_unsafe_recorded_bound(
    agent: AgentClient, field_errors: Any, param: str, value: str
) -> None:
    assert param in field_errors(agent.get("/memories", {param: value}))


@pytest.mark.parametrize("as_of", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", 0.5])
def test_recall_rejects_an_unsafe_as_of(agent: AgentClient, field_errors: Any, as_of: object) -> None:
    assert "as_of" in field_errors(agent.post("/recall", {"query": "anything", "as_of": as_of}))


def test_after_a_rejected_date_the_workspace_stays_readable(agent: AgentClient) -> None:
    fact = remember(agent.workspace, "The build server is in Frankfurt")
    rejected = agent.post("/memories", {"text": "The build server moved", "valid_from": "9999-12-31T23:59:59-14:00"})
    assert rejected.status_code == 422

    assert [m["id"] for m in agent.get("/memories").json()["items"]] == [str(fact.pk)]
    assert agent.get(f"/memories/{fact.pk}").status_code == 200
    assert [h["memory"]["id"] for h in agent.post("/recall", {"query": "build server"}).json()] == [str(fact.pk)]
    context = agent.post("/context", {"recent_messages": [{"content": "where is the build server?"}]})
    assert [m["memory"]["id"] for m in context.json()["memories"]] == [str(fact.pk)]
    user = UserFactory(username="viewer")
    MembershipFactory(user=user, workspace=agent.workspace, role="viewer")
    dashboard = Client()
    dashboard.force_login(user)
    assert "Frankfurt" in dashboard.get(f"/w/{agent.workspace.slug}/memories/").content.decode()
    assert agent.delete(f"/memories/{fact.pk}").status_code == 200
