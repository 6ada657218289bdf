"""Errors as typed exceptions, each carrying the API's ``detail`` and ``code`` (docs/API.md, Errors)."""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx

from memoryhub_client.models import Conflict, parse


class MemoryHubError(Exception):
    """Base of every error this client raises."""


class HubConnectionError(MemoryHubError):
    """The hub could not be reached (or the connection broke) on every attempt."""


class APIError(MemoryHubError):
    """The hub answered with an error status.

    ``detail`` is the API's ``detail`` as sent: a sentence, or for 422 a list of
    ``{loc, msg, type}``; ``code`` is its stable machine-readable ``code``.
    """

    status_code: int = 0

    def __init__(self, *, status_code: int, detail: Any, code: str, response: httpx.Response | None = None) -> None:
        self.status_code = status_code
        self.detail = detail
        self.code = code
        self.response = response
        super().__init__(f"{status_code} {code}: {_readable(detail)}")

    @property
    def retry_after(self) -> float | None:
        """Seconds the hub asked to wait (``Retry-After``), when it said."""
        return retry_after_seconds(self.response) if self.response is not None else None


class Unauthorized(APIError):
    """401: the agent key is missing, unknown or revoked."""


class Forbidden(APIError):
    """403: the key lacks the operation's scope, or a pinned key commits as another agent."""


class NotFound(APIError):
    """404: no such id in the key's workspace (or no such path)."""


class Conflicting(APIError):
    """409: valid, but clashes with the current state (a supersede cycle, a card already answered …)."""


class CommitRejected(Conflicting):
    """409 from ``remember(on_conflict="raise")``: the fact clashes and was not stored."""

    def __init__(self, *, conflicts: list[Conflict], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conflicts = conflicts


class TooLarge(APIError):
    """413 / 414: the body or the URL is over the hub's limit."""


class InvalidInput(APIError):
    """422: bad input; ``detail`` names each offending field."""

    @property
    def fields(self) -> dict[str, str]:
        """``{"text": "text must not be empty", ...}``: the innermost named part of each ``loc`` → its message."""
        found: dict[str, str] = {}
        for error in self.detail if isinstance(self.detail, list) else []:
            names = [str(part) for part in error.get("loc", []) if isinstance(part, str)]
            found[names[-1] if names else ""] = str(error.get("msg", ""))
        return found


class RateLimited(APIError):
    """429: the key's rate for this minute is spent (raised once the retries are spent too)."""


class ServerError(APIError):
    """500: a defect on the hub (it logged the traceback)."""


class Unavailable(APIError):
    """503: the database does not answer, or a checked commit ran out of time (raised once retries are spent)."""


_BY_STATUS: dict[int, type[APIError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflicting,
    413: TooLarge,
    414: TooLarge,
    422: InvalidInput,
    429: RateLimited,
    503: Unavailable,
}


def error_for(response: httpx.Response) -> APIError:
    """The typed exception for an error response."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    detail = body.get("detail", response.text or response.reason_phrase)
    code = str(body.get("code", "unknown"))
    kwargs: dict[str, Any] = {"status_code": response.status_code, "detail": detail, "code": code, "response": response}
    if response.status_code == 409 and "conflicts" in body:
        return CommitRejected(conflicts=[parse(Conflict, c) for c in body["conflicts"]], **kwargs)
    cls = _BY_STATUS.get(response.status_code, ServerError if response.status_code >= 500 else APIError)
    return cls(**kwargs)


def retry_after_seconds(response: httpx.Response) -> float | None:
    """``Retry-After`` as seconds: the delta-seconds form, or an HTTP date."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _readable(detail: Any) -> str:
    if isinstance(detail, list):
        return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', []))}: {e.get('msg', '')}" for e in detail)
    return str(detail)
