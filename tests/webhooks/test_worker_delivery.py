"""Through the real Celery worker: a card opens, the worker POSTs it; a receiver that fails twice gets it third."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker

from memoryhub.celery import app
from tests.conflicts.cards import pair_card
from tests.webhooks.receiver import receiver
from webhooks.models import Delivery, DeliveryAttempt
from webhooks.services import webhook_create
from webhooks.signing import verify
from workspaces.models import Workspace

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker() -> Iterator[Any]:
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=20) as w:
        yield w


def _wait_until_finished(delivery: Delivery, timeout: float = 30) -> Delivery:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery.refresh_from_db()
        if delivery.state != "pending":
            break
        time.sleep(0.1)
    return delivery


def test_the_worker_retries_with_backoff_until_the_receiver_answers(
    workspace: Workspace, worker: Any, settings: Any
) -> None:
    settings.MEMORYHUB_WEBHOOK_RETRY_SECONDS = 0.2
    with receiver(fail_first=2) as target:
        hook = webhook_create(workspace=workspace, url=target.url, events=["card.opened"])

        card, _, _ = pair_card(workspace)  # commits, and so announces the card
        received = target.wait_for(3)
        delivery = _wait_until_finished(Delivery.objects.get())

    assert [r.status for r in received] == [500, 500, 204]
    assert verify(secret=hook.secret, header=received[2].headers["memoryhub-signature"], body=received[2].body)
    assert json.loads(received[2].body)["data"]["card"]["id"] == str(card.pk)
    assert (delivery.state, delivery.attempts) == ("delivered", 3)
    assert list(DeliveryAttempt.objects.order_by("number").values_list("status_code", flat=True)) == [500, 500, 204]
