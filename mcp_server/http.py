"""MCP over streamable HTTP at ``/mcp/``, behind the REST API's bearer authentication.

``AgentKeyGate`` answers a request without a valid agent key with the REST API's
401 (``{detail, code}``) before the SDK sees it, and hands the key to the tools
through the ASGI scope's ``state``. The SDK's app runs **stateless** with plain
JSON responses: each POST carries one JSON-RPC message and gets one answer, so no
session has to live in one web process — ``run_hub`` serves the hub from several —
and nothing is streamed.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server.errors import unauthorized_body
from mcp_server.server import Context, build_server, in_db_thread
from memoryhub.error_views import DATABASE_DOWN, DATABASE_DOWN_DETAIL, OUTAGE_RETRY_AFTER
from workspaces.auth import agent_key_from_token
from workspaces.models import AgentKey

PATH = "/mcp/"
_STATE_KEY = "memoryhub_agent_key"


def mcp_http_app() -> ASGIApp:
    """A fresh ASGI app for ``/mcp/`` (its session manager runs once, in the app's lifespan)."""
    server = build_server(key_for=_key_of_request)
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=transport_security(),
    )
    return AgentKeyGate(app)


def transport_security() -> TransportSecuritySettings:
    """The SDK's Host/Origin check, allowing what Django's ALLOWED_HOSTS allows (off where it allows any host)."""
    hosts = [host for host in settings.ALLOWED_HOSTS if host != "testserver"]
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for host in hosts for pattern in (host, f"{host}:*")],
        allowed_origins=[
            f"{scheme}://{host}{port}" for host in hosts for scheme in ("http", "https") for port in ("", ":*")
        ],
    )


def _key_of_request(ctx: Context) -> AgentKey | None:
    request = ctx.request
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    key = state.get(_STATE_KEY)
    return key if isinstance(key, AgentKey) else None


def _bearer_token(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if kind.lower() == "bearer" and token.strip() else None
    return None


class AgentKeyGate:
    """Let through only requests that carry a valid, unrevoked agent key (as ``Authorization: Bearer``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer_token(scope)
        try:
            key = await in_db_thread(agent_key_from_token, token) if token else None
        except DATABASE_DOWN:
            body = {"detail": DATABASE_DOWN_DETAIL, "code": "database_unavailable"}
            await _send_json(send, 503, body, [(b"retry-after", str(OUTAGE_RETRY_AFTER).encode())])
            return
        if key is None:
            await _send_json(send, 401, unauthorized_body(), [(b"www-authenticate", b"Bearer")])
            return
        scope.setdefault("state", {})[_STATE_KEY] = key
        await self.app(scope, receive, send)


async def _send_json(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
