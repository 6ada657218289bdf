"""Celery entry points for detection: drain the facts waiting for a check in one task, queue detective runs.

One message drains every fact waiting for its check (``memoryhub/drains.py``):
a burst of commits puts one detection message on the broker, not one per fact.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.utils import timezone

from conflicts import hooks
from conflicts.detection.pipeline import CheckFailed, check_next_waiting
from conflicts.models import DetectiveRun, JobRun, RunState
from conflicts.narrative import detective_run
from conflicts.upkeep import JOBS
from conflicts.upkeep.runs import job_execute, job_queue
from memories.hooks import FactsEmbedded
from memories.models import Memory, Status
from memories.selectors import facts_waiting_for_vector
from memoryhub.broker import broker_prune_after_drain
from memoryhub.celery import idempotent_task
from memoryhub.drains import DRAIN_SECONDS, drain_finished, drain_idle, drain_request, drain_started
from workspaces.models import Workspace

logger = logging.getLogger(__name__)
DETECT_DRAIN = "detect"
UNCHECKED_GRACE = dt.timedelta(minutes=2)


class DetectionFailed(RuntimeError):
    """Some facts could not be checked; they stay waiting and the drain is retried."""


def request_detection() -> bool:
    """Ask for a drain of the facts waiting for their check unless one is already waiting."""
    return drain_request(DETECT_DRAIN, detect_pending.delay)


def enqueue_detection(event: FactsEmbedded) -> None:
    """Receiver of ``memories.hooks.facts_embedded``."""
    request_detection()


@idempotent_task
def detect_pending() -> int:
    """Check every embedded, unchecked fact (``check_next_waiting``), with no transaction open while it waits.

    Facts are claimed with a committed ``check_claimed_at``, so two workers
    never check the same fact; a worker killed mid-check leaves a claim that
    expires after ``CLAIM_LEASE`` and the fact waits for a later drain. A fact
    whose check fails is released, skipped for the rest of this drain and the
    task is retried with backoff; the others go on being checked.
    """
    drain_started(DETECT_DRAIN)
    checked = 0
    failed: set[uuid.UUID] = set()
    touched: dict[int, Memory] = {}
    try:
        deadline = time.monotonic() + DRAIN_SECONDS
        while True:
            try:
                memory = check_next_waiting(skip=failed)
            except CheckFailed as exc:
                logger.exception("checking %s failed; it stays waiting", exc.memory_id)
                failed.add(exc.memory_id)
                _announce_check_failed(exc)
                continue
            if memory is None:
                if not failed:
                    broker_prune_after_drain()
                break
            checked += 1
            touched[memory.workspace_id] = memory
            # Embedding is fast (hundreds a second), checking slow (tens): while facts wait for their
            # vector, hand the worker to the embedding drain queued behind this one and come back.
            if time.monotonic() > deadline or facts_waiting_for_vector():
                request_detection()
                break
        # The story may have changed too: the detective reads it a little later, once per burst.
        for memory in touched.values():
            detective_schedule(workspace=memory.workspace, trigger_memory=memory)
    finally:
        drain_finished(DETECT_DRAIN)
    if failed:
        raise DetectionFailed(f"{len(failed)} facts could not be checked: {sorted(map(str, failed))[:5]}")
    return checked


def _announce_check_failed(failure: CheckFailed) -> None:
    workspace_id = Memory.objects.filter(pk=failure.memory_id).values_list("workspace_id", flat=True).first()
    if workspace_id is None:
        return
    cause = failure.__cause__
    error = f"{type(cause).__name__}: {cause}" if cause else str(failure)
    hooks.announce_on_commit(
        hooks.job_failed,
        hooks.JobFailed(workspace_id=workspace_id, job="detection", subject=str(failure.memory_id), error=error[:2000]),
    )


@shared_task(acks_late=True)
def requeue_unchecked() -> int:
    """Beat job: ask for a drain when facts have waited for their check too long and no drain is queued or running.

    Returns how many such facts there are (a lost message or a crashed worker left them).
    """
    cutoff = timezone.now() - UNCHECKED_GRACE
    waiting = Memory.objects.filter(status=Status.ACTIVE, checked_at__isnull=True, embedded_at__lt=cutoff).count()
    if waiting and drain_idle(DETECT_DRAIN):
        request_detection()
    return waiting


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=5, max_retries=5)
def upkeep_run(job: str, workspace_id: int | None = None, run_id: int | None = None, follows: int | None = None) -> str:
    """Beat, "run now" and continuations: one recorded run of an upkeep job (``conflicts.upkeep``).

    Safe to deliver twice: every job is idempotent, and a queued run is claimed once.
    A failure is recorded on the run and retried, the committed batches kept. A run
    that handed over (a bounded decay cycle that left facts due) gets its successor at
    the back of the queue at once; ``follows`` names the run a continuation continues.
    """
    run = job_execute(
        job=job,
        fn=JOBS[job],
        workspace_id=workspace_id,
        trigger="schedule" if run_id is None else "manual",
        run_id=run_id,
        follows=follows,
    )
    if run is None:
        return "skipped"
    if run.details.get("continues"):
        try:
            upkeep_run.apply_async((job, run.workspace_id), {"follows": run.pk})
        except Exception:
            logger.exception("could not queue the successor of %s run %s; the next scheduled run goes on", job, run.pk)
    return run.state


def upkeep_request(*, job: str, workspace: Workspace) -> JobRun:
    """Run now (the Jobs page): a queued run for this workspace, started by a worker after commit."""
    if job == "detective":
        detective = detective_request(workspace=workspace, trigger="manual")
        return JobRun.objects.filter(detective_run=detective).first() or JobRun(job="detective", workspace=workspace)
    run = job_queue(job=job, workspace=workspace)
    transaction.on_commit(lambda: upkeep_run.delay(job, workspace.pk, run.pk))
    return run


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
