"""The review dashboard: inbox, card, answer/undo, automatic decisions, insights (HTMX).

Each page renders whole for a normal request and only its partial for an
HTMX one; every link also carries ``href`` so the pages work without JavaScript.
"""

from __future__ import annotations

import datetime as dt
import uuid
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, push_url

from conflicts import decisions as decision_queue
from conflicts import history, inbox, insights
from conflicts.evidence import card_evidence
from conflicts.feedback import CardAlreadyAnswered, card_answer, card_answer_undo, card_reopen, cards_dismiss
from conflicts.models import ConflictCard, Tolerance
from conflicts.questions import parse_answer, question_form
from conflicts.selectors import detective_runs_recent
from conflicts.services import card_assign
from conflicts.tolerance import tolerance_set
from dashboard.charts import Series, bar_chart, line_chart
from memories.audit import Actor
from memories.event_kinds import event_label
from memories.models import Event
from memories.selectors import pipeline_backlog
from memoryhub.errors import DomainError
from memoryhub.llm import llm_paused
from workspaces.access import membership_for, not_found_as_404
from workspaces.models import Membership, Role


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))


@require_GET
@login_required
def inbox_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug)
    context = _inbox_context(request, membership)
    if _htmx(request) and _int(request.GET.get("page"), 1) > 1:
        return render(request, "conflicts/_inbox_rows.html", context)
    if _htmx(request) and request.headers.get("HX-Target") == "inbox-list":
        # The address bar keeps only the filters in use (not every empty field of the form).
        url = reverse("review:inbox", kwargs={"slug": slug}) + _query_suffix(request)
        return push_url(render(request, "conflicts/_inbox_list.html", {**context, "oob_counts": True}), url)
    return render(request, "conflicts/inbox.html", context)


def _inbox_context(request: HttpRequest, membership: Membership) -> dict[str, object]:
    workspace = membership.workspace
    filters = inbox.InboxFilters.from_query(request.GET.dict())
    page = _int(request.GET.get("page"), 1)
    cards, more = inbox.inbox_page(workspace=workspace, filters=filters, page=page, user_id=request.user.pk)
    return {
        "membership": membership,
        "workspace": workspace,
        "cards": cards,
        "more": more,
        "next_page": page + 1,
        "filters": filters,
        "filter_query": filters.as_query(),
        "list_query": urlencode(filters.as_query()),
        "sorts": inbox.SORTS,
        "can_answer": membership.allows(Role.REVIEWER),
        "counts": inbox.card_counts(workspace=workspace),
        "choices": inbox.inbox_filter_choices(workspace=workspace),
    }


@require_GET
@login_required
def pulse_view(request: HttpRequest, slug: str) -> JsonResponse:
    """What the live inbox and the header count poll: counts per state and a version (one query)."""
    membership = membership_for(request, slug)
    return JsonResponse(inbox.inbox_pulse(workspace=membership.workspace))


def _card_context(
    request: HttpRequest, membership: Membership, card: ConflictCard, undoable: Event | None = None
) -> dict[str, object]:
    workspace = membership.workspace
    place = inbox.place_of(card)
    return {
        "membership": membership,
        "workspace": workspace,
        "card": card,
        "form": question_form(card, card.facts),  # type: ignore[attr-defined]
        "evidence": card_evidence(card),
        "can_answer": membership.allows(Role.REVIEWER),
        "next_card": inbox.card_after(workspace=workspace, place=place),
        "previous_card": inbox.card_before(workspace=workspace, place=place),
        "undoable": undoable or inbox.last_undoable_answer(workspace=workspace, user=request.user),
        "counts": inbox.card_counts(workspace=workspace),
    }


@require_GET
@login_required
@not_found_as_404
def card_view(request: HttpRequest, slug: str, card_id: uuid.UUID) -> HttpResponse:
    membership = membership_for(request, slug)
    card = inbox.card_for_review(workspace=membership.workspace, card_id=card_id)
    context = _card_context(request, membership, card)
    if _htmx(request):
        return render(request, "conflicts/_review.html", {**context, "oob_counts": True})
    return render(request, "conflicts/card.html", context)


