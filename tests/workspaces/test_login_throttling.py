"""Sign-in throttling (django-axes) through the real /login/ view."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from axes.models import AccessAttempt
from axes.utils import reset
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

RIGHT = "correct horse battery"


def _sign_in(client: Client, password: str, username: str = "ana") -> Any:
    return client.post("/login/", {"username": username, "password": password})


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_twenty_wrong_passwords_lock_the_account_even_for_the_right_one() -> None:
    UserFactory(username="ana")
    client = Client()

    wrong = [_sign_in(client, f"guess {i}").status_code for i in range(20)]
    locked = _sign_in(client, RIGHT)

    assert wrong == [200] * 19 + [429]  # the login form again, then the lockout page on the 20th
    assert locked.status_code == 429
    assert not _signed_in(client)
    page = locked.content.decode()
    assert "Sign-in paused" in page
    assert "After 20 wrong passwords" in page
    assert int(locked["Retry-After"]) == 30 * 60


def test_nineteen_wrong_passwords_do_not_lock_and_a_success_forgets_them() -> None:
    UserFactory(username="ana")
    client = Client()
    for i in range(19):
        _sign_in(client, f"guess {i}")

    assert _sign_in(client, RIGHT).status_code == 302
    assert _signed_in(client)
    assert not AccessAttempt.objects.filter(username="ana").exists()


def test_the_account_is_locked_from_any_address() -> None:
    UserFactory(username="ana")
    for i in range(20):
        Client(REMOTE_ADDR=f"10.0.0.{i + 1}").post("/login/", {"username": "ana", "password": f"guess {i}"})

    client = Client(REMOTE_ADDR="10.0.1.1")
    assert _sign_in(client, RIGHT).status_code == 429
    assert not _signed_in(client)


def test_the_address_is_locked_across_accounts() -> None:
    UserFactory(username="ana")
    client = Client()
    for i in range(20):
        _sign_in(client, "guess", username=f"nobody{i}")

    assert _sign_in(client, RIGHT).status_code == 429
    # Ana from elsewhere still gets in.
    elsewhere = Client(REMOTE_ADDR="10.0.1.1")
    assert _sign_in(elsewhere, RIGHT).status_code == 302


def test_the_lock_expires_after_the_cool_off() -> None:
    UserFactory(username="ana")
    client = Client()
    for i in range(20):
        _sign_in(client, f"guess {i}")
    assert _sign_in(client, RIGHT).status_code == 429

    # The failures are older than the 30-minute cool-off now.
    AccessAttempt.objects.update(attempt_time=dt.datetime.now(tz=dt.UTC) - dt.timedelta(minutes=31))

    assert _sign_in(client, RIGHT).status_code == 302
    assert _signed_in(client)


def test_an_admin_reset_lifts_the_lock() -> None:
    UserFactory(username="ana")
    client = Client()
    for i in range(20):
        _sign_in(client, f"guess {i}")

    reset(username="ana")
    reset(ip="127.0.0.1")

    assert _sign_in(client, RIGHT).status_code == 302


def test_the_limit_and_cool_off_come_from_settings(settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = dt.timedelta(minutes=5)
    UserFactory(username="ana")
    client = Client()
    for i in range(3):
        _sign_in(client, f"guess {i}")

    locked = _sign_in(client, RIGHT)

    assert locked.status_code == 429
    assert "After 3 wrong passwords" in locked.content.decode()
    assert "for 5 minutes" in locked.content.decode()
