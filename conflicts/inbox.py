"""Reads for the review inbox: open cards in review order, counts, neighbours, the last answer.

Review order is severity (critical first), then age (oldest first), then id —
a total order, so "the next card" is well defined without offsets.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, prefetch_related_objects

from conflicts.feedback import answer_author
from conflicts.models import Answer, CardFact, CardKind, CardState, ConflictCard, Severity
from memories.models import Event, Memory
from memoryhub.errors import NotFound
from workspaces.models import Workspace

PAGE_SIZE = 25
# Review order walks the severities one at a time: each step is a range scan of
# the card_inbox index (workspace, state, severity, created_at), so no request
# sorts the whole open set — the inbox stays fast at any number of cards.
REVIEW_ORDER = [Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW]
CHOICES_CACHE_SECONDS = 60
MEMORY_COLUMNS = ("id", "text", "agent", "scope", "kind", "reliability", "status", "confidence", "valid_from")


@dataclass
class InboxFilters:
    kind: str = ""
    severity: str = ""
    scope: str = ""
    agent: str = ""
    detector: str = ""

    @classmethod
    def from_query(cls, query: dict[str, str]) -> InboxFilters:
        return cls(**{name: (query.get(name) or "").strip()[:200] for name in cls.__dataclass_fields__})

    def as_query(self) -> dict[str, str]:
        return {name: value for name, value in vars(self).items() if value}


def _facts_prefetch() -> Prefetch[str]:
    facts = CardFact.objects.select_related("memory").only(
        "card_id", "position", "memory_id", *(f"memory__{column}" for column in MEMORY_COLUMNS)
    )
    return Prefetch("card_facts", queryset=facts.order_by("position"))


def inbox_cards(*, workspace: Workspace, filters: InboxFilters | None = None) -> QuerySet[ConflictCard]:
    """Open cards matching ``filters``, unordered: callers walk :data:`REVIEW_ORDER`."""
    filters = filters or InboxFilters()
    qs = ConflictCard.objects.filter(workspace=workspace, state=CardState.OPEN)
    if filters.kind:
        qs = qs.filter(kind=filters.kind)
    if filters.severity:
        qs = qs.filter(severity=filters.severity)
    if filters.detector:
        qs = qs.filter(detector=filters.detector)
    if filters.scope:
        qs = qs.filter(Exists(CardFact.objects.filter(card=OuterRef("pk"), memory__scope=filters.scope)))
    if filters.agent:
        qs = qs.filter(Exists(CardFact.objects.filter(card=OuterRef("pk"), memory__agent=filters.agent)))
    return qs


def inbox_page(
    *, workspace: Workspace, filters: InboxFilters, page: int = 1, per_page: int | None = None
) -> tuple[list[ConflictCard], bool]:
    """One page of the inbox in review order with each card's facts, and whether another page follows."""
    per_page = per_page or PAGE_SIZE
    base = inbox_cards(workspace=workspace, filters=filters).defer("evidence")
    want = per_page + 1
    skip = (max(page, 1) - 1) * per_page
    sizes: dict[str, int] = {}
    if skip:
        sizes = dict(base.values_list("severity").annotate(n=Count("id")).values_list("severity", "n").order_by())
    rows: list[ConflictCard] = []
    for severity in REVIEW_ORDER:
        if skip:
            size = sizes.get(severity, 0)
            if skip >= size:
                skip -= size
                continue
        rows += base.filter(severity=severity).order_by("created_at", "id")[skip : skip + want - len(rows)]
        skip = 0
        if len(rows) >= want:
            break
    page_rows = rows[:per_page]
    prefetch_related_objects(page_rows, _facts_prefetch())
    for card in page_rows:
        card.agents = sorted({fact.memory.agent or "?" for fact in card.card_facts.all()})  # type: ignore[attr-defined]
    return page_rows, len(rows) > per_page


def card_counts(*, workspace: Workspace) -> dict[str, int]:
    counts = dict.fromkeys(CardState.values, 0)
    rows = ConflictCard.objects.filter(workspace=workspace).values("state").annotate(n=Count("*")).order_by()
    for row in rows:
        counts[row["state"]] = row["n"]
    return counts


@dataclass
class FilterChoices:
    kinds: list[str]
    severities: list[str]
    detectors: list[str]
    scopes: list[str]
    agents: list[str]


