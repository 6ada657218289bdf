"""Cards follow their facts: when a fact retires, the open cards holding it update or close.

``memories`` announces every retirement (supersede, forget, merge, decay) on
``hooks.facts_retired`` after the change committed; ``ConflictsConfig.ready()``
subscribes :func:`cards_follow_retired_facts`. A card keeps asking while at least
two of its facts stand (it notes which one left, and asks about a standing one);
with fewer there is nothing left to ask, so the hub closes it with a note
(state ``closed``). Each change is one transaction and one ``card.update`` /
``card.close`` event, so it can be undone like any automatic decision.

The other way round, ``hooks.facts_restored`` (an undone supersede, forget,
merge or decay) reopens a card the hub closed once two of its facts stand
again (:func:`cards_follow_restored_facts`, a ``card.reopen`` event): the
question it asked is open again because the answer that settled it was taken back.
"""

from __future__ import annotations

import uuid

from django.db import transaction
from django.utils import timezone

from conflicts.models import CardState, ConflictCard
from memories.audit import Actor, Tracker, record_event
from memories.hooks import FactsRestored, FactsRetired
from memories.models import LIVE_STATUSES, Memory, Status

HUB = Actor.system("hub")


def cards_follow_retired_facts(event: FactsRetired) -> None:
    """Receiver of ``memories.hooks.facts_retired``."""
    cards_update_for_retired(memory_ids=event.memory_ids)


def cards_follow_restored_facts(event: FactsRestored) -> None:
    """Receiver of ``memories.hooks.facts_restored``."""
    cards_reopen_for_restored(memory_ids=event.memory_ids)


def standing(memory: Memory) -> bool:
    """A fact a card may still ask about: live and not replaced by a successor."""
    return memory.status in LIVE_STATUSES and memory.superseded_by_id is None


def cards_update_for_retired(*, memory_ids: list[uuid.UUID]) -> int:
    """Update or close every open card holding one of ``memory_ids``; returns how many changed."""
    return sum(_follow(card_id) for card_id in _cards_holding(memory_ids, CardState.OPEN))


def _cards_holding(memory_ids: list[uuid.UUID], state: str) -> list[uuid.UUID]:
    cards = ConflictCard.objects.filter(state=state, card_facts__memory_id__in=memory_ids)
    return list(cards.values_list("pk", flat=True).distinct())


def _locked(card_id: uuid.UUID, state: str) -> tuple[ConflictCard | None, list[Memory]]:
    """The card, locked, if it is still in ``state``; its facts oldest first (call inside a transaction)."""
    card = (
        ConflictCard.objects.select_for_update(of=("self",))
        .select_related("workspace")
        .filter(pk=card_id, state=state)
        .first()
    )
    if card is None:
        return None, []
    facts = Memory.objects.filter(card_facts__card=card).select_related("superseded_by")
    return card, list(facts.order_by("valid_from", "recorded_at"))


def _follow(card_id: uuid.UUID) -> int:
    with transaction.atomic():
        card, facts = _locked(card_id, CardState.OPEN)
        if card is None:
            return 0
        live = [fact for fact in facts if standing(fact)]
        gone = [fact for fact in facts if not standing(fact)]
        if not gone:
            return 0
        why = "; ".join(_why(fact) for fact in gone)
        tracker = Tracker()
        if len(live) < 2:
            tracker.update(
                card,
                state=CardState.CLOSED,
                answered_at=timezone.now(),
                hub_note=f"Closed by the hub: {why}. Nothing is left to ask.",
            )
        else:
            values: dict[str, object] = {"hub_note": f"Updated by the hub: {why}."}
            if card.asked_memory_id not in {fact.pk for fact in live}:
                values["asked_memory"] = live[-1]
            tracker.update(card, **values)
        if not tracker.changes:
            return 0
        card.save()
        record_event(
            workspace=card.workspace,
            actor=HUB,
            verb="card.close" if len(live) < 2 else "card.update",
            memory=card.asked_memory,
            changes=tracker.changes,
            automatic=True,
            reason=why,
        )
    return 1


def cards_reopen_for_restored(*, memory_ids: list[uuid.UUID]) -> int:
    """Reopen every card the hub closed that holds one of ``memory_ids`` and has two standing facts again."""
    restored = set(memory_ids)
    return sum(_reopen(card_id, restored) for card_id in _cards_holding(memory_ids, CardState.CLOSED))


def _reopen(card_id: uuid.UUID, restored: set[uuid.UUID]) -> int:
    with transaction.atomic():
        card, facts = _locked(card_id, CardState.CLOSED)
        if card is None:
            return 0
        live = [fact for fact in facts if standing(fact)]
        if len(live) < 2:
            return 0
        back = "; ".join(f"“{_short(fact.text)}” stands again" for fact in live if fact.pk in restored)
        tracker = Tracker()
        values: dict[str, object] = {
            "state": CardState.OPEN,
            "answered_at": None,
            "hub_note": f"Reopened by the hub: {back}.",
        }
        if card.asked_memory_id not in {fact.pk for fact in live}:
            values["asked_memory"] = live[-1]
        tracker.update(card, **values)
        card.save()
        record_event(
            workspace=card.workspace,
            actor=HUB,
            verb="card.reopen",
            memory=card.asked_memory,
            changes=tracker.changes,
            automatic=True,
            reason=back,
        )
    return 1


def _why(fact: Memory) -> str:
    text = _short(fact.text)
    if fact.superseded_by is not None:
        return f"“{text}” was replaced by “{_short(fact.superseded_by.text)}”"
    if fact.status == Status.FORGOTTEN:
        return f"“{text}” was forgotten"
    if fact.status == Status.MERGED:
        return f"“{text}” was merged into another fact"
    return f"“{text}” is {fact.status}"


def _short(text: str, limit: int = 80) -> str:
    text = text.strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
