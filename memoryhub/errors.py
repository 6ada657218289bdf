"""Domain errors that services raise and every interface turns into a response.

The REST API maps them to 403 / 404 / 409 / 422 / 429 / 503 (see ``api.root``); the
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
    # Set on errors that ask the client to send the same request again later (answered as Retry-After).
    retry_after_seconds: int | None = None

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Forbidden(DomainError):
    """The caller is known but may not do this (an agent key without the scope, a pinned agent name)."""

    status_code = 403


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


class RateLimited(TryAgainLater):
    """The caller sent more requests than its rate allows; the same request succeeds after the wait."""

    status_code = 429


class RequestInProgress(TryAgainLater):
    """The same request (same Idempotency-Key) is being answered right now; its answer is replayed once done."""

    status_code = 409
