"""A real Celery worker, on the real broker (kombu's SQLAlchemy transport on the embedded Postgres)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from memories.models import Event, Memory
from memoryhub.celery import app
from tests.conftest import AgentClient
from tests.factories import memory

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 20


@pytest.fixture(scope="module")
def worker() -> Iterator[Any]:
    # One worker for the module: stopping it takes a few seconds of broker polling.
    # Messages left by an earlier, interrupted run would name rows that no longer exist.
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=20) as w:
        yield w


@pytest.fixture(autouse=True)
def _worker_idle_after_each_test() -> Iterator[None]:
    """Let the worker finish what a test started (embedding, then detection) before the tables are flushed.

    Flushing truncates tables; a detection task still reading them would deadlock with it,
    or leave rows behind for the next test.
    """
    yield
    deadline = time.monotonic() + WAIT_SECONDS
    busy = Memory.objects.filter(status="pending_embed") | Memory.objects.filter(
        status="active", checked_at__isnull=True
    )
    while busy.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the task that did the last update commits and returns


def _wait_for_status(memory_id: str, status: str) -> Memory:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        memory = Memory.objects.get(pk=memory_id)
        if memory.status == status or time.monotonic() > deadline:
            return memory
        time.sleep(0.1)


def test_a_worker_embeds_a_committed_fact(agent: AgentClient, worker: Any) -> None:
    created = agent.commit("The staging database runs PostgreSQL 16")
    assert created["status"] == "pending_embed"

    memory = _wait_for_status(created["id"], "active")

    assert memory.status == "active", f"not embedded within {WAIT_SECONDS}s"
    assert memory.embedding is not None
    assert len(memory.embedding) == 384
    assert memory.embedded_at is not None
    event = Event.objects.get(verb="memory.embed")
    assert event.actor_type == "system"
    assert [change["pk"] for change in event.changes] == [created["id"]]


def test_a_worker_embeds_a_restored_fact_again(agent: AgentClient, worker: Any) -> None:
    forgotten = memory(workspace=agent.workspace, text="The office is in Berlin", status="forgotten")

    restored = agent.post(f"/memories/{forgotten.pk}/restore").json()["memory"]

    assert restored["status"] == "pending_embed"
    assert _wait_for_status(restored["id"], "active").status == "active"


def test_a_failed_embedding_stays_pending_and_is_retried(agent: AgentClient, worker: Any, monkeypatch: Any) -> None:
    from memories import embeddings

    real = embeddings.get_embedder()
    attempts: list[int] = []

    class CrashOnce:
        name = real.name

        def embed(self, texts: list[str]) -> Any:
            attempts.append(len(texts))
            if len(attempts) == 1:
                raise RuntimeError("model crashed")
            return real.embed(texts)

    monkeypatch.setattr(embeddings, "get_embedder", lambda: CrashOnce())

    created = agent.commit("The cache is Redis")
    memory = _wait_for_status(created["id"], "active")

    assert memory.status == "active", f"not retried within {WAIT_SECONDS}s"
    assert len(attempts) == 2
    # The failed attempt left nothing behind: one embed event, from the retry.
    assert Event.objects.filter(verb="memory.embed").count() == 1
