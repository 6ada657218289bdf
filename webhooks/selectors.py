"""Reads for the webhooks page."""

from __future__ import annotations

from django.db.models import QuerySet

from webhooks.models import DeliveryAttempt, Webhook
from workspaces.models import Workspace

LOG_ROWS = 50


def webhooks_of(*, workspace: Workspace) -> QuerySet[Webhook]:
    return Webhook.objects.filter(workspace=workspace).order_by("created_at")


def delivery_log(*, workspace: Workspace, limit: int = LOG_ROWS) -> list[DeliveryAttempt]:
    """The latest attempts of every hook of the workspace, newest first."""
    return list(
        DeliveryAttempt.objects.filter(delivery__webhook__workspace=workspace)
        .select_related("delivery", "delivery__webhook")
        .order_by("-created_at", "-number")[:limit]
    )
