"""Every write to memories and links. Views, API handlers and tasks call these."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from memories import embeddings, hooks, speech_acts, subjects
from memories.audit import Actor, RowChange, Tracker, record_event, record_events, snapshot
from memories.models import (
    INITIAL_CONFIDENCE,
    LIVE_STATUSES,
    DecaySchedule,
    Event,
    Kind,
    Link,
    Memory,
    Reliability,
    Source,
    Status,
)
from memories.selectors import (
    memories_stale_subjects,
    memories_subjects_read_from_text,
    memories_with_unreadable_timestamps,
)
from memories.subjects import Subject
from memoryhub.errors import ConflictError, InvalidInput
from memoryhub.storable import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from workspaces.models import Workspace

if TYPE_CHECKING:
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

# Fields a memory is created with; the audit row records them.
CREATED_FIELDS = [
    "kind",
    "text",
    "key",
    "scope",
    "tags",
    "source",
    "agent",
    "importance",
    "confidence",
    "reliability",
    "status",
    "polarity",
    "valid_from",
    "recorded_at",
]
LINK_FIELDS = ["src", "dst", "rel", "weight", "created_by"]


@dataclass
class MemoryInput:
    text: str
    kind: str = Kind.FACT
    key: str = ""
    scope: str = ""
    tags: list[str] = field(default_factory=list)
    source: str = Source.EXPLICIT
    agent: str = ""
    importance: float = 0.5
    confidence: float | None = None
    polarity: int = 0
    valid_from: dt.datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def memory_build(*, workspace: Workspace, actor: Actor, data: MemoryInput) -> Memory:
    """The unsaved memory ``data`` describes, as ``pending_embed`` (also the synchronous check's draft)."""
    now = timezone.now()
    confidence = data.confidence if data.confidence is not None else INITIAL_CONFIDENCE[Source(data.source)]
    return Memory(
        workspace=workspace,
        kind=data.kind,
        text=data.text,
        key=data.key,
        scope=data.scope,
        tags=data.tags,
        source=data.source,
        agent=data.agent or actor.name,
        agent_key=actor.agent_key,
        importance=data.importance,
        confidence=confidence,
        evidence_confidence=confidence,
        evidence_at=now,
        # Seed 000: what an agent inferred or found out is uncertain until someone confirms it.
        reliability=Reliability.RELIABLE if data.source == Source.EXPLICIT else Reliability.UNCERTAIN,
        polarity=data.polarity,
        metadata=data.metadata,
        valid_from=data.valid_from or now,
        recorded_at=now,
        status=Status.PENDING_EMBED,
    )


def memory_create(
    *,
    workspace: Workspace,
    actor: Actor,
    data: MemoryInput,
    embedding: tuple[NDArray[np.float32], str] | None = None,
) -> Memory:
    """Store a fact as ``pending_embed`` and queue its embedding once committed.

    The fact is findable by full-text search immediately; vector search and
    detection pick it up when the worker has embedded it. A caller that already
    embedded the text (a synchronous conflict check) passes ``embedding`` as
    ``(vector, model name)``: the fact is stored active and queued for detection.
    """
    memory = memory_build(workspace=workspace, actor=actor, data=data)
    now = memory.recorded_at
    if embedding is not None:
        memory.embedding, memory.embedding_model = embedding
        memory.status = Status.ACTIVE
        memory.embedded_at = now
        memory_understand(memory)
    tracker = Tracker()
    with transaction.atomic():
        memory.save(force_insert=True)
        tracker.created(memory, CREATED_FIELDS)
        record_event(workspace=workspace, actor=actor, verb="memory.create", memory=memory, changes=tracker.changes)
        if embedding is None:
            transaction.on_commit(lambda: _announce_waiting(memory.id))
        else:
            transaction.on_commit(lambda: _announce_embedded([memory.id]))
    return memory


@dataclass(frozen=True)
class BatchItem:
    """One fact of a batch commit: stored, or merged into a live fact with the same text."""

    index: int
    memory: Memory
    action: str  # "stored" | "merged"


def memories_create_batch(
    *, workspace: Workspace, actor: Actor, items: list[tuple[int, MemoryInput]]
) -> list[BatchItem]:
    """Store many facts in one transaction, one ``memory.create`` event each, one embedding drain for all.

    An item whose text (whitespace and case aside) is already a live fact of the
    workspace in the same scope, or an earlier item of the batch, is not stored
    again: the existing fact is reinforced (``merged``), as a second agent
    confirming it. ``items`` carry the caller's indexes so results map back.
    """

    def same(text: str, scope: str) -> tuple[str, str]:
        return " ".join(text.split()).casefold(), scope

    existing: dict[tuple[str, str], Memory] = {}
    texts = {data.text for _, data in items}
    for memory in Memory.objects.filter(workspace=workspace, status__in=LIVE_STATUSES, text__in=texts).defer(
        "embedding"
    ):
        existing.setdefault(same(memory.text, memory.scope), memory)
    results: list[BatchItem] = []
    stored: list[Memory] = []
    with transaction.atomic():
        reinforced: dict[uuid.UUID, Memory] = {}
        for index, data in items:
            known = existing.get(same(data.text, data.scope))
            if known is not None:
                results.append(BatchItem(index, known, "merged"))
                reinforced[known.pk] = known
                continue
            memory = memory_build(workspace=workspace, actor=actor, data=data)
            existing[same(data.text, data.scope)] = memory
            stored.append(memory)
            results.append(BatchItem(index, memory, "stored"))
        Memory.objects.bulk_create(stored)
        entries = []
        for memory in stored:
            tracker = Tracker()
            tracker.created(memory, CREATED_FIELDS)
            entries.append((memory, tracker.changes))
        record_events(workspace=workspace, actor=actor, verb="memory.create", entries=entries)
        stored_ids = [m.pk for m in stored]
        fresh = set(stored_ids)
        for memory in reinforced.values():
            if memory.pk in fresh:
                continue  # a duplicate within the batch: the first copy counts once
            memory = Memory.objects.select_for_update().get(pk=memory.pk)
            tracker = Tracker()
            apply_reinforce(tracker, memory)
            memory.save(update_fields=[*REINFORCE_FIELDS, "updated_at"])
            record_event(
                workspace=workspace,
                actor=actor,
                verb="memory.reinforce",
                memory=memory,
                changes=tracker.changes,
                reason="batch commit: the same fact again",
            )
        if stored_ids:
            transaction.on_commit(lambda: hooks.facts_waiting.announce(hooks.FactsWaiting(stored_ids)))
    return results


def _announce_waiting(memory_id: uuid.UUID) -> None:
    # The embedding queue (memories.tasks) listens.
    hooks.facts_waiting.announce(hooks.FactsWaiting([memory_id]))


def _announce_embedded(memory_ids: list[uuid.UUID]) -> None:
    # Detection (conflicts, above) listens; the facts are committed whatever a receiver does.
    hooks.facts_embedded.announce(hooks.FactsEmbedded(memory_ids))


def memory_forget(*, memory: Memory, actor: Actor, reason: str = "") -> bool:
    """Soft-forget: the row stays (audit, undo); recall and lists no longer show it."""
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory.pk)
        if memory.status == Status.FORGOTTEN:
            return False
        tracker = Tracker()
        tracker.update(memory, status=Status.FORGOTTEN, expired_at=timezone.now())
        memory.save(update_fields=["status", "expired_at", "updated_at"])
        record_event(
            workspace=memory.workspace,
            actor=actor,
            verb="memory.forget",
            memory=memory,
            changes=tracker.changes,
            reason=reason,
        )
    return True


