"""Jobs and Uncertainties pages (issue 24): every run of every background job, and every open doubt.

The Jobs table polls itself every two seconds (HTMX) while a run is queued or
running, so its progress bar moves; admins start a job for their workspace with
"Run now". Reviewers settle an uncertainty or open it as a card.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from conflicts import uncertainties
from conflicts.models import JobRun, JobState, Severity, UncertaintyState, UncertaintyType
from conflicts.tasks import upkeep_request
from conflicts.upkeep import JOBS, LABELS
from memories.audit import Actor
from memoryhub.errors import DomainError
from workspaces.access import membership_for
from workspaces.models import Role

RUNNABLE = [*JOBS, "detective"]


def _jobs_context(request: HttpRequest, slug: str) -> dict[str, object]:
    membership = membership_for(request, slug)
    workspace = membership.workspace
    runs = JobRun.objects.filter(Q(workspace=workspace) | Q(workspace__isnull=True)).order_by("-created_at", "-id")
    page = Paginator(runs, 25).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    for run in rows:
        run.label = LABELS.get(run.job, run.job)  # type: ignore[attr-defined]
    return {
        "membership": membership,
        "workspace": workspace,
        "page": page,
        "runs": rows,
        "jobs": [(job, LABELS[job]) for job in RUNNABLE],
        "can_run": membership.allows(Role.ADMIN),
        "active": any(run.state in (JobState.QUEUED, JobState.RUNNING) for run in rows),
    }


@require_GET
@login_required
def jobs_view(request: HttpRequest, slug: str) -> HttpResponse:
    context = _jobs_context(request, slug)
    if getattr(request, "htmx", False):
        return render(request, "conflicts/_jobs_table.html", context)
    return render(request, "conflicts/jobs.html", context)


@require_POST
@login_required
def job_run_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    job = request.POST.get("job", "")
    if job not in RUNNABLE:
        messages.error(request, f"No job named {job!r}.")
        return redirect("upkeep:jobs", slug=slug)
    upkeep_request(job=job, workspace=membership.workspace)
    messages.success(request, f"{LABELS[job]} queued for {membership.workspace.name}.")
    if getattr(request, "htmx", False):
        return render(request, "conflicts/_jobs_table.html", _jobs_context(request, slug))
    return redirect("upkeep:jobs", slug=slug)


@require_GET
@login_required
def uncertainties_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug)
    workspace = membership.workspace
    filters = uncertainties.UncertaintyFilters.from_query(request.GET.dict())
    page = uncertainties.uncertainties_page(workspace=workspace, filters=filters, page=request.GET.get("page"))
    context = {
        "membership": membership,
        "workspace": workspace,
        "page": page,
        "filters": filters,
        "query_string": urlencode({"type": filters.type, "severity": filters.severity, "state": filters.state}),
        "types": UncertaintyType.values,
        "severities": Severity.values,
        "states": ["open", *UncertaintyState.values, "all"],
        "can_settle": membership.allows(Role.REVIEWER),
    }
    return render(request, "conflicts/uncertainties.html", context)


@require_POST
@login_required
def uncertainty_action_view(request: HttpRequest, slug: str, uncertainty_id: str, action: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.REVIEWER)
    workspace = membership.workspace
    actor = Actor.for_user(request.user)  # type: ignore[arg-type]
    back = request.POST.get("next") or ""
    try:
        record = uncertainties.uncertainty_get(workspace=workspace, uncertainty_id=uncertainty_id)
        if action == "card":
            card = uncertainties.uncertainty_open_card(record=record, actor=actor)
            return redirect("review:card", slug=slug, card_id=card.pk)
        uncertainties.uncertainty_settle(
            record=record, actor=actor, dismiss=action == "dismiss", note=request.POST.get("note", "").strip()
        )
        messages.success(request, "Dismissed." if action == "dismiss" else "Resolved.")
    except DomainError as exc:
        messages.error(request, exc.message)
    target = redirect("upkeep:uncertainties", slug=slug)
    if back.startswith("?"):
        target["Location"] += back
    return target
