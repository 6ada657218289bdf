"""What a reviewer's (or agent's) answer to a conflict card does to the memory.

One answer is one transaction and one Event (verb ``card.answer``) holding
every row it touched — the Answer itself, the card, the uncertainty, the facts,
the links and the tolerance nudge — so ``event_undo`` restores the exact prior
state, Answer row included.

- **yes** ("still true"): the current fact (the asked one, or the one picked on
  a 3+ fact card) becomes reliable and is reinforced; the others are superseded
  by it with a "used to" note.
- **no** ("it changed"): the asked fact is superseded by the current one (the
  picked fact, else the newest other fact), which becomes reliable and is
  reinforced. When the note says the asked fact was never true (it starts with
  "never", "wrong" or "false", or contains "never true"), it is forgotten instead.
- **both** ("not a conflict"): the facts keep standing (a contradicted mark the
  card put on them is lifted), the card is dismissed — its ``fact_set_key``
  keeps the pair from being raised again — and the answer counts as a false
  positive of the card's detector.
- **skip**: the card stays open, ``surfaced_count`` goes up, and every third
  skip lowers its severity one level (anti-nag).

yes / no / both resolve the card's uncertainty as ``user_clarified``.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from conflicts import hooks
from conflicts.models import (
    SEVERITY_RANK,
    Answer,
    AnswerChoice,
    CardFact,
    CardState,
    ConflictCard,
    ResolutionStrategy,
    Severity,
    Tolerance,
    Uncertainty,
    UncertaintyState,
)
from conflicts.reliability import reliability_raise
from conflicts.tolerance import tolerance_nudge
from conflicts.upkeep.confidence import penalty_lift
from memories.audit import Actor, Tracker, record_event
from memories.models import LIVE_STATUSES, Event, Memory, Rel, Reliability, Status
from memories.services import apply_link, apply_reinforce, apply_supersede, event_undo
from memoryhub.errors import ConflictError, InvalidInput, NotFound

ANSWER_FIELDS = ["card", "choice", "current_memory", "note", "user", "agent_key"]
VERB = "card.answer"
# Anti-nag: after this many skips a card drops one severity level (and again after as many more).
SKIPS_PER_SEVERITY_DROP = 3
_NEVER_TRUE = re.compile(r"^\s*(never|wrong|false)\b|never true|never been true", re.IGNORECASE)
_BY_RANK = {rank: severity for severity, rank in SEVERITY_RANK.items()}


class CardAlreadyAnswered(ConflictError):
    """Someone answered first; carries their answer so the loser can be shown it."""

    def __init__(self, card: ConflictCard, answer: Answer | None) -> None:
        who = answer_author(answer)
        when = f" at {answer.created_at:%Y-%m-%d %H:%M} UTC" if answer else ""
        choice = f" ({answer.choice})" if answer else ""
        super().__init__(f"This card was already answered by {who}{choice}{when}; it is now {card.state}.")
        self.card = card
        self.answer = answer


@dataclass
class AnswerResult:
    card: ConflictCard
    answer: Answer
    event: Event


def says_never_true(note: str) -> bool:
    """The rule for "no": a note saying the fact was never true forgets it instead of superseding it."""
    return bool(_NEVER_TRUE.search(note))


def card_answer(
    *,
    card: ConflictCard,
    choice: str,
    actor: Actor,
    current_memory: Memory | uuid.UUID | str | None = None,
    note: str = "",
) -> AnswerResult:
    """Apply an answer to an open card; raises CardAlreadyAnswered when someone was first."""
    if choice not in AnswerChoice.values:
        raise InvalidInput("answer must be one of yes, no, both, skip", field="answer")
    note = note.strip()[:2000]
    try:
        return _answer(card, choice, actor, current_memory, note)
    except IntegrityError:
        # The unique index is the last line of defence should the card lock ever be bypassed.
        decision = card_deciding_answer(card=card)
        if decision is None:
            raise
        card.refresh_from_db()
        raise CardAlreadyAnswered(card, decision) from None


def _answer(
    card: ConflictCard, choice: str, actor: Actor, current_memory: Memory | uuid.UUID | str | None, note: str
) -> AnswerResult:
    with transaction.atomic():
        # The card lock orders two reviewers: the second one waits, then sees the first's answer.
        locked = (
            ConflictCard.objects.select_for_update(of=("self",))
            .select_related("workspace", "asked_memory")
            .filter(pk=card.pk)
            .first()
        )
        if locked is None:
            raise NotFound("no conflict card with this id in the workspace")
        card = locked
        if card.state != CardState.OPEN:
            raise CardAlreadyAnswered(card, card_deciding_answer(card=card))
        facts = _facts_in_time_order(card)
        current = _current(card, facts, current_memory)
        tracker = Tracker()
        answer = _create_answer(tracker, card, choice, current, note, actor)
        if choice == AnswerChoice.SKIP:
            _skip(tracker, card)
        else:
            if choice == AnswerChoice.BOTH:
                _both(tracker, facts, actor)
            else:
                _decide(tracker, card, facts, choice, current, note, actor)
            _close(tracker, card, facts, choice, note)
        tolerance_nudge(tracker, workspace=card.workspace, answer=choice)
        event = record_event(
            workspace=card.workspace,
            actor=actor,
            verb=VERB,
            memory=card.asked_memory,
            changes=tracker.changes,
            reason=f"{choice} on card {card.pk}" + (f": {note}" if note else ""),
        )
        if choice != AnswerChoice.SKIP:
            hooks.announce_on_commit(
                hooks.card_answered,
                hooks.CardAnswered(
                    workspace_id=card.workspace_id, card_id=card.pk, answer_id=answer.pk, event_id=event.pk
                ),
            )
    return AnswerResult(card=card, answer=answer, event=event)


def card_answer_undo(*, event: Event, actor: Actor, reason: str = "") -> ConflictCard:
    """Undo an answer event (the card reopens, every fact is put back); returns the card.

    Tolerance is shared by every reviewer of the workspace: when later answers
    nudged it too, only this answer's nudge is taken back and theirs are kept
    (a plain ``event_undo`` would refuse because the row changed since).
    """
    if event.verb != VERB:
        raise InvalidInput("this event is not an answer to a card", field="event")
    card_id = next((c["pk"] for c in event.changes if c["model"] == "conflicts.conflictcard"), None)
    if card_id is None:
        card_id = next(c["after"]["card_id"] for c in event.changes if c["model"] == "conflicts.answer")
    nudge = next((c for c in event.changes if c["model"] == "conflicts.tolerance"), None)
    with transaction.atomic():
        drift = 0.0
        if nudge is not None:
            tolerance = Tolerance.objects.select_for_update().filter(pk=nudge["pk"]).first()
            if tolerance is not None:
                drift = round(tolerance.value - nudge["after"]["value"], 6)
                if drift:
                    Tolerance.objects.filter(pk=tolerance.pk).update(value=nudge["after"]["value"])
        event_undo(event=event, actor=actor, reason=reason or "answer undone by its reviewer")
        if nudge is not None and drift:
            value = min(Tolerance.MAXIMUM, max(Tolerance.MINIMUM, nudge["before"]["value"] + drift))
            Tolerance.objects.filter(pk=nudge["pk"]).update(value=round(value, 4))
    return ConflictCard.objects.get(pk=card_id)


def card_deciding_answer(*, card: ConflictCard) -> Answer | None:
    return (
        Answer.objects.filter(card=card)
        .exclude(choice=AnswerChoice.SKIP)
        .select_related("user", "agent_key")
        .order_by("created_at")
        .first()
    )


def answer_author(answer: Answer | None) -> str:
    if answer is None:
        return "someone else"
    if answer.user is not None:
        return answer.user.get_username()
    if answer.agent_key is not None:
        return f"agent {answer.agent_key.name}"
    return "someone else"


def _facts_in_time_order(card: ConflictCard) -> list[Memory]:
    """The card's facts, locked (in primary-key order, as every supersede locks), oldest first."""
    ids = CardFact.objects.filter(card=card).values("memory_id")
    locked = list(Memory.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
    return sorted(locked, key=lambda m: (m.valid_from, m.recorded_at))


def _current(card: ConflictCard, facts: list[Memory], current_memory: Memory | uuid.UUID | str | None) -> Memory | None:
    if current_memory is None or current_memory == "":
        return None
    wanted = str(current_memory.pk if isinstance(current_memory, Memory) else current_memory)
    for fact in facts:
        if str(fact.pk) == wanted:
            return fact
    raise InvalidInput("current_fact must be one of the card's facts", field="current_fact")


def _create_answer(
    tracker: Tracker, card: ConflictCard, choice: str, current: Memory | None, note: str, actor: Actor
) -> Answer:
    answer = Answer.objects.create(
        card=card, choice=choice, current_memory=current, note=note, user=actor.user, agent_key=actor.agent_key
    )
    tracker.created(answer, ANSWER_FIELDS)
    return answer


def _skip(tracker: Tracker, card: ConflictCard) -> None:
    count = card.surfaced_count + 1
    values: dict[str, object] = {"surfaced_count": count}
    lowered = _lower(card.severity) if count % SKIPS_PER_SEVERITY_DROP == 0 else None
    if lowered is not None:
        values["severity"] = lowered
    tracker.update(card, **values)
    card.save()
    if card.uncertainty_id is not None:
        record = Uncertainty.objects.select_for_update().get(pk=card.uncertainty_id)
        record_values: dict[str, object] = {
            "surfaced_count": record.surfaced_count + 1,
            "last_surfaced_at": timezone.now(),
        }
        if record.state == UncertaintyState.OPEN:
            record_values["state"] = UncertaintyState.SURFACED
        if lowered is not None:
            record_values["severity"] = lowered
        tracker.update(record, **record_values)
        record.save()


def _lower(severity: str) -> Severity | None:
    rank = SEVERITY_RANK[Severity(severity)]
    return _BY_RANK[rank - 1] if rank > 0 else None


def _usable(memory: Memory) -> bool:
    return memory.status in LIVE_STATUSES and memory.superseded_by_id is None


def _decide(
    tracker: Tracker,
    card: ConflictCard,
    facts: list[Memory],
    choice: str,
    current: Memory | None,
    note: str,
    actor: Actor,
) -> None:
    asked = next((f for f in facts if f.pk == card.asked_memory_id), facts[0])
    if current is None:
        # "It changed" means changed to the newest fact that still stands.
        others = [f for f in facts if f.pk != asked.pk and _usable(f)]
        current = asked if choice == AnswerChoice.YES else (others[-1] if others else asked)
    if choice == AnswerChoice.NO and current.pk == asked.pk:
        raise InvalidInput("'no, it changed' needs a current fact other than the one asked about", field="current_fact")
    if not _usable(current):
        raise ConflictError(f"the fact {current.text!r} is no longer current ({current.status}, {current.reliability})")
    forget = choice == AnswerChoice.NO and says_never_true(note)
    for fact in facts:
        if fact.pk == current.pk:
            continue
        if not _usable(fact):
            continue  # already settled elsewhere (an automatic supersede, a forget): leave it be
        if forget and fact.pk == asked.pk:
            tracker.update(fact, status=Status.FORGOTTEN, expired_at=timezone.now())
            fact.save()
            continue
        apply_supersede(tracker, old=fact, new=current, actor=actor, annotation=f"used to: {fact.text}")
    reliability_raise(tracker, current)
    apply_reinforce(tracker, current)
    current.save()


def _both(tracker: Tracker, facts: list[Memory], actor: Actor) -> None:
    for memory in facts:
        # Lift only the marks a dispute puts on; a superseded fact stays superseded.
        if memory.reliability in (Reliability.CONTRADICTED, Reliability.UNCERTAIN):
            reliability_raise(tracker, memory)
            memory.save()
    # Seed 003: facts kept on purpose although they read as a clash are linked `contradicts`,
    # so find_conflicts and the link graph still show the tension.
    for position, memory in enumerate(facts):
        for other in facts[position + 1 :]:
            apply_link(tracker, src=other, dst=memory, rel=Rel.CONTRADICTS, actor=actor)


def _close(tracker: Tracker, card: ConflictCard, facts: list[Memory], choice: str, note: str) -> None:
    """Close the card and every open uncertainty between its facts (a joined card holds several)."""
    now = timezone.now()
    state = CardState.DISMISSED if choice == AnswerChoice.BOTH else CardState.ANSWERED
    tracker.update(card, state=state, answered_at=now)
    card.save()
    ids = [fact.pk for fact in facts]
    records = Uncertainty.objects.select_for_update().filter(
        Q(pk=card.uncertainty_id)
        | Q(memory_a__in=ids, memory_b__in=ids, state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED])
    )
    detail = {
        AnswerChoice.YES: "a reviewer confirmed the asked fact still holds",
        AnswerChoice.NO: "a reviewer said the asked fact changed",
        AnswerChoice.BOTH: "a reviewer said both facts are true (not a conflict)",
    }[AnswerChoice(choice)]
    lifted: set[uuid.UUID] = set()
    for record in records.order_by("pk"):
        if record.penalized_at is not None:
            # Confidence upkeep halved both sides while the clash was open: the facts kept get it back.
            for memory in facts:
                if memory.pk in (record.memory_a_id, record.memory_b_id) and memory.pk not in lifted:
                    memory.refresh_from_db()
                    if _usable(memory) and memory.reliability != Reliability.SUPERSEDED:
                        penalty_lift(tracker, memory)
                        memory.save()
                        lifted.add(memory.pk)
        tracker.update(
            record,
            state=UncertaintyState.RESOLVED,
            resolution_strategy=ResolutionStrategy.USER_CLARIFIED,
            resolution_detail=detail + (f": {note}" if note else ""),
            resolved_at=now,
        )
        record.save()


