"""The narrative coherence detective: runs, triggers and the cards they raise.

A run reads the workspace's history as a story — a forgetting-curve sample,
oldest first — and flags reversals, ambiguity and stale claims, with the LLM
when one is configured (and its circuit breaker is closed) and offline
otherwise. Batches the LLM gave no usable answer for are read by the offline
detective instead; the run is then recorded ``partial`` (some batches) or
``failed`` (all), with the error. Flags become conflict cards,
never twice for the same fact set, never for a pair a reviewer called "both true".
"""

from __future__ import annotations

import logging
import time
import uuid

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from conflicts import forgetting, hooks
from conflicts.detection import detective_llm, detective_offline
from conflicts.models import (
    AnswerChoice,
    CardKind,
    ConflictCard,
    DetectionContext,
    DetectiveRun,
    JobRun,
    JobState,
    RunState,
    Uncertainty,
    UncertaintyType,
)
from conflicts.reliability import reliability_lower, severity_for
from conflicts.services import UNCERTAINTY_FIELDS, card_create, card_holding, surface_context
from conflicts.story import Batch, Flag, batches
from memories.audit import Actor, Tracker, record_event
from memories.models import LIVE_STATUSES, Memory, Reliability
from memoryhub.llm import llm_enabled, llm_paused
from workspaces.models import Workspace

logger = logging.getLogger(__name__)

# Past this many survivors a run reads a priority sample of them: the rates alone
# grow with the workspace; this keeps a run's cost flat.


def detective_run(*, run_id: int, mode: str | None = None, whole_story: bool = False) -> DetectiveRun | None:
    """Claim a queued run and carry it out; None when another worker has it.

    ``whole_story`` reads every live fact (up to the per-run cap) instead of a
    forgetting-curve sample: for small workspaces read once on purpose, such as
    the demo right after seeding.
    """
    claimed = DetectiveRun.objects.filter(pk=run_id, state=RunState.QUEUED).update(
        state=RunState.RUNNING, started_at=timezone.now()
    )
    if not claimed:
        return None
    run = DetectiveRun.objects.select_related("workspace").get(pk=run_id)
    job = JobRun.objects.create(
        job="detective",
        workspace=run.workspace,
        trigger=run.trigger,
        state=JobState.RUNNING,
        started_at=run.started_at,
        heartbeat_at=run.started_at,
        detective_run=run,
    )
    started = time.monotonic()
    try:
        _carry_out(
            run, mode or ("llm" if llm_enabled() and llm_paused() is None else "offline"), whole_story=whole_story
        )
        run.state = _outcome(run)
    except Exception as exc:
        logger.exception("detective run %s failed", run_id)
        run.state = RunState.FAILED
        run.error = f"{type(exc).__name__}: {exc}"[:2000]
    run.seconds = round(time.monotonic() - started, 3)
    run.finished_at = timezone.now()
    run.save()
    if run.state == RunState.FAILED:
        hooks.announce_on_commit(
            hooks.job_failed,
            hooks.JobFailed(workspace_id=run.workspace_id, job="detective", subject=f"run {run.pk}", error=run.error),
        )
    # The Jobs page lists the detective's runs with the upkeep jobs'.
    JobRun.objects.filter(pk=job.pk).update(
        state=JobState.FAILED if run.state == RunState.FAILED else JobState.DONE,
        read=run.facts_read,
        changed=run.cards_created,
        errors=run.failed_batches + (run.state == RunState.FAILED and not run.failed_batches),
        error=run.error,
        progress_total=run.facts_read,
        progress_done=run.facts_read,
        details={"mode": run.mode, "facts_total": run.facts_total, "flags": run.flags_raised, "tokens": run.tokens},
        heartbeat_at=run.finished_at,
        finished_at=run.finished_at,
    )
    return run


