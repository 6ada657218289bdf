"""Writes for workspaces, members and agent keys."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from memoryhub.errors import InvalidInput
from workspaces.models import DEFAULT_SCOPES, AgentKey, Membership, Role, Scope, Workspace


def workspace_get_or_create(*, slug: str, name: str = "") -> tuple[Workspace, bool]:
    clean = slugify(slug)
    if not clean or clean != slug:
        raise InvalidInput(f"workspace slug must be lowercase letters, digits and dashes (try {clean!r})", field="slug")
    return Workspace.objects.get_or_create(slug=clean, defaults={"name": name or slug})


def agent_key_create(
    *, workspace: Workspace, name: str, scopes: Iterable[str] = DEFAULT_SCOPES, agent: str = ""
) -> tuple[AgentKey, str]:
    """Create a key and return it with the full secret, which is never shown again.

    ``scopes`` default to read + write; ``agent`` pins the only agent name the key may sign as.
    """
    name = name.strip()
    if not name:
        raise InvalidInput("an agent key needs a name", field="name")
    wanted = {scope.strip() for scope in scopes if scope.strip()}
    unknown = sorted(wanted - set(Scope.values))
    if unknown:
        raise InvalidInput(f"unknown scope {', '.join(unknown)}; pick from {', '.join(Scope.values)}", field="scopes")
    if not wanted:
        raise InvalidInput("an agent key needs at least one scope", field="scopes")
    agent = agent.strip()
    if len(agent) > 200:
        raise InvalidInput("the pinned agent name is at most 200 characters", field="agent")
    full_key, prefix, secret_hash = AgentKey.generate()
    key = AgentKey.objects.create(
        workspace=workspace,
        name=name[:100],
        prefix=prefix,
        secret_hash=secret_hash,
        # Stored in a fixed order so lists read alike.
        scopes=[scope for scope in Scope.values if scope in wanted],
        agent=agent,
    )
    return key, full_key


def agent_key_revoke(*, key: AgentKey) -> None:
    AgentKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


def membership_set(*, workspace: Workspace, user: User, role: Role) -> Membership:
    with transaction.atomic():
        membership, _ = Membership.objects.update_or_create(workspace=workspace, user=user, defaults={"role": role})
    return membership
