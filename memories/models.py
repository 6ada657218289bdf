from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from memories.embeddings import DIMENSIONS
from memories.subjects import Subject
from workspaces.models import AgentKey, Workspace


class Kind(models.TextChoices):
    FACT = "fact"
    TRAIT = "trait"
    EPISODE = "episode"
    CONCEPT = "concept"
    PROCEDURE = "procedure"


class Source(models.TextChoices):
    EXPLICIT = "explicit"
    INFERRED = "inferred"
    RESEARCHED = "researched"


class Reliability(models.TextChoices):
    RELIABLE = "reliable"
    UNCERTAIN = "uncertain"
    CONTRADICTED = "contradicted"
    SUPERSEDED = "superseded"


class Status(models.TextChoices):
    PENDING_EMBED = "pending_embed"
    ACTIVE = "active"
    MERGED = "merged"
    DEPRECATED = "deprecated"
    DECAYED = "decayed"
    FORGOTTEN = "forgotten"


# A fact is part of what the hub currently holds while its status is one of these.
LIVE_STATUSES = (Status.PENDING_EMBED, Status.ACTIVE)

# How much a writer's own word counts before any evidence: the starting confidence.
INITIAL_CONFIDENCE = {Source.EXPLICIT: 0.9, Source.RESEARCHED: 0.7, Source.INFERRED: 0.6}


