"""What the hub is unsure about, and what people answered.

The tables are defined with the foundation so that detection, the narrative
detective and the review dashboard only add behaviour.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from memories.models import Kind, Memory
from workspaces.models import AgentKey, Workspace


class UncertaintyType(models.TextChoices):
    CONTRADICTION = "contradiction"
    UNVERIFIED = "unverified"
    STALE = "stale"
    AMBIGUOUS = "ambiguous"


class Severity(models.TextChoices):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


SEVERITY_RANK = {Severity.LOW: 0, Severity.MEDIUM: 1, Severity.HIGH: 2, Severity.CRITICAL: 3}


class DetectionContext(models.TextChoices):
    INGESTION = "ingestion"
    DRIFT = "drift"
    CONSOLIDATION = "consolidation"
    NARRATIVE = "narrative"
    PRE_ACTION = "pre_action"
    MANUAL = "manual"


class UncertaintyState(models.TextChoices):
    OPEN = "open"
    SURFACED = "surfaced"
    RESOLVED = "resolved"
    DECAYED = "decayed"


class ResolutionStrategy(models.TextChoices):
    TEMPORAL_SUPERSEDE = "temporal_supersede"
    USER_CLARIFIED = "user_clarified"
    EVIDENCE_RESOLVED = "evidence_resolved"
    CONFIDENCE_DOMINANCE = "confidence_dominance"
    DECAYED = "decayed"


class Uncertainty(models.Model):
    """The epistemic record: memory A, optionally B, and why the hub doubts them.

    ``memory_b`` is empty for a solo uncertainty (an inferred fact nobody
    confirmed). The ``*_kind`` columns keep the kinds the severity was computed
    from, as the seed schema does.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="uncertainties")
    memory_a = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="uncertainties_as_a")
    memory_a_kind = models.CharField(max_length=16, choices=Kind.choices)
    memory_b = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.CASCADE, related_name="uncertainties_as_b"
    )
    memory_b_kind = models.CharField(max_length=16, choices=Kind.choices, blank=True, default="")

    uncertainty_type = models.CharField(max_length=16, choices=UncertaintyType.choices)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    detection_context = models.CharField(max_length=16, choices=DetectionContext.choices)
    detector = models.CharField(max_length=64, blank=True, default="", help_text="tier/rule that raised it")
    rule = models.CharField(
        max_length=32, blank=True, default="", help_text="the classifier's reading that decided the pair, if one did"
    )
    classification = models.CharField(max_length=32, blank=True, default="")
    probability = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True, default="")
    temporal_signal = models.BooleanField(default=False)
    surface_context = models.TextField(blank=True, default="")

    state = models.CharField(max_length=16, choices=UncertaintyState.choices, default=UncertaintyState.OPEN)
    resolution_strategy = models.CharField(max_length=32, choices=ResolutionStrategy.choices, blank=True, default="")
    resolution_detail = models.TextField(blank=True, default="")
    resolved_at = models.DateTimeField(null=True, blank=True)

    surfaced_count = models.PositiveIntegerField(default=0)
    last_surfaced_at = models.DateTimeField(null=True, blank=True)
    # When confidence upkeep halved both sides of this clash (once per clash, docs/UPKEEP.md).
    penalized_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "uncertainties"
        indexes = [
            models.Index(fields=["workspace", "state"], name="uncertainty_ws_state"),
            models.Index(fields=["severity", "state"], name="uncertainty_severity_state"),
        ]

    def __str__(self) -> str:
        return f"{self.uncertainty_type} ({self.severity}, {self.state})"


class CardKind(models.TextChoices):
    REVERSAL = "reversal"
    AMBIGUITY = "ambiguity"
    STALE = "stale"
    CONTRADICTION = "contradiction"


class CardState(models.TextChoices):
    OPEN = "open"
    ANSWERED = "answered"
    DISMISSED = "dismissed"
    # The hub closed it: its facts changed (superseded, forgotten, merged) until fewer than two stood.
    CLOSED = "closed"


