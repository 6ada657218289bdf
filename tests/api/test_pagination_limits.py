"""Every list's offset is bounded: past the database's bigint it was a 500, now it is a 422."""

from __future__ import annotations

from typing import Any

import pytest

from api.schemas import MAX_OFFSET
from tests.conftest import AgentClient

LISTS = ["/memories", "/conflicts", "/events", "/uncertainties"]


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("offset", [2**63, 2**64 + 1, MAX_OFFSET + 1, -1])
def test_an_offset_out_of_bounds_is_a_422(agent: AgentClient, field_errors: Any, path: str, offset: int) -> None:
    assert "offset" in field_errors(agent.get(path, {"offset": str(offset)}))


@pytest.mark.parametrize("path", LISTS)
def test_the_largest_offset_is_an_empty_page(agent: AgentClient, path: str) -> None:
    agent.commit("The build server is in Frankfurt")

    response = agent.get(path, {"offset": str(MAX_OFFSET)})

    assert response.status_code == 200
    body = response.json()
    assert (body["items"] if path == "/memories" else body) == []


@pytest.mark.parametrize("path", LISTS)
def test_a_limit_out_of_bounds_is_a_422(agent: AgentClient, field_errors: Any, path: str) -> None:
    assert "limit" in field_errors(agent.get(path, {"limit": str(2**63)}))
