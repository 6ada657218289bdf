"""``manage.py repair_timestamps``: rows stored before timestamps were checked become readable again."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import DataError, connection

from memories.models import Event, Memory
from tests.conftest import AgentClient


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("repair_timestamps", *args, stdout=out)
    return out.getvalue()


def _store_unreadable(memory_id: str) -> None:
    """What the API stored before the fix: year 10000 in UTC, which psycopg cannot read back."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memories_memory SET valid_from = '9999-12-31T23:59:59-14:00', "
            "superseded_at = '0001-01-01T00:00:00+14:00' WHERE id = %s",
            [memory_id],
        )


def test_it_clamps_unreadable_timestamps_and_records_an_event(agent: AgentClient) -> None:
    broken = agent.commit("The build server is in Frankfurt")
    healthy = agent.commit("The office is in Lisbon")
    _store_unreadable(broken["id"])
    with pytest.raises(DataError, match="year"):
        Memory.objects.get(pk=broken["id"])  # the failure every read of the workspace ran into

    output = _run()

    assert f"repaired memory {broken['id']}" in output
    assert "valid_from 10000-01-01 13:59:59+00 → 2200-12-31T23:59:59.999999+00:00" in output
    assert "superseded_at 0001-12-31 10:00:00+00 BC → 1900-01-01T00:00:00+00:00" in output
    assert "repaired 1 memories" in output
    assert agent.get("/memories").status_code == 200
    body = agent.get(f"/memories/{broken['id']}").json()
    assert body["valid_from"].startswith("2200-12-31T23:59:59")
    assert body["superseded_at"].startswith("1900-01-01T00:00:00")
    assert body["valid_to"] is None  # a NULL stays NULL
    assert agent.get(f"/memories/{healthy['id']}").json()["valid_from"] == healthy["valid_from"]
    event = Event.objects.get(verb="memory.repair")
    assert str(event.memory_id) == broken["id"]
    assert event.actor == "repair_timestamps"
    assert event.changes[0]["before"] == {
        "valid_from": "10000-01-01 13:59:59+00",
        "superseded_at": "0001-12-31 10:00:00+00 BC",
    }
    assert event.changes[0]["after"]["valid_from"] == "2200-12-31T23:59:59.999999+00:00"


def test_a_second_run_and_a_dry_run_change_nothing(agent: AgentClient) -> None:
    broken = agent.commit("The build server is in Frankfurt")
    _store_unreadable(broken["id"])

    listed = _run("--dry-run")
    assert f"would repair memory {broken['id']}" in listed
    assert "1 memories to repair" in listed
    assert not Event.objects.filter(verb="memory.repair").exists()

    _run()
    assert "nothing to do" in _run()
    assert Event.objects.filter(verb="memory.repair").count() == 1


def test_the_repair_cannot_be_undone(agent: AgentClient) -> None:
    broken = agent.commit("The build server is in Frankfurt")
    _store_unreadable(broken["id"])
    _run()
    event = Event.objects.get(verb="memory.repair")

    response = agent.grant("admin").post(f"/events/{event.pk}/undo", {})

    assert response.status_code == 409
    assert "could not be read back" in response.json()["detail"]
