"""Commit with a synchronous conflict check (``on_conflict`` = warn | supersede | raise).

The default commit (``ignore``) returns at once and leaves detection to the
worker. These modes embed the fact on the request path and run the offline
tiers within a time box (``MEMORYHUB_CHECK_TIME_BOX_MS``, 600 ms), so an agent
can ask "does this clash with anything?" before it moves on. When the box runs
out before the check is done, ``warn`` and ``supersede`` store the fact and say
``checked: false``; ``raise`` stores nothing (``action="unchecked"``): an agent
that asked to refuse a clashing fact never gets one stored unchecked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from conflicts.detection.pipeline import SLOT_READS_ON_REQUEST, Finding, detect
from conflicts.detection.verdict import Relation
from conflicts.services import same_subject
from memories.audit import Actor, Tracker, record_event
from memories.embeddings import get_embedder
from memories.models import Memory, Status
from memories.services import (
    MemoryInput,
    apply_link,
    apply_reinforce,
    apply_supersede,
    memory_build,
    memory_create,
    memory_understand,
)
from memoryhub.errors import TryAgainLater
from workspaces.models import Workspace

OnConflict = Literal["warn", "supersede", "raise"]
CLASHES = (Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION, Relation.DUPLICATE)


@dataclass
class CheckedCommit:
    action: Literal["stored", "superseded", "merged", "rejected", "unchecked"]
    memory: Memory | None
    findings: list[Finding] = field(default_factory=list)
    checked: bool = True

    def refusal(self) -> str:
        """Why a ``rejected`` commit stored nothing, in the words every interface answers with."""
        return f"not stored: the fact clashes with {len(self.findings)} existing memories (on_conflict=raise)"


def memory_commit(
    *, workspace: Workspace, actor: Actor, data: MemoryInput, on_conflict: OnConflict | Literal["ignore"]
) -> CheckedCommit:
    """An agent's commit, as the REST API and the MCP server both take it.

    ``ignore`` stores the fact at once and leaves detection to the worker
    (``checked: false``); the other modes check it first
    (``memory_create_checked``). A ``raise`` whose check could not finish in time
    is refused with ``TryAgainLater``; a clash under ``raise`` comes back as
    ``action="rejected"`` with the findings and nothing stored.
    """
    if on_conflict == "ignore":
        memory = memory_create(workspace=workspace, actor=actor, data=data)
        return CheckedCommit("stored", memory, checked=False)
    result = memory_create_checked(workspace=workspace, actor=actor, data=data, on_conflict=on_conflict)
    if result.action == "unchecked":
        raise TryAgainLater(
            "not stored: the conflict check did not finish in time, and on_conflict=raise stores only a checked "
            "fact; send it again",
            retry_after_seconds=1,
        )
    return result


def memory_create_checked(
    *, workspace: Workspace, actor: Actor, data: MemoryInput, on_conflict: OnConflict
) -> CheckedCommit:
    deadline = time.monotonic() + settings.MEMORYHUB_CHECK_TIME_BOX_MS / 1000
    embedder = get_embedder()
    vector = embedder.embed([data.text])[0]
    draft = _draft(workspace, actor, data, vector, embedder.name)
    findings: list[Finding] = []
    checked = time.monotonic() < deadline
    if checked:
        findings = [
            f
            for f in detect(draft, deadline=deadline, use_llm=False, slot_reads=SLOT_READS_ON_REQUEST)
            if f.verdict.relation in CLASHES and same_subject(f.older, f.newer, f.verdict)
        ]
        checked = time.monotonic() < deadline or bool(findings)
    if on_conflict == "raise" and findings:
        return CheckedCommit("rejected", None, findings, checked)
    if on_conflict == "raise" and not checked:
        return CheckedCommit("unchecked", None, findings, checked=False)

    with transaction.atomic():
        memory = memory_create(workspace=workspace, actor=actor, data=data, embedding=(vector, embedder.name))
        if on_conflict != "supersede" or not findings:
            return CheckedCommit("stored", memory, findings, checked)
        action = _apply_supersede_mode(memory, findings, actor)
    return CheckedCommit(action, memory, findings, checked)


def _draft(workspace: Workspace, actor: Actor, data: MemoryInput, vector: object, embedding_model: str) -> Memory:
    """An unsaved memory with the new fact's fields and embedding, to find and classify candidates."""
    draft = memory_build(workspace=workspace, actor=actor, data=data)
    draft.embedding, draft.embedding_model = vector, embedding_model
    draft.status = Status.ACTIVE
    memory_understand(draft)
    return draft


def _apply_supersede_mode(memory: Memory, findings: list[Finding], actor: Actor) -> Literal["superseded", "merged"]:
    """The agent says its new fact is current: it replaces what it clashes with."""
    tracker = Tracker()
    # A "duplicate" stating another number, version or date is no duplicate to keep the old one of.
    duplicate = next(
        (f for f in findings if f.verdict.relation == Relation.DUPLICATE and not f.verdict.values_differ), None
    )
    if duplicate is not None:
        # Same meaning as a fact already held: keep the old one, record the new one as merged into it.
        existing = duplicate.other
        tracker.update(memory, status=Status.MERGED, checked_at=timezone.now())
        memory.save()
        apply_link(tracker, src=memory, dst=existing, rel="merged_into", actor=actor)
        apply_reinforce(tracker, existing)
        existing.save()
        action: Literal["superseded", "merged"] = "merged"
    else:
        for finding in findings:
            other = finding.other
            apply_supersede(tracker, old=other, new=memory, actor=actor, annotation=f"used to: {other.text}")
        tracker.update(memory, checked_at=timezone.now())
        memory.save()
        action = "superseded"
    record_event(
        workspace=memory.workspace,
        actor=actor,
        verb="memory.commit_merged" if action == "merged" else "memory.commit_superseded",
        memory=memory,
        changes=tracker.changes,
        reason="on_conflict=supersede",
    )
    return action