@require_POST
@login_required
@not_found_as_404
def answer_view(request: HttpRequest, slug: str, card_id: uuid.UUID) -> HttpResponse:
    membership = membership_for(request, slug, Role.REVIEWER)
    workspace = membership.workspace
    card, place = inbox.card_place(workspace=workspace, card_id=card_id)
    choice, fact = parse_answer(request.POST.get("answer", ""))
    error = ""
    answered: Event | None = None
    try:
        answered = card_answer(
            card=card,
            choice=choice,
            actor=Actor.for_user(request.user),  # type: ignore[arg-type]
            current_memory=fact or request.POST.get("current_fact") or None,
            note=request.POST.get("note", ""),
        ).event
    except CardAlreadyAnswered as exc:
        error = exc.message
    except DomainError as exc:
        error = exc.message
    if request.GET.get("from") == "inbox" and _htmx(request):
        # Answered from the inbox list: show the list again, with what happened.
        said = error or f"{'Skipped' if choice == 'skip' else 'Answered'}: {card.question[:90]}"
        return _inbox_list_response(request, membership, said, error=bool(error))
    if error:
        # Stay on this card and say why: who answered first, or what was wrong.
        card = inbox.card_for_review(workspace=workspace, card_id=card_id)
        if not _htmx(request):
            messages.error(request, error)
            return redirect("review:card", slug=slug, card_id=card_id)
        context = {**_card_context(request, membership, card), "error": error, "oob_counts": True}
        return render(request, "conflicts/_review.html", context)
    following = inbox.card_after(workspace=workspace, place=place)
    if following is None and choice == "skip":
        following = card  # the only open card was skipped: show it again rather than "inbox zero"
    return _show_next(request, membership, following, done=card, choice=choice, undoable=answered)


def _inbox_list_response(
    request: HttpRequest, membership: Membership, said: str, *, error: bool = False
) -> HttpResponse:
    """The inbox list partial (filters from the query string) with an announcement for screen readers."""
    context = {**_inbox_context(request, membership), "oob_counts": True, "announce": said, "announce_error": error}
    return render(request, "conflicts/_inbox_list.html", context)


@require_POST
@login_required
@not_found_as_404
def assign_view(request: HttpRequest, slug: str, card_id: uuid.UUID) -> HttpResponse:
    """Assign the card to the person asking ("assign to me"), or to nobody (``to=nobody``)."""
    membership = membership_for(request, slug, Role.REVIEWER)
    card, _ = inbox.card_place(workspace=membership.workspace, card_id=card_id)
    to_me = request.POST.get("to", "me") != "nobody"
    actor = Actor.for_user(request.user)  # type: ignore[arg-type]
    try:
        card_assign(card=card, user_id=request.user.pk if to_me else None, actor=actor)
        said = "Assigned to you." if to_me else "Unassigned."
        failed = False
    except DomainError as exc:
        said, failed = exc.message, True
    if request.GET.get("from") == "inbox" and _htmx(request):
        return _inbox_list_response(request, membership, said, error=failed)
    (messages.error if failed else messages.success)(request, said)
    return redirect("review:card", slug=slug, card_id=card_id)


