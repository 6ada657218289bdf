"""After an upgrade reads subjects better, stored facts are read again; a reviewer's correction is kept."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memories.audit import Actor
from memories.models import Memory
from memories.selectors import memories_stale_subjects, pipeline_backlog
from memories.services import (
    MemoryInput,
    memories_reread_stale_subjects,
    memories_reread_subjects,
    memory_create,
    memory_subject_correct,
)
from memories.subjects import READER
from memories.tasks import REREAD_DRAIN, YIELD_SECONDS, requeue_stale_subjects, reread_stale_subjects
from memoryhub.drains import drain_request
from tests.memories.recall_helpers import remember
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db

SHOES = "The user's running shoes are Asics Novablast."


def _as_an_older_reader_read_it(memory: Memory) -> None:
    # What the reader made of "The user's running shoes are …" before it knew a possessive owns a noun.
    Memory.objects.filter(pk=memory.pk).update(
        subject_entity="user's", subject_attribute="exercise", subject_reader="an-older-one"
    )


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


# --- in the background, after an upgrade ------------------------------------------------------------------------


def test_a_fact_is_marked_with_the_reader_that_read_it(workspace: Workspace) -> None:
    assert remember(workspace, SHOES).subject_reader == READER


def test_the_background_job_reads_again_what_an_older_reader_read(workspace: Workspace) -> None:
    shoes, current = remember(workspace, SHOES), remember(workspace, "The staging cluster runs in eu-west-1.")
    _as_an_older_reader_read_it(shoes)
    corrected = remember(workspace, "Maya's usual coffee is an oat flat white.")
    memory_subject_correct(memory=corrected, actor=Actor.system("ana"), entity="maya", attribute="coffee order")
    Memory.objects.filter(pk=corrected.pk).update(subject_reader="an-older-one")
    waiting = memory_create(workspace=workspace, actor=Actor.system("test"), data=MemoryInput(text=SHOES))

    assert list(memories_stale_subjects()) == [shoes]
    assert memories_reread_stale_subjects() == 1

    assert subject(shoes) == ("user", "running shoes", "text")
    assert Memory.objects.get(pk=shoes.pk).subject_reader == READER
    assert subject(corrected) == ("maya", "coffee order", "reviewer")  # a person's word is never read over
    assert subject(waiting) == ("", "", "")  # read when it is embedded
    assert subject(current) == ("staging cluster", "region", "text")
    assert not memories_stale_subjects().exists()


def _checked(*memories: Memory) -> None:
    Memory.objects.filter(pk__in=[m.pk for m in memories]).update(checked_at=timezone.now())


def test_the_background_job_works_through_every_batch(workspace: Workspace) -> None:
    facts = [remember(workspace, SHOES) for _ in range(3)]
    for fact in facts:
        _as_an_older_reader_read_it(fact)
    _checked(*facts)

    assert reread_stale_subjects() == 3
    assert [subject(f)[:2] for f in facts] == [("user", "running shoes")] * 3
    assert reread_stale_subjects() == 0


def test_the_background_job_steps_aside_while_fresh_facts_wait(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    shoes = remember(workspace, SHOES)
    _as_an_older_reader_read_it(shoes)
    _checked(shoes)
    memory_create(workspace=workspace, actor=Actor.system("test"), data=MemoryInput(text="We moved to gRPC."))
    stepped_aside: list[int | None] = []
    monkeypatch.setattr(
        "memories.tasks.reread_stale_subjects.apply_async", lambda countdown=None: stepped_aside.append(countdown)
    )

    assert reread_stale_subjects() == 0
    assert stepped_aside == [YIELD_SECONDS]
    assert subject(shoes)[:2] == ("user's", "exercise")


def test_the_beat_job_asks_for_one_drain_only_while_facts_wait(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    monkeypatch.setattr("memories.tasks.reread_stale_subjects.delay", lambda: sent.append("reread"))
    shoes = remember(workspace, SHOES)

    assert requeue_stale_subjects() is False  # every fact read by this reader: nothing to ask
    assert sent == []

    _as_an_older_reader_read_it(shoes)
    assert requeue_stale_subjects() is True
    assert requeue_stale_subjects() is True  # one drain is already asked for: not a second
    assert sent == ["reread"]
    assert not drain_request(REREAD_DRAIN, lambda: sent.append("again"))


def test_the_status_shows_how_many_subjects_wait_to_be_read_again(workspace: Workspace) -> None:
    shoes = remember(workspace, SHOES)
    remember(workspace, "The staging cluster runs in eu-west-1.")
    _as_an_older_reader_read_it(shoes)

    assert pipeline_backlog(workspace=workspace).subjects_to_reread == 1
    memories_reread_stale_subjects()
    assert pipeline_backlog(workspace=workspace).subjects_to_reread == 0
