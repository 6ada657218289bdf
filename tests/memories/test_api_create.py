from __future__ import annotations

from typing import Any

import pytest

from memories.models import Event, Memory
from tests.conftest import AgentClient


def test_it_stores_a_fact_as_pending_embed(agent: AgentClient) -> None:
    response = agent.post("/memories", {"text": "  We use REST for the public API ", "tags": ["API", "api"]})

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "pending_embed"
    assert body["action"] == "stored"
    assert body["conflicts"] == []
    memory = Memory.objects.get(pk=body["id"])
    assert memory.text == "We use REST for the public API"
    assert memory.tags == ["api"]
    assert memory.workspace == agent.workspace
    assert memory.agent == "planner"
    assert memory.confidence == pytest.approx(0.9)


def test_it_writes_an_event_in_the_same_transaction(agent: AgentClient) -> None:
    memory = agent.commit("The rate limit is 1,000 req/s")

    event = Event.objects.get(memory_id=memory["id"])
    assert event.verb == "memory.create"
    assert event.actor_type == "agent"
    assert event.agent_key == agent.key_row
    assert event.changes[0]["op"] == "create"
    assert event.changes[0]["after"]["text"] == "The rate limit is 1,000 req/s"


def test_it_defaults_confidence_by_source(agent: AgentClient) -> None:
    inferred = agent.commit("The user probably prefers tea", source="inferred")
    given = agent.commit("The user likes green tea", source="inferred", confidence=0.35)

    assert inferred["confidence"] == pytest.approx(0.6)
    assert given["confidence"] == pytest.approx(0.35)


def test_it_takes_valid_from_and_reads_naive_times_as_utc(agent: AgentClient) -> None:
    memory = agent.commit("The user moved to Lisbon", kind="trait", key="home_city", valid_from="2026-03-01T09:00:00")

    assert memory["valid_from"].startswith("2026-03-01T09:00:00")
    assert memory["key"] == "home_city"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": ""}, "text"),
        ({"text": "   "}, "text"),
        ({"text": "x" * 8001}, "text"),
        ({}, "text"),
        ({"text": "ok", "kind": "rumour"}, "kind"),
        ({"text": "ok", "source": "gossip"}, "source"),
        ({"text": "ok", "importance": 1.5}, "importance"),
        ({"text": "ok", "importance": -0.1}, "importance"),
        ({"text": "ok", "confidence": 2}, "confidence"),
        ({"text": "ok", "polarity": 3}, "polarity"),
        ({"text": "ok", "tags": [""]}, "tags"),
        ({"text": "ok", "valid_from": "last tuesday"}, "valid_from"),
        ({"text": "ok", "on_conflict": "explode"}, "on_conflict"),
    ],
)
def test_it_rejects_bad_input_naming_the_field(
    agent: AgentClient, field_errors: Any, body: dict[str, Any], field: str
) -> None:
    errors = field_errors(agent.post("/memories", body))

    assert field in errors
    assert Memory.objects.count() == 0


def test_it_rejects_malformed_json_with_422(agent: AgentClient) -> None:
    response = agent.post("/memories", raw='{"text": "unterminated')

    assert response.status_code == 422
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body"]
    assert "malformed JSON" in detail["msg"]


def test_it_names_the_text_limit_in_the_error(agent: AgentClient, field_errors: Any) -> None:
    errors = field_errors(agent.post("/memories", {"text": "y" * 9000}))

    assert "8000" in errors["text"]


@pytest.mark.parametrize(
    "header",
    [None, "Bearer", "Bearer nonsense", "Bearer mh_deadbeef_wrong", "Basic dXNlcjpwYXNz"],
)
def test_it_requires_a_valid_agent_key(agent: AgentClient, header: str | None) -> None:
    from django.test import Client

    client = Client(HTTP_AUTHORIZATION=header) if header else Client()
    response = client.post("/api/v1/memories", data={"text": "x"}, content_type="application/json")

    assert response.status_code == 401


def test_it_rejects_a_revoked_key(agent: AgentClient) -> None:
    from workspaces.services import agent_key_revoke

    agent_key_revoke(key=agent.key_row)

    assert agent.post("/memories", {"text": "x"}).status_code == 401


