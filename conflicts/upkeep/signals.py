"""Cheap signals that two similar facts disagree rather than repeat each other (no LLM).

Consolidation and evidence accumulation read similarity; these keep them from
merging, or counting as support, two facts that say opposite things:
``polarity`` the writers gave (seed 003: a product of −1 is explicit), a
negation on one side only (seed 003's ``negation_diff``), different numbers,
different slots (``key``), or a dispute the hub already recorded.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

from django.db.models import Q

from conflicts.detection.rules import negation_count, tokens
from conflicts.models import Uncertainty
from memories.models import Memory

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def opposite_polarity(a: Memory, b: Memory) -> bool:
    return a.polarity * b.polarity == -1


def negation_differs(a: Memory, b: Memory) -> bool:
    return negation_count(tokens(a.text)) % 2 != negation_count(tokens(b.text)) % 2


def numbers_differ(a: Memory, b: Memory) -> bool:
    return set(_NUMBER.findall(a.text)) != set(_NUMBER.findall(b.text))


def disagreement(a: Memory, b: Memory) -> str:
    """Why ``a`` and ``b`` may disagree, or "" when nothing cheap says so."""
    if a.key and b.key and a.key != b.key:
        return "different slots"
    if opposite_polarity(a, b):
        return "opposite polarity"
    if negation_differs(a, b):
        return "negated on one side"
    if numbers_differ(a, b):
        return "different numbers"
    return ""


def disputed_pairs(ids: Iterable[uuid.UUID]) -> set[frozenset[uuid.UUID]]:
    """Pairs among ``ids`` with any uncertainty, open or settled: someone already weighed them."""
    ids = list(ids)
    rows = Uncertainty.objects.filter(
        Q(memory_a_id__in=ids) | Q(memory_b_id__in=ids), memory_b__isnull=False
    ).values_list("memory_a_id", "memory_b_id")
    return {frozenset((a, b)) for a, b in rows}
