"""Agent key scopes (read, write, answer, admin) and the pinned agent name, through the API."""

from __future__ import annotations

import pytest

from conflicts.models import Answer
from memories.models import Event, Memory
from tests.conflicts.cards import pair_card
from tests.conftest import AgentClient
from tests.factories import agent_key_for
from workspaces.models import Workspace
from workspaces.services import agent_key_create

pytestmark = pytest.mark.django_db


def _client(workspace: Workspace, name: str, *, scopes: list[str], agent: str = "") -> AgentClient:
    row, key = agent_key_create(workspace=workspace, name=name, scopes=scopes, agent=agent)
    return AgentClient(key, row)


def test_a_new_key_reads_and_writes_but_neither_answers_nor_undoes(workspace: Workspace) -> None:
    row, _ = agent_key_for(workspace, "planner")
    assert row.scopes == ["read", "write"]


def test_a_key_without_answer_gets_403_answering_a_card(workspace: Workspace, agent: AgentClient) -> None:
    card, _, _ = pair_card(workspace)

    response = agent.post(f"/conflicts/{card.pk}/answer", {"answer": "yes"})

    assert response.status_code == 403
    assert "'answer' scope" in response.json()["detail"]
    assert not Answer.objects.exists()
    assert agent.grant("answer").post(f"/conflicts/{card.pk}/answer", {"answer": "yes"}).status_code == 200


def test_a_key_without_admin_gets_403_undoing_an_event_or_running_the_detective(agent: AgentClient) -> None:
    fact = agent.commit("The wiki lives at wiki.acme.test")
    old = agent.commit("Office in Berlin")
    agent.post(f"/memories/{old['id']}/supersede", {"by": fact["id"]})
    event = Event.objects.get(verb="memory.supersede")

    undo = agent.post(f"/events/{event.pk}/undo")
    detective = agent.post("/detective/run")

    assert (undo.status_code, detective.status_code) == (403, 403)
    assert "'admin' scope" in undo.json()["detail"]
    assert not Event.objects.filter(undoes=event).exists()
    assert agent.grant("admin").post(f"/events/{event.pk}/undo").status_code == 200


def test_an_answer_key_cannot_write_or_undo(workspace: Workspace) -> None:
    reviewer = _client(workspace, "reviewer", scopes=["read", "answer"])

    assert reviewer.post("/memories", {"text": "Office in Paris"}).status_code == 403
    assert reviewer.get("/memories").status_code == 200
    assert reviewer.post("/recall", {"query": "office"}).status_code == 200  # a POST that only reads
    assert not Memory.objects.exists()


def test_a_read_only_key_gets_403_on_every_write(workspace: Workspace, agent: AgentClient) -> None:
    reader = _client(workspace, "reader", scopes=["read"])
    fact = agent.commit("Office in Berlin")
    other = agent.commit("Office in Munich")

    refused = [
        reader.post("/memories", {"text": "Office in Paris"}),
        reader.post(f"/memories/{fact['id']}/supersede", {"by": other["id"]}),
        reader.post(f"/memories/{fact['id']}/reinforce"),
        reader.post("/links", {"src": fact["id"], "dst": other["id"], "rel": "related"}),
        reader.delete(f"/memories/{fact['id']}"),
    ]

    assert [r.status_code for r in refused] == [403] * 5
    assert all("'write' scope" in r.json()["detail"] for r in refused)
    assert Memory.objects.get(pk=fact["id"]).status != "forgotten"
    assert Memory.objects.count() == 2
    assert reader.get(f"/memories/{fact['id']}").json()["reinforcement_count"] == 0


def test_a_key_without_read_cannot_list(workspace: Workspace) -> None:
    writer = _client(workspace, "writer", scopes=["write"])

    assert writer.get("/memories").status_code == 403
    assert writer.post("/memories", {"text": "Office in Paris"}).status_code == 201


def test_a_pinned_key_signs_as_its_agent_only(workspace: Workspace) -> None:
    pinned = _client(workspace, "triage-key", scopes=["read", "write"], agent="triage")

    unnamed = pinned.commit("Office in Berlin")
    same = pinned.commit("Office has a roof garden", agent="triage")
    refused = pinned.post("/memories", {"text": "Office in Munich", "agent": "planner"})

    assert (unnamed["agent"], same["agent"]) == ("triage", "triage")
    assert refused.status_code == 403
    assert "pinned to agent 'triage'" in refused.json()["detail"]
    assert Memory.objects.count() == 2


def test_an_unpinned_key_signs_as_any_agent(agent: AgentClient) -> None:
    assert agent.commit("Office in Berlin", agent="researcher")["agent"] == "researcher"
    assert agent.commit("Office has a roof garden")["agent"] == "planner"  # the key's name when absent
