"""Events become deliveries; each attempt is a signed POST to a real localhost receiver, logged."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.utils import timezone

from conflicts.feedback import card_answer
from conflicts.models import DetectiveRun
from conflicts.narrative import detective_run
from memories.audit import Actor
from memoryhub.errors import InvalidInput
from tests.conflicts.cards import DETECTOR, auto_supersede, pair_card
from tests.conflicts.test_upkeep_jobs import age, run
from tests.memories.recall_helpers import remember
from tests.webhooks.receiver import receiver
from webhooks.models import Delivery, DeliveryAttempt, Webhook
from webhooks.services import deliveries_create, deliveries_stalled, delivery_attempt, webhook_create
from webhooks.signing import verify
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def hook(workspace: Workspace, url: str, *events: str, payload_format: str = "memoryhub") -> Webhook:
    return webhook_create(workspace=workspace, url=url, events=list(events), payload_format=payload_format)


def test_a_card_opened_queues_one_delivery_per_subscribed_hook(
    workspace: Workspace, django_capture_on_commit_callbacks: Any
) -> None:
    opened = hook(workspace, "http://127.0.0.1:9/a", "card.opened")
    hook(workspace, "http://127.0.0.1:9/b", "card.answered")

    with django_capture_on_commit_callbacks(execute=True):
        card, older, newer = pair_card(workspace)

    [delivery] = Delivery.objects.all()
    assert delivery.webhook == opened
    body = json.loads(delivery.body)
    assert body["type"] == "card.opened"
    assert body["workspace"]["slug"] == workspace.slug
    assert body["data"]["card"]["id"] == str(card.pk)
    assert body["data"]["card"]["question"] == card.question
    assert [f["id"] for f in body["data"]["card"]["facts"]] == [str(older.pk), str(newer.pk)]
    assert body["data"]["url"] == f"/w/{workspace.slug}/cards/{card.pk}/"


def test_an_answer_an_automatic_decision_and_a_failed_job_are_announced(
    workspace: Workspace, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook(workspace, "http://127.0.0.1:9/all", "card.answered", "decision.made", "job.failed")
    card, _, _ = pair_card(workspace)
    with django_capture_on_commit_callbacks(execute=True):
        card_answer(card=card, choice="yes", actor=Actor.system("test"))
        card_answer(
            card=pair_card(workspace, "The CI runs nightly", "The CI runs hourly")[0], choice="skip", actor=DETECTOR
        )
        auto_supersede(workspace, "Ana leads the platform team", "Ben leads the platform team", days_apart=5)

        def crash(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("the story could not be read")

        monkeypatch.setattr("conflicts.narrative._carry_out", crash)
        run = DetectiveRun.objects.create(workspace=workspace, trigger="manual")
        detective_run(run_id=run.pk)

    bodies = {d.event_type: json.loads(d.body)["data"] for d in Delivery.objects.all()}
    assert set(bodies) == {"card.answered", "decision.made", "job.failed"}  # a skip decides nothing
    assert bodies["card.answered"]["answer"] == "yes"
    assert bodies["card.answered"]["card"]["id"] == str(card.pk)
    assert bodies["decision.made"]["decision"]["verb"] == "conflict.temporal_supersede"
    assert bodies["decision.made"]["decision"]["label"] == "Superseded an older fact by a newer one"
    assert bodies["job.failed"] == {
        "job": "detective",
        "subject": f"run {run.pk}",
        "error": "RuntimeError: the story could not be read",
    }


def test_an_upkeep_job_s_decision_is_announced_like_any_automatic_decision(
    workspace: Workspace, django_capture_on_commit_callbacks: Any
) -> None:
    hook(workspace, "http://127.0.0.1:9/all", "decision.made")
    fact = remember(workspace, "The staging cluster runs in Oslo")
    age(fact, 150)  # 0.9 · exp(−0.01 · 150) ≈ 0.20: below 0.3, deprecated

    with django_capture_on_commit_callbacks(execute=True):
        run("decay", workspace)

    [delivery] = Delivery.objects.all()
    decision = json.loads(delivery.body)["data"]["decision"]
    assert delivery.event_type == "decision.made"
    assert decision["verb"] == "upkeep.deprecate"
    assert decision["label"] == "Deprecated a fact whose confidence decayed too low"
    assert decision["memory"]["id"] == str(fact.pk)


def test_a_receiver_that_fails_twice_gets_the_event_on_the_third_attempt(workspace: Workspace, settings: Any) -> None:
    settings.MEMORYHUB_WEBHOOK_ATTEMPTS = 5
    with receiver(fail_first=2) as target:
        registered = hook(workspace, target.url, "card.opened")
        card, _, _ = pair_card(workspace)
        [delivery] = deliveries_create(workspace_id=workspace.pk, event_type="card.opened", card_id=card.pk)

        outcomes = [delivery_attempt(delivery_id=delivery.pk, number=n) for n in (1, 2, 3)]
        received = target.wait_for(3)

    assert [o.succeeded for o in outcomes] == [False, False, True]
    assert [o.retry_in for o in outcomes] == [2.0, 4.0, None]  # backoff doubles after each failure
    assert [r.status for r in received] == [500, 500, 204]
    for sent in received:
        assert sent.body == delivery.body.encode()
        assert sent.headers["memoryhub-event"] == "card.opened"
        assert sent.headers["memoryhub-delivery"] == str(delivery.pk)
        assert verify(secret=registered.secret, header=sent.headers["memoryhub-signature"], body=sent.body)
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == ("delivered", 3)
    log = list(DeliveryAttempt.objects.order_by("number").values_list("number", "status_code", "succeeded"))
    assert log == [(1, 500, False), (2, 500, False), (3, 204, True)]
    assert DeliveryAttempt.objects.get(number=1).error.startswith("HTTP 500")


def test_an_attempt_is_made_once_even_if_its_task_runs_twice(workspace: Workspace) -> None:
    with receiver() as target:
        hook(workspace, target.url, "card.opened")
        card, _, _ = pair_card(workspace)
        [delivery] = deliveries_create(workspace_id=workspace.pk, event_type="card.opened", card_id=card.pk)

        first = delivery_attempt(delivery_id=delivery.pk, number=1)
        duplicate = delivery_attempt(delivery_id=delivery.pk, number=1)
        received = target.wait_for(1)

    assert first.attempted
    assert first.succeeded
    assert not duplicate.attempted
    assert len(received) == 1


def test_after_the_last_attempt_the_delivery_is_failed_and_every_attempt_logged(
    workspace: Workspace, settings: Any
) -> None:
    settings.MEMORYHUB_WEBHOOK_ATTEMPTS = 3
    registered = hook(workspace, "http://127.0.0.1:9/closed-port", "card.opened")
    card, _, _ = pair_card(workspace)
    [delivery] = deliveries_create(workspace_id=workspace.pk, event_type="card.opened", card_id=card.pk)

    outcomes = [delivery_attempt(delivery_id=delivery.pk, number=n) for n in (1, 2, 3)]

    assert [o.retry_in is None for o in outcomes] == [False, False, True]
    delivery.refresh_from_db()
    assert delivery.state == "failed"
    attempts = DeliveryAttempt.objects.filter(delivery__webhook=registered).order_by("number")
    assert [(a.number, a.status_code) for a in attempts] == [(1, None), (2, None), (3, None)]
    assert all("Connection refused" in a.error or "Errno" in a.error for a in attempts)


def test_the_slack_format_is_text_and_blocks(workspace: Workspace) -> None:
    hook(workspace, "http://127.0.0.1:9/slack", "card.opened", payload_format="slack")
    card, _, _ = pair_card(workspace, "Deploys <freeze> on Fridays", "Deploys run on Fridays")

    [delivery] = deliveries_create(workspace_id=workspace.pk, event_type="card.opened", card_id=card.pk)
    body = json.loads(delivery.body)

    assert set(body) == {"text", "blocks"}
    assert card.question in body["text"]
    assert body["blocks"][0]["type"] == "section"
    assert "&lt;freeze&gt;" in body["blocks"][0]["text"]["text"]
    assert body["blocks"][1]["elements"][0]["text"].endswith("|Open in MemoryHub>")


@pytest.mark.parametrize(
    ("url", "events", "field"),
    [
        ("ftp://example.com/x", ["card.opened"], "url"),
        ("not a url", ["card.opened"], "url"),
        ("https://example.com/x", [], "events"),
        ("https://example.com/x", ["card.exploded"], "events"),
    ],
)
def test_registration_refuses_bad_input_naming_the_field(
    workspace: Workspace, url: str, events: list[str], field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        webhook_create(workspace=workspace, url=url, events=events)

    assert refused.value.field == field
    assert not Webhook.objects.exists()


def test_the_sweep_requeues_only_the_attempts_whose_message_was_lost(workspace: Workspace) -> None:
    card, _, _ = pair_card(workspace)
    hook(workspace, "http://127.0.0.1:9/closed-port", "card.opened")
    never_sent, died_mid_post, retry_lost, retry_waiting, fresh = (
        deliveries_create(workspace_id=workspace.pk, event_type="card.opened", card_id=card.pk)[0] for _ in range(5)
    )
    now = timezone.now()
    old = now - dt.timedelta(hours=1)
    Delivery.objects.exclude(pk=fresh.pk).update(created_at=old)
    # A worker took attempt 2 and died before logging it; its lease ran out long ago.
    Delivery.objects.filter(pk=died_mid_post.pk).update(attempts=2, claimed_at=old)
    DeliveryAttempt.objects.create(delivery=died_mid_post, number=1, duration_ms=1, succeeded=False)
    # Attempt 1 failed and was logged; the message for attempt 2 never came.
    Delivery.objects.filter(pk=retry_lost.pk).update(attempts=1, claimed_at=old)
    DeliveryAttempt.objects.create(delivery=retry_lost, number=1, duration_ms=1, succeeded=False)
    # Attempt 1 failed a moment ago: attempt 2 is still inside its backoff.
    Delivery.objects.filter(pk=retry_waiting.pk).update(attempts=1, claimed_at=now)
    DeliveryAttempt.objects.create(delivery=retry_waiting, number=1, duration_ms=1, succeeded=False)

    stalled = dict(deliveries_stalled(now=now))

    assert stalled == {never_sent.pk: 1, died_mid_post.pk: 2, retry_lost.pk: 2}
    # What the sweep queues is an ordinary attempt: it sends, and a second copy of its message sends nothing.
    assert delivery_attempt(delivery_id=died_mid_post.pk, number=2).attempted
    assert not delivery_attempt(delivery_id=died_mid_post.pk, number=2).attempted
    assert died_mid_post.pk not in dict(deliveries_stalled(now=now))
