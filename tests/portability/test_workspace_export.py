from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from conflicts.feedback import card_answer
from conflicts.models import Answer, ConflictCard, Tolerance, Uncertainty
from memories.audit import Actor
from memories.models import Event, Link, Memory, Status
from memories.services import (
    MemoryInput,
    link_create,
    memories_embed_pending,
    memory_create,
    memory_forget,
    memory_reinforce,
    memory_supersede,
)
from memoryhub.demo import demo_seed
from tests.conflicts.cards import pair_card
from tests.factories import UserFactory, WorkspaceFactory, agent_key_for
from tests.portability.roundtrip import export, renamed, rows
from workspaces.models import Workspace


def build(workspace: Workspace) -> dict[str, Any]:
    """A workspace with every kind of row, made through the services."""
    key, _ = agent_key_for(workspace, "planner")
    agent = Actor.for_agent(key)
    reviewer = UserFactory(username="rita")

    def commit(text: str, **fields: Any) -> Memory:
        return memory_create(workspace=workspace, actor=agent, data=MemoryInput(text=text, **fields))

    lives = [commit(f"The user lives in {city}", key="home_city", tags=["home"]) for city in ("Oslo", "Lyon", "Rome")]
    memory_supersede(old=lives[0], new=lives[1], actor=agent, annotation="used to live in Oslo")
    memory_supersede(old=lives[1], new=lives[2], actor=agent)
    gone = commit("The user's locker code is 1234", metadata={"note": "temporary"}, importance=0.2)
    memory_forget(memory=gone, actor=agent, reason="stale")
    coffee = commit("The user drinks coffee black", source="inferred", polarity=1)
    memories_embed_pending()
    memory_reinforce(memory=coffee, actor=Actor.for_user(reviewer))
    link_create(src=coffee, dst=lives[2], rel="x-morning", actor=agent, weight=0.5)
    card, _, _ = pair_card(workspace)
    card_answer(card=card, choice="no", actor=Actor.for_user(reviewer), note="she changed her diet")
    commit("Unembedded fact, still waiting")
    return {"lives": lives}


@pytest.mark.django_db(transaction=True)
def test_it_round_trips_into_a_new_workspace(tmp_path: Path) -> None:
    source = WorkspaceFactory(slug="acme")
    build(source)
    first = rows(export("acme", tmp_path, "first.jsonl"))
    header = first[0]
    assert header["format"] == "memoryhub-workspace"
    assert header["version"] == 1
    assert header["counts"]["memory"] == Memory.objects.filter(workspace=source).count() == 8
    assert {r["type"] for r in first[1:]} >= {"memory", "uncertainty", "card", "answer", "link", "tolerance", "event"}
    stderr = _import("copy", tmp_path / "first.jsonl", "--progress-every", "5")
    assert "5 rows imported" in stderr

    second = rows(export("copy", tmp_path, "second.jsonl"))
    assert renamed(first, second) == second
    copy = Workspace.objects.get(slug="copy")
    # The UUIDs were taken by acme in this hub, so the copy got its own; the chain still holds.
    assert not set(Memory.objects.filter(workspace=copy).values_list("id", flat=True)) & set(
        Memory.objects.filter(workspace=source).values_list("id", flat=True)
    )
    oslo = Memory.objects.get(workspace=copy, text="The user lives in Oslo")
    assert oslo.superseded_by is not None
    assert oslo.superseded_by.superseded_by is not None
    assert oslo.valid_to is not None
    assert oslo.annotation == "used to live in Oslo"
    assert Memory.objects.get(workspace=copy, text__startswith="The user's locker").status == Status.FORGOTTEN
    answer = Answer.objects.get(card__workspace=copy)
    assert answer.user is not None
    assert answer.user.username == "rita"
    assert Tolerance.objects.get(workspace=copy).value == Tolerance.objects.get(workspace=source).value


@pytest.mark.django_db(transaction=True)
def test_it_keeps_the_original_ids_in_an_empty_hub(tmp_path: Path) -> None:
    source = WorkspaceFactory(slug="acme")
    build(source)
    ids = set(Memory.objects.filter(workspace=source).values_list("id", flat=True))
    first = rows(export("acme", tmp_path, "first.jsonl"))
    source.delete()
    _import("acme", tmp_path / "first.jsonl")

    assert set(Memory.objects.values_list("id", flat=True)) == ids
    second = rows(export("acme", tmp_path, "second.jsonl"))
    assert renamed(first, second) == second
    # Only integer ids (links, events, answers) were renumbered.
    assert [r["id"] for r in first if r["type"] in {"memory", "card", "uncertainty"}] == [
        r["id"] for r in second if r["type"] in {"memory", "card", "uncertainty"}
    ]


