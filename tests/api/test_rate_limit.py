"""Per-key API rate limit: 429 with Retry-After and the API's error shape, counted in the database."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from memories.models import Memory
from tests.conftest import AgentClient
from workspaces.models import ApiRateWindow

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("within_one_rate_window")]


def test_a_key_over_its_rate_gets_429_with_retry_after(agent: AgentClient, settings: Any) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 3

    answered = [agent.post("/memories", {"text": f"fact {i}"}).status_code for i in range(3)]
    refused = agent.post("/memories", {"text": "one too many"})

    assert answered == [201, 201, 201]
    assert refused.status_code == 429
    assert "more than 3 requests this minute" in refused.json()["detail"]
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert Memory.objects.count() == 3
    assert agent.get("/memories").status_code == 429  # reads count too


def test_each_key_has_its_own_count(agent: AgentClient, settings: Any) -> None:
    from tests.factories import agent_key_for

    settings.MEMORYHUB_API_RATE_PER_MINUTE = 2
    row, key = agent_key_for(agent.workspace, "researcher")
    other = AgentClient(key, row)
    agent.get("/memories")
    agent.get("/memories")

    assert agent.get("/memories").status_code == 429
    assert other.get("/memories").status_code == 200


def test_the_count_starts_again_in_the_next_window(agent: AgentClient, settings: Any) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 1
    agent.get("/memories")
    assert agent.get("/memories").status_code == 429

    # The window the counter holds is over: as if a minute had passed.
    ApiRateWindow.objects.filter(agent_key=agent.key_row).update(
        window_start=ApiRateWindow.objects.get(agent_key=agent.key_row).window_start - dt.timedelta(minutes=1)
    )

    assert agent.get("/memories").status_code == 200
    assert ApiRateWindow.objects.get(agent_key=agent.key_row).count == 1


def test_a_request_costs_one_row_per_key_not_one_per_request(agent: AgentClient) -> None:
    for _ in range(5):
        agent.get("/memories")

    window = ApiRateWindow.objects.get()
    assert (window.agent_key_id, window.count) == (agent.key_row.pk, 5)


def test_a_rate_of_zero_turns_the_limit_off(agent: AgentClient, settings: Any) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 0

    assert all(agent.get("/memories").status_code == 200 for _ in range(3))
    assert not ApiRateWindow.objects.exists()


def test_a_wrong_key_is_401_and_counts_nothing(agent: AgentClient, settings: Any) -> None:
    from django.test import Client

    settings.MEMORYHUB_API_RATE_PER_MINUTE = 1
    stranger = Client(HTTP_AUTHORIZATION=f"Bearer mh_{agent.key_row.prefix}_wrong")

    assert stranger.get("/api/v1/memories").status_code == 401
    assert agent.get("/memories").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_count_commits_on_its_own_and_the_session_keeps_waiting_for_the_flush() -> None:
    from django.db import connection

    from tests.factories import WorkspaceFactory, agent_key_for
    from workspaces.ratelimit import rate_count

    row, _ = agent_key_for(WorkspaceFactory(slug="acme"), "bot")

    assert [rate_count(key=row).count for _ in range(3)] == [1, 2, 3]
    assert ApiRateWindow.objects.get(agent_key=row).count == 3
    with connection.cursor() as cursor:
        # The count's commit did not wait for the WAL flush; nothing after it in the session skips that wait.
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("on",)
