from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest

from memories.models import Event, Link
from tests.conftest import AgentClient


def _link(agent: AgentClient, src: dict[str, Any], dst: dict[str, Any], rel: str = "related") -> dict[str, Any]:
    response = agent.post("/links", {"src": src["id"], "dst": dst["id"], "rel": rel})
    assert response.status_code in (200, 201), response.content
    body: dict[str, Any] = response.json()
    return body


def _neighbors(agent: AgentClient, fact: dict[str, Any], **params: Any) -> dict[str, Any]:
    response = agent.get(f"/memories/{fact['id']}/neighbors", params)
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def _ids(hood: dict[str, Any]) -> list[str]:
    return [n["memory"]["id"] for n in hood["neighbors"]]


# --- POST /links ----------------------------------------------------------------------


def test_it_creates_a_link(agent: AgentClient) -> None:
    a, b = agent.commit("The API uses REST"), agent.commit("REST endpoints live under /api/v1")

    response = agent.post("/links", {"src": b["id"], "dst": a["id"], "rel": "refines", "weight": 0.7})

    assert response.status_code == 201
    body = response.json()
    assert (body["src"], body["dst"], body["rel"]) == (b["id"], a["id"], "refines")
    assert body["weight"] == pytest.approx(0.7)
    assert body["created_by"] == "planner"
    link = Link.objects.get(pk=body["id"])
    assert link.workspace == agent.workspace
    event = Event.objects.get(verb="link.create")
    assert str(event.memory_id) == b["id"]
    assert event.changes[0]["op"] == "create"
    assert event.changes[0]["after"]["rel"] == "refines"


def test_it_defaults_to_a_related_link(agent: AgentClient) -> None:
    a, b = agent.commit("a"), agent.commit("b")

    body = agent.post("/links", {"src": a["id"], "dst": b["id"]}).json()

    assert body["rel"] == "related"
    assert body["weight"] == pytest.approx(1.0)


def test_it_returns_the_same_link_for_a_duplicate(agent: AgentClient) -> None:
    a, b = agent.commit("a"), agent.commit("b")
    first = agent.post("/links", {"src": a["id"], "dst": b["id"], "rel": "refines"})

    again = agent.post("/links", {"src": a["id"], "dst": b["id"], "rel": "refines", "weight": 0.2})

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["weight"] == pytest.approx(1.0)
    assert Link.objects.count() == 1
    assert Event.objects.filter(verb="link.create").count() == 1


def test_it_treats_another_rel_or_the_reverse_direction_as_a_new_edge(agent: AgentClient) -> None:
    a, b = agent.commit("a"), agent.commit("b")

    ids = {
        agent.post("/links", {"src": a["id"], "dst": b["id"], "rel": "refines"}).json()["id"],
        agent.post("/links", {"src": a["id"], "dst": b["id"], "rel": "related"}).json()["id"],
        agent.post("/links", {"src": b["id"], "dst": a["id"], "rel": "refines"}).json()["id"],
    }

    assert len(ids) == 3


def test_it_refuses_a_self_link(agent: AgentClient, field_errors: Any) -> None:
    a = agent.commit("a")

    errors = field_errors(agent.post("/links", {"src": a["id"], "dst": a["id"]}))

    assert errors["dst"] == "a memory cannot link to itself"
    assert not Link.objects.exists()


@pytest.mark.parametrize("rel", ["blocks", "SUPERSEDES", "x-", "x-Blocks", "x-" + "a" * 50, ""])
def test_it_refuses_an_unknown_rel_naming_it(agent: AgentClient, field_errors: Any, rel: str) -> None:
    a, b = agent.commit("a"), agent.commit("b")

    errors = field_errors(agent.post("/links", {"src": a["id"], "dst": b["id"], "rel": rel}))

    assert "unknown relation" in errors["rel"]
    assert not Link.objects.exists()


@pytest.mark.parametrize("rel", ["x-blocks", "x-depends_on", "temporal_evolution", "contradicts"])
def test_it_accepts_known_and_custom_rels(agent: AgentClient, rel: str) -> None:
    a, b = agent.commit("a"), agent.commit("b")

    response = agent.post("/links", {"src": a["id"], "dst": b["id"], "rel": rel})

    assert response.status_code == 201
    assert response.json()["rel"] == rel


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"dst": "DST"}, "src"),
        ({"src": "SRC"}, "dst"),
        ({"src": "nope", "dst": "DST"}, "src"),
        ({"src": "SRC", "dst": "DST", "weight": 1.5}, "weight"),
        ({"src": "SRC", "dst": "DST", "weight": -1}, "weight"),
    ],
)
def test_it_rejects_bad_link_input_naming_the_field(
    agent: AgentClient, field_errors: Any, body: dict[str, Any], field: str
) -> None:
    a, b = agent.commit("a"), agent.commit("b")
    body = {k: {"SRC": a["id"], "DST": b["id"]}.get(v, v) for k, v in body.items()}

    assert field in field_errors(agent.post("/links", body))