@dataclass
class BulkResult:
    dismissed: list[ConflictCard]
    refused: list[tuple[ConflictCard, str]]


def cards_dismiss(*, cards: list[ConflictCard], actor: Actor) -> BulkResult:
    """Dismiss several cards as "not a conflict" (the ``both`` answer), one transaction and event each.

    Each dismissal is an ordinary answer, so each can be undone or the card
    reopened on its own; a card someone answered meanwhile is reported, not raised.
    """
    result = BulkResult([], [])
    for card in cards:
        try:
            card_answer(card=card, choice=AnswerChoice.BOTH, actor=actor, note="dismissed in bulk")
        except (ConflictError, NotFound, InvalidInput) as exc:
            result.refused.append((card, exc.message))
        else:
            result.dismissed.append(card)
    return result


def card_answer_event(*, card: ConflictCard) -> Event | None:
    """The answer event that closed ``card`` and was not undone (what reopening takes back)."""
    return (
        Event.objects.filter(
            workspace_id=card.workspace_id,
            verb=VERB,
            undone_by__isnull=True,
            changes__contains=[{"model": "conflicts.conflictcard", "pk": str(card.pk), "op": "update"}],
        )
        .order_by("-created_at", "-id")
        .first()
    )


def card_reopen(*, card: ConflictCard, actor: Actor) -> ConflictCard:
    """Reopen an answered or dismissed card by undoing its answer: the facts go back as they were.

    A card the hub closed (its facts retired) cannot be reopened — there is
    nothing left to ask; an answer whose facts changed again since cannot be
    undone either, and the undo says why.
    """
    if card.state == CardState.OPEN:
        raise ConflictError("this card is already open")
    if card.state == CardState.CLOSED:
        raise ConflictError("the hub closed this card because its facts no longer stand; there is nothing to reopen")
    event = card_answer_event(card=card)
    if event is None:
        raise ConflictError("no answer to take back was found for this card")
    return card_answer_undo(event=event, actor=actor, reason=f"card reopened by {actor.name}")
