"""A live web process (the product's ASGI application under uvicorn) and the MCP SDK's own client."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx2
import pytest
import uvicorn
from django.db import connection
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.common import ROOT, free_port
from memoryhub.asgi import build_application
from tests.factories import WorkspaceFactory, agent_key_for
from workspaces.models import AgentKey

STARTUP_SECONDS = 30


class LiveHub:
    """The hub served as `make run` serves it (Django and /mcp/ in one ASGI app), on a free local port."""

    def __init__(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(build_application(), host="127.0.0.1", port=port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveHub:
        self.thread.start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the live hub did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp/"


@pytest.fixture
def hub(transactional_db: None) -> Iterator[LiveHub]:
    with LiveHub() as live:
        yield live


class Agent:
    """An agent key of a fresh workspace, with scopes to grant."""

    def __init__(self, key_row: AgentKey, key: str) -> None:
        self.key_row = key_row
        self.key = key

    @property
    def workspace(self) -> Any:
        return self.key_row.workspace

    def grant(self, *scopes: str) -> Agent:
        self.key_row.scopes = sorted({*self.key_row.scopes, *scopes})
        self.key_row.save(update_fields=["scopes"])
        return self

    def only(self, *scopes: str) -> Agent:
        self.key_row.scopes = list(scopes)
        self.key_row.save(update_fields=["scopes"])
        return self


@pytest.fixture
def agent(transactional_db: None) -> Agent:
    key_row, key = agent_key_for(WorkspaceFactory(slug="acme"), "planner")
    return Agent(key_row, key)


@asynccontextmanager
async def http_client(url: str, key: str | None) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending ``key`` as the bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), cache=None) as client,
    ):
        yield client


def stdio_parameters(key: str) -> StdioServerParameters:
    """``manage.py mcp --key KEY`` on the test database, as a desktop agent would start it."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings_test",
        "MEMORYHUB_DATABASE_NAME": str(connection.settings_dict["NAME"]),
        "MEMORYHUB_WARM_MODELS": "0",
    }
    return StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp", "--key", key], env=environment, cwd=str(ROOT)
    )


@asynccontextmanager
async def stdio_client(key: str) -> AsyncIterator[Client]:
    async with Client(stdio_parameters(key), cache=None) as client:
        yield client


Connect = Callable[[str], AbstractAsyncContextManager[Client]]


@pytest.fixture(params=["http", "stdio"])
def connect(request: pytest.FixtureRequest, transactional_db: None) -> Iterator[Connect]:
    """Open the SDK's client for an agent key, over each transport in turn."""
    if request.param == "stdio":
        yield stdio_client
        return
    with LiveHub() as live:
        yield lambda key: http_client(live.mcp_url, key)
