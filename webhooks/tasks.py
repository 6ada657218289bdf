"""Celery side of webhooks: queue a delivery per subscribed hook when conflicts announces an event, and send it.

The receivers run in the process that made the change, after its transaction
committed; they write the deliveries and put one message per delivery on the
``fresh`` queue (a person is waiting to hear about a card). Each attempt is a
task; a failed one queues the next with exponential backoff, up to
``MEMORYHUB_WEBHOOK_ATTEMPTS``.
"""

from __future__ import annotations

import functools
from typing import Any

from celery import shared_task
from django.db import OperationalError, transaction

from conflicts.hooks import CardAnswered, CardOpened, DecisionMade, JobFailed
from webhooks.models import EventType
from webhooks.services import deliveries_create, deliveries_stalled, delivery_attempt


# A database that stops answering mid-attempt: the task runs again until the claim's lease lets it re-take the attempt.
@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=(OperationalError,),
    retry_backoff=10,
    max_retries=6,
)
def deliver(delivery_id: str, number: int = 1) -> bool:
    """Attempt ``number`` of a delivery; on failure queue the next attempt after the backoff."""
    outcome = delivery_attempt(delivery_id=delivery_id, number=number)
    if outcome.retry_in is not None:
        deliver.apply_async((delivery_id, number + 1), countdown=outcome.retry_in)
    return outcome.succeeded


@shared_task(ignore_result=True)
def requeue_stalled_deliveries() -> int:
    """Beat: queue again the attempts whose message was lost, so a committed delivery is never dropped."""
    stalled = deliveries_stalled()
    for delivery_id, number in stalled:
        deliver.delay(str(delivery_id), number)
    return len(stalled)


def _queue(workspace_id: int, event_type: str, **ids: Any) -> None:
    with transaction.atomic():
        deliveries = deliveries_create(workspace_id=workspace_id, event_type=event_type, **ids)
        for delivery in deliveries:
            transaction.on_commit(functools.partial(deliver.delay, str(delivery.pk)))


def on_card_opened(event: CardOpened) -> None:
    _queue(event.workspace_id, EventType.CARD_OPENED, card_id=event.card_id)


def on_card_answered(event: CardAnswered) -> None:
    _queue(
        event.workspace_id,
        EventType.CARD_ANSWERED,
        card_id=event.card_id,
        answer_id=event.answer_id,
        event_id=event.event_id,
    )


def on_decision_made(event: DecisionMade) -> None:
    _queue(event.workspace_id, EventType.DECISION_MADE, event_id=event.event_id)


def on_job_failed(event: JobFailed) -> None:
    _queue(event.workspace_id, EventType.JOB_FAILED, job=event.job, subject=event.subject, error=event.error)
