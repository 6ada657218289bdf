"""One drain task per queue of waiting rows, never one task per row.

Work that piles up in rows (facts waiting for a vector, facts waiting for a
conflict check) is done by a task that takes the rows in bounded batches,
claimed with ``SELECT … FOR UPDATE SKIP LOCKED``. Whoever adds a row asks for a
drain; :func:`drain_request` sends a message only when none is waiting in the
broker already (a conditional UPDATE on the queue's :class:`Drain` row: one
message per burst, however many commits). The task calls :func:`drain_started`
first (clearing the mark: a row added from now on asks for the next drain) and
:func:`drain_finished` last.

A message can be lost (the broker was down when it was sent, a worker was
killed holding it): a mark older than ``STALE_QUEUED`` no longer blocks a new
request, and the sweeps ask again for any queue with old waiting rows.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from memoryhub.models import Drain

logger = logging.getLogger(__name__)

# A drain message not taken by a worker within this long is presumed lost.
STALE_QUEUED = dt.timedelta(seconds=60)
# One drain message works this long at most, then hands over to a new message at the back of its
# queue, so a long backlog never keeps the worker from the other queue's messages.
DRAIN_SECONDS = 20.0


def _stale_running() -> dt.timedelta:
    # A drain still "running" past the task time limit died without saying so.
    return dt.timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 60)


def drain_request(name: str, send: Callable[[], object]) -> bool:
    """Send one drain message for ``name`` unless one already waits; whether a message was sent.

    ``send`` puts the message on the broker (``task.delay``). If it fails the
    mark is taken back, so the next request (or the sweep) tries again; the rows
    themselves are committed whatever happens here.
    """
    now = timezone.now()
    # One statement on every commit's path: create the queue's row or mark it, unless a message waits.
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {Drain._meta.db_table} AS drain (name, queued_at, messages_sent) VALUES (%s, %s, 1)
            ON CONFLICT (name) DO UPDATE SET queued_at = EXCLUDED.queued_at, messages_sent = drain.messages_sent + 1
            WHERE drain.queued_at IS NULL OR drain.queued_at < %s
            RETURNING name
            """,  # noqa: S608 - the table name is the model's own, every value a parameter
            [name, now, now - STALE_QUEUED],
        )
        claimed = cursor.fetchone() is not None
    if not claimed:
        return False
    try:
        send()
    except Exception:
        Drain.objects.filter(name=name, queued_at=now).update(queued_at=None)
        logger.exception("could not queue a %s drain; the sweep will ask again", name)
        return False
    return True


def drain_idle(name: str) -> bool:
    """No drain of ``name`` waits in the broker or runs (or the one that did is presumed dead)."""
    now = timezone.now()
    busy = Drain.objects.filter(name=name).filter(
        Q(queued_at__gte=now - STALE_QUEUED) | Q(running_since__gte=now - _stale_running())
    )
    return not busy.exists()


def drain_started(name: str) -> None:
    Drain.objects.update_or_create(name=name, defaults={"queued_at": None, "running_since": timezone.now()})


def drain_finished(name: str) -> None:
    Drain.objects.filter(name=name).update(running_since=None, last_finished_at=timezone.now())
