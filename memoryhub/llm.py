"""The one module that talks to an OpenAI-compatible endpoint.

Everything remote — embeddings when ``MEMORYHUB_EMBEDDER=openai`` and the LLM
detection tiers — builds its client here, so timeouts and the base URL are set
in one place. Without ``OPENAI_API_KEY`` the LLM tiers are off.

A circuit breaker guards the chat calls. A call that gives no usable answer
after its retries — timeouts, connection errors, HTTP errors (5xx, 429, 401 …),
answers that are not JSON — counts as one failure; any usable answer resets the
count. After ``MEMORYHUB_LLM_BREAKER_FAILURES`` failures in a row the breaker
opens: for ``MEMORYHUB_LLM_BREAKER_COOLDOWN_SECONDS`` nobody calls the LLM
(:class:`LLMPaused` at once, so detection keeps its offline verdicts and the
detective reads offline). Then one caller probes (half-open): an answer closes
the breaker, a failure opens it for another cool-down. Its state is a
:class:`~memoryhub.models.CircuitBreaker` row, shared by every web and worker
process.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from memoryhub.models import CircuitBreaker

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)


def llm_enabled() -> bool:
    return bool(settings.OPENAI_API_KEY)


@lru_cache(maxsize=1)
def openai_client() -> openai.OpenAI:
    import openai

    return openai.OpenAI(
        api_key=settings.OPENAI_API_KEY or "not-configured",
        base_url=settings.OPENAI_BASE_URL or None,
        timeout=settings.OPENAI_TIMEOUT_SECONDS,
        # One retry policy, ours (chat_json, Celery task retries), not two stacked.
        max_retries=0,
    )


class LLMError(RuntimeError):
    """The LLM could not give a usable answer (after retries); callers keep their offline result."""


class LLMPaused(LLMError):
    """The circuit breaker is open: the LLM was not called."""


BREAKER = "llm"


@dataclass(frozen=True)
class LLMPause:
    """An open breaker, as the dashboard and the status endpoint show it."""

    until: dt.datetime
    failures: int
    last_error: str


def llm_paused() -> LLMPause | None:
    """The breaker's pause while it lasts; None when it is closed, its cool-down is over, or no LLM is configured."""
    if not llm_enabled():
        return None
    row = CircuitBreaker.objects.filter(name=BREAKER, open_until__gt=timezone.now()).first()
    if row is None or row.open_until is None:
        return None
    return LLMPause(until=row.open_until, failures=row.consecutive_failures, last_error=row.last_error)


def _probe_seconds() -> float:
    # Long enough for one call with its retry; if the probing process dies, another probes after this.
    return 2 * settings.OPENAI_TIMEOUT_SECONDS + 5


def llm_admit() -> bool:
    """Whether a call may go out now: the breaker is closed, or its cool-down is over and this caller probes.

    Half-open admits one caller across all processes (a conditional UPDATE that
    pushes ``open_until`` past the probe); the others find it still open.
    """
    open_until = CircuitBreaker.objects.filter(name=BREAKER).values_list("open_until", flat=True).first()
    if open_until is None:
        return True
    now = timezone.now()
    if now < open_until:
        return False
    probe_until = now + dt.timedelta(seconds=_probe_seconds())
    return bool(CircuitBreaker.objects.filter(name=BREAKER, open_until=open_until).update(open_until=probe_until))


def llm_record(*, ok: bool, error: str = "") -> None:
    """Count one call's outcome: an answer closes the breaker, a failure may open it.

    Callers that spread calls over threads (the detective) record from the
    thread that owns the database connection, once per call.
    """
    if ok:
        # Zero rows match while the breaker is closed and counts nothing: no write per call.
        CircuitBreaker.objects.filter(name=BREAKER).filter(
            Q(consecutive_failures__gt=0) | Q(open_until__isnull=False)
        ).update(consecutive_failures=0, open_until=None, opened_at=None)
        return
    now = timezone.now()
    threshold = settings.MEMORYHUB_LLM_BREAKER_FAILURES
    CircuitBreaker.objects.get_or_create(name=BREAKER)
    update: dict[str, Any] = {
        "consecutive_failures": F("consecutive_failures") + 1,
        "last_failure_at": now,
        "last_error": error[:2000],
    }
    if threshold > 0:  # 0 turns the breaker off: failures are counted, nothing is paused
        # SET reads the row as it was: this failure is number consecutive_failures + 1.
        trips = Q(consecutive_failures__gte=threshold - 1)
        until = now + dt.timedelta(seconds=settings.MEMORYHUB_LLM_BREAKER_COOLDOWN_SECONDS)
        update["open_until"] = Case(When(trips, then=Value(until)), default=F("open_until"))
        update["opened_at"] = Case(When(trips & Q(opened_at__isnull=True), then=Value(now)), default=F("opened_at"))
    CircuitBreaker.objects.filter(name=BREAKER).update(**update)
    if threshold > 0:
        row = CircuitBreaker.objects.get(name=BREAKER)
        if row.consecutive_failures >= threshold:
            logger.warning(
                "LLM circuit breaker open until %s after %d failures in a row (%s); detection runs offline",
                row.open_until,
                row.consecutive_failures,
                error,
            )


def chat_json(
    *,
    system: str,
    user: str,
    schema_name: str,
    schema: dict[str, Any],
    attempts: int = 2,
    backoff_seconds: float = 0.5,
    breaker: bool = True,
) -> tuple[Any, int]:
    """One temperature-0 chat completion constrained to ``schema``; returns (parsed JSON, tokens used).

    Timeouts, HTTP errors and output that is not JSON are logged and retried
    with exponential backoff; after ``attempts`` tries :class:`LLMError` is raised.
    While the circuit breaker is open :class:`LLMPaused` is raised without a
    call. ``breaker=False`` leaves admission and the outcome to the caller
    (:func:`llm_admit`, :func:`llm_record`): for calls made from threads that
    must not touch the database.
    """
    if breaker and not llm_admit():
        raise LLMPaused(f"{schema_name}: the LLM tier is paused by its circuit breaker")
    try:
        result = _chat_json(
            system=system,
            user=user,
            schema_name=schema_name,
            schema=schema,
            attempts=attempts,
            backoff_seconds=backoff_seconds,
        )
    except LLMError as exc:
        if breaker:
            llm_record(ok=False, error=str(exc))
        raise
    if breaker:
        llm_record(ok=True)
    return result


def _chat_json(
    *, system: str, user: str, schema_name: str, schema: dict[str, Any], attempts: int, backoff_seconds: float
) -> tuple[Any, int]:
    last_error: Exception | None = None
    for attempt in range(attempts):
        if attempt:
            time.sleep(backoff_seconds * 2 ** (attempt - 1))
        try:
            response = openai_client().chat.completions.create(
                model=settings.MEMORYHUB_LLM_MODEL,
                temperature=0,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": True},
                },
            )
            content = response.choices[0].message.content or ""
            tokens = response.usage.total_tokens if response.usage else 0
            return json.loads(content), tokens
        except Exception as exc:  # openai's errors, timeouts, JSON errors: all mean "try again"
            last_error = exc
            logger.warning("LLM call %s failed (attempt %d/%d): %s", schema_name, attempt + 1, attempts, exc)
    raise LLMError(f"{schema_name}: no usable answer after {attempts} attempts: {last_error}")
