from __future__ import annotations

import contextlib
import itertools
import threading
import uuid
from typing import Any

import pytest
from django.db import connections

from memories import services
from memories.audit import Actor
from memories.models import Event, Link, Memory
from memoryhub.errors import ConflictError
from tests.conftest import AgentClient
from tests.factories import WorkspaceFactory, memory


def _events(memory_id: str, verb: str) -> list[Event]:
    return list(Event.objects.filter(memory_id=memory_id, verb=verb).order_by("created_at", "id"))


def _supersede(agent: AgentClient, old: dict[str, Any], new: dict[str, Any]) -> Any:
    return agent.post(f"/memories/{old['id']}/supersede", {"by": new["id"]})


# --- DELETE /memories/{id}: soft forget --------------------------------------------------


def test_it_forgets_a_memory_softly(agent: AgentClient) -> None:
    fact = agent.commit("The office is in Berlin")

    response = agent.delete(f"/memories/{fact['id']}")

    assert response.status_code == 200
    body = response.json()
    assert body["changed"] is True
    assert body["memory"]["status"] == "forgotten"
    assert body["memory"]["expired_at"] is not None
    row = Memory.objects.get(pk=fact["id"])
    assert row.status == "forgotten"
    assert row.expired_at is not None
    assert row.text == "The office is in Berlin"


def test_it_records_the_forget_as_an_event(agent: AgentClient) -> None:
    fact = agent.commit("The office is in Berlin")

    agent.delete(f"/memories/{fact['id']}")

    (event,) = _events(fact["id"], "memory.forget")
    assert event.actor_type == "agent"
    assert event.agent_key == agent.key_row
    change = event.changes[0]
    assert change["op"] == "update"
    assert change["before"] == {"status": "pending_embed", "expired_at": None}
    assert change["after"]["status"] == "forgotten"
    assert change["after"]["expired_at"] is not None


def test_it_forgets_idempotently(agent: AgentClient) -> None:
    fact = agent.commit("The office is in Berlin")
    first = agent.delete(f"/memories/{fact['id']}").json()

    second = agent.delete(f"/memories/{fact['id']}")

    assert second.status_code == 200
    assert second.json()["changed"] is False
    assert second.json()["memory"]["expired_at"] == first["memory"]["expired_at"]
    assert len(_events(fact["id"], "memory.forget")) == 1


def test_it_hides_forgotten_memories_from_the_default_list(agent: AgentClient) -> None:
    kept = agent.commit("kept")
    gone = agent.commit("gone")

    agent.delete(f"/memories/{gone['id']}")

    assert [m["id"] for m in agent.get("/memories").json()["items"]] == [kept["id"]]
    assert [m["id"] for m in agent.get("/memories", {"status": "forgotten"}).json()["items"]] == [gone["id"]]
    # Still readable by id: the row is kept for audit and undo.
    assert agent.get(f"/memories/{gone['id']}").json()["status"] == "forgotten"


def test_it_cannot_forget_another_workspaces_memory(agent: AgentClient, other_agent: AgentClient) -> None:
    theirs = other_agent.commit("Globex ships on Fridays")

    response = agent.delete(f"/memories/{theirs['id']}")

    assert response.status_code == 404
    assert Memory.objects.get(pk=theirs["id"]).status == "pending_embed"
    assert not Event.objects.filter(verb="memory.forget").exists()


def test_it_returns_404_when_forgetting_an_unknown_id(agent: AgentClient) -> None:
    assert agent.delete(f"/memories/{uuid.uuid4()}").status_code == 404


# --- POST /memories/{id}/supersede ------------------------------------------------------------


def test_it_supersedes_a_memory(agent: AgentClient) -> None:
    old = agent.commit("The user lives in Porto", kind="trait", key="home_city")
    new = agent.commit("The user moved to Lisbon", kind="trait", key="home_city")

    response = _supersede(agent, old, new)

    assert response.status_code == 200
    body = response.json()
    assert body["changed"] is True
    assert body["memory"]["id"] == old["id"]
    assert body["memory"]["superseded_by"] == new["id"]
    assert body["memory"]["reliability"] == "superseded"
    assert body["memory"]["superseded_at"] is not None
    # The old fact stopped holding when the new one started.
    assert body["memory"]["valid_to"] == new["valid_from"]
    # Superseding changes reliability, not liveness: the row stays readable.
    assert body["memory"]["status"] == "pending_embed"
    link = Link.objects.get(rel="supersedes")
    assert (str(link.src_id), str(link.dst_id)) == (new["id"], old["id"])
    assert link.workspace == agent.workspace
    assert link.created_by == "planner"


