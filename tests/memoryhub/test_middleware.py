from __future__ import annotations

import re

from django.test import Client

from tests.conftest import AgentClient


def _app_duration(header: str) -> float:
    match = re.search(r"(?:^|,\s*)app;dur=([0-9.]+)", header)
    assert match, header
    return float(match.group(1))


def test_it_times_an_api_call(agent: AgentClient) -> None:
    response = agent.post("/memories", {"text": "The staging database is in eu-west-1"})

    assert response.status_code == 201
    assert _app_duration(response.headers["Server-Timing"]) > 0


def test_it_times_the_login_page(db: None) -> None:
    response = Client().get("/login/")

    assert response.status_code == 200
    assert _app_duration(response.headers["Server-Timing"]) >= 0