def story_facts(workspace: Workspace) -> list[forgetting.StoryFact]:
    """Every live fact of the workspace, cheaply: texts are loaded only for survivors."""
    rows = Memory.objects.filter(workspace=workspace, status__in=LIVE_STATUSES).values_list(
        "id", "valid_from", "conflict_count"
    )
    return [forgetting.StoryFact(id=pk, text="", scope="", agent="", at=at, conflict_count=c) for pk, at, c in rows]


def _carry_out(run: DetectiveRun, mode: str, *, whole_story: bool = False) -> None:
    everything = story_facts(run.workspace)
    sampled = (
        sorted(everything, key=lambda f: f.at)
        if whole_story
        else forgetting.sample(
            everything,
            now=timezone.now(),
            seed=f"{run.workspace_id}:{run.pk}",
            trigger_id=run.trigger_memory_id,
            rates=forgetting.ForgettingRates.from_settings(),
        )
    )
    sampled = _cap(sampled, run.trigger_memory_id)
    facts = _with_texts(sampled)
    run.mode, run.facts_total, run.facts_read = mode, len(everything), len(facts)
    flags: list[Flag] | None = None
    if mode == "llm":
        story = batches(facts)
        result = detective_llm.detect(story)
        if result.paused:
            run.mode = "offline"  # the circuit breaker opened since the run chose its mode
        else:
            run.batches, run.tokens, run.failed_batches = len(story), result.tokens, result.failed_batches
            flags = [
                Flag(f.kind, [x.id for x in f.facts], f.question, "narrative:llm", {"mode": "llm"})
                for f in result.flags
            ]
            if result.failed:
                # The story the LLM could not read is still read: by the offline detective.
                flags += detective_offline.detect(_facts_of(result.failed))
                run.error = (
                    f"{result.failed_batches} of {len(story)} LLM batches failed, read offline instead: "
                    f"{result.errors[0]}"
                )[:2000]
    if flags is None:
        run.batches = 1
        flags = detective_offline.detect(facts)
    run.flags_raised = len(flags)
    # People answer a handful of cards a day: past this many new cards a run stops
    # carding (the rest are found again by later runs, once these are answered).
    created = 0
    for flag in flags:
        if created >= settings.MEMORYHUB_DETECTIVE_MAX_CARDS:
            break
        created += flag_to_card(workspace=run.workspace, flag=flag) is not None
    run.cards_created = created


def _outcome(run: DetectiveRun) -> RunState:
    if not run.failed_batches:
        return RunState.DONE
    return RunState.FAILED if run.failed_batches >= run.batches else RunState.PARTIAL


def _facts_of(failed: list[Batch]) -> list[forgetting.StoryFact]:
    """The facts of the failed batches, once each (batches overlap), oldest first."""
    seen: dict[uuid.UUID | str, forgetting.StoryFact] = {}
    for batch in failed:
        for fact in batch.facts:
            seen.setdefault(fact.id, fact)
    return sorted(seen.values(), key=lambda f: f.at)


def _cap(facts: list[forgetting.StoryFact], trigger_id: uuid.UUID | None) -> list[forgetting.StoryFact]:
    if len(facts) <= settings.MEMORYHUB_DETECTIVE_MAX_FACTS:
        return facts
    # Keep the trigger, the contentious, then the newest: priority by (trigger, flags, time).
    ranked = sorted(facts, key=lambda f: (f.id != trigger_id, -f.conflict_count, -f.at.timestamp()))
    kept = {f.id for f in ranked[: settings.MEMORYHUB_DETECTIVE_MAX_FACTS]}
    return [f for f in facts if f.id in kept]


def _with_texts(facts: list[forgetting.StoryFact]) -> list[forgetting.StoryFact]:
    rows = {
        m.pk: m
        for m in Memory.objects.filter(pk__in=[f.id for f in facts]).only(
            "id",
            "text",
            "scope",
            "agent",
            "valid_from",
            "conflict_count",
            "key",
            "embedding",
            "embedding_model",
            "subject_entity",
            "subject_attribute",
            "speech_act",
        )
    }
    return [
        forgetting.StoryFact.of(m)
        for f in facts
        if (m := rows.get(f.id)) is not None  # type: ignore[arg-type]
    ]


