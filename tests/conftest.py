from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tests.factories import WorkspaceFactory, agent_key_for
from workspaces.models import AgentKey, Workspace


class AgentClient:
    """A test client that speaks JSON to /api/v1 with an agent's bearer key."""

    def __init__(self, key: str, key_row: AgentKey) -> None:
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
        self.key = key
        self.key_row = key_row
        self.workspace = key_row.workspace

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.client.get(f"/api/v1{path}", params or {})

    def post(self, path: str, body: Any = None, *, raw: str | None = None) -> Any:
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(f"/api/v1{path}", data=data, content_type="application/json")

    def delete(self, path: str) -> Any:
        return self.client.delete(f"/api/v1{path}")

    def grant(self, *scopes: str) -> AgentClient:
        """Give the key more scopes (answer, admin) than the read + write a new key gets."""
        self.key_row.scopes = sorted({*self.key_row.scopes, *scopes})
        self.key_row.save(update_fields=["scopes"])
        return self

    def commit(self, text: str, **fields: Any) -> dict[str, Any]:
        response = self.post("/memories", {"text": text, **fields})
        assert response.status_code == 201, response.content
        memory: dict[str, Any] = response.json()["memory"]
        return memory


@pytest.fixture
def workspace(db: None) -> Workspace:
    result: Workspace = WorkspaceFactory(slug="acme")
    return result


@pytest.fixture
def other_workspace(db: None) -> Workspace:
    result: Workspace = WorkspaceFactory(slug="initech")
    return result


@pytest.fixture
def agent(workspace: Workspace) -> AgentClient:
    key_row, key = agent_key_for(workspace, "planner")
    return AgentClient(key, key_row)


@pytest.fixture
def other_agent(db: None) -> AgentClient:
    """An agent of another workspace, for tenant-isolation checks."""
    key_row, key = agent_key_for(WorkspaceFactory(slug="globex"), "intruder")
    return AgentClient(key, key_row)


@pytest.fixture
def field_errors() -> Any:
    """Map a 422 response to {field: message} for compact assertions."""

    def parse(response: Any) -> dict[str, str]:
        assert response.status_code == 422, response.content
        # The innermost named part of the location: ["body", "payload", "kind", 0] → "kind".
        return {
            next(str(part) for part in reversed(err["loc"]) if isinstance(part, str)): err["msg"]
            for err in response.json()["detail"]
        }

    return parse


@pytest.fixture
def llm(settings: Any) -> Any:
    """An OpenAI-compatible stub server, with the hub configured to use it."""
    from memoryhub.llm import openai_client
    from tests.llm_stub import run_stub

    stubs = run_stub()
    stub = next(stubs)
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = stub.base_url
    settings.OPENAI_TIMEOUT_SECONDS = 1.0
    openai_client.cache_clear()
    yield stub
    openai_client.cache_clear()
    next(stubs, None)


@pytest.fixture(autouse=True)
def _fresh_common_lexemes() -> None:
    """Recall caches table statistics (common words, row count) for ten minutes; each test starts without them."""
    from recall import hybrid as recall

    recall._statistics.clear()


# The longest a test that counts requests against the rate limit takes, with room to spare.
RATE_TEST_SECONDS = 10.0


@pytest.fixture
def within_one_rate_window() -> None:
    """Start where the next few seconds fall in one rate window.

    The API's rate windows are calendar minutes (workspaces/ratelimit.py). A test that counts requests up to a limit
    and crosses a minute's edge on the way sees its count start again, and no 429 where it expects one.
    """
    now = timezone.now()
    left = 60 - now.second - now.microsecond / 1_000_000
    if left < RATE_TEST_SECONDS:
        time.sleep(left + 0.05)
