"""``Idempotency-Key`` on the API's writes: a retry replays the first answer and stores nothing new."""

from __future__ import annotations

import datetime as dt
import json
import threading
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from conflicts.models import Answer
from memories.models import Link, Memory
from memoryhub.errors import RequestInProgress
from tests.conflicts.cards import pair_card
from tests.conftest import AgentClient
from tests.factories import WorkspaceFactory, agent_key_for
from workspaces.idempotency import idempotency_claim, idempotency_prune
from workspaces.models import IdempotencyRecord, Workspace

pytestmark = pytest.mark.django_db


def _post(agent: AgentClient, path: str, body: Any, key: str) -> Any:
    return agent.client.post(
        f"/api/v1{path}", data=json.dumps(body), content_type="application/json", HTTP_IDEMPOTENCY_KEY=key
    )


def test_a_retried_batch_stores_its_facts_once_and_gets_the_first_answer(agent: AgentClient) -> None:
    body = {"memories": [{"text": "Office in Berlin"}, {"text": "The CI runs on Fridays"}, {"text": ""}]}

    first = _post(agent, "/memories/batch", body, "batch-1")
    retry = _post(agent, "/memories/batch", body, "batch-1")

    assert first.status_code == retry.status_code == 200
    assert retry.content == first.content
    assert retry["Idempotent-Replayed"] == "true"
    assert first.json()["stored"] == 2
    # Without the key the same batch would merge into the stored facts (reinforcing them); with it, nothing happens.
    assert Memory.objects.count() == 2
    assert set(Memory.objects.values_list("reinforcement_count", flat=True)) == {0}


def test_a_retried_commit_stores_one_fact_and_gets_the_first_answer(agent: AgentClient) -> None:
    body = {"text": "Office in Berlin", "on_conflict": "supersede"}

    first = _post(agent, "/memories", body, "commit-1")
    retry = _post(agent, "/memories", body, "commit-1")

    assert first.status_code == retry.status_code == 201
    assert retry.content == first.content
    assert retry["Idempotent-Replayed"] == "true"
    assert Memory.objects.count() == 1


def test_without_the_header_a_retry_stores_twice(agent: AgentClient) -> None:
    # What the header is for: the same body sent twice is two commits.
    agent.commit("Office in Berlin")
    agent.commit("Office in Berlin")

    assert Memory.objects.count() == 2


def test_the_same_key_with_another_body_is_refused(agent: AgentClient) -> None:
    _post(agent, "/memories", {"text": "Office in Berlin"}, "commit-1")

    other = _post(agent, "/memories", {"text": "Office in Munich"}, "commit-1")

    assert other.status_code == 422
    [error] = other.json()["detail"]
    assert error["loc"] == ["body", "Idempotency-Key"]
    assert "different request" in error["msg"]
    assert list(Memory.objects.values_list("text", flat=True)) == ["Office in Berlin"]


def test_the_same_body_reformatted_is_the_same_request(agent: AgentClient) -> None:
    _post(agent, "/memories", {"text": "Office in Berlin", "tags": ["office"]}, "commit-1")

    retry = agent.client.post(
        "/api/v1/memories",
        data='{ "tags": ["office"],\n  "text": "Office in Berlin" }',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="commit-1",
    )

    assert retry.status_code == 201
    assert Memory.objects.count() == 1


def test_keys_belong_to_their_agent_key(agent: AgentClient) -> None:
    row, key = agent_key_for(agent.workspace, "researcher")
    other = AgentClient(key, row)

    _post(agent, "/memories", {"text": "Office in Berlin"}, "commit-1")
    _post(other, "/memories", {"text": "Office in Berlin"}, "commit-1")

    assert Memory.objects.count() == 2


def test_an_error_answer_is_replayed_too(agent: AgentClient) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    fact = agent.commit("Office in Berlin")

    first = _post(agent, f"/memories/{fact['id']}/supersede", {"by": missing}, "sup-1")
    Memory.objects.create(workspace=agent.workspace, pk=missing, text="Office in Munich")
    retry = _post(agent, f"/memories/{fact['id']}/supersede", {"by": missing}, "sup-1")

    assert first.status_code == retry.status_code == 422
    assert retry.content == first.content
    assert Memory.objects.get(pk=fact["id"]).superseded_by_id is None


