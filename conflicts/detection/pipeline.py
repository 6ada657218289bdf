"""The tiered detection pipeline for one new or changed fact.

candidates (bounded) → tier 0 rules + tier 1 classifier (offline, always) →
tier 2 LLM where tier 1 is unsure and an LLM is configured → resolution.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import partial

from django.db import transaction
from django.utils import timezone

from conflicts.detection.candidates import Candidate, candidates_for
from conflicts.detection.classifier import classify_memory_pairs
from conflicts.detection.llm import escalate_unsure
from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import DetectionContext
from conflicts.services import Resolution, conflict_resolve, pair_order
from memories.audit import Actor
from memories.models import Memory, Status
from memoryhub.llm import llm_enabled

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


def offline_classifier() -> PairClassifier:
    """Tier 0 + tier 1: the shipped classifier, with the rules as features and overrides."""
    return partial(classify_memory_pairs, most_read=READS_PER_FACT)


def detect(
    memory: Memory,
    *,
    classify: PairClassifier | None = None,
    deadline: float | None = None,
    use_llm: bool = True,
) -> list[Finding]:
    """Compare ``memory`` with its candidates; return the pairs that are not simply compatible.

    ``deadline`` (a ``time.monotonic()`` value) makes the work time-boxed:
    candidates are classified in one batch, and the LLM tier is skipped if the
    box is spent.
    """
    candidates = candidates_for(memory)
    if not candidates:
        return []
    classify = classify or offline_classifier()
    pairs = [pair_order(c.memory, memory) for c in candidates]
    verdicts = classify(pairs)
    if use_llm and (deadline is None or time.monotonic() < deadline):
        verdicts = _escalate(pairs, verdicts)
    return [
        Finding(older, newer, candidate, verdict)
        for (older, newer), candidate, verdict in zip(pairs, candidates, verdicts, strict=True)
        if verdict.relation != Relation.COMPATIBLE
    ]


def _escalate(pairs: list[tuple[Memory, Memory]], verdicts: list[Verdict]) -> list[Verdict]:
    if not llm_enabled():
        return verdicts
    return escalate_unsure(pairs, verdicts)


def detect_and_resolve(
    memory: Memory,
    *,
    context: DetectionContext = DetectionContext.INGESTION,
    classify: PairClassifier | None = None,
    actor: Actor | None = None,
) -> list[tuple[Finding, Resolution]]:
    actor = actor or Actor.system("detector")
    results = []
    for finding in detect(memory, classify=classify):
        resolution = conflict_resolve(
            older=finding.older, newer=finding.newer, verdict=finding.verdict, context=context, actor=actor
        )
        results.append((finding, resolution))
    return results


class CheckFailed(RuntimeError):
    """Checking one fact failed; its claim rolled back and it waits for the next drain."""

    def __init__(self, memory_id: uuid.UUID) -> None:
        super().__init__(f"checking {memory_id} failed")
        self.memory_id = memory_id


def check_next_waiting(*, skip: Collection[uuid.UUID] = ()) -> Memory | None:
    """Claim the longest-waiting embedded, unchecked fact and check it, in one transaction.

    The row is claimed with ``FOR UPDATE SKIP LOCKED`` (parallel drains take
    different facts) and marked ``checked_at`` in the transaction that resolves
    what detection found: if detection fails, both roll back and the fact is
    raised as :class:`CheckFailed`, still waiting. Returns the fact checked, or
    None when nothing waits (``skip``: facts this drain already failed on).
    """
    with transaction.atomic():
        memory = (
            Memory.objects.filter(status=Status.ACTIVE, checked_at__isnull=True)
            .exclude(pk__in=list(skip))
            .order_by("embedded_at")
            .select_for_update(skip_locked=True)
            .first()
        )
        if memory is None:
            return None
        memory_id = memory.pk
        try:
            memory.checked_at = timezone.now()
            Memory.objects.filter(pk=memory_id).update(checked_at=memory.checked_at)
            detect_and_resolve(memory)
        except Exception as exc:
            raise CheckFailed(memory_id) from exc
    return memory
