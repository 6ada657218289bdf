"""The command that runs the web process, shared by ``run_hub`` and the benchmarks so they measure what runs.

uvicorn serves ``memoryhub.asgi:application`` (Django in a thread pool, MCP at
``/mcp/``) from ``workers`` processes. h11's limit on a request's head is raised
so an over-long request target reaches Django, which answers it in the API's
JSON shape (``memoryhub.error_views.MAX_REQUEST_TARGET``) rather than uvicorn's
plain-text 400.
"""

from __future__ import annotations

import socket
import sys
from asyncio import Transport

from uvicorn.protocols.http.h11_impl import H11Protocol

APPLICATION = "memoryhub.asgi:application"
MAX_REQUEST_HEAD_BYTES = 1024 * 1024
PROTOCOL = "memoryhub.webserver:NoDelayH11Protocol"


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with Nagle's algorithm off on each connection.

    uvicorn writes a response's head and body as two sends. With Nagle on, the
    second waits for the client to acknowledge the first, and a client delays
    that acknowledgement by up to 40 ms: every request after the first on a
    keep-alive connection took 44 ms, whatever the application did (0.5 ms).
    """

    def connection_made(self, transport: Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


def web_command(*, host: str, port: int, workers: int = 2, access_log: bool = True) -> list[str]:
    command = [sys.executable, "-m", "uvicorn", APPLICATION, "--host", host, "--port", str(port)]
    command += [
        "--workers",
        str(workers),
        "--http",
        PROTOCOL,
        "--h11-max-incomplete-event-size",
        str(MAX_REQUEST_HEAD_BYTES),
    ]
    command += ["--log-level", "info" if access_log else "warning"]
    if not access_log:
        command.append("--no-access-log")
    return command
