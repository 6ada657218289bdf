"""Bearer authentication for agents: ``Authorization: Bearer mh_<prefix>_<secret>``.

Authenticating also enforces the key's rate (429) and the operation's scope
(403): every API operation and every MCP tool call goes through here
(``agent_key_admit``), so none can forget them.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from memoryhub.errors import RateLimited
from workspaces.models import KEY_PREFIX, AgentKey, Scope
from workspaces.ratelimit import rate_count

# Writing last_used_at on every request would double the cost of a commit.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


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
    """An agent key with ``scope``; without one, reads need ``read`` and anything else ``write``.

    So an operation that forgets to name its scope is a write, never an open door;
    POSTs that only read (recall, context) name ``read``, and decisions name
    ``answer`` or ``admin``.
    """

    def __init__(self, scope: Scope | None = None) -> None:
        super().__init__()
        self.scope = scope

    def authenticate(self, request: HttpRequest, token: str) -> AgentKey | None:
        key = agent_key_from_token(token)
        if key is None:
            return None
        agent_key_admit(key=key, scope=self.scope or (Scope.READ if request.method in SAFE_METHODS else Scope.WRITE))
        return key


def agent_key_admit(*, key: AgentKey, scope: Scope) -> None:
    """Count one operation of ``key`` against its rate (429) and require ``scope`` (403).

    Every interface calls this once per operation — a REST request, an MCP tool
    call — so a key has one rate and one set of scopes whichever way it comes in.
    """
    if settings.MEMORYHUB_API_RATE_PER_MINUTE > 0:
        verdict = rate_count(key=key)
        if not verdict.allowed:
            raise RateLimited(
                f"this agent key sent more than {verdict.limit} requests this minute; "
                f"wait {verdict.retry_after_seconds} s",
                retry_after_seconds=verdict.retry_after_seconds,
            )
    key.require_scope(scope)
