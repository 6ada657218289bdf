"""``AsyncMemoryHub`` against a live test server: the same calls, awaited; iterators are async."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from typing import Any

import pytest
from memoryhub_client import AsyncMemoryHub, InvalidInput, NotFound, RetryEvent

from memories.models import Memory as MemoryRow
from tests.client.conftest import FAST_RETRIES
from tests.conflicts.cards import pair_card
from tests.factories import run_async
from workspaces.models import AgentKey, ApiRateWindow

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_async_client_commits_reads_pages_and_answers(live_server: Any, key: tuple[AgentKey, str]) -> None:
    card, _, _ = pair_card(key[0].workspace)

    async def session() -> dict[str, Any]:
        async with AsyncMemoryHub(live_server.url, key[1], retry=FAST_RETRIES) as hub:
            one = await hub.remember("The async client commits too")
            batch = await hub.remember_batch([{"text": f"Async fact {i}"} for i in range(5)], batch_size=2)
            fetched = await hub.get_memory(one.id)
            every = [m.id async for m in hub.iter_memories(limit=2)]
            cards = [c.id async for c in hub.iter_conflicts(state="open", limit=1)]
            answer = await hub.answer_conflict(card.pk, "both")
            chain = await hub.chain(one.id)
            status = await hub.status()
            try:
                await hub.get_memory(uuid.uuid4())
            except NotFound as exc:
                missing = exc.code
            try:
                await hub.remember("")
            except InvalidInput as exc:
                invalid = exc.fields
            return locals()

    got = run_async(session)

    assert got["fetched"].text == "The async client commits too"
    assert isinstance(got["fetched"].recorded_at, dt.datetime)
    assert got["batch"].stored == 5
    assert [r.index for r in got["batch"].results] == [0, 1, 2, 3, 4]
    assert len(got["every"]) == len(set(got["every"])) == MemoryRow.objects.count() == 8
    assert got["cards"] == [card.pk]
    assert got["answer"].card.state == "dismissed"
    assert got["chain"].head == got["one"].id
    assert got["status"].embedding.waiting == 8  # the card's two facts and these six wait for a worker
    assert got["missing"] == "not_found"
    assert "text" in got["invalid"]


@pytest.mark.usefixtures("within_one_rate_window")
def test_the_async_client_waits_out_a_429(live_server: Any, key: tuple[AgentKey, str], settings: Any) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 1
    retries: list[RetryEvent] = []
    window = {}

    async def wait(seconds: float) -> None:
        window["asked"] = seconds
        await asyncio.to_thread(_a_minute_passes, key[0])

    async def session() -> None:
        async with AsyncMemoryHub(
            live_server.url, key[1], retry=FAST_RETRIES, on_retry=retries.append, sleep=wait
        ) as hub:
            await hub.remember("first")
            await hub.remember("second, after the wait")

    run_async(session)

    assert [r.status_code for r in retries] == [429]
    assert window["asked"] == retries[0].retry_after
    assert MemoryRow.objects.count() == 2


def _a_minute_passes(key: AgentKey) -> None:
    row = ApiRateWindow.objects.get(agent_key=key)
    ApiRateWindow.objects.filter(pk=row.pk).update(window_start=row.window_start - dt.timedelta(minutes=1))
