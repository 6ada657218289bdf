"""The client against a live test server (pytest-django's ``live_server``: the real app over HTTP)."""

from __future__ import annotations

import http.client
import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from memoryhub_client import MemoryHub, RetryPolicy

from tests.factories import WorkspaceFactory, agent_key_for
from workspaces.models import AgentKey

# Retries in these tests wait milliseconds, not the half-second a real agent starts with.
FAST_RETRIES = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def key(transactional_db: None) -> tuple[AgentKey, str]:
    row, secret = agent_key_for(WorkspaceFactory(slug="client"), "client-agent")
    row.scopes = ["read", "write", "answer", "admin"]
    row.save(update_fields=["scopes"])
    return row, secret


@pytest.fixture
def hub(live_server: Any, key: tuple[AgentKey, str]) -> Iterator[MemoryHub]:
    with MemoryHub(live_server.url, key[1], retry=FAST_RETRIES) as client:
        yield client


@dataclass
class Seen:
    method: str
    path: str
    idempotency_key: str | None
    status: int
    replayed: bool
    answered: bool


@dataclass
class LossyProxy:
    """An HTTP proxy in front of the live server that loses the answers to the first ``drop`` writes.

    The request reaches the hub and is carried out; the proxy then closes the
    connection without a word, as a network failing after the server's commit
    would. Every request it forwarded is in ``seen``.
    """

    upstream: str
    drop: int = 1
    seen: list[Seen] = field(default_factory=list)
    url: str = ""

    def serve(self) -> Iterator[LossyProxy]:
        proxy = self
        target = urlsplit(self.upstream)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                upstream = http.client.HTTPConnection(target.hostname or "localhost", target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "connection"}}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                payload = response.read()
                upstream.close()
                lose = self.command != "GET" and proxy.drop > 0
                proxy.seen.append(
                    Seen(
                        self.command,
                        self.path,
                        self.headers.get("Idempotency-Key"),
                        response.status,
                        response.getheader("Idempotent-Replayed") == "true",
                        answered=not lose,
                    )
                )
                if lose:
                    proxy.drop -= 1
                    self.close_connection = True
                    return
                self.send_response(response.status)
                for name, value in response.getheaders():
                    if name.lower() not in {"connection", "transfer-encoding", "content-length"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _forward

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


@pytest.fixture
def lossy_proxy(live_server: Any) -> Iterator[LossyProxy]:
    yield from LossyProxy(upstream=live_server.url).serve()
