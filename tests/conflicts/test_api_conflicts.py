from __future__ import annotations

from typing import Any

import pytest

from conflicts.detection.verdict import Relation
from conflicts.models import ConflictCard
from memories.models import Event, Link, Memory
from tests.conflicts.scripted import ScriptedClassifier, scripted
from tests.conftest import AgentClient
from tests.memories.recall_helpers import day, remember


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str], Any]:
    """Verdicts by (older text, newer text); unscripted pairs are compatible."""
    verdicts: dict[tuple[str, str], Any] = {}
    classifier = ScriptedClassifier(verdicts)
    monkeypatch.setattr("conflicts.detection.pipeline.offline_classifier", lambda **_: classifier)
    return verdicts


def test_warn_stores_the_fact_and_reports_the_clash(agent: AgentClient, script: dict[Any, Any]) -> None:
    old = remember(agent.workspace, "The public API is REST", valid_from=day(1))
    script[(old.text, "The public API is GraphQL")] = scripted(Relation.TRUE_CONTRADICTION)

    response = agent.post("/memories", {"text": "The public API is GraphQL", "on_conflict": "warn"})

    assert response.status_code == 201
    body = response.json()
    assert body["action"] == "stored"
    assert body["checked"] is True
    assert body["status"] == "active"  # embedded on the request path
    [conflict] = body["conflicts"]
    assert conflict["memory_id"] == str(old.pk)
    assert conflict["kind"] == "true_contradiction"
    assert conflict["similarity"] > 0.5
    assert Memory.objects.get(pk=old.pk).reliability == "reliable"  # warn changes nothing


def test_raise_refuses_a_clashing_fact_and_stores_nothing(agent: AgentClient, script: dict[Any, Any]) -> None:
    old = remember(agent.workspace, "The rate limit is 1000 req/s", valid_from=day(1))
    script[(old.text, "The rate limit is 500 req/s")] = scripted(Relation.TRUE_CONTRADICTION)

    response = agent.post("/memories", {"text": "The rate limit is 500 req/s", "on_conflict": "raise"})

    assert response.status_code == 409
    assert response.json()["conflicts"][0]["memory_id"] == str(old.pk)
    assert "not stored" in response.json()["detail"]
    assert Memory.objects.count() == 1


def test_raise_stores_a_fact_that_clashes_with_nothing(agent: AgentClient, script: dict[Any, Any]) -> None:
    remember(agent.workspace, "The rate limit is 1000 req/s", valid_from=day(1))

    response = agent.post("/memories", {"text": "The office closes at 6pm", "on_conflict": "raise"})

    assert response.status_code == 201
    assert response.json()["conflicts"] == []


def test_raise_stores_nothing_when_the_check_cannot_finish_in_time(
    agent: AgentClient, script: dict[Any, Any], settings: Any
) -> None:
    remember(agent.workspace, "The office closes at 5pm", valid_from=day(1))
    settings.MEMORYHUB_CHECK_TIME_BOX_MS = 0

    response = agent.post("/memories", {"text": "The office closes at 6pm", "on_conflict": "raise"})

    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert "did not finish in time" in response.json()["detail"]
    assert not Memory.objects.filter(text="The office closes at 6pm").exists()


@pytest.mark.parametrize("mode", ["warn", "supersede"])
def test_warn_and_supersede_store_an_unchecked_fact_and_say_so(
    agent: AgentClient, script: dict[Any, Any], settings: Any, mode: str
) -> None:
    settings.MEMORYHUB_CHECK_TIME_BOX_MS = 0

    response = agent.post("/memories", {"text": "The office closes at 6pm", "on_conflict": mode})

    assert response.status_code == 201
    assert (response.json()["action"], response.json()["checked"]) == ("stored", False)


def test_supersede_replaces_what_the_new_fact_clashes_with(agent: AgentClient, script: dict[Any, Any]) -> None:
    old = remember(agent.workspace, "Deploys run on Jenkins", valid_from=day(1), key="ci_system")
    script[(old.text, "Deploys run on GitHub Actions")] = scripted(Relation.TEMPORAL_CHANGE, p=0.6, current="b")

    response = agent.post("/memories", {"text": "Deploys run on GitHub Actions", "on_conflict": "supersede"})

    body = response.json()
    assert body["action"] == "superseded"
    old.refresh_from_db()
    assert str(old.superseded_by_id) == body["id"]
    assert old.annotation == "used to: Deploys run on Jenkins"
    event = Event.objects.get(verb="memory.commit_superseded")
    assert event.actor_type == "agent"
    assert not event.automatic  # the agent asked for it


def test_supersede_merges_a_duplicate_into_the_existing_fact(agent: AgentClient, script: dict[Any, Any]) -> None:
    old = remember(agent.workspace, "Support hours are 9 to 5", valid_from=day(1))
    script[(old.text, "Support is open 9 to 5")] = scripted(Relation.DUPLICATE)

    body = agent.post("/memories", {"text": "Support is open 9 to 5", "on_conflict": "supersede"}).json()

    assert body["action"] == "merged"
    assert body["status"] == "merged"
    assert Link.objects.filter(src_id=body["id"], dst=old, rel="merged_into").exists()
    assert Memory.objects.get(pk=old.pk).reinforcement_count == 1