def test_it_records_the_supersede_as_an_event(agent: AgentClient) -> None:
    old = agent.commit("The user lives in Porto")
    new = agent.commit("The user moved to Lisbon")

    agent.post(f"/memories/{old['id']}/supersede", {"by": new["id"], "reason": "the user said so"})

    (event,) = _events(old["id"], "memory.supersede")
    assert event.reason == "the user said so"
    assert event.actor_type == "agent"
    by_model = {change["model"]: change for change in event.changes}
    update = by_model["memories.memory"]
    assert update["op"] == "update"
    assert update["pk"] == old["id"]
    assert update["before"]["reliability"] == "reliable"
    assert update["before"]["superseded_by_id"] is None
    assert update["before"]["valid_to"] is None
    assert update["after"]["reliability"] == "superseded"
    assert update["after"]["superseded_by_id"] == new["id"]
    created_link = by_model["memories.link"]
    assert created_link["op"] == "create"
    assert created_link["after"]["src_id"] == new["id"]
    assert created_link["after"]["dst_id"] == old["id"]
    assert created_link["after"]["rel"] == "supersedes"


def test_it_supersedes_idempotently(agent: AgentClient) -> None:
    old = agent.commit("The user lives in Porto")
    new = agent.commit("The user moved to Lisbon")
    first = _supersede(agent, old, new).json()

    again = _supersede(agent, old, new)

    assert again.status_code == 200
    assert again.json()["changed"] is False
    assert again.json()["memory"]["superseded_at"] == first["memory"]["superseded_at"]
    assert Link.objects.filter(rel="supersedes").count() == 1
    assert len(_events(old["id"], "memory.supersede")) == 1


def test_it_refuses_self_supersede_naming_by(agent: AgentClient, field_errors: Any) -> None:
    fact = agent.commit("The user lives in Porto")

    errors = field_errors(_supersede(agent, fact, fact))

    assert errors["by"] == "a memory cannot supersede itself"
    assert Memory.objects.get(pk=fact["id"]).reliability == "reliable"


def test_it_refuses_an_unknown_by(agent: AgentClient, field_errors: Any) -> None:
    fact = agent.commit("The user lives in Porto")

    errors = field_errors(agent.post(f"/memories/{fact['id']}/supersede", {"by": str(uuid.uuid4())}))

    assert errors["by"] == "no memory with this id in the workspace"


@pytest.mark.parametrize("body", [{}, {"by": "not-a-uuid"}, {"by": None}])
def test_it_requires_a_valid_by(agent: AgentClient, field_errors: Any, body: dict[str, Any]) -> None:
    fact = agent.commit("The user lives in Porto")

    assert "by" in field_errors(agent.post(f"/memories/{fact['id']}/supersede", body))


def test_it_rejects_malformed_json_when_superseding(agent: AgentClient) -> None:
    fact = agent.commit("The user lives in Porto")

    response = agent.post(f"/memories/{fact['id']}/supersede", raw='{"by": ')

    assert response.status_code == 422
    assert "malformed JSON" in response.json()["detail"][0]["msg"]


def test_it_refuses_another_workspaces_by_without_leaking_it(
    agent: AgentClient, other_agent: AgentClient, field_errors: Any
) -> None:
    mine = agent.commit("The user lives in Porto")
    theirs = other_agent.commit("The user moved to Lisbon")

    foreign = field_errors(_supersede(agent, mine, theirs))
    unknown = field_errors(agent.post(f"/memories/{mine['id']}/supersede", {"by": str(uuid.uuid4())}))

    assert foreign == unknown
    assert Memory.objects.get(pk=mine["id"]).superseded_by_id is None
    assert not Link.objects.exists()


def test_it_cannot_supersede_another_workspaces_memory(agent: AgentClient, other_agent: AgentClient) -> None:
    theirs = other_agent.commit("Globex is in Springfield")
    mine = agent.commit("Globex moved to Shelbyville")

    response = _supersede(agent, theirs, mine)

    assert response.status_code == 404
    assert Memory.objects.get(pk=theirs["id"]).superseded_by_id is None


def test_it_refuses_a_two_step_cycle(agent: AgentClient) -> None:
    a = agent.commit("a")
    b = agent.commit("b")
    assert _supersede(agent, a, b).status_code == 200

    response = _supersede(agent, b, a)

    assert response.status_code == 409
    assert "cycle" in response.json()["detail"]
    assert Memory.objects.get(pk=b["id"]).superseded_by_id is None
    assert Link.objects.filter(rel="supersedes").count() == 1
    assert _events(b["id"], "memory.supersede") == []