KIND_TO_UNCERTAINTY = {
    CardKind.REVERSAL: UncertaintyType.CONTRADICTION,
    CardKind.CONTRADICTION: UncertaintyType.CONTRADICTION,
    CardKind.AMBIGUITY: UncertaintyType.AMBIGUOUS,
    CardKind.STALE: UncertaintyType.STALE,
}


def _disputed(kind: CardKind, memories: list[Memory], asked: Memory | None) -> list[Memory]:
    """The facts a card puts in doubt: both sides of a clash; for a stale claim, the claim alone.

    A stale flag that names its old fact (the offline detective's do) doubts that fact only —
    the later facts are the evidence that it went stale. One that does not (an LLM's) doubts
    everything but the newest statement.
    """
    if kind != CardKind.STALE:
        return memories
    if asked is not None:
        return [asked]
    return [m for m in memories if m.pk != memories[-1].pk]


def flag_to_card(*, workspace: Workspace, flag: Flag) -> ConflictCard | None:
    """Raise a card for ``flag`` unless its fact set was carded or a pair was answered 'both true'."""
    memories = list(Memory.objects.filter(workspace=workspace, pk__in=flag.fact_ids).order_by("valid_from"))
    if len(memories) < 2:
        return None
    if card_holding(memories) is not None:
        return None
    if _answered_both_true(memories):
        return None
    kind = CardKind(flag.kind)
    asked = next((m for m in memories if m.pk == flag.asked), memories[-1])
    others = [m for m in memories if m.pk != asked.pk]
    with transaction.atomic():
        tracker = Tracker()
        mark = Reliability.UNCERTAIN if kind == CardKind.STALE else Reliability.CONTRADICTED
        named_claim = asked if flag.asked is not None else None
        disputed = _disputed(kind, memories, named_claim)
        for memory in memories:
            if memory in disputed:
                reliability_lower(tracker, memory, mark)
            tracker.update(memory, conflict_count=memory.conflict_count + 1)
            memory.save()
        uncertainty = Uncertainty.objects.create(
            workspace=workspace,
            memory_a=asked,
            memory_a_kind=asked.kind,
            memory_b=others[0],
            memory_b_kind=others[0].kind,
            uncertainty_type=KIND_TO_UNCERTAINTY[kind],
            severity=severity_for(asked, others[0]),
            detection_context=DetectionContext.NARRATIVE,
            detector=flag.detector,
            classification=kind,
            reasoning=str(flag.evidence.get("reason", "")),
            temporal_signal=kind in (CardKind.REVERSAL, CardKind.STALE),
            surface_context=surface_context(asked, others[0]),
        )
        tracker.created(uncertainty, UNCERTAINTY_FIELDS)
        card = card_create(
            tracker,
            kind=kind,
            memories=memories,
            asked=asked,
            question=flag.question,
            detector=flag.detector,
            evidence=flag.evidence,
            severity=uncertainty.severity,
            uncertainty=uncertainty,
        )
        record_event(
            workspace=workspace,
            actor=Actor.system("detective"),
            verb="conflict.narrative_card",
            memory=asked,
            changes=tracker.changes,
            automatic=True,
            reason=f"{flag.kind}: {flag.question}",
        )
    return card


def _answered_both_true(memories: list[Memory]) -> bool:
    ids = {m.pk for m in memories}
    answered = ConflictCard.objects.filter(
        workspace_id=memories[0].workspace_id, answers__choice=AnswerChoice.BOTH
    ).prefetch_related("card_facts")
    for card in answered:
        card_ids = {f.memory_id for f in card.card_facts.all()}
        if len(card_ids & ids) >= 2:
            return True
    return False