def test_it_rejects_malformed_json_for_links(agent: AgentClient) -> None:
    response = agent.post("/links", raw="[not json")

    assert response.status_code == 422
    assert "malformed JSON" in response.json()["detail"][0]["msg"]


@pytest.mark.parametrize("end", ["src", "dst"])
def test_it_refuses_an_end_from_another_workspace_without_leaking_it(
    agent: AgentClient, other_agent: AgentClient, field_errors: Any, end: str
) -> None:
    mine = agent.commit("mine")
    theirs = other_agent.commit("theirs")
    other = "dst" if end == "src" else "src"

    foreign = field_errors(agent.post("/links", {end: theirs["id"], other: mine["id"]}))
    unknown = field_errors(agent.post("/links", {end: str(uuid.uuid4()), other: mine["id"]}))

    assert foreign == unknown == {end: "no memory with this id in the workspace"}
    assert not Link.objects.exists()


def test_it_requires_a_key_for_links(agent: AgentClient) -> None:
    from django.test import Client

    a, b = agent.commit("a"), agent.commit("b")
    link = _link(agent, a, b)
    client = Client()

    assert client.post("/api/v1/links", {"src": a["id"], "dst": b["id"]}, "application/json").status_code == 401
    assert client.delete(f"/api/v1/links/{link['id']}").status_code == 401
    assert client.get(f"/api/v1/memories/{a['id']}/neighbors").status_code == 401
    assert Link.objects.count() == 1


# --- DELETE /links/{id} ------------------------------------------------------------------


def test_it_deletes_a_link(agent: AgentClient) -> None:
    a, b = agent.commit("a"), agent.commit("b")
    link = _link(agent, a, b, "refines")

    response = agent.delete(f"/links/{link['id']}")

    assert response.status_code == 204
    assert not Link.objects.exists()
    event = Event.objects.get(verb="link.delete")
    assert event.changes[0]["op"] == "delete"
    assert event.changes[0]["before"]["rel"] == "refines"
    assert str(event.memory_id) == a["id"]


def test_it_returns_404_for_an_unknown_link(agent: AgentClient) -> None:
    assert agent.delete("/links/999999").status_code == 404


def test_it_cannot_delete_another_workspaces_link(agent: AgentClient, other_agent: AgentClient) -> None:
    a, b = other_agent.commit("a"), other_agent.commit("b")
    theirs = _link(other_agent, a, b)

    response = agent.delete(f"/links/{theirs['id']}")

    assert response.status_code == 404
    assert response.json() == agent.delete("/links/999999").json()
    assert Link.objects.filter(pk=theirs["id"]).exists()


# --- GET /memories/{id}/neighbors ------------------------------------------------------------


def test_it_lists_direct_neighbors_in_both_directions(agent: AgentClient) -> None:
    hub, out, into = agent.commit("hub"), agent.commit("out"), agent.commit("in")
    out_link = _link(agent, hub, out, "refines")
    in_link = _link(agent, into, hub, "example_of")

    hood = _neighbors(agent, hub)

    assert hood["memory_id"] == hub["id"]
    assert hood["dangling"] == []
    by_id = {n["memory"]["id"]: n for n in hood["neighbors"]}
    assert set(by_id) == {out["id"], into["id"]}
    assert by_id[out["id"]] | {"memory": None} == {
        "memory": None,
        "rel": "refines",
        "direction": "out",
        "depth": 1,
        "link_id": out_link["id"],
        "via": hub["id"],
    }
    assert by_id[into["id"]]["direction"] == "in"
    assert by_id[into["id"]]["rel"] == "example_of"
    assert by_id[into["id"]]["link_id"] == in_link["id"]
    assert by_id[into["id"]]["memory"]["text"] == "in"


def test_it_follows_one_direction(agent: AgentClient) -> None:
    hub, out, into = agent.commit("hub"), agent.commit("out"), agent.commit("in")
    _link(agent, hub, out)
    _link(agent, into, hub)

    assert _ids(_neighbors(agent, hub, direction="out")) == [out["id"]]
    assert _ids(_neighbors(agent, hub, direction="in")) == [into["id"]]


def test_it_filters_by_rel_repeated_or_comma_separated(agent: AgentClient) -> None:
    hub = agent.commit("hub")
    refined, example, related = agent.commit("refined"), agent.commit("example"), agent.commit("related")
    _link(agent, hub, refined, "refines")
    _link(agent, hub, example, "example_of")
    _link(agent, hub, related, "related")

    only = _neighbors(agent, hub, rel="refines")
    repeated = _neighbors(agent, hub, rel=["refines", "example_of"])
    comma = _neighbors(agent, hub, rel="refines,example_of")

    assert _ids(only) == [refined["id"]]
    assert set(_ids(repeated)) == set(_ids(comma)) == {refined["id"], example["id"]}


