"""The retry timer itself, on an httpx MockTransport (the live tests cover the same paths against the hub)."""

from __future__ import annotations

import email.utils
import random
import time

import httpx
import pytest
from memoryhub_client import HubConnectionError, InvalidInput, MemoryHub, RateLimited, RetryPolicy, Unavailable


def scripted(*answers: httpx.Response | Exception) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport that gives ``answers`` in order, and the requests it received."""
    queue = list(answers)
    received: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        received.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), received


def error(status: int, code: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"detail": f"{code} happened", "code": code}, headers=headers or {})


STATUS = {
    "embedding": {"waiting": 0, "oldest_seconds": None},
    "checking": {"waiting": 0, "oldest_seconds": None},
    "broker": None,
    "llm": {"configured": False, "paused_until": None, "failures": 0},
}


def test_backoff_doubles_with_jitter_between_half_and_all_of_each_step() -> None:
    policy = RetryPolicy(max_attempts=6, base_delay=1.0, max_delay=5.0, rng=random.Random(7))

    delays = [policy.backoff(attempt) for attempt in range(1, 6)]

    for delay, ceiling in zip(delays, [1, 2, 4, 5, 5], strict=True):
        assert ceiling / 2 <= delay <= ceiling
    assert len(set(delays)) == 5  # jittered, not a fixed ladder


def test_503_without_retry_after_backs_off_then_raises_the_typed_error() -> None:
    transport, received = scripted(*[error(503, "database_unavailable")] * 3)
    waits: list[float] = []
    policy = RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=10.0)

    hub = MemoryHub("http://hub", "k", retry=policy, transport=transport, sleep=waits.append)
    with hub, pytest.raises(Unavailable) as failed:
        hub.status()

    assert len(received) == 3
    assert 0.5 <= waits[0] <= 1.0
    assert 1.0 <= waits[1] <= 2.0
    assert failed.value.code == "database_unavailable"
    assert failed.value.detail == "database_unavailable happened"


def test_retry_after_is_honoured_in_seconds_and_as_a_date() -> None:
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    transport, _ = scripted(
        error(429, "rate_limited", {"Retry-After": "7"}),
        error(503, "unavailable", {"Retry-After": later}),
        httpx.Response(200, json=STATUS),
    )
    waits: list[float] = []

    with MemoryHub("http://hub", "k", transport=transport, sleep=waits.append) as hub:
        hub.status()

    assert waits[0] == 7
    assert 25 <= waits[1] <= 30


def test_a_retry_after_longer_than_the_policy_allows_is_raised_at_once() -> None:
    transport, received = scripted(error(429, "rate_limited", {"Retry-After": "600"}))

    hub = MemoryHub("http://hub", "k", retry=RetryPolicy(max_retry_after=60), transport=transport)
    with hub, pytest.raises(RateLimited) as failed:
        hub.status()

    assert len(received) == 1
    assert failed.value.retry_after == 600


def test_connection_errors_are_retried_with_one_idempotency_key_per_write() -> None:
    transport, received = scripted(
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        error(409, "conflict", {"Retry-After": "1"}),  # the first attempt is still being answered
        httpx.Response(
            200, json={"stored": 1, "merged": 0, "rejected": 0, "results": [{"index": 0, "action": "stored"}]}
        ),
    )
    waits: list[float] = []

    with MemoryHub("http://hub", "k", transport=transport, sleep=waits.append) as hub:
        result = hub.remember_batch([{"text": "a fact"}])

    assert result.stored == 1
    keys = {request.headers["Idempotency-Key"] for request in received}
    assert len(received) == 4
    assert len(keys) == 1
    assert waits[2] == 1


def test_reads_carry_no_idempotency_key_and_other_errors_are_not_retried() -> None:
    transport, received = scripted(
        httpx.Response(
            422, json={"detail": [{"loc": ["body", "text"], "msg": "empty", "type": "value_error"}], "code": "invalid"}
        )
    )

    with MemoryHub("http://hub", "k", transport=transport) as hub, pytest.raises(InvalidInput) as invalid:
        hub.remember("")

    assert len(received) == 1
    assert invalid.value.fields == {"text": "empty"}


def test_a_hub_that_never_answers_is_a_connection_error_after_the_last_attempt() -> None:
    transport, received = scripted(*[httpx.ConnectError("refused")] * 2)

    with (
        MemoryHub(
            "http://hub", "k", retry=RetryPolicy(max_attempts=2), transport=transport, sleep=lambda s: None
        ) as hub,
        pytest.raises(HubConnectionError),
    ):
        hub.status()

    assert len(received) == 2
    assert "Idempotency-Key" not in received[0].headers
