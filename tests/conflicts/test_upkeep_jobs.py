"""The upkeep jobs on a real database: the issue's bar scenarios, idempotence and a kill mid-batch."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from django.db import connection
from django.db.models import F
from django.utils import timezone

from conflicts.decisions import decision_revert, decisions_list
from conflicts.models import JobRun, JobState, Uncertainty, UncertaintyState, UncertaintyType
from conflicts.tasks import upkeep_run
from conflicts.upkeep import JOBS, decay
from conflicts.upkeep.drift import drift_sample, partition
from conflicts.upkeep.runs import job_execute
from memories.audit import Actor
from memories.models import DecaySchedule, Event, Link, Memory
from memories.services import event_undo, lineage, memory_forget, memory_reinforce
from recall.context import ContextRequest, Message, context_assemble
from recall.hybrid import RecallQuery, recall
from tests.conftest import AgentClient
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
PERSON = Actor.system("reviewer")
TIME_FIELDS = ["recorded_at", "valid_from", "evidence_at", "last_reinforced_at"]


def run(job: str, workspace: Workspace | None = None, **kwargs: Any) -> JobRun:
    result = job_execute(job=job, fn=JOBS[job], workspace_id=workspace.pk if workspace else None, **kwargs)
    assert result is not None
    return result


def age(memory: Memory, days: float) -> None:
    """Move the fact ``days`` into the past: the same as the clock moving on by that much."""
    delta = dt.timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(
        **{name: F(name) - delta for name in TIME_FIELDS if getattr(memory, name) is not None}
    )
    DecaySchedule.objects.filter(memory=memory, due_at__isnull=False).update(due_at=F("due_at") - delta)
    memory.refresh_from_db()


def decay_state() -> list[tuple[float, str, dt.datetime | None]]:
    """Each fact's confidence, status and decay due time (no schedule row: None)."""
    due = dict(DecaySchedule.objects.values_list("memory_id", "due_at"))
    return [(m.confidence, m.status, due.get(m.pk)) for m in Memory.objects.order_by("pk")]


def passive(workspace: Workspace, text: str) -> list[str]:
    context = context_assemble(workspace=workspace, request=ContextRequest([Message("user", text)]))
    return [included.item.memory.text for included in context.memories]


def searched(workspace: Workspace, text: str) -> list[str]:
    return [hit.memory.text for hit in recall(workspace=workspace, query=RecallQuery(query=text, k=5))]


# ---------------------------------------------------------------- decay and confidence


def test_a_fact_untouched_for_200_days_ends_below_0_3_and_out_of_passive_context(workspace: Workspace) -> None:
    fact = remember(workspace, "The office wifi password is on the fridge")
    assert passive(workspace, "where is the office wifi password") == [fact.text]

    age(fact, 200)
    result = run("decay")

    fact.refresh_from_db()
    assert fact.confidence == pytest.approx(0.9 * math.exp(-0.01 * 200), abs=1e-6)  # 0.1218
    assert fact.confidence < 0.3
    assert fact.status == "deprecated"
    assert passive(workspace, "where is the office wifi password") == []
    assert searched(workspace, "office wifi password") == []
    event = Event.objects.get(verb="upkeep.deprecate", memory=fact)
    assert event.automatic
    assert "0.900 · exp(−0.0100" in event.reason
    assert (result.state, result.read, result.changed) == ("done", 1, 1)


def test_a_fact_reinforced_monthly_stays_in_passive_context(workspace: Workspace) -> None:
    fact = remember(workspace, "The office wifi password is on the fridge")
    for _month in range(6):
        age(fact, 30)
        run("decay")
        fact.refresh_from_db()
        assert fact.status == "active"
        fact = memory_reinforce(memory=fact, actor=Actor.system("agent"))
    age(fact, 20)  # 200 days in all
    run("decay")

    fact.refresh_from_db()
    evidence = 1 - 0.1 * 0.95**6  # six confirmations of 0.9
    assert fact.evidence_confidence == pytest.approx(evidence, abs=1e-6)
    assert fact.confidence == pytest.approx(evidence * math.exp(-0.01 * 20), abs=1e-6)  # 0.7586
    assert fact.confidence > 0.5
    assert fact.status == "active"
    assert passive(workspace, "where is the office wifi password") == [fact.text]


