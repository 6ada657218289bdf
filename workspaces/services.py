"""Writes for workspaces, members and agent keys."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from memoryhub.errors import InvalidInput
from workspaces.models import AgentKey, Membership, Role, Workspace


def workspace_get_or_create(*, slug: str, name: str = "") -> tuple[Workspace, bool]:
    clean = slugify(slug)
    if not clean or clean != slug:
        raise InvalidInput(f"workspace slug must be lowercase letters, digits and dashes (try {clean!r})", field="slug")
    return Workspace.objects.get_or_create(slug=clean, defaults={"name": name or slug})


def agent_key_create(*, workspace: Workspace, name: str) -> tuple[AgentKey, str]:
    """Create a key and return it with the full secret, which is never shown again."""
    name = name.strip()
    if not name:
        raise InvalidInput("an agent key needs a name", field="name")
    full_key, prefix, secret_hash = AgentKey.generate()
    key = AgentKey.objects.create(workspace=workspace, name=name[:100], prefix=prefix, secret_hash=secret_hash)
    return key, full_key


def agent_key_revoke(*, key: AgentKey) -> None:
    AgentKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def membership_set(*, workspace: Workspace, user: User, role: Role) -> Membership:
    with transaction.atomic():
        membership, _ = Membership.objects.update_or_create(workspace=workspace, user=user, defaults={"role": role})
    return membership