def test_it_refuses_a_longer_cycle(agent: AgentClient) -> None:
    a, b, c = agent.commit("a"), agent.commit("b"), agent.commit("c")
    assert _supersede(agent, a, b).status_code == 200
    assert _supersede(agent, b, c).status_code == 200

    response = _supersede(agent, c, a)

    assert response.status_code == 409
    assert "cycle" in response.json()["detail"]
    assert Memory.objects.get(pk=c["id"]).reliability == "reliable"


def test_it_refuses_to_supersede_what_another_memory_already_superseded(agent: AgentClient) -> None:
    old, first, second = agent.commit("old"), agent.commit("first"), agent.commit("second")
    _supersede(agent, old, first)

    response = _supersede(agent, old, second)

    assert response.status_code == 409
    assert "already superseded" in response.json()["detail"]
    assert str(Memory.objects.get(pk=old["id"]).superseded_by_id) == first["id"]


def test_it_refuses_a_forgotten_replacement(agent: AgentClient) -> None:
    old, new = agent.commit("old"), agent.commit("new")
    agent.delete(f"/memories/{new['id']}")

    response = _supersede(agent, old, new)

    assert response.status_code == 409
    assert "forgotten" in response.json()["detail"]
    assert Memory.objects.get(pk=old["id"]).superseded_by_id is None


def test_it_refuses_to_supersede_a_forgotten_memory(agent: AgentClient) -> None:
    old, new = agent.commit("old"), agent.commit("new")
    agent.delete(f"/memories/{old['id']}")

    response = _supersede(agent, old, new)

    assert response.status_code == 409
    assert "restore it" in response.json()["detail"]


# --- GET /memories/{id}/chain ------------------------------------------------------------


def test_it_returns_the_whole_chain_from_any_member(agent: AgentClient) -> None:
    a, b, c = agent.commit("v1"), agent.commit("v2"), agent.commit("v3")
    _supersede(agent, a, b)
    _supersede(agent, b, c)

    for member in (a, b, c):
        body = agent.get(f"/memories/{member['id']}/chain").json()

        assert [m["id"] for m in body["chain"]] == [a["id"], b["id"], c["id"]]
        assert body["head"] == c["id"]


def test_it_returns_a_chain_of_one_for_an_unsuperseded_memory(agent: AgentClient) -> None:
    fact = agent.commit("alone")

    body = agent.get(f"/memories/{fact['id']}/chain").json()

    assert body == {"head": fact["id"], "chain": [agent.get(f"/memories/{fact['id']}").json()]}


def test_it_hides_another_workspaces_chain(agent: AgentClient, other_agent: AgentClient) -> None:
    theirs = other_agent.commit("theirs")

    assert agent.get(f"/memories/{theirs['id']}/chain").status_code == 404


# --- POST /memories/{id}/restore -----------------------------------------------------------


def test_it_restores_a_superseded_memory(agent: AgentClient) -> None:
    old, new = agent.commit("The user lives in Porto"), agent.commit("The user moved to Lisbon")
    _supersede(agent, old, new)

    response = agent.post(f"/memories/{old['id']}/restore", {"reason": "the move fell through"})

    assert response.status_code == 200
    body = response.json()
    assert body["changed"] is True
    restored = body["memory"]
    assert restored["reliability"] == "reliable"
    assert restored["superseded_by"] is None
    assert restored["superseded_at"] is None
    assert restored["valid_to"] is None
    assert not Link.objects.filter(rel="supersedes").exists()
    (event,) = _events(old["id"], "memory.restore")
    assert event.reason == "the move fell through"
    by_op = {change["op"]: change for change in event.changes}
    assert by_op["delete"]["model"] == "memories.link"
    assert by_op["delete"]["before"]["src_id"] == new["id"]
    assert by_op["update"]["before"]["superseded_by_id"] == new["id"]
    assert by_op["update"]["after"] == {
        "reliability": "reliable",
        "superseded_by_id": None,
        "superseded_at": None,
        "valid_to": None,
    }


def test_it_can_supersede_again_after_a_restore(agent: AgentClient) -> None:
    old, first, second = agent.commit("old"), agent.commit("first"), agent.commit("second")
    _supersede(agent, old, first)
    agent.post(f"/memories/{old['id']}/restore")

    response = _supersede(agent, old, second)

    assert response.status_code == 200
    assert response.json()["memory"]["superseded_by"] == second["id"]
    assert [(str(link.src_id), str(link.dst_id)) for link in Link.objects.all()] == [(second["id"], old["id"])]