def test_supersede_links_and_answers_are_idempotent(workspace: Workspace, agent: AgentClient) -> None:
    old, new = agent.commit("Office in Berlin"), agent.commit("Office in Munich")
    link = {"src": old["id"], "dst": new["id"], "rel": "related"}
    assert _post(agent, "/links", link, "link-1").status_code == 201
    assert _post(agent, "/links", link, "link-1").status_code == 201  # replayed; a plain repeat says 200
    assert Link.objects.filter(rel="related").count() == 1

    supersede = _post(agent, f"/memories/{old['id']}/supersede", {"by": new["id"]}, "sup-1")
    assert _post(agent, f"/memories/{old['id']}/supersede", {"by": new["id"]}, "sup-1").content == supersede.content

    card, _, _ = pair_card(workspace)
    agent.grant("answer")
    answered = _post(agent, f"/conflicts/{card.pk}/answer", {"answer": "yes"}, "answer-1")
    again = _post(agent, f"/conflicts/{card.pk}/answer", {"answer": "yes"}, "answer-1")
    assert (answered.status_code, again.status_code) == (200, 200)  # without the key the retry is a 409
    assert again.content == answered.content
    assert Answer.objects.count() == 1


def test_a_request_still_running_gets_409_with_retry_after(agent: AgentClient) -> None:
    body = {"text": "Office in Berlin"}
    # The first request has claimed the key and not answered yet.
    from django.test import RequestFactory

    from api.idempotency import fingerprint

    request = RequestFactory().post("/api/v1/memories", data=json.dumps(body), content_type="application/json")
    idempotency_claim(agent_key=agent.key_row, key="commit-1", fingerprint=fingerprint(request))

    response = _post(agent, "/memories", body, "commit-1")

    assert response.status_code == 409
    assert "still being answered" in response.json()["detail"]
    assert response["Retry-After"] == "1"
    assert not Memory.objects.exists()


def test_a_key_older_than_a_day_names_a_new_request(agent: AgentClient) -> None:
    _post(agent, "/memories", {"text": "Office in Berlin"}, "commit-1")
    IdempotencyRecord.objects.update(created_at=timezone.now() - dt.timedelta(hours=25))

    assert _post(agent, "/memories", {"text": "Office in Berlin"}, "commit-1").status_code == 201
    assert Memory.objects.count() == 2


def test_pruning_drops_records_past_a_day(agent: AgentClient) -> None:
    _post(agent, "/memories", {"text": "Office in Berlin"}, "old")
    _post(agent, "/memories", {"text": "Office in Munich"}, "new")
    IdempotencyRecord.objects.filter(key="old").update(created_at=timezone.now() - dt.timedelta(hours=25))

    assert idempotency_prune() == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]


def test_a_server_error_releases_the_key(agent: AgentClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from memoryhub.errors import TryAgainLater

    def busy(**kwargs: Any) -> None:
        raise TryAgainLater("not now")

    monkeypatch.setattr("conflicts.ingestion.memory_create_checked", busy)
    assert _post(agent, "/memories", {"text": "Office in Berlin", "on_conflict": "raise"}, "c").status_code == 503
    monkeypatch.undo()

    # The 503 said "send it again": the retry runs, it is not answered 503 for a day.
    assert _post(agent, "/memories", {"text": "Office in Berlin", "on_conflict": "raise"}, "c").status_code == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicates_store_one_fact() -> None:
    workspace = WorkspaceFactory(slug="race")
    _, key = agent_key_for(workspace, "planner")
    body = json.dumps({"text": "Office in Berlin", "on_conflict": "supersede"})
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def commit() -> None:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")
        barrier.wait()
        try:
            response = client.post(
                "/api/v1/memories", data=body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="same"
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=commit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert Memory.objects.count() == 1
    # Each one either ran, got the first answer replayed, or was told the first is still running.
    assert sorted(set(statuses)) in ([201], [201, 409])
    assert len(statuses) == 4
    assert IdempotencyRecord.objects.get().status_code == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_of_one_key_leave_one_owner() -> None:
    workspace = WorkspaceFactory(slug="race")
    row, _ = agent_key_for(workspace, "planner")
    barrier = threading.Barrier(4)
    owners: list[bool] = []

    def claim() -> None:
        barrier.wait()
        try:
            owners.append(idempotency_claim(agent_key=row, key="k", fingerprint="f").record is not None)
        except RequestInProgress:  # someone else owns it
            owners.append(False)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(owners) == [False, False, False, True]
