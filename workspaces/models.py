from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.db import models

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
