from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.utils import timezone

from memories.models import Memory
from tests.conftest import AgentClient
from tests.factories import memory


def _texts(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [item["text"] for item in response.json()["items"]]


def _ids(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()["items"]}


# --- GET /memories/{id} -----------------------------------------------------------


def test_it_gets_one_memory(agent: AgentClient) -> None:
    created = agent.commit("Deploys happen on Tuesdays", kind="procedure", tags=["ops"], scope="team")

    response = agent.get(f"/memories/{created['id']}")

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == created["id"]
    assert body["text"] == "Deploys happen on Tuesdays"
    assert body["kind"] == "procedure"
    assert body["tags"] == ["ops"]
    assert body["scope"] == "team"
    assert body["status"] == "pending_embed"
    assert body["reliability"] == "reliable"
    assert body["superseded_by"] is None
    assert "embedding" not in body


def test_it_returns_404_for_an_unknown_id(agent: AgentClient) -> None:
    response = agent.get(f"/memories/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json()["detail"] == "no memory with this id in the workspace"


def test_it_rejects_an_id_that_is_not_a_uuid(agent: AgentClient, field_errors: Any) -> None:
    errors = field_errors(agent.get("/memories/not-a-uuid"))

    assert "UUID" in errors["memory_id"]


def test_it_hides_another_workspaces_memory_as_missing(agent: AgentClient, other_agent: AgentClient) -> None:
    theirs = other_agent.commit("Globex's secret launch date is May 1")

    mine = agent.get(f"/memories/{theirs['id']}")
    unknown = agent.get(f"/memories/{uuid.uuid4()}")

    assert mine.status_code == 404
    # The same answer as for an id that exists nowhere: existence never leaks.
    assert mine.json() == unknown.json()


def test_it_requires_a_key_to_read(agent: AgentClient) -> None:
    from django.test import Client

    created = agent.commit("Only for key holders")

    assert Client().get(f"/api/v1/memories/{created['id']}").status_code == 401
    assert Client().get("/api/v1/memories").status_code == 401


# --- GET /memories: filters ---------------------------------------------------------


def test_it_lists_live_memories_newest_first(agent: AgentClient) -> None:
    agent.commit("first")
    agent.commit("second")
    agent.commit("third")

    response = agent.get("/memories")

    assert _texts(response) == ["third", "second", "first"]
    assert response.json()["count"] == 3


@pytest.mark.parametrize(
    ("name", "value", "fields_kept", "fields_dropped"),
    [
        ("kind", "trait", {"kind": "trait"}, {"kind": "fact"}),
        ("scope", "team-a", {"scope": "team-a"}, {"scope": "team-b"}),
        ("key", "home_city", {"key": "home_city"}, {"key": "employer"}),
        ("agent", "researcher", {"agent": "researcher"}, {"agent": "planner"}),
        ("source", "inferred", {"source": "inferred"}, {"source": "explicit"}),
    ],
)
def test_it_filters_by_an_exact_field(
    agent: AgentClient, name: str, value: str, fields_kept: dict[str, str], fields_dropped: dict[str, str]
) -> None:
    kept = agent.commit("kept", **fields_kept)
    agent.commit("dropped", **fields_dropped)

    response = agent.get("/memories", {name: value})

    assert _ids(response) == {kept["id"]}
    assert response.json()["count"] == 1


def test_it_filters_by_reliability(agent: AgentClient) -> None:
    shaky = memory(workspace=agent.workspace, text="shaky", reliability="uncertain")
    memory(workspace=agent.workspace, text="solid")

    assert _ids(agent.get("/memories", {"reliability": "uncertain"})) == {str(shaky.pk)}


def test_it_shows_only_live_statuses_by_default(agent: AgentClient) -> None:
    pending = memory(workspace=agent.workspace, text="pending", status="pending_embed")
    active = memory(workspace=agent.workspace, text="active", status="active")
    memory(workspace=agent.workspace, text="forgotten", status="forgotten")
    memory(workspace=agent.workspace, text="decayed", status="decayed")

    assert _ids(agent.get("/memories")) == {str(pending.pk), str(active.pk)}


def test_it_filters_by_one_or_more_statuses(agent: AgentClient) -> None:
    memory(workspace=agent.workspace, text="pending", status="pending_embed")
    active = memory(workspace=agent.workspace, text="active", status="active")
    forgotten = memory(workspace=agent.workspace, text="forgotten", status="forgotten")

    assert _ids(agent.get("/memories", {"status": "forgotten"})) == {str(forgotten.pk)}
    assert _ids(agent.get("/memories", {"status": ["active", "forgotten"]})) == {str(active.pk), str(forgotten.pk)}


def test_it_filters_by_any_tag(agent: AgentClient) -> None:
    api = agent.commit("api", tags=["api"])
    db = agent.commit("db", tags=["db", "ops"])
    agent.commit("ui", tags=["ui"])

    assert _ids(agent.get("/memories", {"tag": "api"})) == {api["id"]}
    assert _ids(agent.get("/memories", {"tag": ["api", "ops"]})) == {api["id"], db["id"]}


def test_it_filters_by_all_tags(agent: AgentClient) -> None:
    both = agent.commit("both", tags=["db", "ops", "prod"])
    agent.commit("one", tags=["db"])

    assert _ids(agent.get("/memories", {"tags_all": ["db", "ops"]})) == {both["id"]}
    assert _ids(agent.get("/memories", {"tags_all": ["db", "missing"]})) == set()


def test_it_matches_tags_the_way_they_were_stored(agent: AgentClient) -> None:
    tagged = agent.commit("api", tags=[" API ", "Prod"])

    assert _ids(agent.get("/memories", {"tag": "API"})) == {tagged["id"]}
    assert _ids(agent.get("/memories", {"tags_all": [" Api", "PROD"]})) == {tagged["id"]}


def test_it_finds_a_pending_fact_by_full_text(agent: AgentClient) -> None:
    hit = agent.commit("The staging database runs PostgreSQL 16")
    agent.commit("Lunch is at noon")

    response = agent.get("/memories", {"q": "postgresql databases"})

    assert _ids(response) == {hit["id"]}
    assert response.json()["items"][0]["status"] == "pending_embed"


def test_it_accepts_web_search_syntax_in_full_text(agent: AgentClient) -> None:
    agent.commit("The cache is Redis")
    memcached = agent.commit("The cache used to be Memcached")

    assert _ids(agent.get("/memories", {"q": "cache -redis"})) == {memcached["id"]}


def test_it_can_leave_superseded_memories_out(agent: AgentClient) -> None:
    old = memory(workspace=agent.workspace, text="old", reliability="superseded")
    new = memory(workspace=agent.workspace, text="new")

    assert _ids(agent.get("/memories")) == {str(old.pk), str(new.pk)}
    assert _ids(agent.get("/memories", {"include_superseded": "false"})) == {str(new.pk)}


def test_it_filters_by_recorded_time(agent: AgentClient) -> None:
    now = timezone.now()
    early = memory(workspace=agent.workspace, text="early", recorded_at=now - dt.timedelta(days=3))
    middle = memory(workspace=agent.workspace, text="middle", recorded_at=now - dt.timedelta(days=2))
    late = memory(workspace=agent.workspace, text="late", recorded_at=now - dt.timedelta(days=1))
    cut = (now - dt.timedelta(days=2)).isoformat()

    assert _ids(agent.get("/memories", {"recorded_after": cut})) == {str(middle.pk), str(late.pk)}
    assert _ids(agent.get("/memories", {"recorded_before": cut})) == {str(early.pk)}
    both = agent.get(
        "/memories",
        {
            "recorded_after": (now - dt.timedelta(days=2, hours=1)).isoformat(),
            "recorded_before": late.recorded_at.isoformat(),
        },
    )
    assert _ids(both) == {str(middle.pk)}


def test_it_reads_naive_recorded_times_as_utc(agent: AgentClient) -> None:
    old = memory(workspace=agent.workspace, text="old", recorded_at=dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC))
    later = memory(workspace=agent.workspace, text="later", recorded_at=dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC))

    assert _ids(agent.get("/memories", {"recorded_after": "2026-01-01T11:00:00"})) == {str(later.pk)}
    assert _ids(agent.get("/memories", {"recorded_before": "2026-01-01T11:00:00"})) == {str(old.pk)}


