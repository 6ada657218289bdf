"""Request timing that clients can read: the ``Server-Timing`` response header."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase


class ServerTimingMiddleware:
    """Add ``Server-Timing: app;dur=<ms>``: the time the request spent in Django.

    Registered first, so it covers every other middleware, the view and the
    database work, but not the web server's queueing or the network. The
    commit benchmark reads it to separate server time from client time.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed_ms = (time.perf_counter() - started) * 1000
        # Append rather than overwrite: a view may already report its own metrics.
        existing = response.headers.get("Server-Timing")
        value = f"app;dur={elapsed_ms:.2f}"
        response.headers["Server-Timing"] = f"{existing}, {value}" if existing else value
        return response
