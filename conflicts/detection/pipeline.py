"""The tiered detection pipeline for one new or changed fact.

candidates (bounded) → tier 0 rules + tier 1 classifier (offline, always) →
tier 2 LLM where tier 1 is unsure and an LLM is configured → resolution.

Nothing slow happens inside a transaction or under a row lock. The worker
claims a fact with a committed conditional UPDATE (``check_claimed_at``), reads
candidates and asks the tiers — the LLM may take its whole timeout — with no
transaction open, then applies the verdicts in one short transaction that
locks the fact and its candidates and first checks that none of them changed
meanwhile: a verdict about a fact that was superseded, forgotten, merged or
edited since it was read is never applied.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import partial

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from conflicts.detection.candidates import Candidate, candidates_for
from conflicts.detection.classifier import classify_memory_pairs
from conflicts.detection.llm import escalate_unsure
from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import DetectionContext
from conflicts.services import Resolution, conflict_resolve, pair_order
from memories.audit import Actor
from memories.models import LIVE_STATUSES, Memory, Status
from memoryhub.llm import llm_enabled

logger = logging.getLogger(__name__)

PairClassifier = Callable[[list[tuple[Memory, Memory]]], list[Verdict]]


@dataclass
class Finding:
    older: Memory
    newer: Memory
    candidate: Candidate
    verdict: Verdict

    @property
    def other(self) -> Memory:
        return self.candidate.memory


# A new fact's candidates read again by the cross-encoder, at most: the likeliest duplicate, the one
# a merge would come from. Each read is ≈ 8 ms of a core; on the benchmark's workspace of 100k
# near-alike facts every possible one meant 7.5 reads a fact and an ingestion check of p95 136 ms,
# two reads 53 ms, one 35 ms (docs/BENCHMARKS.md, Detection; the target is 50 ms).
READS_PER_FACT = 1
# Dated candidates (a day or more apart) read by the cross-encoder as well, at most, to ask whether
# the new fact gives one of them a new value (``classifier._one_slot_change``): the nearest first.
SLOT_READS_PER_FACT = 3
# … on the request path (``on_conflict`` other than ignore): none. A read is 8–16 ms of a core against a
# p95 target of 50 ms, and one read a fact took bench/detection.py's p95 from 60 to 113 ms on a slower VM
# with three (docs/BENCHMARKS.md, Detection); the worker's check, which every fact gets, reads them.
SLOT_READS_ON_REQUEST = 0


def offline_classifier(*, slot_reads: int = SLOT_READS_PER_FACT) -> PairClassifier:
    """Tier 0 + tier 1: the shipped classifier, with the rules as features and overrides."""
    return partial(classify_memory_pairs, most_read=READS_PER_FACT, slot_reads=slot_reads)


@dataclass
class Detection:
    """What one fact's check read (its candidates, as they were) and what it found."""

    memory: Memory
    candidates: list[Memory]
    findings: list[Finding]


def detect(
    memory: Memory,
    *,
    classify: PairClassifier | None = None,
    deadline: float | None = None,
    use_llm: bool = True,
    slot_reads: int = SLOT_READS_PER_FACT,
) -> list[Finding]:
    """Compare ``memory`` with its candidates; return the pairs that are not simply compatible.

    ``deadline`` (a ``time.monotonic()`` value) makes the work time-boxed:
    candidates are classified in one batch, and the LLM tier is skipped if the
    box is spent. ``slot_reads`` caps the cross-encoder's reads of dated
    candidates (``SLOT_READS_ON_REQUEST`` on the request path).
    """
    return _detect(memory, classify=classify, deadline=deadline, use_llm=use_llm, slot_reads=slot_reads).findings


def _detect(
    memory: Memory,
    *,
    classify: PairClassifier | None = None,
    deadline: float | None = None,
    use_llm: bool = True,
    slot_reads: int = SLOT_READS_PER_FACT,
) -> Detection:
    candidates = candidates_for(memory)
    if not candidates:
        return Detection(memory, [], [])
    classify = classify or offline_classifier(slot_reads=slot_reads)
    pairs = [pair_order(c.memory, memory) for c in candidates]
    verdicts = classify(pairs)
    if use_llm and (deadline is None or time.monotonic() < deadline):
        verdicts = _escalate(pairs, verdicts)
    findings = [
        Finding(older, newer, candidate, verdict)
        for (older, newer), candidate, verdict in zip(pairs, candidates, verdicts, strict=True)
        if verdict.relation != Relation.COMPATIBLE
    ]
    return Detection(memory, [c.memory for c in candidates], findings)


def _escalate(pairs: list[tuple[Memory, Memory]], verdicts: list[Verdict]) -> list[Verdict]:
    if not llm_enabled():
        return verdicts
    return escalate_unsure(pairs, verdicts)


# What a verdict was read from. If one of these changed between reading and applying, the verdict
# is about facts that no longer exist as read: the pair is not resolved from it.
READ_FIELDS = ("text", "key", "kind", "scope", "valid_from", "recorded_at")


def _as_read(memory: Memory) -> tuple[object, ...]:
    return tuple(getattr(memory, name) for name in READ_FIELDS)


def _live(memory: Memory) -> bool:
    return memory.status in LIVE_STATUSES and memory.superseded_by_id is None


@dataclass
class Applied:
    results: list[tuple[Finding, Resolution]]
    # A live fact of the check was edited meanwhile: the check must be done again.
    stale: bool = False