def test_it_splits_a_chain_when_restoring_its_middle(agent: AgentClient) -> None:
    a, b, c = agent.commit("v1"), agent.commit("v2"), agent.commit("v3")
    _supersede(agent, a, b)
    _supersede(agent, b, c)

    agent.post(f"/memories/{b['id']}/restore")

    assert [m["id"] for m in agent.get(f"/memories/{a['id']}/chain").json()["chain"]] == [a["id"], b["id"]]
    assert [m["id"] for m in agent.get(f"/memories/{c['id']}/chain").json()["chain"]] == [c["id"]]
    assert [(str(link.src_id), str(link.dst_id)) for link in Link.objects.all()] == [(b["id"], a["id"])]


def test_it_keeps_other_links_when_restoring(agent: AgentClient) -> None:
    old, new = agent.commit("old"), agent.commit("new")
    agent.post("/links", {"src": new["id"], "dst": old["id"], "rel": "refines"})
    _supersede(agent, old, new)

    agent.post(f"/memories/{old['id']}/restore")

    assert list(Link.objects.values_list("rel", flat=True)) == ["refines"]


def test_it_restores_a_forgotten_memory_to_pending_embed(agent: AgentClient) -> None:
    fact = agent.commit("The office is in Berlin")
    agent.delete(f"/memories/{fact['id']}")

    response = agent.post(f"/memories/{fact['id']}/restore")

    assert response.json()["changed"] is True
    assert response.json()["memory"]["status"] == "pending_embed"
    assert response.json()["memory"]["expired_at"] is None
    assert [m["id"] for m in agent.get("/memories").json()["items"]] == [fact["id"]]
    (event,) = _events(fact["id"], "memory.restore")
    assert event.changes[0]["before"]["status"] == "forgotten"
    assert event.changes[0]["after"] == {"status": "pending_embed", "expired_at": None}


def test_it_restores_an_embedded_forgotten_memory_to_active(agent: AgentClient) -> None:
    fact = memory(workspace=agent.workspace, status="forgotten", embedding=[0.05] * 384)

    response = agent.post(f"/memories/{fact.pk}/restore")

    assert response.json()["memory"]["status"] == "active"


def test_it_reports_nothing_to_restore(agent: AgentClient) -> None:
    fact = agent.commit("Nothing happened to me")

    response = agent.post(f"/memories/{fact['id']}/restore")

    assert response.status_code == 200
    assert response.json()["changed"] is False
    assert _events(fact["id"], "memory.restore") == []


def test_it_restores_only_once(agent: AgentClient) -> None:
    fact = agent.commit("The office is in Berlin")
    agent.delete(f"/memories/{fact['id']}")
    agent.post(f"/memories/{fact['id']}/restore")

    assert agent.post(f"/memories/{fact['id']}/restore").json()["changed"] is False
    assert len(_events(fact["id"], "memory.restore")) == 1


def test_it_cannot_restore_another_workspaces_memory(agent: AgentClient, other_agent: AgentClient) -> None:
    theirs = other_agent.commit("theirs")
    other_agent.delete(f"/memories/{theirs['id']}")

    assert agent.post(f"/memories/{theirs['id']}/restore").status_code == 404
    assert Memory.objects.get(pk=theirs["id"]).status == "forgotten"


# --- POST /memories/{id}/reinforce ---------------------------------------------------------


def test_it_reinforces_a_memory(agent: AgentClient) -> None:
    fact = agent.commit("Deploys happen on Tuesdays")

    response = agent.post(f"/memories/{fact['id']}/reinforce", {"reason": "seen in the runbook"})

    assert response.status_code == 200
    body = response.json()
    assert body["reinforcement_count"] == 1
    assert body["confidence"] == pytest.approx(0.9 + 0.05 * 0.1)
    (event,) = _events(fact["id"], "memory.reinforce")
    assert event.reason == "seen in the runbook"
    change = event.changes[0]
    assert change["before"]["reinforcement_count"] == 0
    assert change["after"]["reinforcement_count"] == 1
    assert change["before"]["confidence"] == pytest.approx(0.9)
    assert change["after"]["confidence"] == pytest.approx(0.905)


