"""The Webhooks page (workspace admins): register a URL for events, see its secret once, delete it, read the log."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from memoryhub.errors import DomainError
from webhooks.models import EventType, PayloadFormat, Webhook
from webhooks.selectors import delivery_log, webhooks_of
from webhooks.services import webhook_create, webhook_delete
from workspaces.access import membership_for
from workspaces.models import Role


@require_http_methods(["GET", "POST"])
@login_required
def webhooks_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    workspace = membership.workspace
    created: Webhook | None = None
    status = 200
    if request.method == "POST":
        try:
            created = webhook_create(
                workspace=workspace,
                url=request.POST.get("url", ""),
                events=request.POST.getlist("events"),
                payload_format=request.POST.get("payload_format", PayloadFormat.MEMORYHUB),
                created_by=request.user,
            )
        except DomainError as exc:
            messages.error(request, exc.message)
            status = 400
    return render(
        request,
        "workspaces/webhooks.html",
        {
            "membership": membership,
            "workspace": workspace,
            "hooks": webhooks_of(workspace=workspace),
            # Rendered on this response only: the page never shows a secret again.
            "created": created,
            "log": delivery_log(workspace=workspace),
            "event_types": EventType.choices,
            "formats": PayloadFormat.choices,
            "posted_url": request.POST.get("url", "") if status == 400 else "",
        },
        status=status,
    )


@require_POST
@login_required
def webhook_delete_view(request: HttpRequest, slug: str, hook_id: int) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    hook = Webhook.objects.filter(workspace=membership.workspace, pk=hook_id).first()
    if hook is None:
        messages.error(request, "No such webhook in this workspace.")
    else:
        webhook_delete(webhook=hook)
        messages.success(request, f"Deleted the webhook to {hook.url}; nothing more is sent to it.")
    return redirect("dashboard:webhooks", slug=slug)