def memory_supersede(
    *, old: Memory, new: Memory, actor: Actor, reason: str = "", automatic: bool = False, annotation: str = ""
) -> bool:
    """Mark ``old`` as replaced by ``new``; returns False when it already was.

    Refuses self-supersede, a target outside the workspace's live facts, an old
    fact already superseded by another, and anything that would close a cycle.
    """
    with transaction.atomic():
        tracker = Tracker()
        changed = apply_supersede(tracker, old=old, new=new, actor=actor, annotation=annotation)
        if changed:
            record_event(
                workspace=old.workspace,
                actor=actor,
                verb="memory.supersede",
                memory=old,
                changes=tracker.changes,
                reason=reason,
                automatic=automatic,
            )
    return changed


def apply_supersede(tracker: Tracker, *, old: Memory, new: Memory, actor: Actor, annotation: str = "") -> bool:
    """The supersede itself, recorded on ``tracker``; the caller writes the event.

    Call inside a transaction. Conflict resolution uses it to put a supersede
    and the records explaining it into one event, so one undo reverts them all.
    """
    if old.pk == new.pk:
        raise InvalidInput("a memory cannot supersede itself", field="by")
    if old.workspace_id != new.workspace_id:
        raise InvalidInput("no memory with this id in the workspace", field="by")
    # Lock both rows in a fixed order so two opposite supersedes cannot interleave.
    locked = {m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=[old.pk, new.pk]).order_by("pk")}
    old, new = locked[old.pk], locked[new.pk]
    if old.superseded_by_id == new.pk:
        return False
    if old.superseded_by_id is not None:
        raise ConflictError(f"memory {old.pk} is already superseded by {old.superseded_by_id}; restore it first")
    if new.status not in LIVE_STATUSES:
        raise ConflictError(f"memory {new.pk} is {new.status} and cannot supersede another")
    if old.status not in LIVE_STATUSES:
        raise ConflictError(f"memory {old.pk} is {old.status}; restore it before superseding it")
    # The row locks stop two opposite supersedes, not two on disjoint rows that
    # close a longer cycle together (a→b, c→d, then b→c and d→a at once): one lock
    # per workspace makes each cycle check see the other's write. Taken after the
    # row locks because callers (conflict resolution) lock their rows first.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"supersede:{old.workspace_id}"])
    if _chain_reaches(start=new, target=old):
        raise ConflictError(f"superseding {old.pk} by {new.pk} would create a cycle")

    now = timezone.now()
    valid_to = new.valid_from if old.valid_from < new.valid_from <= now else now
    values: dict[str, Any] = {
        "reliability": Reliability.SUPERSEDED,
        "superseded_by": new,
        "superseded_at": now,
        "valid_to": valid_to,
    }
    if annotation:
        values["annotation"] = annotation
    changed = tracker.update(old, **values)
    old.save(update_fields=[*changed, "updated_at"])
    memory_decay_due_now(memory_ids=[old.pk])  # superseded facts fade 3× faster: the decay job recomputes it now
    apply_link(tracker, src=new, dst=old, rel="supersedes", actor=actor)
    return True


