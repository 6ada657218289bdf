"""Idempotency keys: a write retried with the same ``Idempotency-Key`` gets the first answer back.

Per agent key, a header value names one request for 24 hours. The first request
claims the name by inserting its row (the unique constraint decides between two
concurrent ones, without locks); it runs, and its answer is stored on the row. A
retry with the same request gets that answer replayed; with another request it is
refused; while the first is still running it is told to come back (409).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from memoryhub.errors import InvalidInput, RequestInProgress
from workspaces.models import AgentKey, IdempotencyRecord

# How long a key names its request: a retry later than this is a new request.
RETENTION = dt.timedelta(hours=24)
# A claim with no answer after this long belongs to a process that died mid-request; a retry may take it over.
ABANDONED_AFTER = dt.timedelta(minutes=2)
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class StoredResponse:
    status_code: int
    body: str
    content_type: str


@dataclass(frozen=True)
class Claim:
    """Either the caller runs the request (``record``) or replays the first answer (``replay``)."""

    record: IdempotencyRecord | None = None
    replay: StoredResponse | None = None


def idempotency_claim(*, agent_key: AgentKey, key: str, fingerprint: str) -> Claim:
    """Claim ``key`` for this request, or return the answer of the first request that claimed it.

    Raises InvalidInput when the key was used for another request, RequestInProgress
    (409, Retry-After) while the first request is still being answered.
    """
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise InvalidInput(
            f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable characters", field="Idempotency-Key"
        )
    now = timezone.now()
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                agent_key=agent_key, key=key, fingerprint=fingerprint, created_at=now
            )
        return Claim(record=record)
    except IntegrityError:
        pass
    existing = IdempotencyRecord.objects.filter(agent_key=agent_key, key=key).first()
    if existing is None:  # pruned between the insert and this read: claim again
        return idempotency_claim(agent_key=agent_key, key=key, fingerprint=fingerprint)
    expired = existing.created_at < now - RETENTION
    abandoned = existing.completed_at is None and existing.created_at < now - ABANDONED_AFTER
    if expired or abandoned:
        # Take the row over only if nobody else did in the meantime (the conditional UPDATE decides).
        taken = IdempotencyRecord.objects.filter(pk=existing.pk, created_at=existing.created_at).update(
            fingerprint=fingerprint, created_at=now, completed_at=None, status_code=None, body="", content_type=""
        )
        if taken:
            existing.refresh_from_db()
            return Claim(record=existing)
        return idempotency_claim(agent_key=agent_key, key=key, fingerprint=fingerprint)
    if existing.fingerprint != fingerprint:
        raise InvalidInput(
            "this Idempotency-Key was already used for a different request (another path or body) in the last 24 h; "
            "use a new key for a new request",
            field="Idempotency-Key",
        )
    if existing.completed_at is None or existing.status_code is None:
        raise RequestInProgress(
            "a request with this Idempotency-Key is still being answered; send it again shortly to get its answer",
            retry_after_seconds=1,
        )
    return Claim(
        replay=StoredResponse(status_code=existing.status_code, body=existing.body, content_type=existing.content_type)
    )


def idempotency_complete(*, record: IdempotencyRecord, response: StoredResponse) -> None:
    """Store the answer of the claimed request so that retries get it."""
    IdempotencyRecord.objects.filter(pk=record.pk, created_at=record.created_at).update(
        status_code=response.status_code,
        body=response.body,
        content_type=response.content_type,
        completed_at=timezone.now(),
    )


def idempotency_release(*, record: IdempotencyRecord) -> None:
    """Give the key back (the request failed on the server's side): a retry runs it afresh."""
    IdempotencyRecord.objects.filter(pk=record.pk, created_at=record.created_at, completed_at__isnull=True).delete()


def idempotency_prune(*, now: dt.datetime | None = None) -> int:
    """Delete the records past their 24 hours; returns how many."""
    cutoff = (now or timezone.now()) - RETENTION
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