def test_it_combines_filters(agent: AgentClient) -> None:
    hit = agent.commit("Alice lives in Lisbon", kind="trait", key="home_city", tags=["alice"])
    agent.commit("Bob lives in Porto", kind="trait", key="home_city", tags=["bob"])
    agent.commit("Alice likes Lisbon's trams", kind="fact", tags=["alice"])

    response = agent.get("/memories", {"kind": "trait", "tag": "alice", "q": "lisbon"})

    assert _ids(response) == {hit["id"]}


# --- GET /memories: pagination ----------------------------------------------------------


def test_it_paginates(agent: AgentClient) -> None:
    for n in range(5):
        agent.commit(f"fact {n}")

    first = agent.get("/memories", {"limit": 2}).json()
    second = agent.get("/memories", {"limit": 2, "offset": first["next_offset"]}).json()
    last = agent.get("/memories", {"limit": 2, "offset": second["next_offset"]}).json()

    assert (first["count"], first["limit"], first["offset"], first["next_offset"]) == (5, 2, 0, 2)
    assert [m["text"] for m in first["items"]] == ["fact 4", "fact 3"]
    assert [m["text"] for m in second["items"]] == ["fact 2", "fact 1"]
    assert second["next_offset"] == 4
    assert [m["text"] for m in last["items"]] == ["fact 0"]
    assert last["next_offset"] is None


