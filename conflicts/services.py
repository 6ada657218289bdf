"""Acting on detected disagreements: uncertainty records, automatic resolution, cards.

Every decision here is one transaction and one Event holding every row it
touched, so ``memories.services.event_undo`` restores the exact prior state.
Only facts about the same subject may invalidate each other: a verdict whose
``same_subject`` is False, or two facts with different keys, changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from conflicts import hooks
from conflicts.detection.classifier import subjects_apart
from conflicts.detection.rules import keeps_part, stem
from conflicts.detection.verdict import Relation, Verdict
from conflicts.models import (
    CardFact,
    CardKind,
    CardState,
    ConflictCard,
    DetectionContext,
    ResolutionStrategy,
    Severity,
    Uncertainty,
    UncertaintyState,
    UncertaintyType,
)
from conflicts.reliability import reliability_lower, reliability_raise, severity_for
from conflicts.retirement import standing
from conflicts.severity import severity_calibrated
from conflicts.tolerance import (
    announced_resolve_threshold,
    auto_resolve_threshold,
    surface_threshold,
    tolerance_value,
)
from memories.audit import Actor, Tracker, record_event
from memories.hooks import FactReinforced
from memories.models import LIVE_STATUSES, Event, Memory, Reliability, Source
from memories.services import apply_link, apply_merge, apply_supersede
from memories.speech_acts import is_claim
from memories.subjects import (
    Agreement,
    another_thing_by_a_shared_word,
    belonging_verb,
    entities_agree,
    named_speakers_differ,
    relatives,
    speakers_differ,
    states_its_subject,
    states_several_things,
    subjects_agree,
)
from memoryhub.errors import ConflictError

UNCERTAINTY_FIELDS = [
    "memory_a",
    "memory_b",
    "uncertainty_type",
    "severity",
    "detection_context",
    "detector",
    "classification",
    "probability",
    "reasoning",
    "temporal_signal",
    "surface_context",
    "state",
    "resolution_strategy",
]
CARD_FIELDS = ["kind", "question", "asked_memory", "fact_set_key", "detector", "severity", "state"]
# A duplicate is merged silently only when the detector is this sure.
MERGE_PROBABILITY = 0.9
# Confidence dominance: the stronger side must be more than twice as confident.
DOMINANCE_RATIO = 2.0
SOURCE_RANK = {Source.EXPLICIT: 2, Source.RESEARCHED: 1, Source.INFERRED: 0}

Action = Literal["superseded", "merged", "dominance", "carded", "recorded", "none"]


@dataclass
class Resolution:
    action: Action
    uncertainty: Uncertainty | None = None
    card: ConflictCard | None = None


def pair_order(x: Memory, y: Memory) -> tuple[Memory, Memory]:
    """(older, newer) by when each became true, then when the hub learned it."""
    return (x, y) if (x.valid_from, x.recorded_at) <= (y.valid_from, y.recorded_at) else (y, x)


def pair_already_considered(a: Memory, b: Memory) -> bool:
    """Any uncertainty or card on this pair, open or resolved, means: do not raise it again."""
    pair = Q(memory_a=a, memory_b=b) | Q(memory_a=b, memory_b=a)
    if Uncertainty.objects.filter(pair).exists():
        return True
    return card_holding([a, b]) is not None


def same_subject(a: Memory, b: Memory, verdict: Verdict) -> bool:
    if a.key and b.key and a.key != b.key:
        return False
    return verdict.same_subject


# Wording by which a fact says itself that something changed.
CHANGE_WORDING = re.compile(
    r"\b(?:moved|relocated|switched|no longer|not anymore|changed|replaced|migrated|upgraded|downgraded|"
    r"now|as of|since|from now on|took over|left|quit|stopped|started)\b",
    re.IGNORECASE,
)
# Where two facts' subjects are known to differ, the classifier must be this sure for a card.
SURE_ACROSS_SUBJECTS = 0.9


@dataclass(frozen=True)
class SubjectGuard:
    """May a verdict about two facts change them without a person? Only when both are about one subject.

    ``automatic``: entity and attribute agree (memories/subjects.py), or the
    newer fact names the very value it replaces or corrects (a tier-0 rule
    verdict) and nothing says the subjects differ — never between two chat
    lines opening with two speakers' names. ``different``: the entity or
    the attribute is known on both sides and differs — then nothing automatic,
    a card at most, and only when the classifier is sure. Facts their agents filed under two scopes
    (:func:`filed_apart`) are never ``automatic``: an open record instead. ``other_speakers``: both
    are first-person statements by two different speakers ("I work at a bank" from
    one side of a chat, "I work at a farm" from the other) — two people, so not
    even a card.
    """

    automatic: bool
    different: bool
    label: str
    other_speakers: bool = False
    read_apart: bool = False
    held_by_scopes: bool = False  # one subject by every reading, but filed under two scopes: not automatic


def subject_guard(older: Memory, newer: Memory, verdict: Verdict) -> SubjectGuard:
    agreement = subjects_agree(older.subject, newer.subject)
    keys_differ = bool(older.key and newer.key and older.key != newer.key)
    if keys_differ:
        agreement = Agreement(agreement.entity, False)
    other_speakers = speakers_differ(
        older.text, older.agent, older.subject_entity, newer.text, newer.agent, newer.subject_entity
    )
    # Two things the texts themselves tell apart (a relative, two names, siblings, a thing named after another):
    # not one subject whatever a reader says. Two keys are an agent's naming, which may differ for one thing.
    apart = subjects_apart(older, newer)
    read_apart = apart and not keys_differ
    if other_speakers or read_apart:
        agreement = Agreement(False, agreement.attribute)
    if _another_doing_of_a_belonging(older, newer):
        agreement = Agreement(agreement.entity, False)
    # The newer fact names the very value it leaves or corrects ("moved the broker off RabbitMQ"):
    # that is itself evidence of one subject, stronger than an entity guessed from a note that
    # leaves its subject out — unless the attribute differs, or one entity is a relative of the
    # other ("the user's sister").
    names_the_value = verdict.tier == "rules" and verdict.announced
    entity_guessed = not (states_its_subject(older.text) and states_its_subject(newer.text))
    entity_ok = agreement.entity is not False or (
        entity_guessed and not relatives(older.subject_entity, newer.subject_entity)
    )
    # The slot reader read both facts as one subject given a new value: that outweighs the subject
    # reader's two readings of one thing ("the staging database" / "Staging DB"), never two keys,
    # two speakers or a relative ("the user" / "the user's sister") — nor two things the subject reader
    # tells apart by a word they share ("the billing service" / "the billing dashboard"): the slot reader
    # reads one *thing* well, not which of two named by one word, unless both name one property.
    read_as_one = verdict.one_slot and not apart and not _another_thing(older, newer, agreement)
    automatic = agreement.same or read_as_one or (names_the_value and agreement.attribute is not False and entity_ok)
    # One chat speaker's line never retires another's ("Ana: So there's a new member of the household: …" /
    # "Ben: So there's a new member …"): without an "I" nothing says whose household, so a person asks.
    automatic = automatic and not named_speakers_differ(older.text, newer.text)
    held_by_scopes = automatic and filed_apart(older, newer)
    label = (newer if newer.subject.attribute else older).subject_label or "one subject"
    return SubjectGuard(
        automatic=automatic and not held_by_scopes,
        different=agreement.different and not read_as_one,
        label=label,
        other_speakers=other_speakers,
        read_apart=read_apart,
        held_by_scopes=held_by_scopes,
    )


def filed_apart(older: Memory, newer: Memory) -> bool:
    """Their agents filed the two facts under two scopes ("pets" / "calendar"), and no one key joins them.

    A scope is an agent's own word on what a fact belongs to, so two scopes may mean two things even where
    every reading says one: a person decides, nothing changes by itself (docs/DETECTION.md, 2026-12-01,
    twenty-second session: on the dev stories automatic decisions across two scopes were wrong 5 times in 20,
    within one 3 in 193). A shared key is the agent's stronger word that the facts hold one slot.
    """
    scopes_differ = bool(older.scope and newer.scope and older.scope != newer.scope)
    return scopes_differ and not (older.key and older.key == newer.key)


def _another_thing(older: Memory, newer: Memory, agreement: Agreement) -> bool:
    """The subject reader reads two things named by a word they share, and no one property of them."""
    return (
        agreement.entity is False
        and agreement.attribute is not True
        and another_thing_by_a_shared_word(older.text, older.subject_entity, newer.text, newer.subject_entity)
    )


def _another_doing_of_a_belonging(older: Memory, newer: Memory) -> bool:
    """The older fact says what a belonging does ("The user's book club meets monthly."), the newer one says it
    did something else ("… switched to sci-fi this year."): another of the belonging's properties may have
    changed, so the guard reads the properties as differing — nothing changes by itself, and only a sure
    model may still ask."""
    doing = belonging_verb(older.text)
    return bool(doing) and stem(belonging_verb(newer.text) or "-") != stem(doing)


def conflict_resolve(
    *, older: Memory, newer: Memory, verdict: Verdict, context: DetectionContext, actor: Actor
) -> Resolution:
    """Apply what is safe to apply for one detected pair; card the rest.

    Nothing is compared unless both facts are claims; nothing changes by itself
    unless :func:`subject_guard` allows it (otherwise a card or an open record).
    """
    if verdict.relation == Relation.COMPATIBLE or not same_subject(older, newer, verdict):
        return Resolution("none")
    if not (is_claim(older.speech_act) and is_claim(newer.speech_act)):
        return Resolution("none")
    guard = subject_guard(older, newer, verdict)
    if guard.other_speakers or guard.read_apart:
        return Resolution("none")  # two people's self-descriptions, or two things: nothing to ask
    across = guard.different and not guard.automatic
    # Across subjects only a sure model may ask (a card at most); a tier-0 rule read words, not subjects.
    unsure = verdict.probability < SURE_ACROSS_SUBJECTS or verdict.tier == "rules"
    if across and (unsure or verdict.relation == Relation.DUPLICATE):
        return Resolution("none")
    if pair_already_considered(older, newer):
        return Resolution("none")
    if not guard.automatic:
        if guard.held_by_scopes:
            held = f'not applied: filed under two scopes ("{older.scope}", "{newer.scope}"), so a person decides'
            verdict = replace(verdict, reasons=(*verdict.reasons, held))
        return _ask_instead(older, newer, verdict, context, actor)
    with transaction.atomic():
        locked_older, locked_newer = _lock_live(older, newer)
        if locked_older is None or locked_newer is None:
            return Resolution("none")
        older, newer = locked_older, locked_newer
        if verdict.relation == Relation.DUPLICATE:
            if verdict.values_differ or restated_after_a_change(older, newer):
                # "The rate limit is 1,000 req/s" and "… 500 req/s" read alike; merging would drop a value.
                # A value said again after something else was said of its subject is a return, not a copy.
                return _record(older, newer, verdict, context, actor)
            return _merge_duplicate(older, newer, verdict, actor)
        if verdict.relation == Relation.TEMPORAL_CHANGE:
            return _temporal_change(older, newer, verdict, context, actor)
        if verdict.relation == Relation.TRUE_CONTRADICTION:
            return _contradiction(older, newer, verdict, context, actor)
        return _record(older, newer, verdict, context, actor)


def _ask_instead(older: Memory, newer: Memory, verdict: Verdict, context: DetectionContext, actor: Actor) -> Resolution:
    """Subjects not shown to agree: never a supersede or merge, and no card either — an open record.

    The record keeps what the pair reader saw (recall flags an open record, and the narrative detective may
    raise it with the rest of the history). A card here asked a person about two facts the hub could not
    even tell were about one thing: on every labelled set such cards were wrong (0 of 4 on the stories,
    every DECODE dialogue card), and a wrong question costs a reviewer's trust (docs/DETECTION.md,
    2026-11-30). Cards come from pairs whose subjects agree and from the detective's reading of the whole
    history.
    """
    if verdict.relation == Relation.DUPLICATE:
        return Resolution("none")  # two facts alike in wording but not shown to be one: keep both
    if not verdict.is_conflict:
        return _record(older, newer, verdict, context, actor)  # only the LLM's ambiguities get here
    with transaction.atomic():
        locked_older, locked_newer = _lock_live(older, newer)
        if locked_older is None or locked_newer is None:
            return Resolution("none")
        temporal = verdict.relation == Relation.TEMPORAL_CHANGE
        loser, winner = (
            (locked_newer, locked_older) if temporal and verdict.current == "a" else (locked_older, locked_newer)
        )
        kind = UncertaintyType.STALE if temporal else UncertaintyType.CONTRADICTION
        return _record(loser, winner, verdict, context, actor, kind)


def _lock_live(a: Memory, b: Memory) -> tuple[Memory | None, Memory | None]:
    rows = {m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=[a.pk, b.pk]).order_by("pk")}
    locked_a, locked_b = rows.get(a.pk), rows.get(b.pk)
    for memory in (locked_a, locked_b):
        if memory is None or memory.status not in LIVE_STATUSES or memory.superseded_by_id is not None:
            return None, None
    return locked_a, locked_b


def merge_winner(memories: list[Memory]) -> Memory:
    """The fact a merge keeps (seed 002): the most confident; among equals the oldest."""
    return min(memories, key=lambda m: (-round(m.confidence, 6), m.valid_from, m.recorded_at, str(m.pk)))


RESTATEMENT_WINDOW = 200  # facts of the subject's first word looked at between the two


def restated_after_a_change(older: Memory, newer: Memory) -> bool:
    """Did another claim about the same entity come between two alike facts?

    "Sequence A: 5 emails over 14 days." … "Sequence A cut to 4 emails." …
    "Sequence A is still 5 emails over 14 days.": the last is the old value coming
    back, which the detective reads as a reversal and a person may have to settle —
    folding it into the first would hide the newest word on the subject.
    """
    entity = older.subject_entity or newer.subject_entity
    if not entity or not newer.valid_from or not older.valid_from or newer.valid_from <= older.valid_from:
        return False
    between = (
        Memory.objects.filter(
            workspace_id=older.workspace_id,
            status__in=LIVE_STATUSES,
            valid_from__gt=older.valid_from,
            valid_from__lt=newer.valid_from,
            subject_entity__startswith=entity.split()[0],
        )
        .exclude(pk__in=[older.pk, newer.pk])
        .values_list("subject_entity", "speech_act")[:RESTATEMENT_WINDOW]
    )
    return any(is_claim(act) and entities_agree(entity, other) for other, act in between)


def _merge_duplicate(older: Memory, newer: Memory, verdict: Verdict, actor: Actor) -> Resolution:
    if verdict.probability < MERGE_PROBABILITY or older.kind != newer.kind:
        return Resolution("none")
    winner = merge_winner([older, newer])
    loser = newer if winner.pk == older.pk else older
    tracker = Tracker()
    apply_merge(tracker, winner=winner, losers=[loser], actor=actor)
    _announce_decision(
        record_event(
            workspace=older.workspace,
            actor=actor,
            verb="conflict.merge_duplicate",
            memory=loser,
            changes=tracker.changes,
            automatic=True,
            reason=plain_reason(older, newer, verdict, what="both facts say the same thing"),
        )
    )
    return Resolution("merged")


def _temporal_change(
    older: Memory, newer: Memory, verdict: Verdict, context: DetectionContext, actor: Actor
) -> Resolution:
    loser, winner = (newer, older) if verdict.current == "a" else (older, newer)
    tolerance = tolerance_value(older.workspace)
    threshold = (announced_resolve_threshold if verdict.announced else auto_resolve_threshold)(tolerance)
    if verdict.probability < threshold:
        # Not sure enough to rewrite history silently: ask a person, or, when
        # not even sure enough to ask, keep it as an open uncertainty.
        if verdict.probability < surface_threshold(tolerance):
            return _record(loser, winner, verdict, context, actor, UncertaintyType.STALE)
        return _card_pair(
            loser,
            winner,
            verdict,
            context,
            actor,
            kind=CardKind.STALE,
            question=f"Is it still true that {_clause(loser.text)}?",
            uncertainty_type=UncertaintyType.STALE,
            temporal=True,
        )
    if states_several_things(loser.text) and keeps_part(winner.text):
        # "Free plan: 3 projects, 1 GB storage." → "Free plan cut to 2 projects; storage unchanged.": the newer
        # fact changes one of the things the older states and says the rest stays. Retiring the older would hide
        # the rest from every agent; an open record keeps both, and recall reads the newer as the change.
        return _record(loser, winner, verdict, context, actor, UncertaintyType.STALE)
    tracker = Tracker()
    apply_supersede(tracker, old=loser, new=winner, actor=actor, annotation=f"used to: {loser.text}")
    apply_link(tracker, src=loser, dst=winner, rel="temporal_evolution", actor=actor)
    uncertainty = _uncertainty(
        tracker,
        loser,
        winner,
        verdict,
        context,
        UncertaintyType.CONTRADICTION,
        temporal=True,
        state=UncertaintyState.RESOLVED,
        strategy=ResolutionStrategy.TEMPORAL_SUPERSEDE,
        detail=f"{winner.text!r} replaced {loser.text!r} over time",
    )
    _announce_decision(
        record_event(
            workspace=older.workspace,
            actor=actor,
            verb="conflict.temporal_supersede",
            memory=loser,
            changes=tracker.changes,
            automatic=True,
            reason=plain_reason(older, newer, verdict, what=change_in_words(older, newer, verdict)),
        )
    )
    return Resolution("superseded", uncertainty=uncertainty)


def _contradiction(
    older: Memory, newer: Memory, verdict: Verdict, context: DetectionContext, actor: Actor
) -> Resolution:
    strong, weak = (older, newer) if older.confidence >= newer.confidence else (newer, older)
    dominates = (
        strong.confidence > DOMINANCE_RATIO * weak.confidence
        and SOURCE_RANK[Source(strong.source)] > SOURCE_RANK[Source(weak.source)]
    )
    if dominates:
        tracker = Tracker()
        reliability_lower(tracker, weak, Reliability.UNCERTAIN)
        weak.save()
        uncertainty = _uncertainty(
            tracker,
            weak,
            strong,
            verdict,
            context,
            UncertaintyType.CONTRADICTION,
            state=UncertaintyState.RESOLVED,
            strategy=ResolutionStrategy.CONFIDENCE_DOMINANCE,
            detail=(
                f"{strong.source} fact at {strong.confidence:.2f} outweighs {weak.source} fact at {weak.confidence:.2f}"
            ),
        )
        _announce_decision(
            record_event(
                workspace=older.workspace,
                actor=actor,
                verb="conflict.confidence_dominance",
                memory=weak,
                changes=tracker.changes,
                automatic=True,
                reason=plain_reason(
                    older,
                    newer,
                    verdict,
                    what=f"they disagree, and the {strong.source} fact ({strong.confidence:.2f}) outweighs the "
                    f"{weak.source} one ({weak.confidence:.2f})",
                ),
            )
        )
        return Resolution("dominance", uncertainty=uncertainty)
    if verdict.probability < surface_threshold(tolerance_value(older.workspace)):
        return _record(older, newer, verdict, context, actor, UncertaintyType.CONTRADICTION)
    return _card_pair(
        older,
        newer,
        verdict,
        context,
        actor,
        kind=CardKind.CONTRADICTION,
        question=f"Is it still true that {_clause(older.text)}?",
        uncertainty_type=UncertaintyType.CONTRADICTION,
        mark=Reliability.CONTRADICTED,
    )


def _record(
    older: Memory,
    newer: Memory,
    verdict: Verdict,
    context: DetectionContext,
    actor: Actor,
    kind: UncertaintyType = UncertaintyType.AMBIGUOUS,
) -> Resolution:
    """An open uncertainty and nothing else: no card, no fact changed."""
    tracker = Tracker()
    uncertainty = _uncertainty(tracker, older, newer, verdict, context, kind)
    record_event(
        workspace=older.workspace,
        actor=actor,
        verb="conflict.record",
        memory=older,
        changes=tracker.changes,
        automatic=True,
        reason=_reason(str(verdict.relation), verdict),
    )
    return Resolution("recorded", uncertainty=uncertainty)


def _card_pair(
    asked: Memory,
    other: Memory,
    verdict: Verdict,
    context: DetectionContext,
    actor: Actor,
    *,
    kind: CardKind,
    question: str,
    uncertainty_type: UncertaintyType,
    mark: Reliability | None = None,
    temporal: bool = False,
) -> Resolution:
    tracker = Tracker()
    for memory in (asked, other):
        if mark is not None:
            reliability_lower(tracker, memory, mark)
        tracker.update(memory, conflict_count=memory.conflict_count + 1)
        memory.save()
    uncertainty = _uncertainty(tracker, asked, other, verdict, context, uncertainty_type, temporal=temporal)
    card = _card_join(tracker, asked, other) or card_create(
        tracker,
        kind=kind,
        memories=pair_order(asked, other),
        asked=asked,
        question=question,
        detector=f"{context}:{verdict.tier}",
        evidence=_evidence(verdict),
        severity=uncertainty.severity,
        uncertainty=uncertainty,
    )
    record_event(
        workspace=asked.workspace,
        actor=actor,
        verb="conflict.card",
        memory=asked,
        changes=tracker.changes,
        automatic=True,
        reason=_reason(str(verdict.relation), verdict),
    )
    return Resolution("carded", uncertainty=uncertainty, card=card)


def _card_join(tracker: Tracker, asked: Memory, other: Memory) -> ConflictCard | None:
    """One open question per fact: a later rival of an already asked fact joins its card.

    "Is Ivo still on call?" is asked once, with every newer on-call fact beside
    it (a 3+ fact card lets the reviewer pick the current one), not once per rival.
    """
    card = (
        ConflictCard.objects.select_for_update()
        .filter(workspace_id=asked.workspace_id, asked_memory=asked, state=CardState.OPEN)
        .order_by("created_at")
        .first()
    )
    if card is None:
        return None
    positions = list(CardFact.objects.filter(card=card).values_list("memory_id", "position"))
    if other.pk not in {memory_id for memory_id, _ in positions}:
        fact = CardFact.objects.create(card=card, memory=other, position=max(p for _, p in positions) + 1)
        tracker.created(fact, ["card", "memory", "position"])
    return card


def _uncertainty(
    tracker: Tracker,
    a: Memory,
    b: Memory | None,
    verdict: Verdict,
    context: DetectionContext,
    kind: UncertaintyType,
    *,
    temporal: bool = False,
    state: UncertaintyState = UncertaintyState.OPEN,
    strategy: ResolutionStrategy | None = None,
    detail: str = "",
) -> Uncertainty:
    resolved = state == UncertaintyState.RESOLVED
    uncertainty = Uncertainty.objects.create(
        workspace_id=a.workspace_id,
        memory_a=a,
        memory_a_kind=a.kind,
        memory_b=b,
        memory_b_kind=b.kind if b else "",
        uncertainty_type=kind,
        severity=severity_for(a, b),
        detection_context=context,
        detector=verdict.tier,
        rule=verdict.rule,
        classification=str(verdict.relation),
        probability=verdict.probability,
        reasoning=verdict.reasoning or "; ".join(verdict.reasons),
        temporal_signal=temporal,
        surface_context=surface_context(a, b),
        state=state,
        resolution_strategy=strategy or "",
        resolution_detail=detail,
        resolved_at=timezone.now() if resolved else None,
    )
    tracker.created(uncertainty, UNCERTAINTY_FIELDS)
    return uncertainty


def card_create(
    tracker: Tracker,
    *,
    kind: CardKind,
    memories: tuple[Memory, ...] | list[Memory],
    asked: Memory | None,
    question: str,
    detector: str,
    evidence: dict[str, object],
    severity: str = Severity.MEDIUM,
    uncertainty: Uncertainty | None = None,
) -> ConflictCard | None:
    """One card per fact set, ever: returns None when a card (open or closed) already holds them all.

    Also None when fewer than two of the facts still stand (the rest superseded,
    forgotten or merged), or a solo card's one fact no longer does: there would
    be nothing left to ask. The severity given
    is the stakes; the card's own is capped by how often its detector is right
    (:func:`conflicts.severity.severity_calibrated`).
    """
    key = fact_set_key(list(memories))
    workspace_id = memories[0].workspace_id
    # A solo question (a stale or unverified fact) needs its one fact standing; a conflict needs two.
    if sum(1 for memory in memories if standing(memory)) < min(2, len(memories)):
        return None
    if card_holding(list(memories)) is not None:
        return None
    severity = severity_calibrated(
        stakes=Severity(severity), workspace_id=workspace_id, detector=detector, evidence=evidence
    )
    card = ConflictCard.objects.create(
        workspace_id=workspace_id,
        kind=kind,
        question=question,
        asked_memory=asked,
        fact_set_key=key,
        detector=detector,
        evidence=evidence,
        severity=severity,
        uncertainty=uncertainty,
    )
    tracker.created(card, CARD_FIELDS)
    for position, memory in enumerate(memories):
        fact = CardFact.objects.create(card=card, memory=memory, position=position)
        tracker.created(fact, ["card", "memory", "position"])
    hooks.announce_on_commit(hooks.card_opened, hooks.CardOpened(workspace_id=workspace_id, card_id=card.pk))
    return card


def _announce_decision(event: Event) -> Event:
    """Tell the apps above (webhooks) once the automatic decision has committed."""
    hooks.announce_on_commit(
        hooks.decision_made, hooks.DecisionMade(workspace_id=event.workspace_id, event_id=event.pk)
    )
    return event


def card_holding(memories: list[Memory]) -> ConflictCard | None:
    """A card, in any state, whose facts include every one of ``memories``."""
    cards = ConflictCard.objects.filter(workspace_id=memories[0].workspace_id)
    for memory in memories:
        cards = cards.filter(card_facts__memory=memory)
    return cards.first()


def fact_set_key(memories: list[Memory]) -> str:
    return ",".join(sorted(str(m.pk) for m in memories))


def surface_context(a: Memory, b: Memory | None) -> str:
    """When an agent should bring this up: the fact's slot, scope or tags, else its words."""
    for memory in (a, b):
        if memory is not None and memory.key:
            return f"when {memory.key.replace('_', ' ')} comes up"
    if a.scope:
        return f"when discussing {a.scope}"
    if a.tags:
        return f"when discussing {', '.join(a.tags[:3])}"
    return f"when discussing: {a.text[:80]}"


