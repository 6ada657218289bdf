"""The one module that talks to an OpenAI-compatible endpoint.

Everything remote — embeddings when ``MEMORYHUB_EMBEDDER=openai`` and the LLM
detection tiers — builds its client here, so timeouts and the base URL are set
in one place. Without ``OPENAI_API_KEY`` the LLM tiers are off.
"""

from __future__ import annotations

import json
import logging
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from django.conf import settings

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


def chat_json(
    *,
    system: str,
    user: str,
    schema_name: str,
    schema: dict[str, Any],
    attempts: int = 2,
    backoff_seconds: float = 0.5,
) -> tuple[Any, int]:
    """One temperature-0 chat completion constrained to ``schema``; returns (parsed JSON, tokens used).

    Timeouts, HTTP errors and output that is not JSON are logged and retried
    with exponential backoff; after ``attempts`` tries :class:`LLMError` is raised.
    """
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
