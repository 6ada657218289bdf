"""An OpenAI-compatible HTTP server for tests: the one fake in the suite.

It speaks the real wire protocol (the ``openai`` client talks to it over
HTTP), answers ``/v1/chat/completions`` from a script of replies, and records
every request so tests can check what the hub sent (model, temperature,
schema). A reply is a string (the assistant's content), an int (an HTTP error
status), or ``("sleep", seconds)`` to force a client timeout.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | int | tuple[str, float]


class LLMStub:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.default: Reply = '{"verdicts": []}'
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _next(self) -> Reply:
        return self.replies.pop(0) if self.replies else self.default

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                stub.requests.append({"path": self.path, "body": body})
                reply = stub._next()
                if isinstance(reply, tuple):
                    time.sleep(reply[1])
                    reply = stub.default
                if isinstance(reply, int):
                    self._send(reply, {"error": {"message": "scripted failure", "type": "server_error"}})
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

        return Handler


def run_stub() -> Iterator[LLMStub]:
    stub = LLMStub()
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()
