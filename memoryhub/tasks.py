"""Platform upkeep on Celery beat."""

from __future__ import annotations

from celery import shared_task

from memoryhub.broker import broker_prune


@shared_task
def prune_broker() -> int | None:
    """Beat job: delete delivered messages from the embedded broker's table."""
    return broker_prune()