def test_it_grows_confidence_asymptotically(agent: AgentClient) -> None:
    fact = agent.commit("The user probably likes tea", source="inferred")

    seen = [agent.post(f"/memories/{fact['id']}/reinforce").json()["confidence"] for _ in range(30)]

    assert all(later > earlier for earlier, later in itertools.pairwise(seen))
    assert all(value < 1 for value in seen)
    # Each step closes 5% of the remaining gap to 1.
    assert seen[-1] == pytest.approx(1 - 0.4 * 0.95**30, abs=1e-4)
    assert Memory.objects.get(pk=fact["id"]).reinforcement_count == 30


def test_it_refuses_to_reinforce_a_forgotten_memory(agent: AgentClient) -> None:
    fact = agent.commit("The office is in Berlin")
    agent.delete(f"/memories/{fact['id']}")

    response = agent.post(f"/memories/{fact['id']}/reinforce")

    assert response.status_code == 409
    assert "forgotten" in response.json()["detail"]
    assert Memory.objects.get(pk=fact["id"]).reinforcement_count == 0


def test_it_cannot_reinforce_another_workspaces_memory(agent: AgentClient, other_agent: AgentClient) -> None:
    theirs = other_agent.commit("theirs")

    assert agent.post(f"/memories/{theirs['id']}/reinforce").status_code == 404
    assert Memory.objects.get(pk=theirs["id"]).reinforcement_count == 0


@pytest.mark.parametrize("action", ["restore", "reinforce"])
def test_it_takes_restore_and_reinforce_without_a_body(agent: AgentClient, action: str) -> None:
    fact = agent.commit("The office is in Berlin")
    agent.delete(f"/memories/{fact['id']}")
    if action == "reinforce":
        agent.post(f"/memories/{fact['id']}/restore")

    # As `curl -X POST` sends it: no body, no content type.
    response = agent.client.generic("POST", f"/api/v1/memories/{fact['id']}/{action}", b"", content_type="")

    assert response.status_code == 200, response.content
    assert Event.objects.filter(memory_id=fact["id"], verb=f"memory.{action}").count() == 1


@pytest.mark.parametrize("action", ["restore", "reinforce"])
def test_it_rejects_malformed_json_for_restore_and_reinforce(agent: AgentClient, action: str) -> None:
    fact = agent.commit("The office is in Berlin")

    response = agent.post(f"/memories/{fact['id']}/{action}", raw="{nope")

    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "json_invalid"


@pytest.mark.parametrize("action", ["supersede", "restore", "reinforce", "chain", "delete"])
def test_it_requires_a_key_for_lifecycle_calls(agent: AgentClient, action: str) -> None:
    from django.test import Client

    fact = agent.commit("guarded")
    client = Client()
    path = f"/api/v1/memories/{fact['id']}"
    if action == "delete":
        response = client.delete(path)
    elif action == "chain":
        response = client.get(f"{path}/chain")
    else:
        response = client.post(f"{path}/{action}", data={"by": fact["id"]}, content_type="application/json")

    assert response.status_code == 401


# --- concurrency ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_supersedes_cannot_close_a_cycle(monkeypatch: Any) -> None:
    """a→b and c→d exist; b→c and d→a at once lock disjoint rows but together close a cycle."""
    workspace = WorkspaceFactory(slug="acme")
    actor = Actor.system("test")
    a, b, c, d = (memory(workspace=workspace, text=text) for text in "abcd")
    services.memory_supersede(old=a, new=b, actor=actor)
    services.memory_supersede(old=c, new=d, actor=actor)

    # Hold each request between its cycle check and its write until the other has checked too.
    both_checked = threading.Barrier(2, timeout=1)
    check = services._chain_reaches

    def check_then_wait(*, start: Memory, target: Memory) -> bool:
        result = check(start=start, target=target)
        with contextlib.suppress(threading.BrokenBarrierError):
            both_checked.wait()
        return result

    monkeypatch.setattr(services, "_chain_reaches", check_then_wait)
    outcomes: list[str] = []

    def supersede(old: Memory, new: Memory) -> None:
        try:
            services.memory_supersede(old=old, new=new, actor=actor)
            outcomes.append("superseded")
        except ConflictError:
            outcomes.append("conflict")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=supersede, args=pair) for pair in ((b, c), (d, a))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    assert sorted(outcomes) == ["conflict", "superseded"]
    successors = dict(Memory.objects.values_list("pk", "superseded_by_id"))
    current: Any = a.pk
    for _ in range(len(successors)):
        current = successors[current]
        if current is None:
            break
    assert current is None, "the supersede chain loops"