def test_less_reliable_facts_decay_faster_and_retire_below_the_floor(
    workspace: Workspace, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # the commit hooks record it as unverified
        guess = remember(workspace, "The customer probably prefers calls", source="inferred")
    other = remember(workspace, "The customer prefers email", kind="fact")
    Uncertainty.objects.create(
        workspace=workspace,
        memory_a=guess,
        memory_a_kind="fact",
        memory_b=other,
        memory_b_kind="fact",
        uncertainty_type=UncertaintyType.CONTRADICTION,
        severity="high",
        detection_context="ingestion",
    )
    age(guess, 100)
    run("decay")

    guess.refresh_from_db()
    assert guess.reliability == "uncertain"  # an inferred fact starts unverified
    assert guess.confidence == pytest.approx(0.6 * math.exp(-0.015 * 100), abs=1e-6)  # 0.1339: deprecated
    assert guess.status == "deprecated"
    age(guess, 40)
    run("decay")
    guess.refresh_from_db()
    assert guess.confidence == pytest.approx(0.6 * math.exp(-0.015 * 140), abs=1e-6)  # 0.0735 < 0.1
    assert guess.status == "decayed"
    closed = Uncertainty.objects.filter(memory_a=guess)
    assert {(u.uncertainty_type, u.state, u.resolution_strategy) for u in closed} == {
        ("contradiction", "decayed", "decayed"),
        ("unverified", "decayed", "decayed"),
    }


def test_decay_twice_changes_nothing_the_second_time(workspace: Workspace) -> None:
    facts = [remember(workspace, f"Server {n} runs in the Frankfurt region") for n in range(3)]
    for n, fact in enumerate(facts):
        age(fact, 40 + 60 * n)
    first = run("decay")
    before = decay_state()
    events = Event.objects.count()

    second = run("decay")

    assert first.changed == 3
    assert (second.read, second.changed) == (0, 0)  # nothing was due
    assert decay_state() == before
    assert Event.objects.count() == events
    # Forcing every fact due again recomputes the same values: decay is a function of evidence and time.
    DecaySchedule.objects.update(due_at=None)
    run("decay", now=first.started_at)
    assert [(c, s) for c, s, _ in decay_state()] == [(c, s) for c, s, _ in before]


def indexed_columns(table: str) -> set[str]:
    """Every column some index of ``table`` covers: keys, INCLUDE columns, expressions' and predicates' columns."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT DISTINCT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
            WHERE i.indrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
              AND (a.attnum = ANY(i.indkey)
                   OR pg_get_expr(i.indexprs, i.indrelid) ~ ('\\m' || a.attname || '\\M')
                   OR pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M'))
            """,
            [table],
        )
        return {row[0] for row in cursor.fetchall()}


def test_decay_writes_no_indexed_column_of_the_memory_row(workspace: Workspace) -> None:
    """What makes decay's write heap-only (HOT): PostgreSQL re-indexes a row only when an indexed column changes.

    Decay writes ``confidence`` and ``evidence_at``, and ``status`` with its own value
    except when it retires a fact; its due time lives in ``DecaySchedule``. (How many
    of the updates land heap-only also depends on free room on the page:
    ``bench/upkeep.py`` prints the counts, 99.8 % at 1M facts.)
    """
    fact = remember(workspace, "Cache 1 holds the session tokens")
    age(fact, 40)
    indexed = indexed_columns(Memory._meta.db_table)
    assert {"status", "embedding", "workspace_id", "updated_at"} <= indexed  # the query sees the indexes
    status_before = Memory.objects.get(pk=fact.pk).status

    run("decay")

    fact.refresh_from_db()
    assert fact.confidence < 0.7
    assert fact.status == status_before
    assert not {"confidence", "evidence_at"} & indexed
    assert "decay_due_at" not in {f.attname for f in Memory._meta.concrete_fields}
    assert DecaySchedule.objects.filter(memory=fact, due_at__isnull=False).exists()


def test_a_fact_written_around_the_services_is_scheduled_by_the_next_run(workspace: Workspace) -> None:
    fact = remember(workspace, "The backup bucket is in eu-west-1")
    run("decay")
    assert DecaySchedule.objects.filter(memory=fact, due_at__isnull=False).exists()
    DecaySchedule.objects.filter(memory=fact).delete()  # as if COPY had written the fact, with no schedule row
    Memory.objects.filter(pk=fact.pk).update(updated_at=timezone.now())
    age(fact, 60)

    again = run("decay")

    assert again.details["scheduled"] == 1
    assert (again.read, again.changed) == (1, 1)
    assert DecaySchedule.objects.filter(memory=fact, due_at__isnull=False).exists()


