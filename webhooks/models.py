"""Webhooks a workspace admin registered, each event queued for one of them, and every delivery attempt."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from workspaces.models import Workspace


class EventType(models.TextChoices):
    CARD_OPENED = "card.opened", "Card opened"
    CARD_ANSWERED = "card.answered", "Card answered"
    DECISION_MADE = "decision.made", "Automatic decision made"
    JOB_FAILED = "job.failed", "Background job failed"


class PayloadFormat(models.TextChoices):
    MEMORYHUB = "memoryhub", "MemoryHub JSON"
    SLACK = "slack", "Slack-compatible ({text, blocks})"


class Webhook(models.Model):
    """A URL that gets a signed POST for each event it subscribed to.

    The secret signs every payload (HMAC-SHA256), so the hub must keep it
    readable — unlike an agent key, which it only ever compares. The dashboard
    shows it once, when the hook is created.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    events = ArrayField(models.CharField(max_length=32, choices=EventType.choices))
    payload_format = models.CharField(max_length=16, choices=PayloadFormat.choices, default=PayloadFormat.MEMORYHUB)
    secret = models.CharField(max_length=128)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "created_at"])]

    def __str__(self) -> str:
        return f"{self.url} ({', '.join(self.events)})"


class DeliveryState(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class Delivery(models.Model):
    """One event for one webhook: the exact body sent on every attempt, and where its attempts stand.

    ``id`` travels as the ``MemoryHub-Delivery`` header, the same on every attempt,
    so a receiver can drop a delivery it already handled.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event_type = models.CharField(max_length=32, choices=EventType.choices)
    body = models.TextField()
    state = models.CharField(max_length=16, choices=DeliveryState.choices, default=DeliveryState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True, help_text="when the latest attempt was taken")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["webhook", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.webhook_id} ({self.state})"


class DeliveryAttempt(models.Model):
    """The delivery log: one row per POST, with what the receiver answered."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField()
    error = models.TextField(blank=True)
    succeeded = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="one_row_per_attempt")]
        indexes = [models.Index(fields=["-created_at"])]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}: {self.status_code or self.error}"
