"""Writes for workspaces, members and agent keys."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from memoryhub.errors import ConflictError, InvalidInput, NotFound
from workspaces.models import (
    DEFAULT_SCOPES,
    INVITATION_LIFETIME,
    AgentKey,
    Invitation,
    Membership,
    Role,
    Scope,
    Workspace,
    hash_secret,
)


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


def invitation_create(*, workspace: Workspace, invited_by: User, recipient: str, role: Role) -> tuple[Invitation, str]:
    """Create a one-time invitation and return it with its token, which is never shown again.

    ``recipient`` is an email or a suggested username: a note for the admin, not checked
    against the person who opens the link (whoever holds the link may join).
    """
    recipient = recipient.strip()
    if not recipient:
        raise InvalidInput("say whom you invite: an email or a username", field="recipient")
    if len(recipient) > 254:
        raise InvalidInput("an email or username is at most 254 characters", field="recipient")
    token, token_hash = Invitation.generate()
    invitation = Invitation.objects.create(
        workspace=workspace,
        recipient=recipient,
        role=role,
        token_hash=token_hash,
        invited_by=invited_by,
        expires_at=timezone.now() + INVITATION_LIFETIME,
    )
    return invitation, token


def invitation_accept(*, token: str, username: str, password: str) -> User:
    """Create the invited person's login and membership, and spend the invitation.

    Raises NotFound for an unknown token, ConflictError for a used or expired one
    (checked again under a row lock: two people opening the same link get one
    login between them) and InvalidInput for a taken username or a weak password.
    """
    username = username.strip()
    with transaction.atomic():
        invitation = (
            Invitation.objects.select_for_update()
            .select_related("workspace")
            .filter(token_hash=hash_secret(token))
            .first()
        )
        if invitation is None:
            raise NotFound("no such invitation")
        if invitation.accepted_at is not None:
            raise ConflictError("this invitation was already used; ask an admin for a new link")
        if invitation.is_expired(timezone.now()):
            raise ConflictError("this invitation has expired; ask an admin for a new link")
        if not username:
            raise InvalidInput("choose a username", field="username")
        try:
            User.username_validator(username)
        except ValidationError as exc:
            raise InvalidInput(" ".join(exc.messages), field="username") from None
        if User.objects.filter(username__iexact=username).exists():
            raise InvalidInput(f"the username {username!r} is taken; choose another", field="username")
        email = invitation.recipient if invitation.recipient_is_email else ""
        user = User(username=username, email=email)
        try:
            validate_password(password, user=user)
        except ValidationError as exc:
            raise InvalidInput(" ".join(exc.messages), field="password") from None
        user.set_password(password)
        user.save()
        Membership.objects.create(workspace=invitation.workspace, user=user, role=invitation.role)
        invitation.accepted_at = timezone.now()
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
    return user
