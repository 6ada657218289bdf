from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from memoryhub.errors import Forbidden

KEY_PREFIX = "mh"


class Workspace(models.Model):
    """The tenant: every memory, link, card and event belongs to one workspace."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Per-workspace overrides (recall weights, thresholds); later issues read it.
    config = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    VIEWER = "viewer"
    REVIEWER = "reviewer"
    ADMIN = "admin"


ROLE_RANK = {Role.VIEWER: 0, Role.REVIEWER: 1, Role.ADMIN: 2}


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "workspace"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    def allows(self, role: Role) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[role]


class Scope(models.TextChoices):
    """What an agent key may do; each API operation needs one scope (docs/API.md, Scopes)."""

    READ = "read"
    WRITE = "write"
    # Answer the cards meant for human review: a reviewer's decision, given to an agent on purpose.
    ANSWER = "answer"
    # Undo events, run the detective: operations that rewrite or reread the whole workspace.
    ADMIN = "admin"


# New keys, and every key that existed before scopes, may read and write but not decide cards or undo.
DEFAULT_SCOPES = [Scope.READ.value, Scope.WRITE.value]


def default_scopes() -> list[str]:
    return list(DEFAULT_SCOPES)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class AgentKey(models.Model):
    """An agent's bearer key: ``mh_<prefix>_<secret>``, stored as prefix + sha256.

    The prefix is visible in lists so people can tell keys apart; the full key is
    shown once at creation and cannot be recovered.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agent_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    scopes = ArrayField(models.CharField(max_length=8, choices=Scope.choices), default=default_scopes)
    # When set, the only `agent` name this key may sign its memories with (blank: any name).
    agent = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name} ({KEY_PREFIX}_{self.prefix}_…)"

    @staticmethod
    def generate() -> tuple[str, str, str]:
        """Return ``(full_key, prefix, secret_hash)`` for a new key."""
        prefix = secrets.token_hex(4)
        secret = secrets.token_urlsafe(32)
        return f"{KEY_PREFIX}_{prefix}_{secret}", prefix, hash_secret(secret)

    def matches(self, secret: str) -> bool:
        return hmac.compare_digest(self.secret_hash, hash_secret(secret))

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: Scope) -> bool:
        return scope.value in self.scopes

    def require_scope(self, scope: Scope) -> None:
        if not self.has_scope(scope):
            held = ", ".join(self.scopes) or "none"
            raise Forbidden(f"this agent key lacks the {scope.value!r} scope (it has: {held}); ask a workspace admin")

    def agent_name(self, requested: str) -> str:
        """The `agent` a write is signed with: a pinned key signs as its agent only, and fills it in when absent."""
        if not self.agent:
            return requested
        if requested and requested != self.agent:
            raise Forbidden(f"this agent key is pinned to agent {self.agent!r} and cannot sign as {requested!r}")
        return self.agent


class ApiRateWindow(models.Model):
    """How many API requests a key sent in its current fixed window (one row per key, reused).

    The counter lives in the database so that every gunicorn process and machine
    shares it; one upsert per request (``workspaces.ratelimit``).
    """

    agent_key = models.OneToOneField(AgentKey, on_delete=models.CASCADE, primary_key=True, related_name="+")
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.count} since {self.window_start:%H:%M}"


class IdempotencyRecord(models.Model):
    """A write sent with an ``Idempotency-Key`` header, and the answer it got, kept 24 h for retries."""

    agent_key = models.ForeignKey(AgentKey, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # sha256 of method, path and body: the same key with another request is refused, not replayed.
    fingerprint = models.CharField(max_length=64)
    # Empty while the first request is still being answered.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.TextField(blank=True, default="")
    content_type = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent_key", "key"], name="idempotency_unique_key")]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status_code or 'in progress'})"


INVITATION_LIFETIME = dt.timedelta(days=7)


class Invitation(models.Model):
    """A one-time link an admin sends so someone can create a login and join with a role.

    Only the token's sha256 is stored: the link is shown once, to the admin who made it.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    # Whom the admin meant (an email or a suggested username); shown in the list, prefilled when a username.
    recipient = models.CharField(max_length=254)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.recipient} to {self.workspace} ({self.role})"

    @staticmethod
    def generate() -> tuple[str, str]:
        """Return ``(token, token_hash)`` for a new invitation."""
        token = secrets.token_urlsafe(32)
        return token, hash_secret(token)

    def is_expired(self, now: dt.datetime) -> bool:
        return self.expires_at <= now

    @property
    def recipient_is_email(self) -> bool:
        return "@" in self.recipient
