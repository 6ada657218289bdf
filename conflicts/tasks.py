"""Celery entry points for detection: take ids, call the pipeline, retry on failure."""

from __future__ import annotations

import datetime as dt
import logging
import uuid

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.utils import timezone

from conflicts.detection.pipeline import detect_and_resolve
from conflicts.models import DetectiveRun, RunState
from conflicts.narrative import detective_run
from memories.hooks import FactsEmbedded
from memories.models import Memory, Status
from memoryhub.celery import idempotent_task
from workspaces.models import Workspace

logger = logging.getLogger(__name__)
UNCHECKED_GRACE = dt.timedelta(minutes=2)


@idempotent_task
def detect_conflicts(memory_id: str) -> int:
    """Run detection once per fact: the claim and the work commit together.

    The conditional UPDATE claims the fact (``checked_at`` was empty, so only
    one worker proceeds); if detection fails, the transaction rolls back, the
    claim with it, and the retry — or the sweep — runs it again.
    """
    with transaction.atomic():
        claimed = Memory.objects.filter(pk=uuid.UUID(memory_id), status=Status.ACTIVE, checked_at__isnull=True).update(
            checked_at=timezone.now()
        )
        if not claimed:
            return 0
        memory = Memory.objects.get(pk=memory_id)
        found = len(detect_and_resolve(memory))
        # The story may have changed too: the detective reads it a little later, once per burst.
        detective_schedule(workspace=memory.workspace, trigger_memory=memory)
        return found


@shared_task(acks_late=True)
def requeue_unchecked() -> int:
    """Beat job: facts embedded a while ago but never checked (lost message, crashed worker)."""
    cutoff = timezone.now() - UNCHECKED_GRACE
    ids = list(
        Memory.objects.filter(status=Status.ACTIVE, checked_at__isnull=True, embedded_at__lt=cutoff)
        .order_by("embedded_at")
        .values_list("id", flat=True)[:1000]
    )
    for memory_id in ids:
        detect_conflicts.delay(str(memory_id))
    return len(ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=5, max_retries=5)
def run_detective(run_id: int) -> str:
    """Carry out a queued narrative run (claimed once; a failure is recorded on the run)."""
    run = detective_run(run_id=run_id)
    return run.state if run else "skipped"


@shared_task(acks_late=True)
def schedule_detective_runs() -> int:
    """Beat job: a run for every workspace with facts recorded since its last run."""
    started = 0
    for workspace in Workspace.objects.all():
        last = DetectiveRun.objects.filter(workspace=workspace).order_by("-created_at").first()
        fresh = Memory.objects.filter(workspace=workspace, status=Status.ACTIVE)
        if last is not None:
            fresh = fresh.filter(recorded_at__gt=last.created_at)
        if fresh.exists():
            detective_request(workspace=workspace, trigger="schedule")
            started += 1
    return started


def enqueue_detection(event: FactsEmbedded) -> None:
    """Receiver of ``memories.hooks.facts_embedded``: check each newly embedded fact."""
    for memory_id in event.memory_ids:
        try:
            detect_conflicts.delay(str(memory_id))
        except Exception:
            logger.exception("could not enqueue detection of %s; the sweep will retry", memory_id)


# ---------------------------------------------------------------- queueing detective runs


def detective_schedule(*, workspace: Workspace, trigger_memory: Memory | None = None) -> DetectiveRun | None:
    """After a commit: queue a run a little later unless one already waits (the debounce)."""
    try:
        with transaction.atomic():
            run = DetectiveRun.objects.create(workspace=workspace, trigger="commit", trigger_memory=trigger_memory)
    except IntegrityError:
        return None  # a queued run exists; this commit will be in its story
    countdown = settings.MEMORYHUB_DETECTIVE_DEBOUNCE_SECONDS
    transaction.on_commit(lambda: _enqueue(run.pk, countdown))
    return run


def detective_request(*, workspace: Workspace, trigger: str = "manual") -> DetectiveRun:
    """Run now (a button, the API, the beat schedule): reuse a queued run if there is one."""
    with transaction.atomic():
        run = DetectiveRun.objects.filter(workspace=workspace, state=RunState.QUEUED).first()
        if run is None:
            try:
                with transaction.atomic():
                    run = DetectiveRun.objects.create(workspace=workspace, trigger=trigger)
            except IntegrityError:
                run = DetectiveRun.objects.get(workspace=workspace, state=RunState.QUEUED)
    run_id = run.pk
    transaction.on_commit(lambda: _enqueue(run_id, 0))
    return run


def _enqueue(run_id: int, countdown: int) -> None:
    try:
        run_detective.apply_async((run_id,), countdown=countdown)
    except Exception:
        logger.exception("could not enqueue detective run %s; the schedule will pick the workspace up", run_id)
