"""A burst of commits through the API and the real broker: messages stay few, and delivered ones are pruned."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conflicts.tasks import detect_pending
from memories.models import Memory
from memories.tasks import embed_pending
from memoryhub.broker import broker_depth, broker_prune
from memoryhub.celery import app
from tests.conftest import AgentClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _empty_broker() -> Iterator[None]:
    app.control.purge()
    broker_prune()
    yield
    app.control.purge()
    broker_prune()


def _waiting() -> int:
    depth = broker_depth()
    assert depth is not None, "the tests run on the embedded SQL broker"
    return depth.waiting.get("fresh", 0)


def test_a_burst_of_commits_puts_one_drain_message_per_stage_on_the_broker(
    agent: AgentClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The drains' time budget is not what is tested: on a loaded machine 40 checks may not fit in it.
    monkeypatch.setattr("conflicts.tasks.DRAIN_SECONDS", 600.0)
    monkeypatch.setattr("memories.tasks.DRAIN_SECONDS", 600.0)
    for n in range(40):
        agent.commit(f"Service {n} listens on port {8000 + n}")

    assert _waiting() == 1  # one embedding drain for 40 facts

    assert embed_pending() == 40
    assert _waiting() == 2  # and one checking drain once they are embedded (the first is still unconsumed)

    assert detect_pending() == 40
    assert Memory.objects.filter(checked_at__isnull=True).count() == 0


def test_delivered_messages_are_pruned() -> None:
    with app.connection_for_write() as connection:
        queue = connection.SimpleQueue("fresh")
        for n in range(5):
            queue.put({"n": n})
        for _ in range(5):
            queue.get(timeout=5).ack()
        queue.close()
    depth = broker_depth()
    assert depth is not None
    assert (depth.waiting.get("fresh", 0), depth.delivered) == (0, 5)

    assert broker_prune() == 5
    depth = broker_depth()
    assert depth is not None
    assert (depth.waiting.get("fresh", 0), depth.delivered) == (0, 0)


def test_a_batch_commit_puts_one_drain_message_on_the_broker(agent: AgentClient) -> None:
    response = agent.post("/memories/batch", {"memories": [{"text": f"Host {n} runs Debian"} for n in range(100)]})

    assert response.json()["stored"] == 100
    assert _waiting() == 1
