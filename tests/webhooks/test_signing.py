"""Signatures a receiver can check with the standard library alone (the snippet in docs/CONFIGURATION.md)."""

from __future__ import annotations

import hashlib
import hmac
import time

from webhooks.signing import new_secret, signature_header, verify


def receiver_verifies(secret: str, header: str, body: bytes, tolerance: int = 300) -> bool:
    """docs/CONFIGURATION.md's verification snippet, verbatim in substance."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    timestamp = parts["t"]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    fresh = abs(time.time() - int(timestamp)) <= tolerance
    return fresh and hmac.compare_digest(expected, parts["v1"])


def test_a_signature_verifies_with_the_documented_snippet() -> None:
    secret = new_secret()
    body = b'{"type":"card.opened","data":{"card":{"question":"Is it still true?"}}}'

    header = signature_header(secret=secret, body=body)

    assert header.startswith("t=")
    assert receiver_verifies(secret, header, body)
    assert verify(secret=secret, header=header, body=body)


def test_another_secret_another_body_or_an_old_timestamp_fail() -> None:
    secret = new_secret()
    body = b'{"type":"card.opened"}'
    header = signature_header(secret=secret, body=body)
    stale = signature_header(secret=secret, body=body, timestamp=int(time.time()) - 3600)

    assert not receiver_verifies(new_secret(), header, body)
    assert not receiver_verifies(secret, header, body + b" ")
    assert not receiver_verifies(secret, stale, body)
    assert not verify(secret=secret, header=stale, body=body)
    assert not verify(secret=secret, header="garbage", body=body)


def test_the_timestamp_is_part_of_what_is_signed() -> None:
    secret = new_secret()
    body = b"{}"
    header = signature_header(secret=secret, body=body)
    signature = header.split("v1=")[1]
    moved = f"t={int(time.time()) + 1},v1={signature}"

    assert not verify(secret=secret, header=moved, body=body)


def test_each_secret_is_new() -> None:
    assert new_secret() != new_secret()
    assert new_secret().startswith("whsec_")
