from __future__ import annotations

import datetime as dt
import io
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from celery.signals import task_prerun
from django.core.management import CommandError, call_command
from django.db import connections
from django.utils import timezone

from memories import services
from memories.embeddings import DIMENSIONS, get_embedder
from memories.models import Event, Memory
from memories.tasks import EMBED_DRAIN, embed_pending, request_embedding, requeue_stale_embeddings
from memoryhub.drains import drain_request
from memoryhub.models import Drain
from tests.factories import WorkspaceFactory, memory
from workspaces.models import Workspace


def _pending(workspace: Workspace, text: str, *, age_seconds: float = 0) -> Memory:
    return memory(workspace=workspace, text=text, recorded_at=timezone.now() - dt.timedelta(seconds=age_seconds))


def _status(*memories: Memory) -> list[str]:
    return [Memory.objects.get(pk=m.pk).status for m in memories]


class ExplodingEmbedder:
    """Stands in for a worker that dies while the model runs."""

    name = "exploding"

    def embed(self, texts: list[str]) -> Any:
        raise RuntimeError("worker died mid-batch")


@pytest.fixture
def workspace(db: None) -> Workspace:
    result: Workspace = WorkspaceFactory(slug="acme")
    return result


# --- memories_embed_pending ----------------------------------------------------------


def test_it_embeds_pending_facts_and_makes_them_active(workspace: Workspace) -> None:
    facts = [_pending(workspace, "The API uses REST"), _pending(workspace, "Deploys happen on Tuesdays")]
    before = timezone.now()

    embedded = services.memories_embed_pending()

    assert embedded == 2
    for fact in facts:
        fact.refresh_from_db()
        assert fact.status == "active"
        assert fact.embedding is not None
        vector = np.asarray(fact.embedding)
        assert vector.shape == (DIMENSIONS,)
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)
        assert fact.embedded_at is not None
        assert fact.embedded_at >= before
        assert fact.embedding_model == get_embedder().name == "all-MiniLM-L6-v2-onnx-int8"
    np.testing.assert_allclose(
        np.asarray(facts[0].embedding), get_embedder().embed(["The API uses REST"])[0], atol=1e-5
    )


def test_it_records_one_embed_event_per_workspace(workspace: Workspace) -> None:
    other = WorkspaceFactory(slug="globex")
    mine = [_pending(workspace, "a"), _pending(workspace, "b")]
    theirs = _pending(other, "c")

    services.memories_embed_pending()

    events = {event.workspace_id: event for event in Event.objects.filter(verb="memory.embed")}
    assert set(events) == {workspace.pk, other.pk}
    event = events[workspace.pk]
    assert event.actor_type == "system"
    assert event.actor == "embedder"
    # Bookkeeping, not a decision: it stays out of the review queue of automatic changes.
    assert event.automatic is False
    assert sorted(change["pk"] for change in event.changes) == sorted(str(m.pk) for m in mine)
    assert all(change["op"] == "update" for change in event.changes)
    assert all(change["before"] == {"status": "pending_embed"} for change in event.changes)
    assert all(change["after"] == {"status": "active"} for change in event.changes)
    assert [change["pk"] for change in events[other.pk].changes] == [str(theirs.pk)]


def test_it_does_nothing_the_second_time(workspace: Workspace) -> None:
    fact = _pending(workspace, "The API uses REST")
    services.memories_embed_pending()
    fact.refresh_from_db()

    assert services.memories_embed_pending() == 0
    assert services.memories_embed_pending(first_id=fact.pk) == 0
    assert Event.objects.filter(verb="memory.embed").count() == 1
    assert Memory.objects.get(pk=fact.pk).embedded_at == fact.embedded_at


def test_it_leaves_other_statuses_alone(workspace: Workspace) -> None:
    forgotten = memory(workspace=workspace, text="forgotten", status="forgotten")

    assert services.memories_embed_pending() == 0
    assert _status(forgotten) == ["forgotten"]
    assert Memory.objects.get(pk=forgotten.pk).embedding is None


def test_it_embeds_first_id_first_even_when_it_is_the_newest(workspace: Workspace) -> None:
    oldest = _pending(workspace, "oldest", age_seconds=300)
    older = _pending(workspace, "older", age_seconds=200)
    old = _pending(workspace, "old", age_seconds=100)
    newest = _pending(workspace, "newest")

    embedded = services.memories_embed_pending(first_id=newest.pk, limit=2)

    assert embedded == 2
    assert _status(newest, oldest, older, old) == ["active", "active", "pending_embed", "pending_embed"]


def test_it_takes_the_oldest_first_up_to_the_limit(workspace: Workspace) -> None:
    facts = [_pending(workspace, f"fact {n}", age_seconds=100 - n) for n in range(5)]

    assert services.memories_embed_pending(limit=3) == 3
    assert _status(*facts) == ["active"] * 3 + ["pending_embed"] * 2
    assert services.memories_embed_pending(limit=3) == 2
    assert _status(*facts) == ["active"] * 5


