"""A reviewer corrects what a fact is about; the correction is kept, shown, and exported as training data."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from memories.audit import Actor
from memories.models import Event, Memory
from memories.selectors import subject_corrections
from memories.services import memories_reembed_stale, memory_subject_correct
from memoryhub.errors import InvalidInput
from tests.conftest import AgentClient
from tests.factories import MembershipFactory, UserFactory
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


def test_a_correction_is_kept_and_recorded_with_what_the_hub_had_read(workspace: Workspace) -> None:
    fact = remember(workspace, "Since the reorg Priya reports to Tomás.")

    memory_subject_correct(memory=fact, actor=Actor.system("ana"), entity="Priya", attribute="manager", note="reorg")

    fact.refresh_from_db()
    assert (fact.subject_entity, fact.subject_attribute, fact.subject_source) == ("priya", "manager", "reviewer")
    event = Event.objects.get(verb="memory.subject_correct")
    assert event.reason == "reorg"
    [row] = subject_corrections(workspace=workspace)
    assert row["text"] == "Since the reorg Priya reports to Tomás."
    assert (row["read_entity"], row["entity"], row["attribute"]) == ("since the reorg priya", "priya", "manager")


def test_a_corrected_subject_survives_re_embedding(workspace: Workspace) -> None:
    fact = remember(workspace, "Since the reorg Priya reports to Tomás.")
    memory_subject_correct(memory=fact, actor=Actor.system("ana"), entity="priya", attribute="manager")
    Memory.objects.filter(pk=fact.pk).update(embedding_model="an-older-model")

    memories_reembed_stale()

    assert Memory.objects.get(pk=fact.pk).subject_entity == "priya"


def test_an_empty_entity_is_refused_naming_the_field(workspace: Workspace) -> None:
    fact = remember(workspace, "The user lives in Lisbon.")

    with pytest.raises(InvalidInput) as raised:
        memory_subject_correct(memory=fact, actor=Actor.system("ana"), entity="  the ", attribute="home city")

    assert raised.value.field == "entity"


def test_agents_correct_a_subject_over_the_api(agent: AgentClient, field_errors: Any) -> None:
    fact = remember(agent.workspace, "The user lives in Lisbon.")

    response = agent.post(f"/memories/{fact.pk}/subject", {"entity": "The user's sister", "attribute": "home_city"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["subject_entity"], body["subject_attribute"], body["subject_source"]) == (
        "user's sister",
        "home city",
        "reviewer",
    )
    assert body["speech_act"] == "claim"
    assert "entity" in field_errors(agent.post(f"/memories/{fact.pk}/subject", {"attribute": "x"}))


def test_a_reviewer_corrects_a_subject_in_the_memory_browser(workspace: Workspace) -> None:
    fact = remember(workspace, "Since the reorg Priya reports to Tomás.")
    reviewer = UserFactory(username="rui")
    MembershipFactory(user=reviewer, workspace=workspace, role="reviewer")
    client = Client()
    client.force_login(reviewer)

    page = client.get(f"/w/{workspace.slug}/memories/{fact.pk}/")
    assert b"Correct subject" in page.content
    response = client.post(
        f"/w/{workspace.slug}/memories/{fact.pk}/subject/", {"entity": "Priya", "attribute": "manager"}
    )

    assert response.status_code == 302
    assert "about <strong>Priya&#x27;s manager</strong>" in client.get(response["Location"]).content.decode()


def test_a_viewer_cannot_correct_a_subject(workspace: Workspace) -> None:
    fact = remember(workspace, "The user lives in Lisbon.")
    viewer = UserFactory(username="vi")
    MembershipFactory(user=viewer, workspace=workspace, role="viewer")
    client = Client()
    client.force_login(viewer)

    response = client.post(f"/w/{workspace.slug}/memories/{fact.pk}/subject/", {"entity": "x"})

    assert response.status_code in (403, 404)
    assert Memory.objects.get(pk=fact.pk).subject_source == "text"


def test_corrections_export_as_json_lines(workspace: Workspace) -> None:
    fact = remember(workspace, "The user lives in Lisbon.")
    memory_subject_correct(memory=fact, actor=Actor.system("ana"), entity="user", attribute="home city")
    out = StringIO()

    call_command("export_subject_corrections", "--workspace", workspace.slug, stdout=out)

    [line] = out.getvalue().splitlines()
    assert json.loads(line)["attribute"] == "home city"
