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
from django.db.models import (
    Count,
    Exists,
    F,
    Max,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    TextField,
    Value,
    prefetch_related_objects,
)
from django.db.models.functions import Coalesce, Concat, Lower, NullIf
from django.utils import timezone

from conflicts.feedback import answer_author
from conflicts.models import Answer, CardFact, CardKind, CardState, ConflictCard, Severity
from conflicts.questions import question_form
from memories.models import Event, Memory
from memoryhub.errors import NotFound
from workspaces.models import Workspace

PAGE_SIZE = 25
# Review order walks the severities one at a time: each step is a range scan of
# the card_inbox index (workspace, state, severity, created_at), so no request
# sorts the whole open set — the inbox stays fast at any number of cards.
REVIEW_ORDER = [Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW]
CHOICES_CACHE_SECONDS = 60
MEMORY_COLUMNS = (
    "id",
    "text",
    "key",
    "agent",
    "scope",
    "kind",
    "reliability",
    "status",
    "superseded_by",
    "confidence",
    "valid_from",
    "recorded_at",
)
SORTS = {"": "severity", "age": "oldest first", "newest": "newest first", "subject": "subject"}
CLOSED_STATES = [CardState.ANSWERED, CardState.DISMISSED, CardState.CLOSED]


@dataclass
class InboxFilters:
    """What the inbox shows: filters, a text search over the facts, assignment, sort, and which state."""

    kind: str = ""
    severity: str = ""
    scope: str = ""
    agent: str = ""
    detector: str = ""
    q: str = ""
    assigned: str = ""  # "" anyone, "me", "nobody"
    sort: str = ""  # see SORTS; "" is review order (severity, then age)
    state: str = ""  # "" open; answered / dismissed / closed browse the history

    @classmethod
    def from_query(cls, query: dict[str, str]) -> InboxFilters:
        filters = cls(**{name: (query.get(name) or "").strip()[:200] for name in cls.__dataclass_fields__})
        if filters.sort not in SORTS:
            filters.sort = ""
        if filters.assigned not in ("", "me", "nobody"):
            filters.assigned = ""
        if filters.state not in ("", *CLOSED_STATES):
            filters.state = ""
        return filters

    def as_query(self) -> dict[str, str]:
        return {name: value for name, value in vars(self).items() if value}

    @property
    def review_order(self) -> bool:
        return not self.sort and not self.state