@require_POST
@login_required
def dismiss_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Dismiss the selected cards as "not a conflict" (each one an ordinary, undoable answer)."""
    membership = membership_for(request, slug, Role.REVIEWER)
    valid = []
    for value in request.POST.getlist("cards")[:200]:
        try:
            valid.append(uuid.UUID(value))
        except ValueError:
            continue
    cards = list(ConflictCard.objects.filter(workspace=membership.workspace, pk__in=valid))
    if not cards:
        said, failed = "Select cards first (x on a row, or its checkbox).", True
    else:
        result = cards_dismiss(cards=cards, actor=Actor.for_user(request.user))  # type: ignore[arg-type]
        count = len(result.dismissed)
        said = f"Dismissed {count} card{'s' if count != 1 else ''} as not conflicts."
        if result.refused:
            said += " Not dismissed: " + "; ".join(message for _, message in result.refused[:3])
        failed = not result.dismissed
    if _htmx(request):
        return _inbox_list_response(request, membership, said, error=failed)
    (messages.error if failed else messages.success)(request, said)
    return redirect(reverse("review:inbox", kwargs={"slug": slug}) + _query_suffix(request))


@require_POST
@login_required
@not_found_as_404
def reopen_view(request: HttpRequest, slug: str, card_id: uuid.UUID) -> HttpResponse:
    """Reopen an answered or dismissed card (its answer is undone), then show it."""
    membership = membership_for(request, slug, Role.REVIEWER)
    card = inbox.card_for_review(workspace=membership.workspace, card_id=card_id)
    try:
        card_reopen(card=card, actor=Actor.for_user(request.user))  # type: ignore[arg-type]
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect(reverse("review:inbox", kwargs={"slug": slug}) + f"?state={card.state}")
    messages.success(request, "Reopened: the answer is undone and every fact is back as it was.")
    return redirect("review:card", slug=slug, card_id=card_id)


def _query_suffix(request: HttpRequest) -> str:
    query = inbox.InboxFilters.from_query(request.GET.dict()).as_query()
    return f"?{urlencode(query)}" if query else ""


def _show_next(
    request: HttpRequest,
    membership: Membership,
    following: ConflictCard | None,
    *,
    done: ConflictCard | None = None,
    choice: str = "",
    undoable: Event | None = None,
) -> HttpResponse:
    slug = membership.workspace.slug
    if following is None:
        url = reverse("review:inbox", kwargs={"slug": slug})
        if not _htmx(request):
            return redirect(url)
        context: dict[str, object] = {
            "membership": membership,
            "workspace": membership.workspace,
            "card": None,
            "counts": inbox.card_counts(workspace=membership.workspace),
            "undoable": undoable or inbox.last_undoable_answer(workspace=membership.workspace, user=request.user),
            "oob_counts": True,
        }
        return push_url(render(request, "conflicts/_review.html", context), url)
    url = reverse("review:card", kwargs={"slug": slug, "card_id": following.pk})
    if not _htmx(request):
        return redirect(url)
    card = inbox.card_for_review(workspace=membership.workspace, card_id=following.pk)
    context = {
        **_card_context(request, membership, card, undoable),
        "oob_counts": True,
        "answered": done,
        "choice": choice,
    }
    return push_url(render(request, "conflicts/_review.html", context), url)


@require_POST
@login_required
def undo_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Take back the person's latest answer and show that card again."""
    membership = membership_for(request, slug, Role.REVIEWER)
    workspace = membership.workspace
    event = inbox.last_undoable_answer(workspace=workspace, user=request.user)
    if event is None:
        messages.info(request, "Nothing to undo.")
        return redirect("review:inbox", slug=slug)
    try:
        card = card_answer_undo(event=event, actor=Actor.for_user(request.user))  # type: ignore[arg-type]
    except DomainError as exc:
        messages.error(request, exc.message)
        if _htmx(request):
            return HttpResponseClientRedirect(reverse("review:inbox", kwargs={"slug": slug}))
        return redirect("review:inbox", slug=slug)
    url = reverse("review:card", kwargs={"slug": slug, "card_id": card.pk})
    if not _htmx(request):
        return redirect(url)
    card = inbox.card_for_review(workspace=workspace, card_id=card.pk)
    context = {**_card_context(request, membership, card), "oob_counts": True, "undone": True}
    return push_url(render(request, "conflicts/_review.html", context), url)


@require_GET
@login_required
def decisions_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug)
    workspace = membership.workspace
    page = Paginator(decision_queue.decisions_list(workspace=workspace), 25).get_page(request.GET.get("page"))
    rows = decision_queue.decision_rows(workspace=workspace, events=list(page.object_list))
    context = {
        "membership": membership,
        "workspace": workspace,
        "page": page,
        "rows": rows,
        "can_decide": membership.allows(Role.ADMIN),
    }
    return render(request, "conflicts/decisions.html", context)


@require_GET
@login_required
def history_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Answers to cards and what people changed, with each one's effects on facts and tolerance."""
    membership = membership_for(request, slug)
    workspace = membership.workspace
    answers_only = request.GET.get("show") == "answers"
    events = history.history_list(workspace=workspace, answers_only=answers_only)
    page = Paginator(events, 25).get_page(request.GET.get("page"))
    context = {
        "membership": membership,
        "workspace": workspace,
        "page": page,
        "rows": history.history_rows(workspace=workspace, events=list(page.object_list)),
        "answers_only": answers_only,
        "query_string": "show=answers" if answers_only else "",
    }
    return render(request, "conflicts/history.html", context)