def _clause(text: str) -> str:
    """The fact as a quoted clause for 'Is it still true that "…"?'.

    Quoting keeps the writer's capitals (names, acronyms) without guessing.
    """
    return '"' + text.strip().rstrip(".!?").strip() + '"'


def _evidence(verdict: Verdict) -> dict[str, object]:
    return {
        "relation": str(verdict.relation),
        "probability": round(verdict.probability, 4),
        "tier": verdict.tier,
        "reasons": list(verdict.reasons),
        "reasoning": verdict.reasoning,
    }


def plain_reason(older: Memory, newer: Memory, verdict: Verdict, *, what: str) -> str:
    """Why an automatic decision was made, in words a reviewer reads on the Decisions page.

    "Same subject — the user's home city; the newer fact says they moved (classifier, p=0.93)":
    what the two facts are about, and what made the hub act — never a list of shared words.
    """
    label = subject_guard(older, newer, verdict).label
    return f"Same subject — {label}; {what} ({verdict.tier}, p={verdict.probability:.2f})"


def change_in_words(older: Memory, newer: Memory, verdict: Verdict) -> str:
    """What the newer fact says happened, for :func:`plain_reason`."""
    for reason in verdict.reasons:
        if reason.startswith("the newer fact corrects"):
            return "the newer fact corrects the earlier one"
        if reason.startswith("the newer fact leaves"):
            return reason.split(", which")[0].replace("leaves", "says it left")
    current = older if verdict.current == "a" else newer
    marker = CHANGE_WORDING.search(current.text)
    if marker:
        word = marker.group(0).lower()
        if word.startswith(("moved", "relocated")):
            return "the newer fact says they moved"
        return f'the newer fact says it changed ("{word}")'
    if older.valid_from.date() != newer.valid_from.date():
        return (
            f"the fact of {current.valid_from:%Y-%m-%d} gives a later value than the one of "
            f"{(newer if current is older else older).valid_from:%Y-%m-%d}"
        )
    return "the newer fact gives a new value"