def apply_link(tracker: Tracker, *, src: Memory, dst: Memory, rel: str, actor: Actor, weight: float = 1.0) -> Link:
    link, created = Link.objects.get_or_create(
        src=src,
        dst=dst,
        rel=rel,
        defaults={"workspace_id": src.workspace_id, "weight": weight, "created_by": actor.name},
    )
    if created:
        tracker.created(link, LINK_FIELDS)
    return link


def _chain_reaches(*, start: Memory, target: Memory) -> bool:
    """Does following ``superseded_by`` from ``start`` arrive at ``target``?"""
    seen: set[uuid.UUID] = set()
    current: uuid.UUID | None = start.superseded_by_id
    while current is not None and current not in seen:
        if current == target.pk:
            return True
        seen.add(current)
        current = Memory.objects.filter(pk=current).values_list("superseded_by_id", flat=True).first()
    return False


def memory_restore(*, memory: Memory, actor: Actor, reason: str = "") -> bool:
    """Undo a supersede or a forget; returns False when there was nothing to restore."""
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory.pk)
        tracker = Tracker()
        if memory.status == Status.FORGOTTEN:
            status = Status.ACTIVE if memory.embedding is not None else Status.PENDING_EMBED
            tracker.update(memory, status=status, expired_at=None)
        if memory.superseded_by_id is not None or memory.reliability == Reliability.SUPERSEDED:
            for link in Link.objects.filter(dst=memory, rel="supersedes", src_id=memory.superseded_by_id):
                tracker.deleted(link, LINK_FIELDS)
                link.delete()
            tracker.update(
                memory, reliability=Reliability.RELIABLE, superseded_by=None, superseded_at=None, valid_to=None
            )
        if not tracker.changes:
            return False
        memory.save()
        record_event(
            workspace=memory.workspace,
            actor=actor,
            verb="memory.restore",
            memory=memory,
            changes=tracker.changes,
            reason=reason,
        )
        if memory.status == Status.PENDING_EMBED:
            memory_id = memory.pk
            transaction.on_commit(lambda: _announce_waiting(memory_id))
    return True


