"""The web process as `make run` starts it (``memoryhub.webserver.web_command``): Django and MCP on one port."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

import httpx
import pytest
from django.db import connection

from bench.common import ROOT, free_port
from memoryhub.webserver import web_command
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
