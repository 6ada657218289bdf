"""Signing a payload: ``MemoryHub-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``.

The timestamp is inside what is signed, so a receiver that refuses old
timestamps (say, older than five minutes) cannot be fed a replayed payload.
docs/CONFIGURATION.md shows the receiver's side.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

SIGNATURE_HEADER = "MemoryHub-Signature"
SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    signed = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_header(*, secret: str, body: bytes, timestamp: int | None = None) -> str:
    moment = int(time.time()) if timestamp is None else timestamp
    return f"t={moment},v1={signature(secret=secret, timestamp=moment, body=body)}"


def verify(*, secret: str, header: str, body: bytes, tolerance_seconds: int = 300, now: float | None = None) -> bool:
    """What a receiver does (the reference for the snippet in the docs): check the signature and its age."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance_seconds:
        return False
    expected = signature(secret=secret, timestamp=timestamp, body=body)
    return hmac.compare_digest(expected, parts.get("v1", ""))
