"""What PostgreSQL can store and psycopg can read back: the limits the edges check input against.

- **Characters.** PostgreSQL's ``text`` and ``jsonb`` cannot hold NUL (U+0000), and
  an unpaired surrogate (U+D800–U+DFFF, which JSON's ``"\\ud800"`` decodes to) has
  no UTF-8 encoding, so psycopg fails before the query is even sent. Either
  one reaching the database is a 500, so the edges refuse both.
- **Timestamps.** PostgreSQL stores years 4713 BC to 294276 AD, Python's
  ``datetime`` only years 1 to 9999, and psycopg cannot read a row whose value
  lies outside Python's range: ``9999-12-31T23:59:59-14:00`` is stored as year
  10000 in UTC, and from then on every read of that memory fails. The window
  accepted here, years 1900 to 2200 in UTC, keeps every stored value readable
  and leaves date arithmetic (validity windows, recency decay) far from an
  overflow, while covering any date a memory plausibly refers to.
- **JSON documents** (a memory's ``metadata``): their nesting depth and
  serialised size, so one field cannot hold megabytes beside a text capped at
  a few thousand characters.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

EARLIEST_TIMESTAMP = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
LATEST_TIMESTAMP = dt.datetime(2200, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC)


def unstorable_character(text: str) -> str | None:
    """What in ``text`` PostgreSQL cannot store, in words, or None when it is fine."""
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"an unpaired surrogate (\\u{ord(text[exc.start]):04x})"
    return None


def first_unstorable(value: Any, *, where: str = "") -> tuple[str, str] | None:
    """The first string in ``value`` (nested dict keys, values and list items included) PostgreSQL cannot store.

    Returns ``(where, problem)``: where it is (``""`` for ``value`` itself,
    ``['a'][0]`` for a nested value, ``a key of ['a']`` for a key) and what is
    wrong, or None when every string is fine.
    """
    if isinstance(value, str):
        problem = unstorable_character(value)
        return (where, problem) if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            key_where = f"a key of {where}" if where else "a key"
            found = first_unstorable(key, where=key_where) if isinstance(key, str) else None
            # !a (ascii): the key itself may hold a surrogate, and the message must still encode.
            found = found or first_unstorable(item, where=f"{where}[{key!a}]")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = first_unstorable(item, where=f"{where}[{index}]")
            if found:
                return found
    return None


def timestamp_in_range(value: dt.datetime) -> dt.datetime:
    """``value`` in UTC (a naive time is taken as UTC); ValueError when outside years 1900–2200 in UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    try:
        in_utc = value.astimezone(dt.UTC)
    except OverflowError:
        # 0001-01-01T00:00:00+14:00 is in year 0 in UTC: before anything Python can represent.
        in_utc = None
    if in_utc is None or not EARLIEST_TIMESTAMP <= in_utc <= LATEST_TIMESTAMP:
        raise ValueError(
            f"{value.isoformat()} is out of range: timestamps must lie between "
            f"{EARLIEST_TIMESTAMP.year} and {LATEST_TIMESTAMP.year} (inclusive) in UTC"
        )
    return value


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects or arrays more than ``limit`` levels deep (the outermost is level 1)."""
    if not isinstance(value, dict | list):
        return False
    if limit < 1:
        return True
    items = value.values() if isinstance(value, dict) else value
    # Stops as soon as the limit is passed, so a hostile document costs at most ``limit`` frames.
    return any(json_depth_exceeds(item, limit - 1) for item in items)


def json_size_bytes(value: Any) -> int:
    """The size of ``value`` as compact UTF-8 JSON, close to what it takes to store.

    ValueError for NaN or Infinity: Python's JSON reads and writes them, PostgreSQL's ``jsonb`` refuses them.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return len(text.encode("utf-8", errors="surrogatepass"))