def resolve_findings(
    detection: Detection, *, context: DetectionContext, actor: Actor, on_applied: Callable[[], bool] | None = None
) -> Applied:
    """Apply a detection's verdicts in one short transaction, guarded against changes since it was read.

    The fact and its candidates are locked (in id order, as every writer of two
    facts locks them) and compared with what detection read. A pair with a fact
    that is no longer live (superseded, forgotten, merged) is skipped: there is
    nothing left to resolve. When a live fact was edited, nothing is applied and
    the result says ``stale``: the check has to read the facts again.
    ``on_applied`` runs in the same transaction (the drain marks the fact
    checked); when it returns False nothing is applied.
    """
    ids = [detection.memory.pk, *(m.pk for m in detection.candidates)]
    with transaction.atomic():
        now = {m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=ids).order_by("pk")}
        for before in (detection.memory, *detection.candidates):
            after = now.get(before.pk)
            if after is not None and _live(after) and _as_read(after) != _as_read(before):
                logger.info("fact %s changed while it was being checked; checking again", before.pk)
                return Applied([], stale=True)
        if on_applied is not None and not on_applied():
            return Applied([])
        results = []
        for finding in detection.findings:
            older, newer = now.get(finding.older.pk), now.get(finding.newer.pk)
            if older is None or newer is None or not (_live(older) and _live(newer)):
                continue  # superseded, forgotten or merged meanwhile: the verdict is about the past
            resolution = conflict_resolve(
                older=older, newer=newer, verdict=finding.verdict, context=context, actor=actor
            )
            results.append((finding, resolution))
    return Applied(results)


def detect_and_resolve(
    memory: Memory,
    *,
    context: DetectionContext = DetectionContext.INGESTION,
    classify: PairClassifier | None = None,
    actor: Actor | None = None,
) -> list[tuple[Finding, Resolution]]:
    """Detect with no transaction open, then resolve under the guard of :func:`resolve_findings`."""
    applied = resolve_findings(
        _detect(memory, classify=classify), context=context, actor=actor or Actor.system("detector")
    )
    return applied.results


class CheckFailed(RuntimeError):
    """Checking one fact failed; its claim was released and it waits for the next drain."""

    def __init__(self, memory_id: uuid.UUID) -> None:
        super().__init__(f"checking {memory_id} failed")
        self.memory_id = memory_id


# A claim older than this was left by a worker that died mid-check, and is taken again. Longer
# than any check: the LLM tier's calls (OPENAI_TIMEOUT_SECONDS, twice) are a minute at most.
CLAIM_LEASE = dt.timedelta(minutes=10)


def _waiting() -> QuerySet[Memory]:
    return Memory.objects.filter(status=Status.ACTIVE, checked_at__isnull=True).filter(
        Q(check_claimed_at__isnull=True) | Q(check_claimed_at__lt=timezone.now() - CLAIM_LEASE)
    )


def check_next_waiting(*, skip: Collection[uuid.UUID] = (), classify: PairClassifier | None = None) -> Memory | None:
    """Claim the longest-waiting embedded, unchecked fact and check it; the fact, or None when nothing waits.

    The claim is a committed UPDATE of ``check_claimed_at`` on a row picked
    with ``SKIP LOCKED`` (parallel drains take different facts; the row lock
    lasts milliseconds). Detection then runs with no transaction open, and
    :func:`resolve_findings` applies its verdicts and sets ``checked_at`` in one
    short transaction. If anything fails the claim is released and
    :class:`CheckFailed` raised: the fact waits for the next drain. If a fact
    was edited while it was checked, it is released unchecked and the next
    pass reads it again. ``skip``: facts this drain already failed on.
    """
    with transaction.atomic():
        memory = (
            _waiting().exclude(pk__in=list(skip)).order_by("embedded_at").select_for_update(skip_locked=True).first()
        )
        if memory is None:
            return None
        claim = timezone.now()
        Memory.objects.filter(pk=memory.pk).update(check_claimed_at=claim)
    memory.check_claimed_at = claim
    _check_claimed(memory, claim, classify)
    return memory


def check_fact(memory_id: uuid.UUID, *, classify: PairClassifier | None = None) -> Memory | None:
    """Claim this fact (if it waits and nobody holds it) and check it, as the drain does; None when not claimed."""
    claim = timezone.now()
    if not _waiting().filter(pk=memory_id).update(check_claimed_at=claim):
        return None
    memory = Memory.objects.get(pk=memory_id)
    _check_claimed(memory, claim, classify)
    return memory


def _check_claimed(memory: Memory, claim: dt.datetime, classify: PairClassifier | None) -> None:
    mine = Memory.objects.filter(pk=memory.pk, check_claimed_at=claim, checked_at__isnull=True)

    def mark_checked() -> bool:
        # False when the lease ran out and another worker took the fact over: it resolves, not us.
        checked_at = timezone.now()
        if not mine.update(checked_at=checked_at, check_claimed_at=None):
            return False
        memory.checked_at, memory.check_claimed_at = checked_at, None
        return True

    try:
        applied = resolve_findings(
            _detect(memory, classify=classify),
            context=DetectionContext.INGESTION,
            actor=Actor.system("detector"),
            on_applied=mark_checked,
        )
    except Exception as exc:
        mine.update(check_claimed_at=None)
        memory.checked_at = memory.check_claimed_at = None
        raise CheckFailed(memory.pk) from exc
    if applied.stale:
        mine.update(check_claimed_at=None)
        memory.check_claimed_at = None
