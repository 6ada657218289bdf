"""When and how long to wait before sending a request again.

Retried: 429 (rate limited), 503 (unavailable), a 409 that carries
``Retry-After`` (the same ``Idempotency-Key`` is still being answered), and
connection errors. The wait is the server's ``Retry-After`` when it gives one,
else exponential backoff with jitter: attempt *n* waits a random time between
half and all of ``min(max_delay, base_delay * 2**(n-1))``, so clients that
failed together do not come back together.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import httpx

from memoryhub_client.errors import retry_after_seconds

RETRIED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` counts the first try: 5 means one request and up to four retries."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    # A Retry-After longer than this is not waited for: the error is raised at once.
    max_retry_after: float = 120.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def backoff(self, attempt: int) -> float:
        """The jittered wait after failed attempt number ``attempt`` (1-based) when the server named none."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def delay_after_response(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying after ``response``, or None when it is not to be retried."""
        if attempt >= self.max_attempts:
            return None
        asked = retry_after_seconds(response)
        if response.status_code in RETRIED_STATUSES or (response.status_code == 409 and asked is not None):
            if asked is None:
                return self.backoff(attempt)
            return asked if asked <= self.max_retry_after else None
        return None

    def delay_after_error(self, error: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying after a transport error, or None to give up."""
        if attempt >= self.max_attempts or not isinstance(error, httpx.TransportError):
            return None
        return self.backoff(attempt)


NO_RETRIES = RetryPolicy(max_attempts=1)
