"""Who may use the MCP server: the REST API's agent keys, with the same 401, scopes and rate."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import pytest
from django.test import Client as DjangoClient
from mcp.shared.exceptions import MCPError

from tests.factories import run_async
from tests.mcp.conftest import Agent, LiveHub, http_client, stdio_parameters
from tests.mcp.test_tools import call, error

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize("authorization", [None, "Bearer mh_nope_nope", "Basic dXNlcjpwYXNz", "Bearer"])
def test_a_request_without_a_valid_key_gets_the_api_s_401(
    hub: LiveHub, agent: Agent, authorization: str | None
) -> None:
    headers = {**MCP_HEADERS, **({"Authorization": authorization} if authorization else {})}

    response = httpx.post(hub.mcp_url, json=INITIALIZE, headers=headers)

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    rest = DjangoClient(**({"HTTP_AUTHORIZATION": authorization} if authorization else {})).get("/api/v1/memories")
    assert rest.status_code == 401
    assert response.json() == rest.json() == {"detail": "Unauthorized", "code": "unauthorized"}


def test_a_revoked_key_is_refused_at_once(hub: LiveHub, agent: Agent) -> None:
    from django.utils import timezone

    headers = {**MCP_HEADERS, "Authorization": f"Bearer {agent.key}"}
    assert httpx.post(hub.mcp_url, json=INITIALIZE, headers=headers).status_code == 200
    agent.key_row.revoked_at = timezone.now()
    agent.key_row.save(update_fields=["revoked_at"])

    assert httpx.post(hub.mcp_url, json=INITIALIZE, headers=headers).status_code == 401


def test_the_sdk_client_fails_to_connect_with_a_bad_key(hub: LiveHub, agent: Agent) -> None:
    async def connect() -> None:
        async with http_client(hub.mcp_url, "mh_nope_nope"):
            pass

    # The SDK reports an HTTP 401 during its handshake as an MCPError, inside its task groups' exception groups.
    with pytest.raises(BaseExceptionGroup) as failure:
        run_async(connect)
    assert failure.value.subgroup(MCPError) is not None


def test_both_paths_reach_the_endpoint_and_the_rest_is_django(hub: LiveHub, agent: Agent) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {agent.key}"}
    for path in ("/mcp", "/mcp/"):
        response = httpx.post(hub.url + path, json=INITIALIZE, headers=headers)
        assert response.status_code == 200, path
        assert response.json()["result"]["serverInfo"]["name"] == "memoryhub"
    # Django still answers everything else in the same process: the API and the dashboard.
    assert (
        httpx.get(hub.url + "/api/v1/memories", headers={"Authorization": f"Bearer {agent.key}"}).json()["count"] == 0
    )
    assert httpx.get(hub.url + "/login/").status_code == 200


@pytest.mark.usefixtures("within_one_rate_window")
def test_a_tool_call_counts_against_the_key_s_rate_like_a_request(hub: LiveHub, agent: Agent, settings: Any) -> None:
    settings.MEMORYHUB_API_RATE_PER_MINUTE = 2

    async def scenario() -> dict[str, Any]:
        async with http_client(hub.mcp_url, agent.key) as client:
            await call(client, "recall", {"query": "office"})
            await call(client, "find_conflicts", {})
            return await error(client, "recall", {"query": "office"})

    body = run_async(scenario)

    assert body["code"] == "rate_limited"
    assert body["detail"].startswith("this agent key sent more than 2 requests this minute; wait ")
    assert body["retry_after_seconds"] >= 1
    # One rate for both interfaces: the REST API is out of requests too.
    assert DjangoClient(HTTP_AUTHORIZATION=f"Bearer {agent.key}").get("/api/v1/memories").status_code == 429


def test_the_stdio_command_refuses_a_bad_key(agent: Agent) -> None:
    parameters = stdio_parameters("mh_nope_nope")

    done = subprocess.run(  # noqa: S603 - our own manage.py
        [parameters.command, *parameters.args],
        env=parameters.env,
        cwd=parameters.cwd,
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 1
    assert "the agent key is unknown or revoked" in done.stderr
    assert done.stdout == ""  # nothing on the protocol's channel
