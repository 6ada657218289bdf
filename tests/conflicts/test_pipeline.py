from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

import pytest
from django.db import connections
from django.utils import timezone

from conflicts.detection.candidates import MAX_CANDIDATES, candidates_for
from conflicts.detection.pipeline import CLAIM_LEASE, CheckFailed, check_next_waiting, detect_and_resolve
from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import ConflictCard, Uncertainty
from conflicts.tasks import DetectionFailed, detect_pending
from memories.audit import Actor
from memories.embeddings import get_embedder
from memories.models import Memory
from memories.services import MemoryInput, memory_create, memory_forget, memory_reinforce
from memories.tasks import YIELD_SECONDS, embed_pending, reembed_stale
from memoryhub.celery import app
from tests.conflicts.scripted import ScriptedClassifier, scripted
from tests.factories import WorkspaceFactory
from tests.memories.recall_helpers import day, remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_candidates_are_similar_facts_and_same_key_facts_of_the_workspace(
    workspace: Workspace, other_workspace: Workspace
) -> None:
    city = remember(workspace, "The user lives in Porto", key="home_city", valid_from=day(1))
    slot = remember(workspace, "Lisbon", key="home_city", valid_from=day(2))
    remember(workspace, "The quarterly report is due Friday")
    remember(other_workspace, "The user lives in Porto")
    new = remember(workspace, "The user now lives in Madrid", key="home_city", valid_from=day(3))

    found = {c.memory.pk: c.why for c in candidates_for(new)}

    assert found[city.pk] == "neighbour"
    assert found[slot.pk] == "same_key"  # too short to be similar, but it fills the same slot
    assert all(Memory.objects.get(pk=pk).workspace == workspace for pk in found)
    assert new.pk not in found


def test_candidates_are_bounded(workspace: Workspace) -> None:
    for n in range(MAX_CANDIDATES + 8):
        remember(workspace, f"The API rate limit for tier {n} is {n * 100} requests per second", scope="api")
    new = remember(workspace, "The API rate limit is 5000 requests per second", scope="api")

    assert len(candidates_for(new)) == MAX_CANDIDATES


def test_candidates_skip_forgotten_and_superseded_facts(workspace: Workspace) -> None:
    gone = remember(workspace, "The build uses Maven")
    Memory.objects.filter(pk=gone.pk).update(status="forgotten")
    new = remember(workspace, "The build uses Gradle")

    assert gone.pk not in {c.memory.pk for c in candidates_for(new)}


def test_detect_and_resolve_orders_pairs_by_time_and_resolves(workspace: Workspace) -> None:
    old = remember(workspace, "Deploys run on Jenkins", valid_from=day(1), key="ci_system")
    new = remember(workspace, "Deploys now run on GitHub Actions", valid_from=day(5), key="ci_system")
    classify = ScriptedClassifier(
        {(old.text, new.text): scripted(Relation.TEMPORAL_CHANGE, current="b", reasons=("switched",))}
    )

    results = detect_and_resolve(new, classify=classify)

    assert (old.text, new.text) in classify.seen
    [(finding, resolution)] = results
    assert (finding.older.pk, finding.newer.pk) == (old.pk, new.pk)
    assert resolution.action == "superseded"
    assert Memory.objects.get(pk=old.pk).superseded_by_id == new.pk


def test_detection_of_an_older_fact_arriving_late_keeps_the_newer_one_current(workspace: Workspace) -> None:
    newer = remember(workspace, "The user lives in Lisbon", valid_from=day(5))
    late = remember(workspace, "The user lives in Porto", valid_from=day(1))
    classify = ScriptedClassifier({(late.text, newer.text): scripted(Relation.TEMPORAL_CHANGE, current="b")})

    detect_and_resolve(late, classify=classify)

    assert Memory.objects.get(pk=late.pk).superseded_by_id == newer.pk


def test_the_drain_checks_each_waiting_fact_once(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    a = remember(workspace, "The user is vegetarian", valid_from=day(1))
    b = remember(workspace, "The user eats steak every day", valid_from=day(2))
    classify = ScriptedClassifier({(a.text, b.text): scripted(Relation.TRUE_CONTRADICTION)})
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: classify)

    assert detect_pending() == 2
    assert detect_pending() == 0
    assert ConflictCard.objects.count() == 1
    assert Memory.objects.filter(checked_at__isnull=True).count() == 0


