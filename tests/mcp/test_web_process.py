"""The web process as `make run` starts it (``memoryhub.webserver.web_command``): Django and MCP on one port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from django.db import connection
from uvicorn.server import ServerState

from bench.common import ROOT, free_port
from memoryhub.webserver import NoDelayH11Protocol, web_command
from tests.mcp.conftest import Agent
from tests.mcp.test_auth import INITIALIZE, MCP_HEADERS

STARTUP_SECONDS = 120


@pytest.fixture
def web(transactional_db: None) -> Iterator[str]:
    port = free_port()
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings_test",
        "MEMORYHUB_DATABASE_NAME": str(connection.settings_dict["NAME"]),
        "MEMORYHUB_WARM_MODELS": "0",
    }
    command = web_command(host="127.0.0.1", port=port, workers=2, access_log=False)
    process = subprocess.Popen(command, cwd=ROOT, env=environment, start_new_session=True)  # noqa: S603
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert process.poll() is None, f"the web process exited with {process.returncode}"
            assert time.monotonic() < deadline, "the web process did not answer"
            try:
                httpx.get(f"{url}/login/", timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_make_run_s_web_process_serves_django_and_mcp(web: str, agent: Agent) -> None:
    bearer = {"Authorization": f"Bearer {agent.key}"}

    assert httpx.get(f"{web}/login/").status_code == 200
    assert httpx.get(f"{web}/api/v1/memories", headers=bearer).json()["count"] == 0
    for _ in range(4):  # whichever of the two worker processes answers
        answer = httpx.post(f"{web}/mcp/", json=INITIALIZE, headers={**MCP_HEADERS, **bearer})
        assert answer.status_code == 200
        assert answer.json()["result"]["serverInfo"]["name"] == "memoryhub"
    # An over-long request target still reaches Django, which answers in the API's shape.
    too_long = httpx.get(f"{web}/api/v1/memories?q={'a' * 9000}", headers=bearer)
    assert too_long.status_code == 414
    assert too_long.json()["code"] == "uri_too_long"


def test_each_connection_has_nagle_off() -> None:
    """A keep-alive response's body must not wait for the client's delayed ACK of its head (40 ms a request)."""

    class Transport:
        def __init__(self, sock: socket.socket) -> None:
            self.sock = sock

        def get_extra_info(self, name: str, default: object = None) -> object:
            return self.sock if name == "socket" else default

    async def app(scope: object, receive: object, send: object) -> None:
        pass

    config = uvicorn.Config(app)
    config.load()
    protocol = NoDelayH11Protocol(config, ServerState(), app_state={})
    with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()) as client:
        accepted, _ = server.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
            with contextlib.suppress(Exception):  # the fake transport lacks what h11 needs after the option is set
                protocol.connection_made(Transport(accepted))  # type: ignore[arg-type]
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        client.close()