def test_it_has_no_next_page_when_the_page_ends_exactly(agent: AgentClient) -> None:
    for n in range(4):
        agent.commit(f"fact {n}")

    page = agent.get("/memories", {"limit": 2, "offset": 2}).json()

    assert len(page["items"]) == 2
    assert page["next_offset"] is None


def test_it_returns_an_empty_page_past_the_end(agent: AgentClient) -> None:
    agent.commit("only one")

    page = agent.get("/memories", {"offset": 10}).json()

    assert page["items"] == []
    assert page["count"] == 1
    assert page["next_offset"] is None


def test_it_keeps_a_stable_order_for_equal_timestamps(agent: AgentClient) -> None:
    at = timezone.now()
    made = {str(memory(workspace=agent.workspace, recorded_at=at).pk) for _ in range(4)}

    pages = [agent.get("/memories", {"limit": 1, "offset": n}).json()["items"][0]["id"] for n in range(4)]

    assert set(pages) == made


# --- GET /memories: bad filter values -------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"kind": "rumour"}, "kind"),
        ({"source": "gossip"}, "source"),
        ({"reliability": "shaky"}, "reliability"),
        ({"status": "asleep"}, "status"),
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"recorded_after": "last tuesday"}, "recorded_after"),
        ({"recorded_before": "soon"}, "recorded_before"),
        ({"include_superseded": "perhaps"}, "include_superseded"),
        ({"q": "x" * 501}, "q"),
    ],
)
def test_it_rejects_bad_filter_values_naming_the_field(agent: AgentClient, params: dict[str, Any], field: str) -> None:
    response = agent.get("/memories", params)

    assert response.status_code == 422, response.content
    named = {str(part) for err in response.json()["detail"] for part in err["loc"]}
    assert field in named


# --- tenant isolation ------------------------------------------------------------------


def test_it_never_lists_another_workspaces_memories(agent: AgentClient, other_agent: AgentClient) -> None:
    mine = agent.commit("Our API uses REST", tags=["api"])
    other_agent.commit("Their API uses REST too", tags=["api"])
    memory(workspace=other_agent.workspace, text="their forgotten fact", status="forgotten")

    assert _ids(agent.get("/memories")) == {mine["id"]}
    assert _ids(agent.get("/memories", {"q": "api rest"})) == {mine["id"]}
    assert _ids(agent.get("/memories", {"tag": "api"})) == {mine["id"]}
    assert _ids(agent.get("/memories", {"status": ["forgotten", "active", "pending_embed"]})) == {mine["id"]}
    assert agent.get("/memories").json()["count"] == 1
    assert Memory.objects.count() == 3


def test_status_shows_how_many_facts_wait_and_for_how_long(agent: AgentClient) -> None:
    agent.commit("The API uses REST")
    agent.commit("Deploys happen on Tuesdays")

    response = agent.client.get("/api/v1/status")

    assert response.status_code == 200
    body = response.json()
    assert body["embedding"]["waiting"] == 2
    assert body["embedding"]["oldest_seconds"] >= 0
    assert body["checking"] == {"waiting": 0, "oldest_seconds": None}
    assert body["subjects_to_reread"] == 0  # not embedded yet: read when they are
    assert isinstance(body["broker"]["waiting"], dict)  # the tests run on the embedded SQL broker
    assert body["llm"] == {"configured": False, "paused_until": None, "failures": 0}