def test_a_failed_detection_releases_its_claim(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    remember(workspace, "The user is vegetarian", valid_from=day(1))
    b = remember(workspace, "The user eats steak every day", valid_from=day(2))

    def broken(pairs: object) -> object:
        raise RuntimeError("model file missing")

    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: broken)

    with pytest.raises(DetectionFailed):
        detect_pending()
    assert Memory.objects.get(pk=b.pk).checked_at is None


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_dies_mid_check_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = WorkspaceFactory(slug="acme")
    first = remember(workspace, "The user is vegetarian", valid_from=day(1))
    second = remember(workspace, "The user eats steak every day", valid_from=day(2))
    claimed, die = threading.Event(), threading.Event()
    outcome: list[BaseException] = []

    def stalled(pairs: object) -> object:
        claimed.set()
        die.wait(10)
        raise RuntimeError("worker killed")

    def first_worker() -> None:
        try:
            check_next_waiting()
        except CheckFailed as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    # The first worker's fact has a candidate (the second), so it reaches the classifier and stalls there.
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: stalled)
    thread = threading.Thread(target=first_worker)
    thread.start()
    try:
        assert claimed.wait(10)
        monkeypatch.undo()
        # A second worker skips the fact the first one holds and checks the other.
        checked = check_next_waiting()
        assert checked is not None
        assert checked.pk == second.pk
    finally:
        die.set()
        thread.join(10)

    assert [type(exc) for exc in outcome] == [CheckFailed]
    assert Memory.objects.get(pk=first.pk).checked_at is None  # back to waiting
    assert check_next_waiting() == Memory.objects.get(pk=first.pk)
    assert Memory.objects.filter(checked_at__isnull=True).count() == 0


def test_fresh_commits_are_embedded_and_checked_before_a_queued_re_embed(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = remember(workspace, "The API uses REST", valid_from=day(1))
    Memory.objects.filter(pk=stale.pk).update(embedding_model="an-older-model", checked_at=timezone.now())
    fresh = memory_create(workspace=workspace, actor=Actor.system("test"), data=MemoryInput(text="We moved to gRPC"))
    stepped_aside: list[int | None] = []
    monkeypatch.setattr(
        "memories.tasks.reembed_stale.apply_async", lambda countdown=None: stepped_aside.append(countdown)
    )

    # The re-embed is taken first (as a worker might) but steps aside: a fresh fact waits.
    assert reembed_stale() == 0
    assert stepped_aside == [YIELD_SECONDS]
    assert Memory.objects.get(pk=stale.pk).embedding_model == "an-older-model"

    assert embed_pending() == 1
    assert detect_pending() == 1
    assert Memory.objects.get(pk=fresh.pk).checked_at is not None
    assert reembed_stale() == 1
    assert Memory.objects.get(pk=stale.pk).embedding_model == get_embedder().name


def test_fresh_drains_and_background_work_go_to_separate_queues() -> None:
    def queue_of(task: str) -> str:
        return str(app.amqp.router.route({}, task)["queue"].name)

    assert queue_of("memories.tasks.embed_pending") == "fresh"
    assert queue_of("conflicts.tasks.detect_pending") == "fresh"
    assert queue_of("memories.tasks.reembed_stale") == "background"
    assert queue_of("conflicts.tasks.run_detective") == "background"
    assert {q.name for q in app.amqp.queues.values()} == {"fresh", "background"}


# ---------------------------------------------------------------- nothing slow under a lock


def _one_waiting(workspace: Workspace, older_text: str, newer_text: str) -> tuple[Memory, Memory]:
    """Two facts of which only the newer waits for its check (the older one was checked long ago)."""
    older = remember(workspace, older_text, valid_from=day(1))
    newer = remember(workspace, newer_text, valid_from=day(2))
    Memory.objects.filter(pk=older.pk).update(checked_at=timezone.now())
    return older, newer


@pytest.mark.django_db(transaction=True)
def test_a_slow_llm_holds_no_lock_on_the_fact_it_checks(
    llm: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OPENAI_TIMEOUT_SECONDS = 10.0
    workspace = WorkspaceFactory(slug="acme")
    older, newer = _one_waiting(workspace, "Ana hates mornings", "Ana goes running at 6am every day")
    # Unsure offline: the pair goes to the LLM, which takes 3 s to answer.
    classify = ScriptedClassifier({(older.text, newer.text): scripted(Relation.TRUE_CONTRADICTION, p=0.55)})
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: classify)
    llm.script(("sleep", 3.0))
    checked: list[Memory | None] = []

    def worker() -> None:
        try:
            checked.append(check_next_waiting())
        finally:
            connections.close_all()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not llm.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert llm.requests, "the check never reached the LLM"
        # While the worker waits on the LLM, an agent reinforces the very fact it checks.
        started = time.monotonic()
        memory_reinforce(memory=newer, actor=Actor.system("agent"))
        assert time.monotonic() - started < 0.2
        assert thread.is_alive()  # the LLM had not answered yet
    finally:
        thread.join(15)

    assert [m.pk if m else None for m in checked] == [newer.pk]
    fact = Memory.objects.get(pk=newer.pk)
    assert fact.checked_at is not None
    assert fact.check_claimed_at is None
    assert fact.reinforcement_count == 1  # the check's write did not overwrite the reinforce


def test_a_fact_edited_while_it_is_checked_is_not_resolved_from_the_stale_verdict(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    older, newer = _one_waiting(workspace, "Deploys run on Jenkins", "Deploys now run on GitHub Actions")
    sure_switch = scripted(Relation.TEMPORAL_CHANGE, current="b", reasons=("switched",))

    def edited_meanwhile(pairs: list[tuple[Memory, Memory]]) -> list[Verdict]:
        # Someone corrects the older fact while the tiers read the pair as it was.
        Memory.objects.filter(pk=older.pk).update(text="Release builds run on Jenkins")
        return [sure_switch for _ in pairs]

    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: edited_meanwhile)

    assert check_next_waiting() == newer
    assert Memory.objects.get(pk=older.pk).superseded_by_id is None
    fact = Memory.objects.get(pk=newer.pk)
    assert (fact.checked_at, fact.check_claimed_at) == (None, None)  # waits to be read again

    # The next pass reads the facts as they are now.
    classify = ScriptedClassifier({})
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: classify)
    assert check_next_waiting() == newer
    assert classify.seen == [("Release builds run on Jenkins", newer.text)]
    assert Memory.objects.get(pk=newer.pk).checked_at is not None
    assert Memory.objects.get(pk=older.pk).superseded_by_id is None


