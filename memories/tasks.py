"""Celery entry points for memories: drain the embedding queue in batches, re-embed, sweep.

One message drains every waiting fact (``memoryhub/drains.py``): a burst of
commits puts one message on the broker, not one per fact.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

from celery import shared_task
from django.conf import settings

from memories import selectors, services
from memories.hooks import FactsWaiting
from memoryhub.broker import broker_prune_after_drain
from memoryhub.celery import idempotent_task
from memoryhub.drains import DRAIN_SECONDS, drain_finished, drain_idle, drain_request, drain_started

logger = logging.getLogger(__name__)

EMBED_DRAIN = "embed"
REEMBED_DRAIN = "reembed"
REREAD_DRAIN = "reread-subjects"
# Background work that finds fresh work waiting steps aside for this long.
YIELD_SECONDS = 2


def request_embedding() -> bool:
    """Ask for a drain of the embedding queue unless one is already waiting."""
    return drain_request(EMBED_DRAIN, embed_pending.delay)


def enqueue_embedding(event: FactsWaiting) -> None:
    """Receiver of ``hooks.facts_waiting``."""
    request_embedding()


@idempotent_task
def embed_pending() -> int:
    """Embed every fact waiting for a vector, a batch per transaction (``memories_embed_pending``).

    Batches are claimed with ``SKIP LOCKED``, so two workers never embed the same
    fact; a worker killed mid-batch rolls back and its facts wait for the next drain.
    """
    drain_started(EMBED_DRAIN)
    done = 0
    try:
        deadline = time.monotonic() + DRAIN_SECONDS
        while batch := services.memories_embed_pending():
            done += batch
            if time.monotonic() > deadline:
                request_embedding()
                break
        else:
            broker_prune_after_drain()
    finally:
        drain_finished(EMBED_DRAIN)
    return done


@shared_task(acks_late=True)
def requeue_stale_embeddings() -> int:
    """Beat job: ask for a drain when facts have waited too long and no drain is queued or running.

    A lost message (the broker was down at commit, a worker was killed) leaves facts
    in pending_embed; one drain message takes them all. Returns how many were waiting.
    """
    stale = selectors.memories_stale_pending_ids(
        older_than=dt.timedelta(seconds=settings.MEMORYHUB_EMBED_STALE_SECONDS), limit=1
    )
    if stale and drain_idle(EMBED_DRAIN):
        request_embedding()
    return len(stale)


def request_reembedding() -> bool:
    """Queue re-embedding of every fact whose vector came from another embedder (background work)."""
    return drain_request(REEMBED_DRAIN, reembed_stale.delay)


@shared_task(acks_late=True)
def reembed_stale() -> int:
    """Background: re-embed stale vectors batch by batch, stepping aside while fresh facts wait."""
    return _background_drain(REEMBED_DRAIN, services.memories_reembed_stale, reembed_stale, request_reembedding)


def request_subject_reread() -> bool:
    """Queue reading again every fact an older subject reader read (background work)."""
    return drain_request(REREAD_DRAIN, reread_stale_subjects.delay)


@shared_task(acks_late=True)
def reread_stale_subjects() -> int:
    """Background: read stale subjects again batch by batch, stepping aside while fresh facts wait."""
    return _background_drain(
        REREAD_DRAIN, services.memories_reread_stale_subjects, reread_stale_subjects, request_subject_reread
    )


@shared_task(acks_late=True)
def requeue_stale_subjects() -> bool:
    """Beat job: after an upgrade of the subject reader, ask for a drain that reads stored facts again.

    Returns whether any fact waits for it. One drain at a time; a lost message is asked for again.
    """
    waiting = selectors.memories_stale_subjects().exists()
    if waiting and drain_idle(REREAD_DRAIN):
        request_subject_reread()
    return waiting


def _background_drain(name: str, one_batch: Callable[[], int], task: Any, request_next: Callable[[], bool]) -> int:
    """Run ``one_batch`` until it finds nothing, for at most ``DRAIN_SECONDS`` (then ask for the next drain);
    whenever fresh commits wait, step aside and come back ``YIELD_SECONDS`` later."""
    drain_started(name)
    done = 0
    try:
        deadline = time.monotonic() + DRAIN_SECONDS
        while True:
            if selectors.fresh_work_waiting():
                # Fresh commits first: come back once they are embedded and checked.
                task.apply_async(countdown=YIELD_SECONDS)
                break
            batch = one_batch()
            if not batch:
                break
            done += batch
            if time.monotonic() > deadline:
                request_next()
                break
    finally:
        drain_finished(name)
    return done