def _reason(what: str, verdict: Verdict) -> str:
    reasons = "; ".join(verdict.reasons)
    return f"{what} ({verdict.tier}, p={verdict.probability:.2f})" + (f": {reasons}" if reasons else "")


def uncertainties_resolve_on_reinforce(event: FactReinforced) -> None:
    """Receiver of ``memories.hooks.fact_reinforced``: new evidence may settle the fact's disputes."""
    uncertainties_resolve_by_evidence(memory=event.memory, actor=event.actor)


def uncertainties_resolve_by_evidence(*, memory: Memory, actor: Actor) -> int:
    """After ``memory`` was reinforced: settle its open disputes it now clearly wins.

    Evidence resolution (seed): when the reinforced side's confidence is more
    than twice the other side's, it becomes reliable and the other superseded.
    """
    resolved = 0
    open_records = Uncertainty.objects.filter(
        Q(memory_a=memory) | Q(memory_b=memory),
        state__in=[UncertaintyState.OPEN, UncertaintyState.SURFACED],
        memory_b__isnull=False,
    ).select_related("memory_a", "memory_b")
    for record in open_records:
        other = record.memory_b if record.memory_a_id == memory.pk else record.memory_a
        assert other is not None  # noqa: S101 - filtered above
        if memory.confidence <= DOMINANCE_RATIO * other.confidence:
            continue
        with transaction.atomic():
            tracker = Tracker()
            # Lock in id order, as apply_supersede does, so the two cannot deadlock.
            locked = {
                m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=[memory.pk, other.pk]).order_by("pk")
            }
            winner, loser = locked[memory.pk], locked[other.pk]
            reliability_raise(tracker, winner)
            winner.save()
            if loser.status in LIVE_STATUSES and loser.superseded_by_id is None:
                apply_supersede(tracker, old=loser, new=winner, actor=actor, annotation=f"used to: {loser.text}")
            tracker.update(
                record,
                state=UncertaintyState.RESOLVED,
                resolution_strategy=ResolutionStrategy.EVIDENCE_RESOLVED,
                resolution_detail=f"{winner.text!r} was reinforced to {winner.confidence:.2f}",
                resolved_at=timezone.now(),
            )
            record.save()
            _announce_decision(
                record_event(
                    workspace=memory.workspace,
                    actor=actor,
                    verb="conflict.evidence_resolve",
                    memory=winner,
                    changes=tracker.changes,
                    automatic=True,
                    reason="reinforcement settled the dispute",
                )
            )
        resolved += 1
    return resolved


def card_assign(*, card: ConflictCard, user_id: int | None, actor: Actor) -> ConflictCard:
    """Give an open card to a reviewer ("assign to me"), or to nobody; one ``card.assign`` event.

    Assignment only sorts the work: anyone with the reviewer role may still answer.
    """
    with transaction.atomic():
        locked = ConflictCard.objects.select_for_update().select_related("workspace").get(pk=card.pk)
        if locked.state != CardState.OPEN:
            raise ConflictError(f"this card is {locked.state}; only open cards are assigned")
        tracker = Tracker()
        tracker.update(locked, assignee_id=user_id)
        if tracker.changes:
            locked.save(update_fields=["assignee"])
            record_event(
                workspace=locked.workspace,
                actor=actor,
                verb="card.assign",
                memory=locked.asked_memory,
                changes=tracker.changes,
                reason=f"assigned to {actor.name}" if user_id is not None else "unassigned",
            )
    return locked