def test_it_filters_by_a_custom_rel(agent: AgentClient) -> None:
    hub, blocked = agent.commit("hub"), agent.commit("blocked")
    _link(agent, hub, blocked, "x-blocks")
    _link(agent, hub, agent.commit("other"), "related")

    assert _ids(_neighbors(agent, hub, rel="x-blocks")) == [blocked["id"]]


def test_it_walks_up_to_the_requested_depth(agent: AgentClient) -> None:
    chain = [agent.commit(f"node {n}") for n in range(7)]
    for src, dst in itertools.pairwise(chain):
        _link(agent, src, dst)

    for depth in range(1, 6):
        hood = _neighbors(agent, chain[0], depth=depth, direction="out")

        assert _ids(hood) == [m["id"] for m in chain[1 : depth + 1]]
        assert [n["depth"] for n in hood["neighbors"]] == list(range(1, depth + 1))
        assert [n["via"] for n in hood["neighbors"]] == [m["id"] for m in chain[:depth]]


@pytest.mark.parametrize("depth", [0, 6, -1, "deep"])
def test_it_rejects_a_depth_outside_one_to_five(agent: AgentClient, field_errors: Any, depth: Any) -> None:
    hub = agent.commit("hub")

    errors = field_errors(agent.get(f"/memories/{hub['id']}/neighbors", {"depth": depth}))

    assert "depth" in errors


@pytest.mark.parametrize(
    ("params", "field"),
    [({"direction": "sideways"}, "direction"), ({"rel": "blocks"}, "rel"), ({"rel": "refines,nonsense"}, "rel")],
)
def test_it_rejects_bad_neighbor_params_naming_the_field(
    agent: AgentClient, field_errors: Any, params: dict[str, Any], field: str
) -> None:
    hub = agent.commit("hub")

    response = agent.get(f"/memories/{hub['id']}/neighbors", params)

    assert response.status_code == 422, response.content
    named = {str(part) for err in response.json()["detail"] for part in err["loc"]}
    assert field in named


def test_it_terminates_on_cycles_and_lists_each_memory_once(agent: AgentClient) -> None:
    a, b, c = agent.commit("a"), agent.commit("b"), agent.commit("c")
    _link(agent, a, b)
    _link(agent, b, c)
    _link(agent, c, a)
    _link(agent, a, c, "refines")

    hood = _neighbors(agent, a, depth=5)

    assert sorted(_ids(hood)) == sorted([b["id"], c["id"]])
    assert a["id"] not in _ids(hood)


def test_it_lists_a_forgotten_target_as_dangling_without_walking_through_it(agent: AgentClient) -> None:
    a, gone, beyond, live = agent.commit("a"), agent.commit("gone"), agent.commit("beyond"), agent.commit("live")
    _link(agent, a, gone)
    _link(agent, gone, beyond)
    _link(agent, a, live)
    agent.delete(f"/memories/{gone['id']}")

    hood = _neighbors(agent, a, depth=3)

    assert _ids(hood) == [live["id"]]
    assert hood["dangling"] == [gone["id"]]


def test_it_hides_another_workspaces_neighbors(agent: AgentClient, other_agent: AgentClient) -> None:
    a, b = other_agent.commit("a"), other_agent.commit("b")
    _link(other_agent, a, b)

    assert agent.get(f"/memories/{a['id']}/neighbors").status_code == 404


def test_it_returns_no_neighbors_for_an_unlinked_memory(agent: AgentClient) -> None:
    alone = agent.commit("alone")

    assert _neighbors(agent, alone, depth=5) == {"memory_id": alone["id"], "neighbors": [], "dangling": []}


@pytest.mark.parametrize("rel", ["supersedes", "merged_into"])
def test_it_refuses_hand_made_links_the_hub_keeps_itself(agent: AgentClient, field_errors: Any, rel: str) -> None:
    a = agent.commit("Office in Berlin")
    b = agent.commit("Office in Munich")

    errors = field_errors(agent.post("/links", {"src": b["id"], "dst": a["id"], "rel": rel}))

    assert "kept by the hub" in errors["rel"]


def test_it_refuses_to_delete_a_supersedes_link(agent: AgentClient) -> None:
    old = agent.commit("Office in Berlin")
    new = agent.commit("Office in Munich")
    agent.post(f"/memories/{old['id']}/supersede", {"by": new["id"]})
    link = Link.objects.get(rel="supersedes")

    response = agent.delete(f"/links/{link.pk}")

    assert response.status_code == 409
    assert "/restore" in response.json()["detail"]
    assert Link.objects.filter(pk=link.pk).exists()