def test_it_uses_the_configured_batch_size_by_default(workspace: Workspace, settings: Any) -> None:
    settings.MEMORYHUB_EMBED_BATCH_SIZE = 2
    for n in range(3):
        _pending(workspace, f"fact {n}")

    assert services.memories_embed_pending() == 2


# --- crash safety ----------------------------------------------------------------------


def test_it_keeps_facts_pending_when_the_embedder_crashes(workspace: Workspace, monkeypatch: Any) -> None:
    facts = [_pending(workspace, "The API uses REST"), _pending(workspace, "Deploys happen on Tuesdays")]
    monkeypatch.setattr("memories.embeddings.get_embedder", lambda: ExplodingEmbedder())

    with pytest.raises(RuntimeError, match="worker died"):
        services.memories_embed_pending(first_id=facts[1].pk)

    assert _status(*facts) == ["pending_embed", "pending_embed"]
    assert not Event.objects.filter(verb="memory.embed").exists()

    monkeypatch.undo()
    assert services.memories_embed_pending() == 2
    assert _status(*facts) == ["active", "active"]


def test_it_rolls_back_rows_already_written_when_the_batch_fails_late(workspace: Workspace, monkeypatch: Any) -> None:
    facts = [_pending(workspace, "The API uses REST"), _pending(workspace, "Deploys happen on Tuesdays")]

    def crash(batch: list[Memory]) -> None:
        # The vectors are written by now; dying here must not keep them.
        assert Memory.objects.filter(pk__in=[m.pk for m in batch], status="active").count() == len(batch)
        raise RuntimeError("worker died after the update")

    monkeypatch.setattr(services, "_record_embedded", crash)

    with pytest.raises(RuntimeError, match="after the update"):
        services.memories_embed_pending()

    assert _status(*facts) == ["pending_embed", "pending_embed"]
    assert all(Memory.objects.get(pk=f.pk).embedding is None for f in facts)

    monkeypatch.undo()
    assert services.memories_embed_pending() == 2


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_dies_holding_a_batch_loses_nothing(monkeypatch: Any) -> None:
    workspace = WorkspaceFactory(slug="acme")
    facts = [_pending(workspace, f"fact {n}", age_seconds=10 - n) for n in range(3)]
    claimed = threading.Event()
    die = threading.Event()
    outcome: list[BaseException] = []

    class StalledEmbedder:
        name = "stalled"

        def embed(self, texts: list[str]) -> Any:
            claimed.set()
            die.wait(10)
            raise RuntimeError("worker killed")

    def first_worker() -> None:
        try:
            services.memories_embed_pending(limit=2)
        except RuntimeError as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    monkeypatch.setattr("memories.embeddings.get_embedder", lambda: StalledEmbedder())
    thread = threading.Thread(target=first_worker)
    thread.start()
    try:
        assert claimed.wait(10)
        # A second worker skips the rows the first one holds and takes the rest.
        monkeypatch.undo()
        assert services.memories_embed_pending() == 1
        assert _status(*facts) == ["pending_embed", "pending_embed", "active"]
    finally:
        die.set()
        thread.join(10)

    assert [str(exc) for exc in outcome] == ["worker killed"]
    assert _status(*facts) == ["pending_embed", "pending_embed", "active"]
    assert services.memories_embed_pending() == 2
    assert _status(*facts) == ["active", "active", "active"]


# --- tasks ------------------------------------------------------------------------------


@pytest.fixture
def eager_celery() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """Run ``.delay()`` in-process through Celery's own eager path and record each task started."""
    from memoryhub.celery import app

    started: list[tuple[str, tuple[Any, ...]]] = []

    def record(sender: Any = None, args: tuple[Any, ...] = (), **kwargs: Any) -> None:
        started.append((sender.name, tuple(args)))

    previous = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    task_prerun.connect(record, weak=False)
    try:
        yield started
    finally:
        task_prerun.disconnect(record)
        app.conf.task_always_eager, app.conf.task_eager_propagates = previous


def test_the_drain_embeds_every_waiting_fact(workspace: Workspace, settings: Any) -> None:
    settings.MEMORYHUB_EMBED_BATCH_SIZE = 2
    facts = [_pending(workspace, f"fact {n}") for n in range(5)]

    assert embed_pending() == 5
    assert _status(*facts) == ["active"] * 5
    assert embed_pending() == 0
    drain = Drain.objects.get(name=EMBED_DRAIN)
    assert (drain.queued_at, drain.running_since) == (None, None)


