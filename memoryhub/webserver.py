"""The command that runs the web process, shared by ``run_hub`` and the benchmarks so they measure what runs.

uvicorn serves ``memoryhub.asgi:application`` (Django in a thread pool, MCP at
``/mcp/``) from ``workers`` processes. h11's limit on a request's head is raised
so an over-long request target reaches Django, which answers it in the API's
JSON shape (``memoryhub.error_views.MAX_REQUEST_TARGET``) rather than uvicorn's
plain-text 400.
"""

from __future__ import annotations

import sys

APPLICATION = "memoryhub.asgi:application"
MAX_REQUEST_HEAD_BYTES = 1024 * 1024


def web_command(*, host: str, port: int, workers: int = 2, access_log: bool = True) -> list[str]:
    command = [sys.executable, "-m", "uvicorn", APPLICATION, "--host", host, "--port", str(port)]
    command += [
        "--workers",
        str(workers),
        "--http",
        "h11",
        "--h11-max-incomplete-event-size",
        str(MAX_REQUEST_HEAD_BYTES),
    ]
    command += ["--log-level", "info" if access_log else "warning"]
    if not access_log:
        command.append("--no-access-log")
    return command