@require_POST
@login_required
def decision_action_view(request: HttpRequest, slug: str, event_id: int, action: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    workspace = membership.workspace
    actor = Actor.for_user(request.user)  # type: ignore[arg-type]
    reason = request.POST.get("reason", "").strip()
    try:
        event = decision_queue.decision_get(workspace=workspace, event_id=event_id)
        if action == "revert":
            decision_queue.decision_revert(event=event, actor=actor, reason=reason)
            message = f"Reverted: {event_label(event.verb).lower()} (#{event.pk})."
        else:
            decision_queue.decision_confirm(event=event, actor=actor, note=reason)
            message = f"Confirmed: {event_label(event.verb).lower()} (#{event.pk})."
    except DomainError as exc:
        error = exc.message
        if _htmx(request):
            row = f'<tr id="decision-{event_id}"><td colspan="4" class="error" role="alert">{_escape(error)}</td></tr>'
            return HttpResponse(row)
        messages.error(request, error)
        return redirect("review:decisions", slug=slug)
    if _htmx(request):
        rows = decision_queue.decision_rows(workspace=workspace, events=[event])
        return render(
            request, "conflicts/_decision_row.html", {"row": rows[0], "workspace": workspace, "can_decide": True}
        )
    messages.success(request, message)
    return redirect("review:decisions", slug=slug)


@require_GET
@login_required
def insights_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug)
    workspace = membership.workspace
    days = insights.cards_per_day(workspace=workspace, days=30)
    history = insights.tolerance_history(workspace=workspace)
    precision = insights.detector_precision(workspace=workspace)
    context = {
        "membership": membership,
        "workspace": workspace,
        "flow_chart": bar_chart(
            [d.day.strftime("%b %d") for d in days],
            [
                Series("opened", [d.opened for d in days], "opened"),
                Series("resolved", [d.resolved for d in days], "resolved"),
            ],
            label="Cards opened and resolved per day, last 30 days",
        ),
        "days": days,
        "opened_total": sum(d.opened for d in days),
        "resolved_total": sum(d.resolved for d in days),
        "median_wait": _duration(insights.median_time_to_answer(workspace=workspace)),
        "precision": precision,
        "precision_chart": bar_chart(
            [p.detector for p in precision],
            [
                Series("confirmed", [p.confirmed for p in precision], "resolved"),
                Series("both true", [p.false_positives for p in precision], "false-positive"),
            ],
            label="Answers per detector: confirmed conflicts and false positives",
            every=1,
        )
        if precision
        else None,
        "tolerance": insights.tolerance_now(workspace=workspace),
        "backlog": pipeline_backlog(workspace=workspace),
        # The LLM's circuit breaker is open: say so, detection quietly runs offline meanwhile.
        "llm_pause": llm_paused(),
        "detective_runs": detective_runs_recent(workspace=workspace, limit=8),
        "tolerance_chart": line_chart(
            [insights.tolerance_now(workspace=workspace) - sum(c.delta for c in history)] + [c.value for c in history],
            label="Tolerance after each answer",
            low=Tolerance.MINIMUM,
            high=Tolerance.MAXIMUM,
            reference=Tolerance.BASELINE,
        ),
        "history": history[-8:][::-1],
        "is_admin": membership.allows(Role.ADMIN),
    }
    return render(request, "conflicts/insights.html", context)


@require_POST
@login_required
def tolerance_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    try:
        value = float(request.POST.get("tolerance", ""))
        tolerance_set(workspace=membership.workspace, value=value, actor=Actor.for_user(request.user))  # type: ignore[arg-type]
        messages.success(request, f"Tolerance set to {value:.2f}.")
    except ValueError:
        messages.error(request, "Tolerance must be a number between 0.2 and 0.8.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("review:insights", slug=slug)


def _duration(value: dt.timedelta | None) -> str:
    if value is None:
        return ""
    minutes = int(value.total_seconds() // 60)
    if minutes < 60:
        return f"{max(minutes, 1)} min"
    if minutes < 48 * 60:
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{minutes // (24 * 60)} days"


def _int(value: str | None, default: int) -> int:
    try:
        return max(1, int(value or default))
    except ValueError:
        return default


def _escape(text: str) -> str:
    from django.utils.html import escape

    return str(escape(text))