# Evidence grows confidence asymptotically: many weak signals never reach 1.0.
REINFORCE_RATE = 0.05


def memory_reinforce(*, memory: Memory, actor: Actor, reason: str = "") -> Memory:
    """Another agent or person confirmed the fact: count it and raise confidence."""
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory.pk)
        if memory.status not in LIVE_STATUSES:
            raise ConflictError(f"memory {memory.pk} is {memory.status}; restore it before reinforcing it")
        tracker = Tracker()
        apply_reinforce(tracker, memory)
        memory.save(update_fields=[*REINFORCE_FIELDS, "updated_at"])
        record_event(
            workspace=memory.workspace,
            actor=actor,
            verb="memory.reinforce",
            memory=memory,
            changes=tracker.changes,
            reason=reason,
        )
    # New evidence may settle a dispute this fact was part of (conflicts listens).
    hooks.fact_reinforced.announce(hooks.FactReinforced(memory, actor))
    memory.refresh_from_db()
    return memory


SUBJECT_CORRECT_VERB = "memory.subject_correct"


def memory_subject_correct(*, memory: Memory, actor: Actor, entity: str, attribute: str, note: str = "") -> Memory:
    """A reviewer says what the fact is about; kept over what the hub read, and kept as training data.

    The event holds what the hub had read (``before``) and what the reviewer set
    (``after``) beside the fact's text: ``selectors.subject_corrections`` exports
    them (``python manage.py export_subject_corrections``). Entity and attribute
    are folded as the hub folds its own ("The User" → "user", ``home_city`` → "home city").
    """
    folded_entity = subjects.normalise_entity(entity.strip())
    folded_attribute = subjects.canonical_attribute(attribute.strip()) if attribute.strip() else ""
    if not folded_entity:
        raise InvalidInput("name who or what the fact is about", field="entity")
    if len(folded_entity) > 200:
        raise InvalidInput("at most 200 characters", field="entity")
    if len(folded_attribute) > 120:
        raise InvalidInput("at most 120 characters", field="attribute")
    with transaction.atomic():
        memory = Memory.objects.select_for_update().get(pk=memory.pk)
        tracker = Tracker()
        tracker.update(
            memory,
            subject_entity=folded_entity,
            subject_attribute=folded_attribute,
            subject_source=subjects.SOURCE_REVIEWER,
        )
        memory.save(update_fields=["subject_entity", "subject_attribute", "subject_source", "updated_at"])
        record_event(
            workspace=memory.workspace,
            actor=actor,
            verb=SUBJECT_CORRECT_VERB,
            memory=memory,
            changes=tracker.changes,
            reason=note,
        )
    return memory


REINFORCE_FIELDS = [
    "reinforcement_count",
    "last_reinforced_at",
    "confidence",
    "evidence_confidence",
    "evidence_at",
]


def evidence_confidence(memory: Memory) -> float:
    """The confidence the evidence supports, before time decay (docs/UPKEEP.md)."""
    return memory.evidence_confidence if memory.evidence_confidence is not None else memory.confidence


def apply_reinforce(tracker: Tracker, memory: Memory, *, rate: float = REINFORCE_RATE) -> None:
    """Count one more confirmation: the evidence confidence closes ``rate`` of its gap to 1.

    New evidence also restarts time decay, so ``confidence`` is the evidence
    confidence again and the decay job recomputes it from now on.
    """
    now = timezone.now()
    raised = round(evidence_confidence(memory) + rate * (1 - evidence_confidence(memory)), 6)
    tracker.update(
        memory,
        reinforcement_count=memory.reinforcement_count + 1,
        last_reinforced_at=now,
        confidence=raised,
        evidence_confidence=raised,
        evidence_at=now,
    )
    memory_decay_due_now(memory_ids=[memory.pk])


def memory_decay_due_now(*, memory_ids: list[uuid.UUID]) -> None:
    """Their evidence changed: the decay job recomputes these facts' confidence on its next run.

    An upsert into ``DecaySchedule`` (empty ``due_at``: due now), in the caller's
    transaction; ids of rows not (yet) in the table are skipped: a fact without a
    schedule row is due anyway.
    """
    if not memory_ids:
        return
    memory_table = connection.ops.quote_name(Memory._meta.db_table)
    schedule_table = connection.ops.quote_name(DecaySchedule._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {schedule_table} (memory_id, workspace_id, due_at)
            SELECT id, workspace_id, NULL FROM {memory_table} WHERE id = ANY(%s::uuid[])
            ON CONFLICT (memory_id) DO UPDATE SET due_at = NULL
            """,  # noqa: S608 - the table names come from the models
            [list(memory_ids)],
        )


def apply_merge(tracker: Tracker, *, winner: Memory, losers: list[Memory], actor: Actor) -> None:
    """Consolidate near-duplicates into ``winner`` (seed 002), recorded on ``tracker``; call in a transaction.

    Each loser becomes ``merged`` with ``merged_into`` the winner and a
    ``merged_into`` link; the winner's lineage (``derived_from`` links) becomes
    the union of its own, the losers' and the losers themselves; evidence counts
    add up, and each loser counts as one confirmation of the winner.
    """
    total = winner.evidence_count
    for loser in losers:
        tracker.update(loser, status=Status.MERGED, merged_into=winner)
        loser.save()
        apply_link(tracker, src=loser, dst=winner, rel="merged_into", actor=actor)
        apply_link(tracker, src=winner, dst=loser, rel="derived_from", actor=actor)
        for inherited in Link.objects.filter(src=loser, rel="derived_from").exclude(dst=winner).select_related("dst"):
            apply_link(tracker, src=winner, dst=inherited.dst, rel="derived_from", actor=actor)
        total += loser.evidence_count
        apply_reinforce(tracker, winner)
    tracker.update(winner, evidence_count=total)
    winner.save()


def lineage(memory: Memory) -> list[Memory]:
    """The fact and everything it was consolidated from (``derived_from``, transitively), oldest first."""
    seen = {memory.pk: memory}
    frontier = [memory.pk]
    while frontier:
        found = Link.objects.filter(src_id__in=frontier, rel="derived_from").select_related("dst")
        frontier = []
        for link in found:
            if link.dst_id not in seen:
                seen[link.dst_id] = link.dst
                frontier.append(link.dst_id)
    return sorted(seen.values(), key=lambda m: (m.recorded_at, str(m.pk)))


# Relations that mirror a memory's own state; only the matching actions may change them.
MANAGED_RELS = {
    "supersedes": "use POST /memories/{id}/supersede and /restore",
    "merged_into": "merges are made by detection and undone through their event",
}


def link_create(*, src: Memory, dst: Memory, rel: str, actor: Actor, weight: float = 1.0) -> tuple[Link, bool]:
    """Create a typed edge; the same ``(src, dst, rel)`` twice returns the first one."""
    if rel in MANAGED_RELS:
        raise InvalidInput(f"'{rel}' links are kept by the hub: {MANAGED_RELS[rel]}", field="rel")
    if src.pk == dst.pk:
        raise InvalidInput("a memory cannot link to itself", field="dst")
    if src.workspace_id != dst.workspace_id:
        raise InvalidInput("no memory with this id in the workspace", field="dst")
    with transaction.atomic():
        link, created = Link.objects.get_or_create(
            src=src,
            dst=dst,
            rel=rel,
            defaults={"workspace_id": src.workspace_id, "weight": weight, "created_by": actor.name},
        )
        if created:
            tracker = Tracker()
            tracker.created(link, LINK_FIELDS)
            record_event(workspace=src.workspace, actor=actor, verb="link.create", memory=src, changes=tracker.changes)
    return link, created


def link_delete(*, link: Link, actor: Actor) -> None:
    if link.rel in MANAGED_RELS:
        raise ConflictError(f"'{link.rel}' links are kept by the hub: {MANAGED_RELS[link.rel]}")
    with transaction.atomic():
        tracker = Tracker()
        tracker.deleted(link, LINK_FIELDS)
        record_event(
            workspace=link.workspace, actor=actor, verb="link.delete", memory=link.src, changes=tracker.changes
        )
        link.delete()


def memories_embed_pending(*, first_id: uuid.UUID | None = None, limit: int | None = None) -> int:
    """Embed up to ``limit`` pending facts (``first_id`` first) and make them active.

    Rows are claimed with ``FOR UPDATE SKIP LOCKED`` so parallel workers take
    disjoint batches, and the transaction holds the claim: a worker that dies
    mid-batch rolls back and the facts stay ``pending_embed`` for the next run.
    Returns how many facts were embedded.
    """
    limit = limit or settings.MEMORYHUB_EMBED_BATCH_SIZE
    embedder = embeddings.get_embedder()
    with transaction.atomic():
        pending = Memory.objects.filter(status=Status.PENDING_EMBED).select_for_update(skip_locked=True)
        batch: list[Memory] = []
        if first_id is not None:
            batch = list(pending.filter(pk=first_id).only(*UNDERSTOOD_FROM))
        others = pending.exclude(pk=first_id) if first_id is not None else pending
        batch += list(others.order_by("recorded_at").only(*UNDERSTOOD_FROM)[: limit - len(batch)])
        if not batch:
            return 0
        now = _embed_into(batch, embedder)
        for memory in batch:
            memory.status = Status.ACTIVE
            memory.updated_at = now
        Memory.objects.bulk_update(batch, [*EMBEDDING_FIELDS, "status", "updated_at"])
        _record_embedded(batch)
        embedded_ids = [m.pk for m in batch]
        transaction.on_commit(lambda: _announce_embedded(embedded_ids))
    return len(batch)


def memories_stale_embeddings() -> QuerySet[Memory]:
    """Facts whose vector came from another embedder than the one configured now."""
    return Memory.objects.filter(embedding__isnull=False).exclude(embedding_model=embeddings.get_embedder().name)


def memories_reembed_stale(*, limit: int | None = None) -> int:
    """Re-embed up to ``limit`` facts whose vector came from another embedder; how many it did.

    Vectors of two models do not compare (MiniLM's and OpenAI's live in
    different spaces), so after the embedder changes the old ones are replaced
    batch by batch: claimed with ``SKIP LOCKED``, the fact itself untouched.
    """
    limit = limit or settings.MEMORYHUB_EMBED_BATCH_SIZE
    embedder = embeddings.get_embedder()
    with transaction.atomic():
        batch = list(
            memories_stale_embeddings()
            .select_for_update(skip_locked=True)
            .order_by("pk")
            .only(*UNDERSTOOD_FROM)[:limit]
        )
        if batch:
            _embed_into(batch, embedder)
            Memory.objects.bulk_update(batch, EMBEDDING_FIELDS)
    return len(batch)


# Embedding a fact also works out what it is about and whether it is a claim (``memory_understand``).
EMBEDDING_FIELDS = [
    "embedding",
    "embedded_at",
    "embedding_model",
    "subject_entity",
    "subject_attribute",
    "subject_source",
    "subject_reader",
    "speech_act",
]
# What embedding reads of a fact.
UNDERSTOOD_FROM = ("id", "text", "key", "workspace_id", "subject_entity", "subject_attribute", "subject_source")


SUBJECT_FIELDS = ["subject_entity", "subject_attribute", "subject_source", "subject_reader"]


@dataclass(frozen=True)
class SubjectsReread:
    """One batch of :func:`memories_reread_subjects`: where it ended, and what it read and changed."""

    last: uuid.UUID | None  # the last fact read; the next batch starts after it (None: nothing left)
    read: int
    changed: list[tuple[Memory, Subject]]  # each changed fact, with the subject it had before


def memories_reread_subjects(*, after: uuid.UUID | None = None, limit: int = 500, save: bool = True) -> SubjectsReread:
    """Read again what up to ``limit`` facts (after ``after``, in id order) are about, with today's reader.

    An upgrade may read subjects better ("The user's running shoes are …" is about the user's running
    shoes, not about an entity "user's"); facts stored before it keep what the old reader made of
    them, and the guard would compare their subjects with newer facts' read another way. A reviewer's
    correction is kept, and facts not yet embedded are read when they are. Only the subject changes;
    decisions already taken stay as they are. ``save=False`` reports without writing.
    """
    facts = memories_subjects_read_from_text().order_by("pk").only("id", "text", "key", *SUBJECT_FIELDS)
    if after is not None:
        facts = facts.filter(pk__gt=after)
    with transaction.atomic():
        batch = list((facts.select_for_update(of=("self",)) if save else facts)[:limit])
        changed = _read_subjects_again(batch)
        if save:
            _save_subjects(batch, changed)
    return SubjectsReread(batch[-1].pk if batch else None, len(batch), changed)


def memories_reread_stale_subjects(*, limit: int = 500) -> int:
    """Read again, with today's reader, up to ``limit`` facts an older reader read; how many it read.

    The background job after an upgrade (``memories.tasks.reread_stale_subjects``): claimed with ``SKIP
    LOCKED``, a batch per transaction, each fact marked with the reader that read it. Only the subject
    changes; decisions already taken stay as they are.
    """
    with transaction.atomic():
        batch = list(
            memories_stale_subjects()
            .select_for_update(skip_locked=True, of=("self",))
            .order_by("pk")
            .only("id", "text", "key", *SUBJECT_FIELDS)[:limit]
        )
        _save_subjects(batch, _read_subjects_again(batch))
    return len(batch)


def _save_subjects(batch: list[Memory], changed: list[tuple[Memory, Subject]]) -> None:
    """Write the subjects that changed, and mark every fact of the batch as read by this reader."""
    if changed:
        Memory.objects.bulk_update([memory for memory, _ in changed], SUBJECT_FIELDS)
    if batch:
        Memory.objects.filter(pk__in=[memory.pk for memory in batch]).update(subject_reader=subjects.READER)


def _read_subjects_again(batch: list[Memory]) -> list[tuple[Memory, Subject]]:
    """Read each fact's subject again (not saved); the facts whose subject changed, with what it was before."""
    changed: list[tuple[Memory, Subject]] = []
    for memory in batch:
        before = memory.subject
        _read_subject(memory)
        if memory.subject != before:
            changed.append((memory, before))
    return changed


def _read_subject(memory: Memory) -> None:
    """Set what the fact is about from its text and key, as this version's reader reads it (not saved)."""
    subject = subjects.subject_of(memory.text, memory.key)
    memory.subject_entity, memory.subject_attribute = subject.entity[:200], subject.attribute[:120]
    memory.subject_source = subject.source
    memory.subject_reader = subjects.READER


def memory_understand(memory: Memory) -> None:
    """Set the fact's subject and speech act (not saved); a reviewer's subject correction is kept."""
    if memory.subject_source != subjects.SOURCE_REVIEWER:
        _read_subject(memory)
    memory.speech_act = speech_acts.speech_act_of(memory.text, memory.embedding, memory.embedding_model)


def _embed_into(batch: list[Memory], embedder: embeddings.Embedder) -> dt.datetime:
    """Embed the facts' texts into their ``EMBEDDING_FIELDS`` (not saved); returns the time it stamped."""
    vectors = embedder.embed([m.text for m in batch])
    now = timezone.now()
    for memory, vector in zip(batch, vectors, strict=True):
        memory.embedding = vector
        memory.embedded_at = now
        memory.embedding_model = embedder.name
        memory_understand(memory)
    return now


def _record_embedded(batch: list[Memory]) -> None:
    by_workspace: dict[int, list[Memory]] = {}
    for memory in batch:
        by_workspace.setdefault(memory.workspace_id, []).append(memory)
    for workspace_id, memories in by_workspace.items():
        changes = [
            RowChange(memory, "update", {"status": Status.PENDING_EMBED}, {"status": Status.ACTIVE})
            for memory in memories
        ]
        record_event(
            workspace=Workspace(pk=workspace_id),
            actor=Actor.system("embedder"),
            verb="memory.embed",
            changes=changes,
            automatic=False,
        )


# Taking these back would delete a committed fact or un-embed it; the API has better tools.
NOT_UNDOABLE = {
    "memory.create": "forget the memory instead (DELETE /memories/{id})",
    "memory.embed": "embedding is bookkeeping, not a decision",
    "memory.repair": "the values it replaced could not be read back",
}


def event_undo(*, event: Event, actor: Actor, reason: str = "") -> Event:
    """Replay ``event`` backwards, restoring every row it touched to its prior state.

    Refused (409) when the event was already undone, is itself an undo, or when
    a touched row has changed since — undoing then would silently discard the
    later change. The undo is recorded as a new event pointing at the original.
    """
    with transaction.atomic():
        event = Event.objects.select_for_update().get(pk=event.pk)
        if event.undoes_id is not None:
            raise ConflictError("this event is itself an undo; undo cannot be undone")
        if Event.objects.filter(undoes=event).exists():
            raise ConflictError("this event was already undone")
        if not event.changes or event.verb in NOT_UNDOABLE:
            raise ConflictError(f"event {event.pk} ({event.verb}) cannot be undone; {NOT_UNDOABLE.get(event.verb, '')}")
        tracker = Tracker()
        for change in reversed(event.changes):
            _revert(tracker, change)
        return record_event(
            workspace=event.workspace,
            actor=actor,
            verb=f"{event.verb}.undo",
            memory=event.memory,
            changes=tracker.changes,
            reason=reason,
            undoes=event,
        )


def _revert(tracker: Tracker, change: dict[str, Any]) -> None:
    model = apps.get_model(change["model"])
    op = change["op"]
    if op == "delete":
        instance = model(pk=change["pk"], **change["before"])
        instance.save(force_insert=True)
        tracker.created(instance, list(change["before"]))
        return
    instance = model.objects.select_for_update().filter(pk=change["pk"]).first()
    if instance is None:
        if op == "create":
            return  # already gone: nothing to take back
        raise ConflictError(f"{change['model']} {change['pk']} no longer exists; cannot undo")
    fields = list(change["after"])
    current = snapshot(instance, fields)
    derived = DERIVED_FIELDS.get(change["model"], set())
    if {k: v for k, v in current.items() if k not in derived} != {
        k: v for k, v in change["after"].items() if k not in derived
    }:
        raise ConflictError(f"{change['model']} {change['pk']} changed after this event; undo the later change first")
    if op == "create":
        tracker.deleted(instance, fields)
        instance.delete()
        return
    tracker.update(instance, **change["before"])
    instance.save()
    if isinstance(instance, Memory):
        memory_decay_due_now(memory_ids=[instance.pk])  # the decay job recomputes it from the restored evidence


# Fields a job recomputes from others: a later change to them does not block an undo
# (the decay job lowers ``confidence`` every few days; undoing a reinforcement must still work).
DERIVED_FIELDS = {"memories.memory": {"confidence"}}


@dataclass(frozen=True)
class TimestampRepair:
    """One memory's clamped timestamps: the old values as PostgreSQL printed them, the new ones in ISO 8601."""

    memory_id: uuid.UUID
    workspace_id: int
    before: dict[str, str]
    after: dict[str, str]


def memories_repair_timestamps(*, actor: Actor) -> list[TimestampRepair]:
    """Clamp every memory timestamp outside years 1900–2200 in UTC to the nearer end of that window.

    For rows stored before the API checked its timestamps (``api.schemas.Timestamp``):
    one such value makes the memory unreadable, and with it every list, recall and
    dashboard page that includes it. Compared and updated in SQL, because loading the
    value into Python is what fails. Each repaired memory gets a ``memory.repair``
    event (not undoable: it would write the unreadable value back). Safe to run again.
    """
    quote = connection.ops.quote_name
    table = quote(Memory._meta.db_table)
    repairs: list[TimestampRepair] = []
    with transaction.atomic():
        for row in memories_with_unreadable_timestamps(lock=True):
            # CASE rather than LEAST(GREATEST(…)): GREATEST skips NULL, and would fill an open valid_to.
            assignments = ", ".join(
                f"{quote(c)} = CASE WHEN {quote(c)} < %(earliest)s THEN %(earliest)s "
                f"WHEN {quote(c)} > %(latest)s THEN %(latest)s ELSE {quote(c)} END"
                for c in row.values
            )
            with connection.cursor() as cursor:
                # Column and table names come from the model, never from input; the values are parameters.
                cursor.execute(
                    f"UPDATE {table} SET {assignments} WHERE id = %(id)s",  # noqa: S608
                    {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP, "id": row.memory_id},
                )
            memory = Memory.objects.defer("embedding").select_related("workspace").get(pk=row.memory_id)
            after = snapshot(memory, list(row.values))
            record_event(
                workspace=memory.workspace,
                actor=actor,
                verb="memory.repair",
                memory=memory,
                changes=[RowChange(memory, "update", dict(row.values), after)],
                reason="timestamps outside 1900–2200 UTC, which could not be read back, clamped into that range",
                automatic=True,
            )
            repairs.append(TimestampRepair(row.memory_id, row.workspace_id, dict(row.values), after))
    return repairs
