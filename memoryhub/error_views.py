"""Error answers outside the API's own handlers: Django's 400/403/404/500 views, an outage, a long URL.

Under ``/api/`` every error is JSON of the API's one shape, ``{"detail": …,
"code": …}`` (``memoryhub.errors.ERROR_CODES``); elsewhere a short page. The
API's handlers (``api/root.py``) answer what happens inside a route; these
answer what happens before one is found (an unknown path, a body too large to
read, a request line too long) and a database that does not answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template.loader import render_to_string

from memoryhub.errors import error_code

logger = logging.getLogger(__name__)

# Seconds a client should wait before retrying while the database does not answer.
OUTAGE_RETRY_AFTER = 5
# The longest request target (path and query) served; gunicorn's own limit is lifted so this one answers.
MAX_REQUEST_TARGET = 8190
DATABASE_DOWN = (OperationalError, InterfaceError)
DATABASE_DOWN_DETAIL = "MemoryHub cannot reach its database right now; nothing was changed. Try again in a few seconds."


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def api_error(status: int, detail: str, *, code: str | None = None) -> JsonResponse:
    return JsonResponse({"detail": detail, "code": code or error_code(status)}, status=status)


def _answer(request: HttpRequest, status: int, title: str, detail: str, *, code: str | None = None) -> HttpResponse:
    if is_api(request):
        return api_error(status, detail, code=code)
    # No request context: its processors read the session and the database, which may be what failed.
    page = render_to_string("error.html", {"status": status, "title": title, "detail": detail})
    return HttpResponse(page, status=status)


def database_unavailable(request: HttpRequest) -> HttpResponse:
    response = _answer(
        request,
        503,
        "The database is not answering",
        DATABASE_DOWN_DETAIL,
        code="database_unavailable",
    )
    response["Retry-After"] = str(OUTAGE_RETRY_AFTER)
    return response


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        return _answer(request, 413, "Request too large", f"the request body is too large: {exception}")
    return _answer(request, 400, "Bad request", "the request could not be read")


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 403, "Not allowed", "you are not allowed to do this")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _answer(request, 404, "Not found", f"nothing at {request.path}")


def server_error(request: HttpRequest) -> HttpResponse:
    return _answer(request, 500, "Something went wrong", "the server failed to answer; the error was logged")


class ErrorShapeMiddleware:
    """A request target too long, and a database outage in a view, answered in the right shape.

    Registered right after the timing middleware: it turns a database that stops
    answering mid-request (``process_exception``) into a 503 with ``Retry-After``
    instead of Django's HTML 500, on the API and the dashboard alike.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if len(request.get_full_path()) > MAX_REQUEST_TARGET:
            return _answer(
                request, 414, "Address too long", f"the request target is longer than {MAX_REQUEST_TARGET} characters"
            )
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DATABASE_DOWN) or (
            isinstance(exception, DatabaseError) and "connection" in str(exception).lower()
        ):
            logger.warning("database unavailable for %s: %s", request.path, exception)
            return database_unavailable(request)
        return None