def test_a_burst_of_requests_sends_one_message_until_the_drain_starts(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    monkeypatch.setattr("memories.tasks.embed_pending.delay", lambda: sent.append("embed_pending"))

    for _ in range(50):
        request_embedding()
    assert sent == ["embed_pending"]

    embed_pending()  # the drain starts: what arrives from now on needs a drain after it
    request_embedding()
    request_embedding()
    assert sent == ["embed_pending", "embed_pending"]


def test_a_message_that_could_not_be_sent_is_asked_for_again(db: None) -> None:
    def broker_down() -> None:
        raise ConnectionError("broker down")

    assert not drain_request(EMBED_DRAIN, broker_down)
    assert drain_request(EMBED_DRAIN, lambda: None)


def test_the_sweep_asks_for_one_drain_for_all_stale_facts(
    workspace: Workspace, settings: Any, eager_celery: list[tuple[str, tuple[Any, ...]]]
) -> None:
    settings.MEMORYHUB_EMBED_STALE_SECONDS = 60
    settings.MEMORYHUB_EMBED_BATCH_SIZE = 2
    stale = [_pending(workspace, f"stale {n}", age_seconds=600 - n) for n in range(3)]
    fresh = _pending(workspace, "fresh")

    assert requeue_stale_embeddings() == 1
    # One drain message, which embeds every waiting fact, the fresh one too.
    assert eager_celery == [("memories.tasks.embed_pending", ())]
    assert _status(*stale, fresh) == ["active"] * 4


def test_the_sweep_never_queues_a_second_drain_while_one_waits(
    workspace: Workspace, settings: Any, eager_celery: list[tuple[str, tuple[Any, ...]]]
) -> None:
    settings.MEMORYHUB_EMBED_STALE_SECONDS = 60
    _pending(workspace, "stale", age_seconds=600)
    sent: list[str] = []
    assert drain_request(EMBED_DRAIN, lambda: sent.append("drain"))  # a drain message waits in the broker

    for _ in range(3):
        requeue_stale_embeddings()

    assert sent == ["drain"]
    assert eager_celery == []
    # Once that message is presumed lost, the sweep asks again.
    Drain.objects.filter(name=EMBED_DRAIN).update(queued_at=timezone.now() - dt.timedelta(minutes=5))
    requeue_stale_embeddings()
    assert eager_celery == [("memories.tasks.embed_pending", ())]


def test_the_sweep_leaves_fresh_pending_facts_to_their_own_drain(
    workspace: Workspace, eager_celery: list[tuple[str, tuple[Any, ...]]]
) -> None:
    fresh = _pending(workspace, "fresh")
    memory(
        workspace=workspace,
        text="old but forgotten",
        status="forgotten",
        recorded_at=timezone.now() - dt.timedelta(hours=1),
    )

    assert requeue_stale_embeddings() == 0
    assert eager_celery == []
    assert _status(fresh) == ["pending_embed"]


# --- re-embedding after the embedder changed -----------------------------------------


def _embedded_by(workspace: Workspace, text: str, model: str) -> Memory:
    vector = np.full(DIMENSIONS, 1 / np.sqrt(DIMENSIONS), dtype=np.float32)
    return memory(workspace=workspace, text=text, status="active", embedding=vector, embedding_model=model)


def test_reembed_replaces_only_vectors_from_another_embedder(workspace: Workspace) -> None:
    name = get_embedder().name
    old = _embedded_by(workspace, "The API uses REST", "text-embedding-3-small-384")
    current = _embedded_by(workspace, "Deploys happen on Tuesdays", name)
    pending = _pending(workspace, "Not embedded yet")

    assert services.memories_reembed_stale() == 1

    old.refresh_from_db()
    assert old.embedding_model == name
    assert old.status == "active"
    np.testing.assert_allclose(np.asarray(old.embedding), get_embedder().embed([old.text])[0], atol=1e-6)
    current.refresh_from_db()
    np.testing.assert_allclose(np.asarray(current.embedding), 1 / np.sqrt(DIMENSIONS), rtol=1e-6)
    assert Memory.objects.get(pk=pending.pk).embedding is None
    assert services.memories_reembed_stale() == 0


def test_the_reembed_command_works_through_every_batch_and_says_when_nothing_is_left(
    workspace: Workspace,
) -> None:
    facts = [_embedded_by(workspace, f"fact {n} about the deploy window", "another-model") for n in range(5)]
    out = io.StringIO()

    call_command("reembed", "--batch", "2", stdout=out)

    assert "5 facts to re-embed" in out.getvalue()
    assert "re-embedded 5 facts" in out.getvalue()
    assert {Memory.objects.get(pk=f.pk).embedding_model for f in facts} == {get_embedder().name}
    again = io.StringIO()
    call_command("reembed", stdout=again)
    assert "nothing to do" in again.getvalue()


def test_the_reembed_command_refuses_an_empty_batch(db: None) -> None:
    with pytest.raises(CommandError, match="--batch must be at least 1"):
        call_command("reembed", "--batch", "0")