def inbox_filter_choices(*, workspace: Workspace) -> FilterChoices:
    """The values the filters offer; cached briefly, as they change slowly and cost a scan each."""
    key = f"inbox-filter-choices:{workspace.pk}"
    choices: FilterChoices | None = cache.get(key)
    if choices is None:
        choices = _filter_choices(workspace)
        cache.set(key, choices, CHOICES_CACHE_SECONDS)
    return choices


def _filter_choices(workspace: Workspace) -> FilterChoices:
    open_cards = ConflictCard.objects.filter(workspace=workspace, state=CardState.OPEN)
    memories = Memory.objects.filter(workspace=workspace)
    return FilterChoices(
        kinds=list(CardKind.values),
        severities=[str(s) for s in REVIEW_ORDER],
        detectors=list(open_cards.order_by("detector").values_list("detector", flat=True).distinct()[:50]),
        scopes=list(memories.exclude(scope="").order_by("scope").values_list("scope", flat=True).distinct()[:100]),
        agents=list(memories.exclude(agent="").order_by("agent").values_list("agent", flat=True).distinct()[:100]),
    )


def card_for_review(*, workspace: Workspace, card_id: uuid.UUID | str) -> ConflictCard:
    """A card of the workspace with its facts (``card.facts``: oldest first) and its deciding answer."""
    try:
        card = ConflictCard.objects.filter(workspace=workspace, pk=card_id).prefetch_related(_facts_prefetch()).get()
    except (ConflictCard.DoesNotExist, ValueError, TypeError):
        raise NotFound("no conflict card with this id in the workspace") from None
    facts = [fact.memory for fact in card.card_facts.all()]
    card.facts = sorted(facts, key=lambda m: m.valid_from)  # type: ignore[attr-defined]
    decision = None
    if card.state != CardState.OPEN:
        decision = Answer.objects.filter(card=card).exclude(choice="skip").select_related("user", "agent_key").first()
    card.decision = decision  # type: ignore[attr-defined]
    card.decided_by = answer_author(decision)  # type: ignore[attr-defined]
    return card


def card_place(*, workspace: Workspace, card_id: uuid.UUID | str) -> tuple[ConflictCard, Place]:
    """Just enough of a card to answer it and find the one after it."""
    card = (
        ConflictCard.objects.filter(workspace=workspace, pk=card_id)
        .only("id", "severity", "created_at", "question")
        .first()
    )
    if card is None:
        raise NotFound("no conflict card with this id in the workspace")
    return card, place_of(card)


@dataclass(frozen=True)
class Place:
    """Where a card sat in review order (kept before an answer changes its severity)."""

    severity: str
    created_at: dt.datetime
    pk: uuid.UUID


def place_of(card: ConflictCard) -> Place:
    return Place(card.severity, card.created_at, card.pk)


def card_after(*, workspace: Workspace, place: Place) -> ConflictCard | None:
    """The next open card in review order after ``place``, wrapping round to the first."""
    cards = inbox_cards(workspace=workspace).exclude(pk=place.pk)
    later = Q(created_at__gt=place.created_at) | Q(created_at=place.created_at, id__gt=place.pk)
    found = cards.filter(later, severity=place.severity).order_by("created_at", "id").first()
    if found is not None:
        return found
    rank = REVIEW_ORDER.index(Severity(place.severity))
    for severity in REVIEW_ORDER[rank + 1 :] + REVIEW_ORDER[: rank + 1]:
        found = cards.filter(severity=severity).order_by("created_at", "id").first()
        if found is not None:
            return found
    return None


def card_before(*, workspace: Workspace, place: Place) -> ConflictCard | None:
    """The open card just before ``place`` in review order (none before the first)."""
    cards = inbox_cards(workspace=workspace).exclude(pk=place.pk)
    earlier = Q(created_at__lt=place.created_at) | Q(created_at=place.created_at, id__lt=place.pk)
    found = cards.filter(earlier, severity=place.severity).order_by("-created_at", "-id").first()
    if found is not None:
        return found
    rank = REVIEW_ORDER.index(Severity(place.severity))
    for severity in reversed(REVIEW_ORDER[:rank]):
        found = cards.filter(severity=severity).order_by("-created_at", "-id").first()
        if found is not None:
            return found
    return None


def last_undoable_answer(*, workspace: Workspace, user: AbstractBaseUser | AnonymousUser) -> Event | None:
    """The person's latest answer that has not been undone (what ``u`` takes back)."""
    if not user.is_authenticated:
        return None
    return (
        Event.objects.filter(workspace=workspace, user_id=user.pk, verb="card.answer", undone_by__isnull=True)
        .order_by("-created_at", "-id")
        .first()
    )