class ConflictCard(models.Model):
    """A yes/no question a person answers about 2+ facts the hub cannot settle."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="conflict_cards")
    kind = models.CharField(max_length=16, choices=CardKind.choices)
    question = models.TextField()
    asked_memory = models.ForeignKey(
        Memory,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The fact the question asks about ('is X still true?')",
    )
    memories = models.ManyToManyField(Memory, through="CardFact", related_name="conflict_cards")
    # Sorted fact ids joined: one card per fact set, ever (open or resolved).
    fact_set_key = models.CharField(max_length=2000)
    detector = models.CharField(max_length=64, help_text="offline / llm / ingestion, and the rule")
    evidence = models.JSONField(default=dict, blank=True)
    severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.MEDIUM)
    uncertainty = models.ForeignKey(Uncertainty, null=True, blank=True, on_delete=models.SET_NULL, related_name="cards")
    state = models.CharField(max_length=16, choices=CardState.choices, default=CardState.OPEN)
    surfaced_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_cards",
        help_text="The reviewer who took this card ('assign to me'); anyone may still answer it",
    )
    # What the hub did to the card on its own: a fact retired meanwhile, the card updated or closed.
    hub_note = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "fact_set_key"], name="card_unique_fact_set"),
        ]
        indexes = [models.Index(fields=["workspace", "state", "severity", "created_at"], name="card_inbox")]

    def __str__(self) -> str:
        return self.question[:80]


class CardFact(models.Model):
    card = models.ForeignKey(ConflictCard, on_delete=models.CASCADE, related_name="card_facts")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="card_facts")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["card", "memory"], name="cardfact_unique")]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.memory_id} in {self.card_id}"


class AnswerChoice(models.TextChoices):
    YES = "yes"
    NO = "no"
    BOTH = "both"
    SKIP = "skip"


class Answer(models.Model):
    """A reviewer's (or agent's) answer. Skips may repeat; one deciding answer per card."""

    card = models.ForeignKey(ConflictCard, on_delete=models.CASCADE, related_name="answers")
    choice = models.CharField(max_length=8, choices=AnswerChoice.choices)
    current_memory = models.ForeignKey(
        Memory,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="For a card with 3+ facts: the one that is current",
    )
    note = models.TextField(blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    agent_key = models.ForeignKey(AgentKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # The first deciding answer wins; a second reviewer's insert fails.
            models.UniqueConstraint(
                fields=["card"], condition=~models.Q(choice="skip"), name="answer_one_decision_per_card"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.choice} on {self.card_id}"


class Tolerance(models.Model):
    """How much uncertainty a workspace tolerates before asking a person."""

    BASELINE = 0.5
    MINIMUM = 0.2
    MAXIMUM = 0.8

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="tolerance")
    value = models.FloatField(default=BASELINE)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(value__gte=0.2, value__lte=0.8), name="tolerance_bounds"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace}: {self.value:.2f}"


class ToleranceChange(models.Model):
    """History of tolerance nudges, for the dashboard chart."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="tolerance_changes")
    value = models.FloatField()
    delta = models.FloatField()
    reason = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "created_at"], name="tolerance_change_ws")]

    def __str__(self) -> str:
        return f"{self.reason}: {self.value:.2f} ({self.delta:+.2f})"


class RunState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    # Some of the LLM's batches failed (partial) or all of them (failed); those were read offline.
    PARTIAL = "partial"
    FAILED = "failed"


class DetectiveRun(models.Model):
    """One pass of the narrative detective over a workspace's history.

    At most one run per workspace waits in ``queued``: commits arriving while
    one waits add nothing (the debounce), so a burst of commits costs one or two
    runs. Runs record what they read, flagged and cost for the dashboard.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="detective_runs")
    trigger = models.CharField(max_length=16, help_text="commit / schedule / manual")
    trigger_memory = models.ForeignKey(Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    mode = models.CharField(max_length=16, blank=True, default="", help_text="offline / llm")
    state = models.CharField(max_length=16, choices=RunState.choices, default=RunState.QUEUED)
    facts_total = models.PositiveIntegerField(default=0)
    facts_read = models.PositiveIntegerField(default=0)
    batches = models.PositiveIntegerField(default=0)
    failed_batches = models.PositiveIntegerField(default=0, help_text="LLM batches without an answer, read offline")
    flags_raised = models.PositiveIntegerField(default=0)
    cards_created = models.PositiveIntegerField(default=0)
    tokens = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace"], condition=models.Q(state="queued"), name="detective_one_queued_run"
            ),
        ]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="detective_run_recent")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.trigger} run ({self.state})"


class JobState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class JobRun(models.Model):
    """One run of an upkeep job (decay, confidence, consolidation, drift, unverified) or of the detective.

    ``workspace`` is empty for a scheduled run over every workspace. Each batch of
    a job commits with its progress, so ``read``/``changed`` are what committed;
    a run whose ``heartbeat_at`` stops moving while ``running`` was killed.
    """

    job = models.CharField(max_length=32)
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="job_runs")
    trigger = models.CharField(
        max_length=16,
        default="schedule",
        help_text="schedule / manual / commit / continuation (queued by its predecessor)",
    )
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    read = models.PositiveIntegerField(default=0, help_text="rows the job looked at")
    changed = models.PositiveIntegerField(default=0, help_text="rows the job changed")
    errors = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    details = models.JSONField(default=dict, blank=True)
    detective_run = models.OneToOneField(
        DetectiveRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="job_run"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["job", "-created_at"], name="jobrun_job_recent"),
            models.Index(fields=["workspace", "-created_at"], name="jobrun_ws_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.job} ({self.state})"

    @property
    def seconds(self) -> float | None:
        if self.started_at is None:
            return None
        end = self.finished_at or self.heartbeat_at or self.started_at
        return (end - self.started_at).total_seconds()

    @property
    def percent(self) -> int:
        if self.state == JobState.DONE:
            return 100
        if not self.progress_total:
            return 0
        return min(100, round(100 * self.progress_done / self.progress_total))
