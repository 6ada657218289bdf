"""Issue 25's bar for MCP, end to end: a real worker, the real detector, the SDK's client over streamable HTTP.

An agent connects with its key, lists the tools, remembers two facts that
contradict each other, and sees the conflict through ``find_conflicts`` (the card
the worker's detection opened) and through ``recall`` (the hits are disputed).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from celery.contrib.testing.worker import start_worker

from memories.models import Memory
from memoryhub.celery import app
from tests.factories import run_async
from tests.mcp.conftest import Agent, LiveHub, http_client
from tests.mcp.test_tools import call

pytestmark = [pytest.mark.worker]

WAIT_SECONDS = 60


@pytest.fixture
def worker(transactional_db: None) -> Iterator[Any]:
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=20) as w:
        yield w
        _wait_until_idle()


def _wait_until_idle() -> None:
    """Let the worker finish checking before the tables are flushed (a check mid-flush would deadlock)."""
    deadline = time.monotonic() + WAIT_SECONDS
    busy = Memory.objects.filter(status="pending_embed") | Memory.objects.filter(
        status="active", checked_at__isnull=True
    )
    while busy.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)


def test_an_agent_sees_two_clashing_facts_as_a_conflict(hub: LiveHub, agent: Agent, worker: Any) -> None:
    async def scenario() -> tuple[list[str], dict[str, Any], dict[str, Any], list[dict[str, Any]], list[Any]]:
        async with http_client(hub.mcp_url, agent.key) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            # warn: checked at once against what is known (so embedded at once too), and stored anyway.
            first = await call(client, "remember", {"text": "The user is vegetarian", "on_conflict": "warn"})
            second = await call(client, "remember", {"text": "The user eats steak every day", "on_conflict": "warn"})
            cards: list[dict[str, Any]] = []
            deadline = time.monotonic() + WAIT_SECONDS
            while not cards and time.monotonic() < deadline:
                cards = (await call(client, "find_conflicts", {"state": "open"}))["cards"]
                if not cards:
                    await anyio.sleep(0.5)
            hits = (await call(client, "recall", {"query": "Does the user eat meat?"}))["hits"]
            return tools, first, second, cards, hits

    tools, first, second, cards, hits = run_async(scenario)

    assert {"remember", "recall", "find_conflicts"} <= set(tools)
    [clash] = second["conflicts"]
    assert clash["memory_id"] == first["id"]
    assert clash["kind"] == "true_contradiction"
    assert len(cards) == 1, f"no conflict card within {WAIT_SECONDS}s"
    assert {fact["id"] for fact in cards[0]["facts"]} == {first["id"], second["id"]}
    assert cards[0]["question"]
    disputed = {hit["memory"]["id"] for hit in hits if hit["disputed"]}
    assert disputed == {first["id"], second["id"]}
