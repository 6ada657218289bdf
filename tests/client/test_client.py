"""``MemoryHub`` (sync) against a live test server: each method, typed answers, errors, pagination, retries."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from memoryhub_client import (
    CommitRejected,
    Conflicting,
    Forbidden,
    InvalidInput,
    MemoryHub,
    NotFound,
    RateLimited,
    RetryEvent,
    RetryPolicy,
    Unauthorized,
)
from memoryhub_client.models import Card, CommitResult, Memory, RecallHit

from conflicts.detection.verdict import Relation
from conflicts.services import conflict_resolve
from memories.models import Memory as MemoryRow
from tests.client.conftest import FAST_RETRIES, LossyProxy
from tests.conflicts.cards import DETECTOR, pair_card
from tests.conflicts.scripted import scripted
from tests.memories.recall_helpers import day, remember
from workspaces.models import AgentKey, ApiRateWindow

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_remembers_a_fact_and_reads_it_back_typed(hub: MemoryHub) -> None:
    result = hub.remember("The staging database runs PostgreSQL 16", tags=["DB"], importance=0.8, metadata={"a": 1})

    assert isinstance(result, CommitResult)
    assert result.action == "stored"
    assert isinstance(result.id, uuid.UUID)
    assert isinstance(result.memory.recorded_at, dt.datetime)
    assert result.memory.tags == ["db"]
    fetched = hub.get_memory(result.id)
    assert isinstance(fetched, Memory)
    assert fetched.text == "The staging database runs PostgreSQL 16"
    assert fetched.metadata == {"a": 1}
    assert hub.commit is not None  # the alias agents used to REST's word
    page = hub.list_memories(tag="db")
    assert [m.id for m in page.items] == [result.id]
    assert page.count == 1


def test_it_commits_a_batch_in_chunks_and_indexes_results_into_the_whole_list(hub: MemoryHub) -> None:
    facts: list[dict[str, Any]] = [{"text": f"Service {i} runs on port {8000 + i}"} for i in range(25)]
    facts[12] = {"text": "   "}
    facts[20] = {"text": "Service 3 runs on port 8003"}  # the same as item 3: merged into it

    result = hub.remember_batch(facts, batch_size=10)

    assert (result.stored, result.merged, result.rejected) == (23, 1, 1)
    assert [item.index for item in result.results] == list(range(25))
    rejected = result.results[12]
    assert rejected.action == "rejected"
    assert rejected.errors[0]["loc"] == ["body", "memories", 12, "text"]
    assert result.results[20].action == "merged"
    assert result.results[20].id == result.results[3].id
    assert MemoryRow.objects.count() == 23


def test_it_supersedes_restores_forgets_reinforces_and_follows_the_chain(hub: MemoryHub) -> None:
    old = hub.remember("The office is in Berlin").id
    new = hub.remember("The office is in Munich").id

    superseded = hub.supersede(old, by=new, reason="moved")
    assert superseded.changed
    assert superseded.memory.superseded_by == new
    chain = hub.chain(old)
    assert chain.head == new
    assert [m.id for m in chain.chain] == [old, new]
    restored = hub.restore(old, reason="wrong call")
    assert restored.changed
    assert restored.memory.superseded_by is None
    assert hub.reinforce(new).reinforcement_count == 1
    forgotten = hub.forget(new)
    assert forgotten.memory.status == "forgotten"


def test_it_links_walks_neighbors_and_unlinks(hub: MemoryHub) -> None:
    a = hub.remember("Deploys go through the release train").id
    b = hub.remember("The release train leaves on Tuesdays").id

    link = hub.link(a, b, rel="refines", weight=0.5)
    assert (link.src, link.dst, link.rel, link.weight) == (a, b, "refines", 0.5)
    neighbors = hub.neighbors(a, rel=["refines"], direction="out")
    assert [(n.memory.id, n.rel, n.direction) for n in neighbors.neighbors] == [(b, "refines", "out")]
    hub.unlink(link.id)
    assert hub.neighbors(a).neighbors == []


def test_it_corrects_a_subject_walks_a_subgraph_and_undoes_a_change(hub: MemoryHub) -> None:
    old = hub.remember("Staging runs in eu-west-1", on_conflict="warn")
    new = hub.remember("The staging cluster now runs in eu-central-1", on_conflict="warn")

    corrected = hub.correct_subject(old.id, entity="staging cluster", attribute="region", note="same cluster")
    assert (corrected.subject_entity, corrected.subject_attribute, corrected.subject_source) == (
        "staging cluster",
        "region",
        "reviewer",
    )
    link = hub.link(old.id, new.id, rel="refines")
    graph = hub.subgraph([old.id], depth=1)
    assert {m.id for m in graph.nodes} == {old.id, new.id}
    assert [e.id for e in graph.edges] == [link.id]
    assert not graph.truncated

    hub.supersede(old.id, by=new.id, reason="moved")
    (event,) = hub.events(verb="memory.supersede", memory=str(old.id))
    undone = hub.undo_event(event.id, reason="it did not move")
    assert undone.undoes == event.id
    assert hub.get_memory(old.id).superseded_by is None


def test_it_finds_conflicts_and_queues_the_detective(hub: MemoryHub) -> None:
    a = hub.remember("The nightly backup runs at 02:00", on_conflict="warn")
    hub.remember("The nightly backup runs at 02:00.", on_conflict="warn")

    found = hub.find_conflicts(a.id, threshold=0.5)
    assert found
    assert all(a.id in {pair.a.id, pair.b.id} for pair in found)
    assert {pair.kind for pair in found} <= {"duplicate", "contradiction"}
    run = hub.run_detective()
    assert run.state == "queued"
    assert run.id in {r.id for r in hub.detective_runs()}


def test_it_recalls_assembles_context_and_checks_an_action(hub: MemoryHub) -> None:
    # on_conflict=warn embeds synchronously, so recall finds the fact without a worker.
    fact = hub.remember("The payments API rate limit is 500 requests a second", on_conflict="warn")
    assert fact.status == "active"

    hits = hub.recall("payments API rate limit", k=3)
    assert hits
    assert isinstance(hits[0], RecallHit)
    assert hits[0].memory.id == fact.id
    assert hits[0].parts.cosine > 0
    context = hub.context([{"role": "user", "content": "What is the payments API rate limit?"}], budget_tokens=500)
    assert context.used_tokens <= 500
    assert fact.id in {m.memory.id for m in context.memories}
    check = hub.check_action([fact.id])
    assert check.proceed
    assert check.results[0].memory_id == fact.id


def test_a_clash_with_on_conflict_raise_is_a_typed_rejection_with_the_conflicts(hub: MemoryHub) -> None:
    hub.remember("The user is vegetarian", key="diet", on_conflict="warn")

    with pytest.raises(CommitRejected) as refused:
        hub.remember("The user is not vegetarian", key="diet", on_conflict="raise")

    assert refused.value.status_code == 409
    assert refused.value.code == "conflict"
    assert refused.value.conflicts
    assert refused.value.conflicts[0].text == "The user is vegetarian"
    assert "clashes" in refused.value.detail


def test_it_lists_and_answers_conflicts_and_surfaces_uncertainties(hub: MemoryHub, key: tuple[AgentKey, str]) -> None:
    card, older, newer = pair_card(key[0].workspace)

    cards = hub.conflicts(state="open")
    assert [c.id for c in cards] == [card.pk]
    assert isinstance(cards[0], Card)
    assert {f.id for f in cards[0].facts} == {older.pk, newer.pk}
    assert hub.get_conflict(card.pk).question == card.question
    records = hub.uncertainties(state="open")
    assert [r.id for r in records] == [card.uncertainty_id]

    answered = hub.answer_conflict(card.pk, "yes", note="still true")
    assert answered.answer == "yes"
    assert answered.card.state == "answered"
    with pytest.raises(Conflicting) as again:
        hub.answer_conflict(card.pk, "no")
    assert again.value.code == "conflict"
    assert any(e.verb == "card.answer" for e in hub.iter_events())


def test_it_surfaces_an_open_dispute_with_its_question(hub: MemoryHub, key: tuple[AgentKey, str]) -> None:
    workspace = key[0].workspace
    a = remember(workspace, "The public API rate limit is 1000 requests per second", valid_from=day(1))
    b = remember(workspace, "The public API rate limit is 500 requests per second", valid_from=day(2))
    dispute = conflict_resolve(
        older=a, newer=b, verdict=scripted(Relation.TRUE_CONTRADICTION), context="ingestion", actor=DETECTOR
    ).uncertainty
    assert dispute is not None

    [item] = hub.surface_uncertainties("what is our API rate limit?", limit=3)

    assert item.uncertainty.id == dispute.pk
    assert item.uncertainty.surfaced_count == 1
    assert {f.id for f in item.facts} == {a.pk, b.pk}
    assert item.question


def test_status_reports_the_pipeline(hub: MemoryHub) -> None:
    hub.remember("Waiting for its vector")

    status = hub.status()

    assert status.embedding.waiting == 1
    assert status.llm.configured in {True, False}


def test_errors_are_typed_and_carry_detail_and_code(
    hub: MemoryHub, live_server: Any, key: tuple[AgentKey, str]
) -> None:
    with pytest.raises(NotFound) as missing:
        hub.get_memory(uuid.uuid4())
    assert missing.value.code == "not_found"
    assert missing.value.detail == "no memory with this id in the workspace"

    with pytest.raises(InvalidInput) as invalid:
        hub.remember("   ")
    assert invalid.value.code == "invalid"
    assert invalid.value.fields == {"text": "Value error, text must not be empty"}

    key[0].scopes = ["read", "write"]
    key[0].save(update_fields=["scopes"])
    card, _, _ = pair_card(key[0].workspace)
    with pytest.raises(Forbidden) as forbidden:
        hub.answer_conflict(card.pk, "yes")
    assert "answer" in forbidden.value.detail

    with MemoryHub(live_server.url, "mh_nope_nope") as stranger, pytest.raises(Unauthorized) as unknown:
        stranger.status()
    assert unknown.value.code == "unauthorized"


def test_iterators_walk_every_page(hub: MemoryHub) -> None:
    ids = {hub.remember(f"Fact number {i}").id for i in range(7)}

    assert hub.list_memories(limit=3).next_offset == 3
    assert {m.id for m in hub.iter_memories(limit=3)} == ids
    events = list(hub.iter_events(verb="memory.create", limit=2))
    assert len(events) == 7
    assert len({e.id for e in events}) == 7


@pytest.mark.usefixtures("within_one_rate_window")
def test_a_429_is_retried_after_the_servers_retry_after(
    live_server: Any, key: tuple[AgentKey, str], settings: Any
) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 2
    retries: list[RetryEvent] = []
    waits: list[float] = []

    def wait(seconds: float) -> None:
        # Time passes: the key's counted minute is over (as the rate limit's own tests do), and the wait is noted.
        waits.append(seconds)
        window = ApiRateWindow.objects.get(agent_key=key[0])
        ApiRateWindow.objects.filter(pk=window.pk).update(window_start=window.window_start - dt.timedelta(minutes=1))

    with MemoryHub(live_server.url, key[1], retry=FAST_RETRIES, on_retry=retries.append, sleep=wait) as hub:
        hub.remember("first")
        hub.remember("second")
        third = hub.remember("third, after a wait")

    assert third.action == "stored"
    assert len(retries) == 1
    assert retries[0].status_code == 429
    assert retries[0].retry_after is not None
    assert 1 <= retries[0].retry_after <= 60
    assert waits == [retries[0].retry_after]  # the server's Retry-After, not the client's own backoff
    assert MemoryRow.objects.filter(text__startswith="third").count() == 1


@pytest.mark.usefixtures("within_one_rate_window")
def test_a_429_that_outlasts_the_retries_is_raised(live_server: Any, key: tuple[AgentKey, str], settings: Any) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 1
    waits: list[float] = []

    with MemoryHub(live_server.url, key[1], retry=RetryPolicy(max_attempts=3), sleep=waits.append) as hub:
        hub.status()
        with pytest.raises(RateLimited) as limited:
            hub.status()

    assert len(waits) == 2
    assert limited.value.code == "rate_limited"
    assert limited.value.retry_after is not None


def test_a_write_whose_answer_was_lost_is_retried_with_the_same_idempotency_key(
    lossy_proxy: LossyProxy, key: tuple[AgentKey, str]
) -> None:
    retries: list[RetryEvent] = []
    with MemoryHub(lossy_proxy.url, key[1], retry=FAST_RETRIES, on_retry=retries.append) as hub:
        result = hub.remember("Stored once, however often it is sent")
        batch = hub.remember_batch([{"text": "Batch fact one"}, {"text": "Batch fact two"}])

    assert [s.answered for s in lossy_proxy.seen] == [False, True, True]
    first, retry, _ = lossy_proxy.seen
    assert first.idempotency_key is not None
    assert retry.idempotency_key == first.idempotency_key
    assert retry.replayed
    assert retries[0].error is not None
    assert retries[0].idempotency_key == first.idempotency_key
    assert MemoryRow.objects.filter(text="Stored once, however often it is sent").count() == 1
    assert result.id == MemoryRow.objects.get(text="Stored once, however often it is sent").pk
    # Another call, another key.
    assert lossy_proxy.seen[2].idempotency_key != first.idempotency_key
    assert batch.stored == 2


def test_a_lost_batch_answer_is_replayed_not_merged(lossy_proxy: LossyProxy, key: tuple[AgentKey, str]) -> None:
    with MemoryHub(lossy_proxy.url, key[1], retry=FAST_RETRIES) as hub:
        batch = hub.remember_batch([{"text": "Batch fact one"}, {"text": "Batch fact two"}])

    assert [s.replayed for s in lossy_proxy.seen] == [False, True]
    # Without the key the retry would have merged both (reinforced them); with it, the first answer comes back.
    assert (batch.stored, batch.merged) == (2, 0)
    assert set(MemoryRow.objects.values_list("reinforcement_count", flat=True)) == {0}