def waiting_for(created_at: dt.datetime, now: dt.datetime | None = None) -> str:
    """How long a card has waited, in the largest unit that fits: "just now", "5 minutes", "3 days"."""
    seconds = max(0, int(((now or timezone.now()) - created_at).total_seconds()))
    for unit, size in (("week", 7 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return "just now"


def _facts_prefetch() -> Prefetch[str]:
    facts = CardFact.objects.select_related("memory").only(
        "card_id", "position", "memory_id", *(f"memory__{column}" for column in MEMORY_COLUMNS)
    )
    return Prefetch("card_facts", queryset=facts.order_by("position"))


def inbox_cards(
    *, workspace: Workspace, filters: InboxFilters | None = None, user_id: int | None = None
) -> QuerySet[ConflictCard]:
    """Cards matching ``filters`` (open ones unless a closed state is asked for), unordered.

    ``user_id`` is the person asking, for ``assigned=me``.
    """
    filters = filters or InboxFilters()
    qs = ConflictCard.objects.filter(workspace=workspace, state=filters.state or CardState.OPEN)
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
    if filters.assigned == "me":
        qs = qs.filter(assignee_id=user_id)
    elif filters.assigned == "nobody":
        qs = qs.filter(assignee__isnull=True)
    # Every word of the search must appear in one of the card's facts (or in its question).
    for word in filters.q.split()[:8]:
        in_facts = Exists(CardFact.objects.filter(card=OuterRef("pk"), memory__text__icontains=word))
        qs = qs.filter(in_facts | Q(question__icontains=word))
    return qs


def inbox_page(
    *,
    workspace: Workspace,
    filters: InboxFilters,
    page: int = 1,
    per_page: int | None = None,
    user_id: int | None = None,
) -> tuple[list[ConflictCard], bool]:
    """One page of the inbox with each card's facts, and whether another page follows.

    Review order (the default) walks the severities by index range scans; the
    other sorts and the history are ordinary ORDER BY … OFFSET pages.
    """
    per_page = per_page or PAGE_SIZE
    base = inbox_cards(workspace=workspace, filters=filters, user_id=user_id).defer("evidence")
    if not filters.review_order:
        return _sorted_page(base, filters, page, per_page)
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
    _decorate(page_rows)
    return page_rows, len(rows) > per_page


def _sorted_page(
    base: QuerySet[ConflictCard], filters: InboxFilters, page: int, per_page: int
) -> tuple[list[ConflictCard], bool]:
    if filters.state:
        ordered = base.order_by(F("answered_at").desc(nulls_last=True), "-created_at", "id")
    elif filters.sort == "subject":
        # The facts' key when they have one, else the asked fact's subject (entity, attribute), else its text:
        # the order of what the subject column shows.
        key = NullIf(Max("card_facts__memory__key"), Value(""))
        read = NullIf(Concat("asked_memory__subject_entity", Value(" "), "asked_memory__subject_attribute"), Value(" "))
        subject = Lower(Coalesce(key, read, "asked_memory__text", output_field=TextField()))
        ordered = base.annotate(subject_order=subject).order_by("subject_order", "created_at", "id")
    elif filters.sort == "newest":
        ordered = base.order_by("-created_at", "-id")
    else:
        ordered = base.order_by("created_at", "id")
    skip = (max(page, 1) - 1) * per_page
    rows = list(ordered.select_related("assignee")[skip : skip + per_page + 1])
    page_rows = rows[:per_page]
    _decorate(page_rows)
    if filters.state:
        _attach_decisions(page_rows)
    return page_rows, len(rows) > per_page


def _decorate(cards: list[ConflictCard]) -> None:
    """Facts, agents, the question form and the waiting time for the inbox rows."""
    prefetch_related_objects(cards, _facts_prefetch(), "assignee")
    now = timezone.now()
    for card in cards:
        facts = sorted((fact.memory for fact in card.card_facts.all()), key=lambda m: m.valid_from)
        card.agents = sorted({fact.agent or "?" for fact in facts})  # type: ignore[attr-defined]
        card.form = question_form(card, facts)  # type: ignore[attr-defined]
        card.waiting = waiting_for(card.created_at, now)  # type: ignore[attr-defined]


def _attach_decisions(cards: list[ConflictCard]) -> None:
    """Each closed card's deciding answer (who, what, when) for the history list."""
    answers = (
        Answer.objects.filter(card__in=cards)
        .exclude(choice="skip")
        .select_related("user", "agent_key", "current_memory")
        .only("card_id", "choice", "note", "created_at", "user__username", "agent_key__name", "current_memory__text")
    )
    by_card = {answer.card_id: answer for answer in answers}
    for card in cards:
        decision = by_card.get(card.pk)
        card.decision = decision  # type: ignore[attr-defined]
        card.decided_by = answer_author(decision) if decision else "the hub"  # type: ignore[attr-defined]
        card.decided_as = answer_in_words(decision)  # type: ignore[attr-defined]


def answer_in_words(answer: Answer | None) -> str:
    """What was answered, as the literal answer: "Still true", "Changed: now “…”", "Both hold", …"""
    if answer is None:
        return ""
    current = answer.current_memory.text if answer.current_memory_id and answer.current_memory else ""
    if answer.choice == "yes":
        return f"“{current}” holds" if current else "Still true"
    if answer.choice == "no":
        return f"Changed: now “{current}”" if current else "Changed"
    if answer.choice == "both":
        return "Both hold (not a conflict)"
    return str(answer.choice)


def inbox_pulse(*, workspace: Workspace) -> dict[str, object]:
    """Counts per state and a version that changes whenever a card opens or closes (one query).

    The live inbox polls this; it re-renders its list only when ``version`` moved.
    """
    counts: dict[str, object] = dict.fromkeys(CardState.values, 0)
    latest: list[str] = []
    rows = (
        ConflictCard.objects.filter(workspace=workspace)
        .values("state")
        .annotate(n=Count("*"), opened=Max("created_at"), closed=Max("answered_at"))
        .order_by("state")
    )
    for row in rows:
        counts[row["state"]] = row["n"]
        latest.append(f"{row['state']}:{row['n']}:{_stamp(row['opened'])}:{_stamp(row['closed'])}")
    counts["version"] = "|".join(latest)
    return counts


def _stamp(value: dt.datetime | None) -> str:
    return f"{value.timestamp():.6f}" if value else "-"


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
    card.waiting = waiting_for(card.created_at)  # type: ignore[attr-defined]
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
