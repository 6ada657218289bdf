"""Middleware: request timing that clients can read, and the refusal of unstorable form input."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBadRequest, HttpResponseBase

from memoryhub.storable import unstorable_character

# The REST API's own schemas check its input and answer 422 naming the field.
API_PREFIX = "/api/"


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


class RefuseUnstorableInputMiddleware:
    """Answer 400 to a query string or form field holding a character PostgreSQL cannot store.

    A NUL character in a dashboard filter or form field would otherwise reach a
    query or a write and fail there as a 500. Browsers do not send one; crafted
    requests do. Checking every field here, before any view runs, covers each
    filter and form at once, present and future. Names and values are both
    checked; the answer names the field.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not request.path_info.startswith(API_PREFIX):
            for source in (request.GET, request.POST):
                for name, values in source.lists():
                    for text in (name, *values):
                        problem = unstorable_character(text)
                        if problem:
                            return HttpResponseBadRequest(
                                f"The field {name!a} contains {problem}, which cannot be stored; remove it.",
                                content_type="text/plain; charset=utf-8",
                            )
        return self.get_response(request)
