"""NUL characters and unpaired surrogates, which PostgreSQL cannot store, are a 422 naming the field."""

from __future__ import annotations

import inspect
import json
import uuid
from typing import Any

import pytest
from django.test import Client

from api import conflict_schemas, schemas
from memories.models import Event, Link, Memory
from tests.conftest import AgentClient

NUL = "\u0000"


@pytest.mark.parametrize(
    ("body", "field", "where"),
    [
        ({"text": f"a{NUL}b"}, "text", ""),
        ({"text": "ok", "key": f"home{NUL}"}, "key", ""),
        ({"text": "ok", "scope": NUL}, "scope", ""),
        ({"text": "ok", "agent": f"bot{NUL}"}, "agent", ""),
        ({"text": "ok", "tags": ["fine", f"x{NUL}"]}, "tags", "[1]"),
        ({"text": "ok", "metadata": {"a": f"x{NUL}"}}, "metadata", "['a']"),
        ({"text": "ok", "metadata": {"a": {"b": [1, f"x{NUL}"]}}}, "metadata", "['a']['b'][1]"),
        ({"text": "ok", "metadata": {f"k{NUL}": 1}}, "metadata", "a key"),
        ({"text": "ok", "metadata": {"a": {f"k{NUL}": 1}}}, "metadata", "a key of ['a']"),
    ],
)
def test_a_nul_character_in_a_commit_is_a_422_naming_the_field(
    agent: AgentClient, field_errors: Any, body: dict[str, Any], field: str, where: str
) -> None:
    errors = field_errors(agent.post("/memories", body))

    assert "NUL character" in errors[field]
    assert errors[field].endswith(f"in {where}" if where else "(\\u0000)")
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"text": "a\\ud800b"}', "text"),
        ('{"text": "ok", "tags": ["\\udfff"]}', "tags"),
        ('{"text": "ok", "metadata": {"\\ud800": 1}}', "metadata"),
        ('{"text": "ok", "metadata": {"a": ["\\ud83d"]}}', "metadata"),
    ],
)
def test_an_unpaired_surrogate_in_a_body_is_a_422_naming_the_field(
    agent: AgentClient, field_errors: Any, raw: str, field: str
) -> None:
    errors = field_errors(agent.post("/memories", raw=raw))

    assert "unpaired surrogate" in errors[field]
    assert Memory.objects.count() == 0


def test_a_surrogate_pair_is_an_ordinary_character(agent: AgentClient) -> None:
    response = agent.post("/memories", raw='{"text": "The team mascot is \\ud83d\\udc22"}')

    assert response.status_code == 201
    assert Memory.objects.get().text == "The team mascot is \U0001f422"


@pytest.mark.parametrize("param", ["q", "scope", "key", "agent", "tag", "tags_all"])
def test_a_nul_character_in_a_list_filter_is_a_422(agent: AgentClient, field_errors: Any, param: str) -> None:
    assert "NUL character" in field_errors(agent.get("/memories", {param: f"x{NUL}"}))[param]


def test_a_nul_character_in_the_events_filter_is_a_422(agent: AgentClient, field_errors: Any) -> None:
    assert "NUL character" in field_errors(agent.get("/events", {"verb": f"memory{NUL}"}))["verb"]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/recall", {"query": f"where{NUL}"}, "query"),
        ("/recall", {"query": "ok", "scope": NUL}, "scope"),
        ("/recall", {"query": "ok", "tags": [NUL]}, "tags"),
        ("/context", {"recent_messages": [{"content": f"hi{NUL}"}]}, "content"),
        ("/context", {"recent_messages": [{"content": "hi"}], "tool_results": [NUL]}, "tool_results"),
        ("/uncertainties/surface", {"topic": f"deploys{NUL}"}, "topic"),
    ],
)
def test_a_nul_character_in_a_read_body_is_a_422(
    agent: AgentClient, field_errors: Any, path: str, body: dict[str, Any], field: str
) -> None:
    assert "NUL character" in field_errors(agent.post(path, body))[field]


def test_a_nul_character_in_a_reason_stores_nothing(agent: AgentClient, field_errors: Any) -> None:
    memory = agent.commit("The build server is in Frankfurt")
    events = Event.objects.count()

    errors = field_errors(agent.post(f"/memories/{memory['id']}/reinforce", {"reason": f"seen{NUL}"}))

    assert "NUL character" in errors["reason"]
    assert Event.objects.count() == events


def test_a_nul_character_in_a_link_relation_is_a_422(agent: AgentClient, field_errors: Any) -> None:
    src, dst = agent.commit("a fact"), agent.commit("another fact")

    errors = field_errors(agent.post("/links", {"src": src["id"], "dst": dst["id"], "rel": f"x-a{NUL}"}))

    assert "rel" in errors
    assert not Link.objects.exists()


def test_a_nul_character_in_the_bearer_key_is_a_401(agent: AgentClient) -> None:
    response = Client().get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer mh_ab{NUL}cd_secret")

    assert response.status_code == 401


def test_every_request_schema_checks_its_strings() -> None:
    # A request schema that skipped InputSchema would let a NUL character through to the database.
    request_schemas = [
        cls
        for module in (schemas, conflict_schemas)
        for name, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__ and name.endswith(("In", "Query"))
    ]

    assert len(request_schemas) >= 12
    assert [cls.__name__ for cls in request_schemas if not issubclass(cls, schemas.InputSchema)] == []


def test_the_422_body_encodes_even_when_the_input_cannot(agent: AgentClient) -> None:
    response = agent.post("/memories", raw=json.dumps({"text": "ok", "metadata": {"\ud800": "\ud800"}}))

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "payload", "metadata"]
    assert uuid.UUID(agent.commit("still writable")["id"])
