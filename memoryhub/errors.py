"""Domain errors that services raise and every interface turns into a response.

The REST API maps them to 404 / 409 / 422 (see ``api.root``); the
dashboard shows their message. Services never return HTTP objects.
"""

from __future__ import annotations


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
