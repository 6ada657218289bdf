"""Reads for workspaces: invitations by their one-time token."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone

from workspaces.models import Invitation, Workspace, hash_secret


def invitation_get(*, token: str) -> Invitation | None:
    """The invitation a link's token stands for, used or not; ``None`` for an unknown token."""
    return Invitation.objects.select_related("workspace").filter(token_hash=hash_secret(token)).first()


def invitations_pending(*, workspace: Workspace) -> QuerySet[Invitation]:
    """Links not used yet and not expired, newest first, for the Members page."""
    return Invitation.objects.filter(
        workspace=workspace, accepted_at__isnull=True, expires_at__gt=timezone.now()
    ).order_by("-created_at")
