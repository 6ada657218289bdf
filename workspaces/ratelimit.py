"""Per-key API rate limit: a fixed one-minute window counted in the database.

Every gunicorn process and machine shares the count, and a request costs one
statement: an upsert on the key's single ``ApiRateWindow`` row that either adds
one to the current window or starts a new one, and returns the count. A fixed
window lets a key send up to twice its rate across a window's edge; for a limit
meant to stop runaway agents, not to meter them, that is fine.

For the same reason the count is committed without waiting for the WAL flush
(as recall's access counts are): a crash can lose the last few counts, and no
request waits on the disk. Waiting cost every API request and MCP tool call
1.5–5 ms on the 2-core VM (docs/BENCHMARKS.md, 2026-11-26).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils import timezone

from workspaces.models import AgentKey, ApiRateWindow

WINDOW = dt.timedelta(minutes=1)

_UPSERT = f"""
    INSERT INTO {ApiRateWindow._meta.db_table} AS w (agent_key_id, window_start, count)
    VALUES (%s, %s, 1)
    ON CONFLICT (agent_key_id) DO UPDATE SET
        count = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.count + 1 ELSE 1 END,
        window_start = EXCLUDED.window_start
    RETURNING count
"""  # noqa: S608 - the table name is ours, the values are parameters
# Both statements in one round trip (psycopg's client-side binding sends them as one simple query, which
# PostgreSQL runs as one implicit transaction; SET LOCAL lasts to its end).
_UPSERT_NO_FLUSH_WAIT = "SET LOCAL synchronous_commit = off;" + _UPSERT


@dataclass(frozen=True)
class RateVerdict:
    allowed: bool
    count: int
    limit: int
    retry_after_seconds: int


def rate_count(*, key: AgentKey, now: dt.datetime | None = None) -> RateVerdict:
    """Count one request of ``key`` in the current window and say whether it is within the rate."""
    limit = settings.MEMORYHUB_API_RATE_PER_MINUTE
    now = now or timezone.now()
    window_start = now.replace(second=0, microsecond=0)
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            # Counted in the caller's transaction, which commits it: SET LOCAL would not wait for its writes either.
            cursor.execute(_UPSERT, [key.pk, window_start])
        else:
            cursor.execute(_UPSERT_NO_FLUSH_WAIT, [key.pk, window_start])
            cursor.nextset()  # past SET's empty result, to the upsert's
        (count,) = cursor.fetchone()
    retry_after = max(1, math.ceil((window_start + WINDOW - now).total_seconds()))
    return RateVerdict(allowed=count <= limit, count=count, limit=limit, retry_after_seconds=retry_after)
