"""Registering webhooks, queueing an event for each subscribed hook, and one delivery attempt."""

from __future__ import annotations

import datetime as dt
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub.errors import InvalidInput
from webhooks import payloads
from webhooks.models import Delivery, DeliveryAttempt, DeliveryState, EventType, PayloadFormat, Webhook
from webhooks.signing import SIGNATURE_HEADER, new_secret, signature_header
from workspaces.models import Workspace

USER_AGENT = "MemoryHub-Webhooks/1"
EVENT_HEADER = "MemoryHub-Event"
DELIVERY_HEADER = "MemoryHub-Delivery"
# A claimed attempt whose worker died is taken again after this long (the POST itself is bounded by its timeout).
CLAIM_LEASE = dt.timedelta(minutes=2)
STALL_GRACE = dt.timedelta(minutes=5)  # how late a queued attempt may be before the sweep queues it again
MAX_WEBHOOKS_PER_WORKSPACE = 20


def webhook_create(
    *,
    workspace: Workspace,
    url: str,
    events: list[str],
    payload_format: str = PayloadFormat.MEMORYHUB,
    created_by: User | AnonymousUser | None = None,
) -> Webhook:
    """Register a hook; its ``secret`` is readable on the returned row (show it once)."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise InvalidInput("the URL must start with http:// or https:// and name a host", field="url")
    if len(url) > 2000:
        raise InvalidInput("the URL is longer than 2,000 characters", field="url")
    chosen = sorted({event for event in events if event})
    unknown = [event for event in chosen if event not in EventType.values]
    if unknown or not chosen:
        raise InvalidInput(f"choose one or more of {', '.join(EventType.values)}", field="events")
    if payload_format not in PayloadFormat.values:
        raise InvalidInput(f"the format must be one of {', '.join(PayloadFormat.values)}", field="payload_format")
    if Webhook.objects.filter(workspace=workspace).count() >= MAX_WEBHOOKS_PER_WORKSPACE:
        raise InvalidInput(f"a workspace has at most {MAX_WEBHOOKS_PER_WORKSPACE} webhooks", field="url")
    user = created_by if isinstance(created_by, User) else None
    return Webhook.objects.create(
        workspace=workspace,
        url=url,
        events=chosen,
        payload_format=payload_format,
        secret=new_secret(),
        created_by=user,
    )


def webhook_delete(*, webhook: Webhook) -> None:
    """Remove the hook with its delivery log; attempts already queued find nothing and stop."""
    webhook.delete()


def deliveries_create(*, workspace_id: int, event_type: str, **ids: Any) -> list[Delivery]:
    """One pending delivery per hook of the workspace subscribed to ``event_type``, each with its body fixed."""
    hooks = list(Webhook.objects.filter(workspace_id=workspace_id, events__contains=[event_type]))
    if not hooks:
        return []
    workspace = Workspace.objects.get(pk=workspace_id)
    data = payloads.event_data(event_type, workspace, **ids)
    if data is None:
        return []
    bodies: dict[str, str] = {}
    deliveries = []
    for hook in hooks:
        if hook.payload_format not in bodies:
            bodies[hook.payload_format] = payloads.render(event_type, workspace, data, hook.payload_format)
        deliveries.append(Delivery(webhook=hook, event_type=event_type, body=bodies[hook.payload_format]))
    return Delivery.objects.bulk_create(deliveries)


@dataclass(frozen=True)
class AttemptOutcome:
    """What one attempt did; ``retry_in`` is the wait before the next attempt, None when there is none."""

    attempted: bool
    succeeded: bool = False
    retry_in: float | None = None


def retry_delay(attempt: int) -> float:
    """Exponential backoff: the base after the first failure, doubling after each one after it."""
    return float(settings.MEMORYHUB_WEBHOOK_RETRY_SECONDS) * 2.0 ** (attempt - 1)


def delivery_attempt(*, delivery_id: Any, number: int) -> AttemptOutcome:
    """Make attempt ``number`` of a delivery: claim it, POST the signed body, log the answer.

    Claimed with a conditional UPDATE (``attempts`` from ``number - 1`` to
    ``number``), so a duplicate task message sends nothing twice; a claim left by
    a worker that died mid-POST is taken again after ``CLAIM_LEASE``.
    """
    now = timezone.now()
    claimed = (
        Delivery.objects.filter(pk=delivery_id, state=DeliveryState.PENDING)
        .filter(Q(attempts=number - 1) | Q(attempts=number, claimed_at__lt=now - CLAIM_LEASE))
        .update(attempts=number, claimed_at=now)
    )
    if not claimed:
        return AttemptOutcome(attempted=False)
    delivery = Delivery.objects.select_related("webhook").get(pk=delivery_id)
    status, error, duration_ms = _post(delivery)
    succeeded = status is not None and 200 <= status < 300
    last = number >= settings.MEMORYHUB_WEBHOOK_ATTEMPTS
    with transaction.atomic():
        try:
            with transaction.atomic():
                DeliveryAttempt.objects.create(
                    delivery=delivery,
                    number=number,
                    status_code=status,
                    duration_ms=duration_ms,
                    error=error,
                    succeeded=succeeded,
                )
        except IntegrityError:
            pass  # this attempt was logged by a worker that outlived its lease
        if succeeded or last:
            Delivery.objects.filter(pk=delivery.pk).update(
                state=DeliveryState.DELIVERED if succeeded else DeliveryState.FAILED, finished_at=timezone.now()
            )
    return AttemptOutcome(
        attempted=True, succeeded=succeeded, retry_in=None if succeeded or last else retry_delay(number)
    )


def deliveries_stalled(*, now: dt.datetime | None = None) -> list[tuple[Any, int]]:
    """Pending deliveries whose next attempt should have run by now, with the attempt number to queue.

    A delivery stalls when its message is lost: the queueing after commit failed
    (broker down), or a worker died mid-attempt and its redelivered message met a
    claim still inside its lease and stopped. A stalled one waits out its lease
    and the backoff it was due, plus ``STALL_GRACE``; then the attempt it lacks is
    queued again — the one a worker left unlogged, or the next one. The claim in
    :func:`delivery_attempt` keeps a message queued twice from sending twice.
    """
    now = now or timezone.now()
    stalled = []
    pending = Delivery.objects.filter(state=DeliveryState.PENDING, created_at__lt=now - STALL_GRACE)
    logged = set(DeliveryAttempt.objects.filter(delivery__in=pending).values_list("delivery_id", "number"))
    for delivery_id, attempts, claimed_at in pending.values_list("id", "attempts", "claimed_at"):
        if attempts == 0 or claimed_at is None:
            stalled.append((delivery_id, 1))
            continue
        if (delivery_id, attempts) not in logged:  # taken and never finished: take it again once the lease ran out
            if claimed_at < now - CLAIM_LEASE - STALL_GRACE:
                stalled.append((delivery_id, attempts))
            continue
        due = claimed_at + CLAIM_LEASE + dt.timedelta(seconds=retry_delay(attempts)) + STALL_GRACE
        if due < now:
            stalled.append((delivery_id, attempts + 1))
    return stalled


def _post(delivery: Delivery) -> tuple[int | None, str, int]:
    """POST the body; (status code or None, error text, milliseconds). Redirects are not followed."""
    body = delivery.body.encode()
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked at registration (http/https only)
        delivery.webhook.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            EVENT_HEADER: delivery.event_type,
            DELIVERY_HEADER: str(delivery.pk),
            SIGNATURE_HEADER: signature_header(secret=delivery.webhook.secret, body=body),
        },
    )
    opener = urllib.request.build_opener(_NoRedirects)
    started = time.monotonic()
    try:
        with opener.open(request, timeout=settings.MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS) as response:
            status: int | None = response.status
            error = ""
    except urllib.error.HTTPError as exc:
        status = exc.code
        error = _snippet(exc)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        status = None
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        error = f"{type(reason).__name__}: {reason}"[:500]
    return status, error, round((time.monotonic() - started) * 1000)


def _snippet(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(300).decode("utf-8", "replace")
    except OSError:
        text = ""
    return f"HTTP {exc.code}" + (f": {text.strip()}" if text.strip() else "")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