class Memory(models.Model):
    """One fact an agent committed, with its reliability and both time axes.

    World time: ``valid_from``/``valid_to`` — when the fact held in the world.
    Hub time: ``recorded_at``/``expired_at`` — when the hub believed it. Supersede
    closes ``valid_to``; forget closes ``expired_at``. Nothing is rewritten, so
    "what is true now" and "what did we believe on date D" are both queries.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memories")

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FACT)
    text = models.TextField()
    key = models.CharField(max_length=200, blank=True, default="", help_text="Trait or slot name, e.g. home_city")
    scope = models.CharField(max_length=200, blank=True, default="")
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.EXPLICIT)
    agent = models.CharField(max_length=200, blank=True, default="")
    agent_key = models.ForeignKey(AgentKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    metadata = models.JSONField(default=dict, blank=True)

    importance = models.FloatField(default=0.5)
    confidence = models.FloatField(default=0.9)
    reliability = models.CharField(max_length=16, choices=Reliability.choices, default=Reliability.RELIABLE)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING_EMBED)
    polarity = models.SmallIntegerField(default=0, help_text="-1 negative, 0 unknown, +1 positive")
    annotation = models.TextField(blank=True, default="", help_text='e.g. "used to …" once superseded')

    # What the fact is about (memories/subjects.py), worked out when it is embedded: the entity
    # ("user", "user's sister", "acme corp") and its attribute ("home city", "seat count"; empty
    # when unknown). ``subject_source``: key, text, or reviewer (a person corrected it).
    subject_entity = models.CharField(max_length=200, blank=True, default="")
    subject_attribute = models.CharField(max_length=120, blank=True, default="")
    subject_source = models.CharField(max_length=16, blank=True, default="")
    # Which subject reader read it (``subjects.READER``): a fact read by an older one is read again in the
    # background (``memories.tasks.reread_stale_subjects``).
    subject_reader = models.CharField(max_length=16, blank=True, default="")
    # claim, question, greeting, opinion or plan (memories/speech_acts.py); only claims are compared.
    speech_act = models.CharField(max_length=16, blank=True, default="")

    embedding = VectorField(dimensions=DIMENSIONS, null=True, blank=True)
    embedding_model = models.CharField(max_length=64, blank=True, default="")
    embedded_at = models.DateTimeField(null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes_memories"
    )
    superseded_at = models.DateTimeField(null=True, blank=True)
    # Set when conflict detection has run on this fact.
    checked_at = models.DateTimeField(null=True, blank=True)
    # Set (and committed) while a worker checks the fact, so the slow part of the check runs with
    # no transaction open; a claim older than the lease belongs to a dead worker and is taken again.
    check_claimed_at = models.DateTimeField(null=True, blank=True)

    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    reinforcement_count = models.PositiveIntegerField(default=0)
    last_reinforced_at = models.DateTimeField(null=True, blank=True)
    conflict_count = models.PositiveIntegerField(default=0)
    # Upkeep (docs/UPKEEP.md). ``confidence`` is derived from these: the confidence the evidence
    # supports (``evidence_confidence``, empty → ``confidence``), decayed since ``evidence_at``
    # (empty → last reinforced, else recorded). The decay job rewrites ``confidence`` when it is
    # due (``DecaySchedule``); anything that changes the evidence makes it due now. Neither column
    # is indexed, so the decay job's write is a heap-only (HOT) update.
    evidence_confidence = models.FloatField(null=True, blank=True)
    evidence_at = models.DateTimeField(null=True, blank=True)
    evidence_count = models.PositiveIntegerField(
        default=1,
        db_default=1,  # rows written by COPY (benchmarks, bulk imports) count themselves too
        help_text="Facts consolidated into this one, itself included",
    )
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_memories"
    )

    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    recorded_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "memories"
        indexes = [
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="memory_search_gin"),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            models.Index(fields=["workspace", "status", "-recorded_at"], name="memory_ws_status_recent"),
            models.Index(fields=["workspace", "kind"], name="memory_ws_kind"),
            models.Index(fields=["workspace", "key"], name="memory_ws_key"),
            models.Index(fields=["workspace", "scope"], name="memory_ws_scope"),
            models.Index(fields=["workspace", "agent"], name="memory_ws_agent"),
            models.Index(fields=["workspace", "reliability"], name="memory_ws_reliability"),
            models.Index(fields=["workspace", "subject_entity", "subject_attribute"], name="memory_ws_subject"),
            # Recall's subject-first step reads an attribute's newest facts: in order, stopping at its limit.
            models.Index(
                fields=["workspace", "subject_attribute", "-valid_from", "-recorded_at"],
                name="memory_ws_attribute_recent",
            ),
            # The embedding worker's queue: a small partial index stays cheap at any size.
            models.Index(
                fields=["recorded_at"],
                name="memory_pending_embed",
                condition=models.Q(status="pending_embed"),
            ),
            # Consolidation reads only the facts changed since its last run.
            models.Index(fields=["updated_at"], name="memory_updated"),
            # Detection's sweep: embedded facts nobody has checked yet.
            models.Index(
                fields=["embedded_at"],
                name="memory_unchecked",
                condition=models.Q(status="active", checked_at__isnull=True),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(importance__gte=0, importance__lte=1), name="memory_importance_range"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0, confidence__lte=1), name="memory_confidence_range"
            ),
            models.CheckConstraint(condition=models.Q(polarity__in=[-1, 0, 1]), name="memory_polarity_values"),
            models.CheckConstraint(
                condition=models.Q(evidence_confidence__gte=0, evidence_confidence__lte=1)
                | models.Q(evidence_confidence__isnull=True),
                name="memory_evidence_confidence_range",
            ),
            models.CheckConstraint(
                condition=~models.Q(superseded_by=models.F("id")), name="memory_not_superseded_by_itself"
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]

    @property
    def is_live(self) -> bool:
        return self.status in LIVE_STATUSES

    @property
    def subject(self) -> Subject:
        return Subject(self.subject_entity, self.subject_attribute, self.subject_source)

    @property
    def subject_label(self) -> str:
        """What the fact is about, for people to read: "Acme Corp's seat count", names as the text writes them."""
        return self.subject.label_as_written(self.text)


class DueTime(models.Func):
    """A decay due time where an empty one (due now) is the earliest of all.

    One expression for "due" (``DueTime("due_at") <= now``) and for "most overdue
    first" (ordering by it): an index on it answers both with one range scan, where
    ``due_at IS NULL OR due_at <= now`` on a plain index takes two scans and loses the order.
    """

    template = "COALESCE(%(expressions)s, '-infinity'::timestamptz)"
    output_field = models.DateTimeField()


class DecaySchedule(models.Model):
    """When the decay job next recomputes a fact's confidence (docs/UPKEEP.md, "Decay's write").

    A narrow table of its own: rewriting the due time on the wide ``memories_memory``
    row would change an indexed column there, and PostgreSQL would re-insert the row
    into every index of the table, the HNSW graph included, on each hourly write. Here
    the rewrite touches a two-index table, and the decay write on the memory row stays
    heap-only. A fact is due when it has no row or ``due_at`` is empty or past.
    """

    memory = models.OneToOneField(Memory, primary_key=True, on_delete=models.CASCADE, related_name="decay_schedule")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    due_at = models.DateTimeField(null=True, blank=True, help_text="empty: due now")

    class Meta:
        indexes = [
            models.Index(DueTime("due_at"), name="decay_schedule_due"),  # the hourly run over all workspaces
            models.Index("workspace", DueTime("due_at"), name="decay_schedule_ws_due"),  # "run now" on one
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} due {self.due_at or 'now'}"


class Rel(models.TextChoices):
    SUPERSEDES = "supersedes"
    REFINES = "refines"
    DERIVED_FROM = "derived_from"
    EXAMPLE_OF = "example_of"
    CONTRADICTS = "contradicts"
    MERGED_INTO = "merged_into"
    TEMPORAL_EVOLUTION = "temporal_evolution"
    RELATED = "related"


# Agents may add their own relations under this prefix (e.g. "x-blocks").
CUSTOM_REL_PREFIX = "x-"


class Link(models.Model):
    """A typed edge ``src → dst`` between two memories of one workspace."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="links")
    src = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_out")
    dst = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_in")
    rel = models.CharField(max_length=64)
    weight = models.FloatField(default=1.0)
    created_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["src", "dst", "rel"], name="link_unique_edge"),
            models.CheckConstraint(condition=~models.Q(src=models.F("dst")), name="link_not_self"),
        ]
        indexes = [models.Index(fields=["dst", "rel"], name="link_dst_rel")]

    def __str__(self) -> str:
        return f"{self.src_id} -{self.rel}-> {self.dst_id}"


class ActorType(models.TextChoices):
    AGENT = "agent"
    USER = "user"
    SYSTEM = "system"


class Event(models.Model):
    """Append-only audit row, written in the same transaction as the change.

    ``changes`` lists every row the action touched as
    ``{"model", "pk", "op": "create"|"update", "before", "after"}`` so an undo
    can replay it backwards. An undo is itself an event pointing at ``undoes``;
    rows are never edited after insert.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="events")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    actor_type = models.CharField(max_length=16, choices=ActorType.choices)
    actor = models.CharField(max_length=200, blank=True, default="")
    agent_key = models.ForeignKey(AgentKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verb = models.CharField(max_length=64)
    memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="events")
    changes = models.JSONField(default=list, blank=True)
    reason = models.TextField(blank=True, default="")
    automatic = models.BooleanField(default=False, help_text="Decided by the hub, not by a person or agent")
    undoes = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="undone_by")

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="event_ws_recent"),
            models.Index(fields=["workspace", "verb", "-created_at"], name="event_ws_verb"),
        ]

    def __str__(self) -> str:
        return f"{self.verb} by {self.actor_type}:{self.actor}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise ValueError("events are append-only")
        super().save(*args, **kwargs)
