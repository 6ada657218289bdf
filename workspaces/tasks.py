from __future__ import annotations

from celery import shared_task

from workspaces.idempotency import idempotency_prune


@shared_task
def prune_idempotency_records() -> int:
    """Idempotency keys name a request for 24 h; older records only take space."""
    return idempotency_prune()
