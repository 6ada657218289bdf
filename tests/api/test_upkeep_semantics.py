"""Seed semantics wired through (issue 24, item 2): find_conflicts, subgraph, min_importance,
keep-both links, polarity in the rules, and the contradiction penalty lifted by an answer."""

from __future__ import annotations

import pytest

from conflicts.detection.classifier import classify_memory_pairs
from conflicts.detection.verdict import Relation
from conflicts.feedback import card_answer
from conflicts.upkeep import JOBS
from conflicts.upkeep.runs import job_execute
from memories.audit import Actor
from memories.models import Link, Memory
from tests.conflicts.cards import pair_card
from tests.conftest import AgentClient
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
ANA = Actor.system("ana")


def test_find_conflicts_names_contradictions_and_duplicates(agent: AgentClient) -> None:
    workspace = agent.workspace
    use = remember(workspace, "Use ruff for linting", polarity=1)
    avoid = remember(workspace, "Use ruff for linting", polarity=-1)
    never = remember(workspace, "Never use tabs for indentation")
    tabs = remember(workspace, "Use tabs for indentation")
    remember(workspace, "The office closes at six")

    found = agent.get("/find-conflicts", {"memory_id": str(use.pk)}).json()
    assert [(c["b"]["id"], c["kind"], c["reason"]) for c in found] == [(str(avoid.pk), "contradiction", "polarity")]

    found = agent.get("/find-conflicts", {"memory_id": str(tabs.pk), "threshold": 0.5}).json()
    assert (found[0]["b"]["id"], found[0]["kind"], found[0]["reason"]) == (
        str(never.pk),
        "contradiction",
        "negation_diff",
    )
    assert found[0]["similarity"] >= 0.5

    everything = agent.get("/find-conflicts").json()
    assert {frozenset((c["a"]["id"], c["b"]["id"])) for c in everything} >= {
        frozenset((str(use.pk), str(avoid.pk))),
    }


def test_find_conflicts_refuses_bad_input(agent: AgentClient, other_agent: AgentClient) -> None:
    response = agent.get("/find-conflicts", {"threshold": 1.5})
    assert response.status_code == 422
    theirs = remember(other_agent.workspace, "Their secret fact")
    response = agent.get("/find-conflicts", {"memory_id": str(theirs.pk)})
    assert response.status_code == 422  # an id outside the workspace is a bad value, as in bodies
    assert response.json()["detail"][0]["loc"][-1] == "memory_id"


def test_subgraph_walks_links_to_the_depth_asked(agent: AgentClient, other_agent: AgentClient) -> None:
    workspace = agent.workspace
    theirs = remember(other_agent.workspace, "Their secret fact")
    a, b, c, d = (remember(workspace, f"Fact {name} about the deploy") for name in "abcd")
    Link.objects.create(workspace=workspace, src=a, dst=b, rel="refines")
    Link.objects.create(workspace=workspace, src=c, dst=b, rel="example_of")
    Link.objects.create(workspace=workspace, src=c, dst=d, rel="related")

    response = agent.post("/subgraph", {"memory_ids": [str(a.pk)], "depth": 1})
    assert response.status_code == 200, (response.status_code, response.content[:2000])
    one = response.json()
    assert {n["id"] for n in one["nodes"]} == {str(a.pk), str(b.pk)}
    assert [(e["src"], e["dst"], e["rel"]) for e in one["edges"]] == [(str(a.pk), str(b.pk), "refines")]

    three = agent.post("/subgraph", {"memory_ids": [str(a.pk)], "depth": 3}).json()
    assert {n["id"] for n in three["nodes"]} == {str(m.pk) for m in (a, b, c, d)}
    assert len(three["edges"]) == 3
    assert three["truncated"] is False

    assert agent.post("/subgraph", {"memory_ids": []}).status_code == 422
    assert agent.post("/subgraph", {"memory_ids": [str(theirs.pk)]}).status_code == 422
    assert agent.post("/subgraph", {"memory_ids": [str(a.pk)], "depth": 9}).status_code == 422


def test_recall_leaves_out_facts_below_min_importance(agent: AgentClient) -> None:
    remember(agent.workspace, "The staging cluster runs in Frankfurt", importance=0.9)
    remember(agent.workspace, "The staging cluster was rebooted once", importance=0.2)

    hits = agent.post("/recall", {"query": "staging cluster", "min_importance": 0.5}).json()
    assert [h["memory"]["text"] for h in hits] == ["The staging cluster runs in Frankfurt"]
    assert agent.post("/recall", {"query": "x", "min_importance": 2}).status_code == 422


def test_opposite_polarity_is_a_contradiction_for_the_rules(workspace: Workspace) -> None:
    plus = remember(workspace, "Use ruff for linting", polarity=1)
    minus = remember(workspace, "Use ruff for linting", polarity=-1)
    same = remember(workspace, "Use ruff for linting", polarity=1)

    opposite, alike = classify_memory_pairs([(plus, minus), (plus, same)])

    assert opposite.relation == Relation.TRUE_CONTRADICTION
    assert "opposite polarity" in opposite.reasons[0]
    assert alike.relation != Relation.TRUE_CONTRADICTION


def test_keeping_both_links_them_contradicts(workspace: Workspace) -> None:
    card, a, b = pair_card(workspace)

    card_answer(card=card, choice="both", actor=ANA)

    assert Link.objects.filter(src=b, dst=a, rel="contradicts").exists()


def test_answering_a_penalized_contradiction_gives_the_kept_fact_its_confidence_back(workspace: Workspace) -> None:
    card, a, b = pair_card(workspace)
    job_execute(job="confidence", fn=JOBS["confidence"])
    a.refresh_from_db()
    assert a.evidence_confidence == pytest.approx(0.45)

    card_answer(card=card, choice="yes", actor=ANA)  # the asked (older) fact still holds

    a = Memory.objects.get(pk=a.pk)
    # Reinforced (0.45 → 0.4775) and the penalty lifted (÷ 0.5).
    assert a.evidence_confidence == pytest.approx(min(1.0, (0.45 + 0.05 * 0.55) / 0.5))
    b.refresh_from_db()
    assert b.reliability == "superseded"
