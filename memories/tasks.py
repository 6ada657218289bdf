"""Celery entry points for memories: take ids, call a service, retry on failure."""

from __future__ import annotations

import datetime as dt
import logging
import uuid

from celery import shared_task
from django.conf import settings

from memories import selectors, services
from memories.hooks import FactsWaiting
from memoryhub.celery import idempotent_task

logger = logging.getLogger(__name__)


@idempotent_task
def embed_memory(memory_id: str) -> int:
    """Embed this fact and whatever else is pending, in one batch.

    Idempotent: a fact that is already active is skipped, so a redelivered
    message or a duplicate enqueue costs one cheap query.
    """
    return services.memories_embed_pending(first_id=uuid.UUID(memory_id))


@shared_task(acks_late=True)
def requeue_stale_embeddings() -> int:
    """Beat job: re-queue facts left in pending_embed (crashed worker, lost message)."""
    stale = selectors.memories_stale_pending_ids(
        older_than=dt.timedelta(seconds=settings.MEMORYHUB_EMBED_STALE_SECONDS)
    )
    batch = settings.MEMORYHUB_EMBED_BATCH_SIZE
    # One message per batch: each task embeds its id plus the next pending ones.
    for start in range(0, len(stale), batch):
        embed_memory.delay(str(stale[start]))
    return len(stale)


def enqueue_embedding(event: FactsWaiting) -> None:
    """Receiver of ``hooks.facts_waiting``: one embed task for the facts (each drains a batch)."""
    try:
        embed_memory.delay(str(event.memory_ids[0]))
    except Exception:
        # The facts are committed; the beat job re-queues anything left pending.
        logger.exception("could not enqueue embedding of %s; the sweep will retry", event.memory_ids)
