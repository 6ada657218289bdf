"""Every error under /api/ is JSON with a stable code; an outage is a 503 with Retry-After (API and dashboard)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import OperationalError, connection

from tests.conftest import AgentClient
from tests.factories import memory

pytestmark = pytest.mark.django_db


def _post(agent: AgentClient, body: bytes) -> Any:
    return agent.client.post("/api/v1/memories", data=body, content_type="application/json")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"text": "\xff\xfe"}', "not UTF-8"),
        (b"[" * 5000 + b"]" * 5000, "nests too deeply"),
        (b'{"text": ', "malformed JSON"),
    ],
)
def test_an_unreadable_body_is_a_422_naming_the_body(agent: AgentClient, body: bytes, message: str) -> None:
    response = _post(agent, body)

    assert response.status_code == 422
    assert response.json()["code"] == "invalid"
    [error] = response.json()["detail"]
    assert error["loc"] == ["body"]
    assert message in error["msg"]


def test_a_body_over_the_limit_is_a_json_413(agent: AgentClient) -> None:
    response = _post(agent, b'{"text": "' + b"a" * (3 * 1024 * 1024) + b'"}')

    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "too_large"


def test_unknown_api_paths_and_bad_keys_answer_in_json(agent: AgentClient) -> None:
    missing = agent.client.get("/api/v1/no-such-thing")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    unauthorised = agent.client.get("/api/v1/memories", HTTP_AUTHORIZATION="Bearer mh_nope")
    assert (unauthorised.status_code, unauthorised.json()) == (401, {"detail": "Unauthorized", "code": "unauthorized"})
    gone = agent.client.get("/api/v1/memories/00000000-0000-0000-0000-000000000000")
    assert (gone.status_code, gone.json()["code"]) == (404, "not_found")


def test_a_request_target_too_long_is_a_json_414(agent: AgentClient) -> None:
    response = agent.client.get("/api/v1/memories?q=" + "a" * 9000)

    assert response.status_code == 414
    assert response.json()["code"] == "uri_too_long"


def test_the_dashboard_has_a_page_for_unknown_addresses(client: Any) -> None:
    response = client.get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
    assert "Back to the dashboard" in response.content.decode()


@contextmanager
def database_down() -> Iterator[None]:
    """Every query fails as it does when PostgreSQL stops answering."""

    def refuse(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    with connection.execute_wrapper(refuse):
        yield


def test_the_api_answers_503_with_retry_after_while_the_database_is_down(agent: AgentClient) -> None:
    memory(workspace=agent.workspace, text="The API uses REST")
    with database_down():
        response = agent.client.get("/api/v1/memories")

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["code"] == "database_unavailable"
    # Recovery needs no restart: the next request is served.
    assert agent.client.get("/api/v1/memories").status_code == 200


def test_the_dashboard_shows_a_page_while_the_database_is_down(agent: AgentClient, admin_client: Any) -> None:
    with database_down():
        response = admin_client.get(f"/w/{agent.workspace.slug}/memories/")

    assert response.status_code == 503
    assert "The database is not answering" in response.content.decode()
