"""After an upgrade reads subjects better, stored facts are read again; a reviewer's correction is kept."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.audit import Actor
from memories.models import Memory
from memories.services import memories_reread_subjects, memory_subject_correct
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

SHOES = "The user's running shoes are Asics Novablast."


def _as_an_older_reader_read_it(memory: Memory) -> None:
    # What the reader made of "The user's running shoes are …" before it knew a possessive owns a noun.
    Memory.objects.filter(pk=memory.pk).update(subject_entity="user's", subject_attribute="exercise")


def subject(memory: Memory) -> tuple[str, str, str]:
    memory.refresh_from_db()
    return memory.subject_entity, memory.subject_attribute, memory.subject_source


def test_a_fact_read_by_an_older_reader_is_read_again(workspace: Workspace) -> None:
    shoes = remember(workspace, SHOES)
    _as_an_older_reader_read_it(shoes)

    out = StringIO()
    call_command("reread_subjects", stdout=out)

    assert subject(shoes) == ("user", "running shoes", "text")
    assert '→ "the user\'s running shoes"' in out.getvalue()
    assert "changed the subject of 1" in out.getvalue()


def test_a_reviewers_correction_is_kept(workspace: Workspace) -> None:
    fact = remember(workspace, SHOES)
    memory_subject_correct(memory=fact, actor=Actor.system("ana"), entity="user", attribute="footwear")

    call_command("reread_subjects", stdout=StringIO())

    assert subject(fact) == ("user", "footwear", "reviewer")


def test_a_dry_run_writes_nothing(workspace: Workspace) -> None:
    shoes = remember(workspace, SHOES)
    _as_an_older_reader_read_it(shoes)

    out = StringIO()
    call_command("reread_subjects", "--dry-run", stdout=out)

    assert subject(shoes) == ("user's", "exercise", "text")
    assert "would change the subject of 1" in out.getvalue()


def test_batches_go_on_after_the_last_fact_read(workspace: Workspace) -> None:
    facts = [remember(workspace, SHOES) for _ in range(3)]
    for fact in facts:
        _as_an_older_reader_read_it(fact)

    first = memories_reread_subjects(limit=2)
    second = memories_reread_subjects(after=first.last, limit=2)
    done = memories_reread_subjects(after=second.last, limit=2)

    assert (first.read, second.read, done.read, done.last) == (2, 1, 0, None)
    assert [subject(f)[:2] for f in facts] == [("user", "running shoes")] * 3


def test_a_batch_of_none_is_refused() -> None:
    with pytest.raises(CommandError, match="--batch must be at least 1"):
        call_command("reread_subjects", "--batch", "0", stdout=StringIO())
