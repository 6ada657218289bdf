from __future__ import annotations

import pytest

from conflicts.detection.verdict import Relation
from conflicts.models import Uncertainty
from conflicts.services import conflict_resolve
from memories.audit import Actor
from memories.models import Event
from tests.conflicts.scripted import scripted
from tests.conftest import AgentClient
from tests.memories.recall_helpers import day, remember


@pytest.fixture
def dispute(agent: AgentClient) -> Uncertainty:
    a = remember(agent.workspace, "The public API rate limit is 1000 requests per second", valid_from=day(1))
    b = remember(agent.workspace, "The public API rate limit is 500 requests per second", valid_from=day(2))
    resolution = conflict_resolve(
        older=a,
        newer=b,
        verdict=scripted(Relation.TRUE_CONTRADICTION),
        context="ingestion",
        actor=Actor.system("detector"),
    )
    assert resolution.uncertainty is not None
    return resolution.uncertainty


def test_a_relevant_dispute_is_surfaced_with_a_question(agent: AgentClient, dispute: Uncertainty) -> None:
    [item] = agent.post("/uncertainties/surface", {"topic": "what is our API rate limit?"}).json()

    assert item["uncertainty"]["id"] == str(dispute.pk)
    assert item["uncertainty"]["state"] == "surfaced"
    assert item["uncertainty"]["surfaced_count"] == 1
    assert "Which one is true now?" in item["question"]
    assert len(item["facts"]) == 2
    assert Event.objects.filter(verb="uncertainty.surface").count() == 1


def test_an_unrelated_topic_surfaces_nothing(agent: AgentClient, dispute: Uncertainty) -> None:
    assert agent.post("/uncertainties/surface", {"topic": "birthday cake recipes"}).json() == []
    dispute.refresh_from_db()
    assert dispute.surfaced_count == 0


def test_after_three_surfacings_the_severity_drops(agent: AgentClient, dispute: Uncertainty) -> None:
    assert dispute.severity == "high"

    for _ in range(3):
        agent.post("/uncertainties/surface", {"topic": "API rate limit"})

    dispute.refresh_from_db()
    assert (dispute.surfaced_count, dispute.severity) == (3, "medium")


def test_surfacing_needs_a_topic(agent: AgentClient) -> None:
    assert agent.post("/uncertainties/surface", {"topic": ""}).status_code == 422
