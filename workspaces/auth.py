"""Bearer authentication for agents: ``Authorization: Bearer mh_<prefix>_<secret>``."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from workspaces.models import KEY_PREFIX, AgentKey

# Writing last_used_at on every request would double the cost of a commit.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


def agent_key_from_token(token: str) -> AgentKey | None:
    parts = token.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        return None
    _, prefix, secret = parts
    if "\x00" in prefix:
        return None  # a crafted header; looking it up would fail in PostgreSQL as a 500, not a 401
    key = AgentKey.objects.select_related("workspace").filter(prefix=prefix, revoked_at__isnull=True).first()
    if key is None or not key.matches(secret):
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        AgentKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key


def request_agent_key(request: HttpRequest) -> AgentKey:
    """The key an API handler's request was authenticated with (routers use AgentKeyAuth)."""
    key = getattr(request, "auth", None)
    if not isinstance(key, AgentKey):
        raise TypeError("the request was not authenticated with an agent key")
    return key


class AgentKeyAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> AgentKey | None:
        return agent_key_from_token(token)