def test_supersede_replaces_a_duplicate_that_states_another_value(agent: AgentClient, script: dict[Any, Any]) -> None:
    old = remember(agent.workspace, "The rate limit is 1000 req/s", valid_from=day(1))
    script[(old.text, "The rate limit is 500 req/s")] = scripted(Relation.DUPLICATE, values_differ=True)

    body = agent.post("/memories", {"text": "The rate limit is 500 req/s", "on_conflict": "supersede"}).json()

    # Merging would keep 1000 and drop the 500 the agent says is current.
    assert body["action"] == "superseded"
    assert body["status"] == "active"
    old.refresh_from_db()
    assert str(old.superseded_by_id) == body["id"]


def test_supersede_never_touches_a_fact_about_another_subject(agent: AgentClient, script: dict[Any, Any]) -> None:
    other = remember(agent.workspace, "Ana lives in Porto", key="ana_home", valid_from=day(1))
    script[(other.text, "Ana works in Lisbon")] = scripted(Relation.TEMPORAL_CHANGE, current="b")

    body = agent.post(
        "/memories", {"text": "Ana works in Lisbon", "key": "ana_office", "on_conflict": "supersede"}
    ).json()

    assert body["action"] == "stored"
    assert Memory.objects.get(pk=other.pk).reliability == "reliable"


def test_conflict_cards_are_listed_and_fetched(agent: AgentClient, other_agent: AgentClient) -> None:
    from conflicts.services import conflict_resolve
    from memories.audit import Actor

    a = remember(agent.workspace, "The user is vegetarian", valid_from=day(1))
    b = remember(agent.workspace, "The user eats steak daily", valid_from=day(2))
    conflict_resolve(
        older=a,
        newer=b,
        verdict=scripted(Relation.TRUE_CONTRADICTION),
        context="ingestion",
        actor=Actor.system("detector"),
    )
    card = ConflictCard.objects.get()

    [listed] = agent.get("/conflicts", {"state": "open"}).json()
    assert listed["id"] == str(card.pk)
    assert [f["id"] for f in listed["facts"]] == [str(a.pk), str(b.pk)]
    assert agent.get(f"/conflicts/{card.pk}").json()["question"] == card.question
    assert agent.get("/conflicts", {"state": "answered"}).json() == []
    assert other_agent.get(f"/conflicts/{card.pk}").status_code == 404
    [record] = agent.get("/uncertainties", {"memory": str(a.pk)}).json()
    assert record["state"] == "open"
    assert agent.get("/conflicts", {"state": "bogus"}).status_code == 422


def test_an_automatic_decision_is_undone_over_the_api(agent: AgentClient, other_agent: AgentClient) -> None:
    from conflicts.services import conflict_resolve
    from memories.audit import Actor

    old = remember(agent.workspace, "Deploys run on Jenkins", valid_from=day(1), key="ci_system")
    new = remember(agent.workspace, "Deploys run on GitHub Actions", valid_from=day(3), key="ci_system")
    conflict_resolve(
        older=old,
        newer=new,
        verdict=scripted(Relation.TEMPORAL_CHANGE, current="b"),
        context="ingestion",
        actor=Actor.system("detector"),
    )
    [event] = agent.get("/events", {"automatic": "true"}).json()
    assert event["verb"] == "conflict.temporal_supersede"
    agent.grant("admin")
    other_agent.grant("admin")

    assert other_agent.post(f"/events/{event['id']}/undo").status_code == 404
    response = agent.post(f"/events/{event['id']}/undo", {"reason": "still on Jenkins"})

    assert response.status_code == 200
    assert response.json()["undoes"] == event["id"]
    assert Memory.objects.get(pk=old.pk).reliability == "reliable"
    assert agent.post(f"/events/{event['id']}/undo").status_code == 409


def test_a_commit_cannot_be_undone_into_a_deleted_fact(agent: AgentClient) -> None:
    fact = agent.commit("The wiki lives at wiki.acme.test")
    event = Event.objects.get(memory_id=fact["id"], verb="memory.create")

    response = agent.grant("admin").post(f"/events/{event.pk}/undo")

    assert response.status_code == 409
    assert "forget" in response.json()["detail"]
    assert Memory.objects.filter(pk=fact["id"]).exists()


def test_a_manual_supersede_is_undone_like_restore(agent: AgentClient) -> None:
    old = agent.commit("Office in Berlin")
    new = agent.commit("Office in Munich")
    agent.post(f"/memories/{old['id']}/supersede", {"by": new["id"]})
    event = Event.objects.get(verb="memory.supersede")

    assert agent.grant("admin").post(f"/events/{event.pk}/undo").status_code == 200

    restored = agent.get(f"/memories/{old['id']}").json()
    assert (restored["reliability"], restored["superseded_by"], restored["valid_to"]) == ("reliable", None, None)
    assert not Link.objects.exists()


def test_the_synchronous_check_reuses_stored_vectors_and_embeds_only_the_new_fact(
    agent: AgentClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real classifier. The request path embeds the new fact once; the candidates and the
    # draft carry vectors of the classifier's own model, so nothing is embedded again.
    remember(agent.workspace, "The public API is REST", valid_from=day(1))

    def no_second_embedding(name: str) -> Any:
        raise AssertionError(f"the check embedded texts again with {name}")

    monkeypatch.setattr("memories.embeddings.embedder_named", no_second_embedding)

    response = agent.post("/memories", {"text": "The public API is GraphQL", "on_conflict": "warn"})

    assert response.status_code == 201
    assert response.json()["checked"] is True