def test_it_rejects_a_key_with_the_right_prefix_and_wrong_secret(agent: AgentClient) -> None:
    from django.test import Client

    forged = f"mh_{agent.key_row.prefix}_not-the-secret"
    response = Client(HTTP_AUTHORIZATION=f"Bearer {forged}").get("/api/v1/memories")

    assert response.status_code == 401


def _nested(depth: int) -> dict[str, Any]:
    """A metadata object nesting ``depth`` objects, the outer one included."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"inner": value}
    return value


def test_it_accepts_metadata_up_to_the_limits(agent: AgentClient) -> None:
    # 16,384 bytes as compact JSON exactly: {"blob":"…"} is 11 bytes around the string.
    at_the_size = {"blob": "é" * ((16_384 - 11) // 2) + "x" * ((16_384 - 11) % 2)}

    assert agent.post("/memories", {"text": "big enough", "metadata": at_the_size}).status_code == 201
    assert agent.post("/memories", {"text": "deep enough", "metadata": _nested(8)}).status_code == 201


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        ({"blob": "x" * 16_374}, "16,385 bytes as JSON; the limit is 16,384"),
        ({"blob": "é" * 8_187}, "16,385 bytes as JSON; the limit is 16,384"),  # counted in UTF-8 bytes
        ({"blob": ["x" * 1000] * 2400}, "bytes as JSON; the limit is 16,384"),
        (_nested(9), "more than 8 levels deep"),
        ({"a": [[[[[[[[1]]]]]]]]}, "more than 8 levels deep"),
    ],
)
def test_it_bounds_metadata_size_and_depth(
    agent: AgentClient, field_errors: Any, metadata: dict[str, Any], message: str
) -> None:
    errors = field_errors(agent.post("/memories", {"text": "ok", "metadata": metadata}))

    assert message in errors["metadata"]
    assert Memory.objects.count() == 0


def test_the_metadata_limits_are_settings(agent: AgentClient, field_errors: Any, settings: Any) -> None:
    settings.MEMORYHUB_MAX_METADATA_BYTES = 100
    settings.MEMORYHUB_MAX_METADATA_DEPTH = 2

    assert (
        "the limit is 100"
        in field_errors(agent.post("/memories", {"text": "ok", "metadata": {"a": "x" * 100}}))["metadata"]
    )
    assert (
        "more than 2 levels"
        in field_errors(agent.post("/memories", {"text": "ok", "metadata": _nested(3)}))["metadata"]
    )
    assert agent.post("/memories", {"text": "ok", "metadata": _nested(2)}).status_code == 201


@pytest.mark.parametrize(
    "raw", ['{"text": "ok", "metadata": {"a": NaN}}', '{"text": "ok", "metadata": {"a": [Infinity]}}']
)
def test_it_rejects_nan_in_metadata(agent: AgentClient, field_errors: Any, raw: str) -> None:
    # Python's JSON reads NaN and Infinity; PostgreSQL's jsonb refuses them.
    assert "NaN or Infinity" in field_errors(agent.post("/memories", raw=raw))["metadata"]
    assert Memory.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "ok", "importance": True}, "importance"),
        ({"text": "ok", "importance": "0.5"}, "importance"),
        ({"text": "ok", "confidence": False}, "confidence"),
        ({"text": "ok", "polarity": True}, "polarity"),
        ({"text": "ok", "polarity": 1.0}, "polarity"),
        ({"text": "ok", "valid_from": 1_700_000_000}, "valid_from"),
        ({"text": "ok", "tags": "api"}, "tags"),
        ({"text": 42}, "text"),
    ],
)
def test_it_does_not_coerce_loose_types(
    agent: AgentClient, field_errors: Any, body: dict[str, Any], field: str
) -> None:
    assert field in field_errors(agent.post("/memories", body))
    assert Memory.objects.count() == 0


def test_a_link_weight_must_be_a_number(agent: AgentClient, field_errors: Any) -> None:
    src, dst = agent.commit("a fact"), agent.commit("another fact")

    assert "weight" in field_errors(agent.post("/links", {"src": src["id"], "dst": dst["id"], "weight": True}))