@pytest.mark.django_db(transaction=True)
def test_it_hands_unembedded_facts_to_the_embedding_queue(tmp_path: Path, monkeypatch: Any) -> None:
    from memories import hooks

    announced: list[Any] = []
    monkeypatch.setattr(hooks.facts_waiting, "_receivers", [announced.append])
    source = WorkspaceFactory(slug="acme")
    build(source)
    export("acme", tmp_path, "first.jsonl")
    announced.clear()
    _import("copy", tmp_path / "first.jsonl")

    waiting = Memory.objects.filter(workspace__slug="copy", status=Status.PENDING_EMBED)
    assert "Unembedded fact, still waiting" in {m.text for m in waiting}
    assert [set(event.memory_ids) for event in announced] == [{m.pk for m in waiting}]
    embedded = Memory.objects.get(workspace__slug="copy", text="The user drinks coffee black")
    assert embedded.embedding is not None
    assert embedded.embedding_model


@pytest.mark.django_db
def test_it_refuses_a_workspace_that_holds_rows(tmp_path: Path) -> None:
    source = WorkspaceFactory(slug="acme")
    build(source)
    export("acme", tmp_path, "first.jsonl")
    before = Memory.objects.count()

    with pytest.raises(CommandError, match="already holds memories"):
        _import("acme", tmp_path / "first.jsonl")
    assert Memory.objects.count() == before

    _import("acme", tmp_path / "first.jsonl", "--merge")
    assert Memory.objects.filter(workspace=source).count() == 2 * 8


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "line 4: not valid JSON"),
        ('{"type": "planet"}', "line 4: expected an object whose type is one of"),
        ('{"type": "memory", "id": "nope", "text": "x"}', "line 4: memory.id is not a UUID"),
        ('{"type": "memory", "id": "%s", "text": "x", "kind": "poem"}', "line 4: memory: kind:"),
    ],
)
def test_it_names_the_line_of_a_bad_row_and_imports_nothing(tmp_path: Path, bad: str, message: str) -> None:
    build(WorkspaceFactory(slug="acme"))
    lines = Path(export("acme", tmp_path, "first.jsonl")).read_text(encoding="utf-8").splitlines()
    lines.insert(3, bad.replace("%s", "00000000-0000-4000-8000-000000000001"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=message):
        _import("copy", broken)
    assert not Workspace.objects.filter(slug="copy").exists()


@pytest.mark.django_db
def test_it_refuses_a_file_cut_short(tmp_path: Path) -> None:
    build(WorkspaceFactory(slug="acme"))
    lines = Path(export("acme", tmp_path, "first.jsonl")).read_text(encoding="utf-8").splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match="is the file cut short"):
        _import("copy", short)
    assert not Event.objects.filter(workspace__slug="copy").exists()


@pytest.mark.django_db
def test_it_refuses_a_forward_reference(tmp_path: Path) -> None:
    header = {"type": "header", "format": "memoryhub-workspace", "version": 1, "workspace": {}}
    link = {"type": "link", "id": 1, "src": "00000000-0000-4000-8000-000000000001", "dst": "x", "rel": "related"}
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(link) + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=r"line 2: link.src refers to memory .* which no earlier line"):
        _import("copy", path)
    assert not Link.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_demo_workspace_round_trips(tmp_path: Path) -> None:
    demo = WorkspaceFactory(slug="demo")
    demo_seed(workspace=demo)
    assert ConflictCard.objects.filter(workspace=demo).exists()
    assert Uncertainty.objects.filter(workspace=demo).exists()
    first = rows(export("demo", tmp_path, "first.jsonl"))
    _import("demo-copy", tmp_path / "first.jsonl")
    second = rows(export("demo-copy", tmp_path, "second.jsonl"))
    assert renamed(first, second) == second


def _import(slug: str, path: Path, *args: str) -> str:
    from io import StringIO

    out, err = StringIO(), StringIO()
    call_command("import_workspace", slug, str(path), *args, stdout=out, stderr=err)
    return err.getvalue()