def test_a_pair_whose_fact_was_forgotten_meanwhile_is_skipped(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    older, newer = _one_waiting(workspace, "The user is vegetarian", "The user eats steak every day")

    def forgotten_meanwhile(pairs: list[tuple[Memory, Memory]]) -> list[Verdict]:
        memory_forget(memory=older, actor=Actor.system("agent"))
        return [scripted(Relation.TRUE_CONTRADICTION) for _ in pairs]

    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: forgotten_meanwhile)

    assert check_next_waiting() == newer
    assert not ConflictCard.objects.exists()
    assert not Uncertainty.objects.exists()
    assert Memory.objects.get(pk=newer.pk).checked_at is not None  # nothing left to resolve: checked


def test_a_claim_left_by_a_dead_worker_is_taken_again_after_its_lease(workspace: Workspace) -> None:
    fact = remember(workspace, "The user is vegetarian")
    Memory.objects.filter(pk=fact.pk).update(check_claimed_at=timezone.now())

    assert check_next_waiting() is None  # a live claim: another worker is on it

    Memory.objects.filter(pk=fact.pk).update(check_claimed_at=timezone.now() - CLAIM_LEASE - dt.timedelta(seconds=1))
    assert check_next_waiting() == fact
    assert Memory.objects.get(pk=fact.pk).checked_at is not None


def test_checking_steps_aside_while_facts_wait_for_their_vector(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(workspace, "The API uses REST", valid_from=day(1))
    remember(workspace, "Deploys happen on Tuesdays", valid_from=day(2), key="ci_system")
    waiting = memory_create(workspace=workspace, actor=Actor.system("test"), data=MemoryInput(text="We moved to gRPC"))
    queued: list[str] = []
    monkeypatch.setattr("conflicts.tasks.detect_pending.delay", lambda: queued.append("detect_pending"))

    # One fact checked, then the drain hands over to the embedding queued behind it and asks to come back.
    assert detect_pending() == 1
    assert queued == ["detect_pending"]

    assert embed_pending() == 1
    assert detect_pending() == 2
    assert Memory.objects.get(pk=waiting.pk).checked_at is not None
