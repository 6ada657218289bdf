"""Reads for workspaces and access."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Count, Q

from memories.models import LIVE_STATUSES
from workspaces.models import Membership, Workspace


@dataclass
class WorkspaceSummary:
    workspace: Workspace
    role: str
    live_memories: int
    pending_embed: int


def workspaces_for_user(*, user: User) -> list[WorkspaceSummary]:
    """The workspaces a person belongs to (all of them for a superuser), with fact counts."""
    if getattr(user, "is_superuser", False):
        workspaces = Workspace.objects.all()
        roles = {m.workspace_id: m.role for m in Membership.objects.filter(user=user)}
    else:
        workspaces = Workspace.objects.filter(memberships__user=user)
        roles = {m.workspace_id: m.role for m in Membership.objects.filter(user=user)}
    workspaces = workspaces.annotate(
        live=Count("memories", filter=Q(memories__status__in=LIVE_STATUSES)),
        pending=Count("memories", filter=Q(memories__status="pending_embed")),
    ).order_by("name")
    return [WorkspaceSummary(ws, roles.get(ws.pk, "admin"), ws.live, ws.pending) for ws in workspaces]
