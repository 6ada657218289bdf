"""Domain errors that services raise and every interface turns into a response.

The REST API maps them to 404 / 409 / 422 / 503 (see ``api.root``); the
dashboard shows their message. Services never return HTTP objects.
"""

from __future__ import annotations

# The stable ``code`` every error body under /api/ carries beside its readable ``detail``.
ERROR_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    414: "uri_too_long",
    422: "invalid",
    429: "rate_limited",
    500: "server_error",
    503: "unavailable",
}


def error_code(status: int) -> str:
    return ERROR_CODES.get(status, "error")


class DomainError(Exception):
    status_code = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(DomainError):
    status_code = 404


class ConflictError(DomainError):
    """The request is valid but clashes with the current state (cycles, forgotten targets)."""

    status_code = 409


class InvalidInput(DomainError):
    """A value is well-formed but not acceptable (names the offending field)."""

    status_code = 422


class TryAgainLater(DomainError):
    """The work could not be done in time now; the same request is expected to succeed later."""

    status_code = 503

    def __init__(self, message: str, *, retry_after_seconds: int = 1) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds
