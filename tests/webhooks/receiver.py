"""A real webhook receiver on localhost: an http.server thread that fails the first N POSTs, then answers 204."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Received:
    headers: dict[str, str]  # names lower-cased: HTTP header names are case-insensitive
    body: bytes
    status: int
    at: float


@dataclass
class Receiver:
    fail_first: int = 0
    fail_status: int = 500
    received: list[Received] = field(default_factory=list)
    url: str = ""
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 30) -> list[Received]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.received) < count and time.monotonic() < deadline:
                self.arrived.wait(deadline - time.monotonic())
        return list(self.received)


@contextmanager
def receiver(fail_first: int = 0, fail_status: int = 500) -> Iterator[Receiver]:
    state = Receiver(fail_first=fail_first, fail_status=fail_status)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with state.arrived:
                status = state.fail_status if len(state.received) < state.fail_first else 204
                headers = {name.lower(): value for name, value in self.headers.items()}
                state.received.append(Received(headers, body, status, time.monotonic()))
                state.arrived.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/memoryhub"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
