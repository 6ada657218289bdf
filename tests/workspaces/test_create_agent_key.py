from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from tests.factories import WorkspaceFactory
from workspaces.models import AgentKey, Workspace


def _run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_agent_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_it_creates_the_workspace_and_prints_the_key_once() -> None:
    out, err = _run("acme", "planner")

    workspace = Workspace.objects.get(slug="acme")
    key = AgentKey.objects.get(workspace=workspace)
    assert key.name == "planner"
    assert (key.scopes, key.agent) == (["read", "write"], "")
    full_key = out.strip()
    # stdout carries the key alone, so `KEY=$(manage.py create_agent_key …)` works.
    assert out == f"{full_key}\n"
    assert full_key.startswith(f"mh_{key.prefix}_")
    assert full_key not in err
    assert "created workspace acme" in err
    # Stored hashed: the secret itself is nowhere in the row.
    secret = full_key.split("_", 2)[2]
    assert secret not in key.secret_hash
    assert key.matches(secret)


@pytest.mark.django_db
def test_it_authenticates_with_the_printed_key() -> None:
    out, _ = _run("acme", "planner")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {out.strip()}")

    created = client.post("/api/v1/memories", {"text": "hello"}, content_type="application/json")
    listed = client.get("/api/v1/memories")

    assert created.status_code == 201
    assert listed.status_code == 200
    assert listed.json()["count"] == 1


@pytest.mark.django_db
def test_it_reuses_an_existing_workspace() -> None:
    existing = WorkspaceFactory(slug="acme", name="Acme Inc")

    first, err = _run("acme", "planner")
    second, _ = _run("acme", "researcher")

    assert Workspace.objects.count() == 1
    assert Workspace.objects.get().name == "Acme Inc"
    assert "created workspace" not in err
    assert set(AgentKey.objects.filter(workspace=existing).values_list("name", flat=True)) == {"planner", "researcher"}
    assert first.strip() != second.strip()


@pytest.mark.django_db
@pytest.mark.parametrize("slug", ["Acme", "acme corp", "acme!", "", "ácme"])
def test_it_refuses_a_bad_slug(slug: str) -> None:
    with pytest.raises(CommandError, match="slug"):
        _run(slug, "planner")

    assert not Workspace.objects.exists()
    assert not AgentKey.objects.exists()


@pytest.mark.django_db
def test_it_refuses_a_blank_name() -> None:
    with pytest.raises(CommandError, match="name"):
        _run("acme", "   ")

    assert not AgentKey.objects.exists()


@pytest.mark.django_db
def test_it_sets_scopes_and_pins_the_agent() -> None:
    _run("acme", "reviewer", "--scopes", "read,answer,admin", "--agent", "triage")

    key = AgentKey.objects.get()
    assert (key.scopes, key.agent) == (["read", "answer", "admin"], "triage")


@pytest.mark.django_db
def test_it_refuses_an_unknown_scope_and_creates_nothing() -> None:
    with pytest.raises(CommandError, match="unknown scope everything"):
        _run("acme", "planner", "--scopes", "read,everything")

    assert not Workspace.objects.exists()
    assert not AgentKey.objects.exists()
