"""Recording job runs: one ``JobRun`` per run, its progress committed with each batch.

Every upkeep job works in bounded batches, one transaction each: a batch's
changes, its audit events and the run's progress counters commit together, so
a run killed at any point leaves whole batches done and nothing half-applied,
and the Jobs page shows exactly what committed. Runs left ``running`` by a dead
worker are closed as failed ("abandoned") when the next run of the job starts.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from conflicts.models import JobRun, JobState
from workspaces.models import Workspace

logger = logging.getLogger(__name__)
# The trigger of a run queued by its predecessor, a bounded cycle that left work due (``Cycle.hand_over``).
CONTINUATION = "continuation"


@dataclass
class Cycle:
    """What a job function gets: its run, the workspace it is limited to (None: all), and the time."""

    run: JobRun
    workspace_id: int | None
    now: dt.datetime

    def progress(self, *, read: int = 0, changed: int = 0, done: int | None = None, errors: int = 0) -> None:
        """Add to the run's counters; call inside the batch's transaction so they commit with it."""
        JobRun.objects.filter(pk=self.run.pk).update(
            read=F("read") + read,
            changed=F("changed") + changed,
            errors=F("errors") + errors,
            progress_done=F("progress_done") + (read if done is None else done),
            heartbeat_at=timezone.now(),
        )

    def total(self, total: int) -> None:
        JobRun.objects.filter(pk=self.run.pk).update(progress_total=total, heartbeat_at=timezone.now())

    def note(self, **details: object) -> None:
        self.run.details.update(details)
        JobRun.objects.filter(pk=self.run.pk).update(details=self.run.details)

    def hand_over(self, **details: object) -> None:
        """Ask for a successor run of the job, queued once this one is done (``conflicts.tasks.upkeep_run``)."""
        self.note(continues=True, **details)


JobFunction = Callable[[Cycle], None]


def job_queue(*, job: str, workspace: Workspace | None, trigger: str = "manual") -> JobRun:
    """A queued run for a button or the API; the task claims it by id."""
    return JobRun.objects.create(job=job, workspace=workspace, trigger=trigger, state=JobState.QUEUED)


def job_execute(
    *,
    job: str,
    fn: JobFunction,
    workspace_id: int | None = None,
    trigger: str = "schedule",
    run_id: int | None = None,
    now: dt.datetime | None = None,
    follows: int | None = None,
) -> JobRun | None:
    """Run ``fn`` as one recorded run of ``job``; None when the queued run ``run_id`` was already claimed.

    A failure is recorded on the run (state ``failed``, the error) and raised
    again so the task retries; the batches that committed stay committed.
    ``now`` is the clock the job reads (tests and the benchmark move it).
    ``follows`` is the run this one continues: its trigger is then ``continuation``.
    """
    now = now or timezone.now()
    _close_abandoned(job, now)
    if run_id is not None:
        claimed = JobRun.objects.filter(pk=run_id, state=JobState.QUEUED).update(
            state=JobState.RUNNING, started_at=now, heartbeat_at=now
        )
        if not claimed:
            return None
        run = JobRun.objects.get(pk=run_id)
        workspace_id = run.workspace_id
    else:
        run = JobRun.objects.create(
            job=job,
            workspace_id=workspace_id,
            trigger=CONTINUATION if follows is not None else trigger,
            state=JobState.RUNNING,
            started_at=now,
            heartbeat_at=now,
            details={"follows": follows} if follows is not None else {},
        )
    try:
        fn(Cycle(run, workspace_id, now))
    except Exception as exc:
        logger.exception("%s run %s failed", job, run.pk)
        JobRun.objects.filter(pk=run.pk).update(
            state=JobState.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            errors=F("errors") + 1,
            finished_at=timezone.now(),
        )
        raise
    JobRun.objects.filter(pk=run.pk).update(state=JobState.DONE, finished_at=timezone.now())
    run.refresh_from_db()
    return run


def _close_abandoned(job: str, now: dt.datetime) -> None:
    stalled = now - dt.timedelta(seconds=settings.MEMORYHUB_UPKEEP_STALL_SECONDS)
    JobRun.objects.filter(job=job, state=JobState.RUNNING, heartbeat_at__lt=stalled).update(
        state=JobState.FAILED,
        error="abandoned: the worker stopped mid-run; the batches it committed stay applied",
        finished_at=F("heartbeat_at"),
    )


def last_started(job: str, workspace_id: int | None) -> dt.datetime | None:
    """When the last completed run of ``job`` covering ``workspace_id`` started (a run over all covers each)."""
    runs = JobRun.objects.filter(job=job, state=JobState.DONE)
    if workspace_id is None:
        runs = runs.filter(workspace__isnull=True)
    else:
        runs = runs.filter(workspace_id__in=[workspace_id]) | runs.filter(workspace__isnull=True)
    return runs.order_by("-started_at").values_list("started_at", flat=True).first()