def test_a_job_killed_mid_batch_leaves_whole_batches(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = [remember(workspace, f"Queue {n} is drained nightly") for n in range(5)]
    for fact in facts:
        age(fact, 150)  # all of them cross 0.3: each gets a status change and an event
    batches: list[set[Any]] = []
    real_write = decay._write

    def dies_in_the_second_batch(rows: list[Memory], due_at: dict[Any, dt.datetime | None]) -> None:
        batches.append({m.pk for m in rows})
        if len(batches) == 2:
            raise SystemExit("worker killed")
        real_write(rows, due_at)

    monkeypatch.setattr(decay, "_write", dies_in_the_second_batch)
    monkeypatch.setattr("django.conf.settings.MEMORYHUB_UPKEEP_BATCH_SIZE", 2)
    with pytest.raises(SystemExit):
        run("decay")

    # The first batch committed whole (its facts, their events, the run's progress); the second not at all.
    # (A batch holds up to 2 facts here, fewer when two share a heap page: decay._one_per_page.)
    first = batches[0]
    assert 1 <= len(first) <= 2
    assert set(Memory.objects.filter(status="deprecated").values_list("pk", flat=True)) == first
    assert set(Event.objects.filter(verb="upkeep.deprecate").values_list("memory_id", flat=True)) == first
    killed = JobRun.objects.get()
    assert (killed.state, killed.read, killed.changed) == ("running", len(first), len(first))

    monkeypatch.setattr(decay, "_write", real_write)
    monkeypatch.setattr("django.conf.settings.MEMORYHUB_UPKEEP_STALL_SECONDS", 0)
    again = run("decay")
    assert (again.read, again.changed) == (5 - len(first), 5 - len(first))
    assert Memory.objects.filter(status="deprecated").count() == 5
    killed.refresh_from_db()
    assert killed.state == JobState.FAILED
    assert killed.error.startswith("abandoned")


def scheduled_now(workspace: Workspace, count: int, *, first_age: float = 10, step: float = 10) -> list[Memory]:
    """``count`` facts with schedule rows, aged ``first_age``, ``first_age + step``, … days (the last most overdue)."""
    facts = [remember(workspace, f"Region {n} keeps its backups for a month") for n in range(count)]
    run("decay")  # each gets its schedule row and a due time
    for n, fact in enumerate(facts):
        age(fact, first_age + step * n)
    return facts


def due_ids(now: dt.datetime | None = None) -> set[Any]:
    return set(decay.due(now or timezone.now()).values_list("pk", flat=True))


def test_a_decay_cycle_reads_at_most_its_bound_the_most_overdue_first(
    workspace: Workspace, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = scheduled_now(workspace, 6)
    fresh = remember(workspace, "Region 9 keeps its backups for a week")  # no schedule row yet
    Memory.objects.filter(pk=fresh.pk).update(updated_at=timezone.now())
    settings.MEMORYHUB_DECAY_CYCLE_ROWS = 3
    settings.MEMORYHUB_UPKEEP_BATCH_SIZE = 2  # the bound holds across batches too
    claimed: list[int] = []
    real_one_per_page = decay._one_per_page
    monkeypatch.setattr(decay, "_one_per_page", lambda rows: claimed.append(len(rows)) or real_one_per_page(rows))

    cycle = run("decay")

    # Due now (no due time yet) comes first, then the most overdue: the two aged longest.
    assert due_ids() == {f.pk for f in facts[:4]}
    assert cycle.read == 3
    assert max(claimed) <= 2
    assert (cycle.details["still_due"], cycle.details["continues"]) == (4, True)
    assert cycle.progress_total == 3


def drain_decay(monkeypatch: pytest.MonkeyPatch) -> list[JobRun]:
    """Beat's decay message and every successor it queues, each carried out as a worker would, in order."""
    messages: list[tuple[tuple[Any, ...], dict[str, Any]]] = [(("decay",), {})]
    monkeypatch.setattr(upkeep_run, "apply_async", lambda args, kwargs: messages.append((args, kwargs)))
    started = JobRun.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    while messages:
        args, kwargs = messages.pop(0)
        assert upkeep_run(*args, **kwargs) == "done"
    return list(JobRun.objects.filter(pk__gt=started).order_by("pk"))


def test_decay_cycles_hand_over_until_nothing_is_due_and_each_confidence_is_right(
    workspace: Workspace, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = scheduled_now(workspace, 7, first_age=20, step=35)  # 20 … 230 days: active, deprecated, decayed
    ages = [20 + 35 * n for n in range(7)]
    settings.MEMORYHUB_DECAY_CYCLE_ROWS = 2

    runs = drain_decay(monkeypatch)

    assert [(r.trigger, r.read, r.details["still_due"]) for r in runs] == [
        ("schedule", 2, 5),
        ("continuation", 2, 3),
        ("continuation", 2, 1),
        ("continuation", 1, 0),
    ]
    assert [r.details.get("follows") for r in runs] == [None, *(r.pk for r in runs[:-1])]
    assert [bool(r.details.get("continues")) for r in runs] == [True, True, True, False]
    assert "scheduled" not in runs[1].details  # only the chain's first cycle schedules new facts
    assert due_ids() == set()
    for fact, days in zip(facts, ages, strict=True):
        fact.refresh_from_db()
        expected = 0.9 * math.exp(-0.01 * days)
        assert fact.confidence == pytest.approx(expected, abs=1e-6)
        assert fact.status == ("decayed" if expected < 0.1 else "deprecated" if expected < 0.3 else "active")
    assert {f.status for f in facts} == {"active", "deprecated", "decayed"}
    state, events = decay_state(), Event.objects.count()

    again = drain_decay(monkeypatch)

    assert [(r.read, r.changed, r.details["still_due"]) for r in again] == [(0, 0, 0)]  # no successor
    assert decay_state() == state
    assert Event.objects.count() == events


def test_a_cycle_that_reads_its_bound_and_leaves_nothing_due_has_no_successor(
    workspace: Workspace, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduled_now(workspace, 2)
    settings.MEMORYHUB_DECAY_CYCLE_ROWS = 2

    runs = drain_decay(monkeypatch)

    assert [(r.read, r.details["still_due"], r.details.get("continues")) for r in runs] == [(2, 0, None)]


def test_a_forgotten_facts_due_row_is_dropped_and_its_confidence_left(workspace: Workspace) -> None:
    kept, gone = scheduled_now(workspace, 2, first_age=60)
    memory_forget(memory=gone, actor=PERSON)
    gone.refresh_from_db()

    cycle = run("decay")

    assert not DecaySchedule.objects.filter(memory=gone).exists()
    assert Memory.objects.get(pk=gone.pk).confidence == gone.confidence
    assert DecaySchedule.objects.filter(memory=kept, due_at__gt=timezone.now()).exists()
    assert (cycle.read, cycle.changed, cycle.details["still_due"]) == (2, 1, 0)


def test_a_long_chain_of_continuations_does_not_hide_facts_saved_meanwhile(workspace: Workspace) -> None:
    """New facts are looked for from the last *scheduled* cycle on: continuations schedule nothing."""
    fact = remember(workspace, "The staging database is rebuilt on Sundays")
    now = timezone.now()
    head = run("decay")  # schedules the fact; then: saved around the services after the chain began
    DecaySchedule.objects.filter(memory=fact).delete()
    Memory.objects.filter(pk=fact.pk).update(updated_at=now - dt.timedelta(hours=2, minutes=30))
    JobRun.objects.filter(pk=head.pk).update(created_at=now - dt.timedelta(hours=3))
    continuation = run("decay", follows=head.pk)  # still running two hours later
    JobRun.objects.filter(pk=continuation.pk).update(created_at=now - dt.timedelta(hours=1))

    again = run("decay")

    assert (continuation.trigger, continuation.details.get("scheduled")) == ("continuation", None)
    assert again.details["scheduled"] == 1
    assert DecaySchedule.objects.filter(memory=fact, due_at__isnull=False).exists()


def test_an_undone_deprecation_sticks(workspace: Workspace) -> None:
    fact = remember(workspace, "The VPN uses WireGuard")
    age(fact, 150)
    run("decay")
    event = Event.objects.get(verb="upkeep.deprecate")
    event_undo(event=event, actor=PERSON, reason="still true")

    run("decay")

    fact.refresh_from_db()
    assert fact.status == "active"
    assert fact.confidence == pytest.approx(0.9, abs=1e-3)  # a person's word is fresh evidence


def test_both_sides_of_an_open_contradiction_lose_half_once(workspace: Workspace) -> None:
    a = remember(workspace, "Deploys happen on Fridays")
    b = remember(workspace, "Deploys never happen on Fridays")
    clash = Uncertainty.objects.create(
        workspace=workspace,
        memory_a=a,
        memory_a_kind="fact",
        memory_b=b,
        memory_b_kind="fact",
        uncertainty_type=UncertaintyType.CONTRADICTION,
        severity="high",
        detection_context="ingestion",
    )
    run("confidence")
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.evidence_confidence, b.evidence_confidence) == (pytest.approx(0.45), pytest.approx(0.45))
    assert a.confidence == pytest.approx(0.45, abs=1e-4)
    clash.refresh_from_db()
    assert clash.penalized_at is not None
    assert passive(workspace, "when do deploys happen") == []  # 0.3–0.5: explicit search only
    assert a.text in searched(workspace, "Deploys happen on Fridays")  # ≥ 0.3: an explicit search finds it

    again = run("confidence")
    a.refresh_from_db()
    assert a.evidence_confidence == pytest.approx(0.45)
    assert again.changed == 0


def test_a_later_supporting_fact_adds_evidence_once_with_a_derived_from_link(workspace: Workspace) -> None:
    fact = remember(workspace, "The team deploys to production on Fridays")
    episode = remember(workspace, "Last Friday the team deployed the release to production", kind="episode")
    # Similar (≥ 0.75) and of another kind: support, not a duplicate to merge.
    run("confidence")

    fact.refresh_from_db()
    assert fact.evidence_confidence == pytest.approx(0.9 + 0.05 * 0.1)
    assert Link.objects.filter(src=fact, dst=episode, rel="derived_from").exists()
    event = Event.objects.get(verb="upkeep.evidence")
    assert event.memory_id == fact.pk
    assert event.automatic

    Memory.objects.filter(pk=episode.pk).update(recorded_at=timezone.now())  # seen again as new
    run("confidence")
    fact.refresh_from_db()
    assert fact.evidence_confidence == pytest.approx(0.905)
    assert Event.objects.filter(verb="upkeep.evidence").count() == 1


def test_decay_makes_confidence_dominance_reachable(workspace: Workspace) -> None:
    from conflicts.detection.verdict import Relation, Verdict
    from conflicts.services import conflict_resolve

    guess = remember(workspace, "The client's budget is 20k", source="inferred")
    said = remember(workspace, "The client's budget is 50k")
    age(guess, 40)
    run("decay")
    guess.refresh_from_db()
    assert said.confidence > 2 * guess.confidence  # 0.9 against 0.6·exp(−0.6) = 0.33

    verdict = Verdict(relation=Relation.TRUE_CONTRADICTION, probability=0.95, tier="test", reasons=("scripted",))
    result = conflict_resolve(older=guess, newer=said, verdict=verdict, context="drift", actor=Actor.system("drift"))
    assert result.action == "dominance"


# ---------------------------------------------------------------- consolidation


def test_a_duplicate_pair_from_two_agents_a_week_apart_ends_as_one_fact_with_both_in_its_lineage(
    workspace: Workspace,
) -> None:
    first = remember(workspace, "The staging database runs PostgreSQL 16", agent="planner", confidence=0.8)
    age(first, 7)
    second = remember(workspace, "Staging's database runs on PostgreSQL 16", agent="coder", confidence=0.95)

    result = run("consolidation")

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.merged_into_id) == ("merged", second.pk)  # the more confident text is kept
    assert second.status == "active"
    assert second.evidence_count == 2
    assert {m.pk for m in lineage(second)} == {first.pk, second.pk}
    assert {m.agent for m in lineage(second)} == {"planner", "coder"}
    assert Link.objects.filter(src=first, dst=second, rel="merged_into").exists()
    assert result.changed == 1
    # The merge is an automatic decision: on the Decisions queue, and reverting it restores both facts.
    merge = decisions_list(workspace=workspace).get(verb="upkeep.merge")
    assert "kept the most confident" in merge.reason

    assert run("consolidation").changed == 0  # idempotent

    decision_revert(event=merge, actor=PERSON)
    first.refresh_from_db()
    assert (first.status, first.merged_into_id) == ("active", None)
    assert run("consolidation").changed == 0  # a person un-merged them: not merged again


def test_lineage_is_the_union_of_the_clusters(workspace: Workspace) -> None:
    source = remember(workspace, "Ana said in standup that deploys move to Thursdays", kind="episode")
    a = remember(workspace, "Ana prefers email over phone calls", confidence=0.7)
    b = remember(workspace, "Ana prefers emails to phone calls", confidence=0.9)
    Link.objects.create(workspace=workspace, src=a, dst=source, rel="derived_from")

    run("consolidation")

    assert {m.pk for m in lineage(b)} == {a.pk, b.pk, source.pk}


def test_near_duplicates_that_disagree_are_not_merged(workspace: Workspace) -> None:
    a = remember(workspace, "The API allows 1000 requests per second")
    b = remember(workspace, "The API allows 500 requests per second")

    run("consolidation")

    assert set(Memory.objects.filter(pk__in=[a.pk, b.pk]).values_list("status", flat=True)) == {"active"}
    assert not Event.objects.filter(verb="upkeep.merge").exists()


# ---------------------------------------------------------------- unverified, stale, drift


def test_an_inferred_fact_is_unverified_and_check_action_asks_first(
    agent: AgentClient, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # what happens once the commit's transaction ends
        guess = agent.commit("The customer probably prefers phone calls", source="inferred")

    assert guess["reliability"] == "uncertain"
    record = Uncertainty.objects.get(memory_a_id=guess["id"])
    assert (record.uncertainty_type, record.state, record.memory_b_id) == ("unverified", "open", None)
    check = agent.post("/check-action", {"memory_ids": [guess["id"]]}).json()["results"][0]
    assert check["proceed"] is False
    assert "unverified" in check["warning"]
    assert check["clarification"]

    # A confirmation settles it.
    agent.post(f"/memories/{guess['id']}/reinforce")
    record.refresh_from_db()
    assert (record.state, record.resolution_strategy) == (UncertaintyState.RESOLVED, "evidence_resolved")
    assert agent.post("/check-action", {"memory_ids": [guess["id"]]}).json()["results"][0]["proceed"] is True


def test_the_nightly_job_records_missed_unverified_facts_and_stale_ones_once(workspace: Workspace) -> None:
    from tests.factories import memory

    imported = memory(workspace=workspace, text="The customer might churn", source="researched", status="active")
    old = remember(workspace, "The office is on the third floor")
    age(old, 100)

    first = run("unverified")
    second = run("unverified")

    kinds = set(Uncertainty.objects.values_list("memory_a_id", "uncertainty_type"))
    assert kinds == {(imported.pk, "unverified"), (old.pk, "stale")}
    imported.refresh_from_db()
    assert imported.reliability == "uncertain"
    assert first.changed == 2
    assert second.changed == 0


def test_drift_checks_a_budgeted_sample_and_raises_nothing_twice(workspace: Workspace) -> None:
    for n in range(30):
        remember(workspace, f"Service {n} is owned by team {n % 4}")
    remember(workspace, "The user lives in Porto", kind="trait", key="home_city")
    remember(workspace, "The user lives in Lisbon", kind="trait", key="home_city")

    first = run("drift")
    raised = Uncertainty.objects.count()
    second = run("drift")

    assert 10 <= first.read <= 20  # seed 000's budget at the baseline tolerance: 15
    assert first.read == 15
    assert first.progress_total == 15
    assert second.read == 15
    assert Uncertainty.objects.count() >= raised  # a new sample may find more; a pair is never raised twice
    pairs = list(Uncertainty.objects.filter(memory_b__isnull=False).values_list("memory_a_id", "memory_b_id"))
    assert len({frozenset(p) for p in pairs}) == len(pairs)


def test_drift_tops_a_thin_topic_partition_up_to_its_budget_from_the_other_topics(workspace: Workspace) -> None:
    # One topic holds a single fact; every other fact shares another topic.
    topics = ["billing", "infra"]
    while partition(topics[0]) == partition(topics[1]):
        topics[1] += "-x"
    remember(workspace, "Invoices go out on the 1st", scope=topics[0])
    for n in range(25):
        remember(workspace, f"Host {n} runs Debian 12", scope=topics[1])
    turn = partition(topics[0])  # the cycle whose turn is the thin topic

    sample = drift_sample(workspace.pk, turn=turn, size=15, now=timezone.now())

    assert len(sample) == 15
    assert len(set(sample)) == 15
    thin = Memory.objects.get(workspace=workspace, scope=topics[0])
    assert sample[0] == thin.pk  # its own partition first
