from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from conflicts.selectors import open_card_counts
from memories.selectors import workspaces_for_user
from memoryhub.errors import ConflictError, DomainError, InvalidInput
from workspaces.access import SESSION_KEY, membership_for
from workspaces.models import DEFAULT_SCOPES, AgentKey, Membership, Role, Scope
from workspaces.selectors import invitation_get, invitations_pending
from workspaces.services import (
    agent_key_create,
    agent_key_revoke,
    invitation_accept,
    invitation_create,
    membership_set,
)


@login_required
def home(request: HttpRequest) -> HttpResponse:
    summaries = workspaces_for_user(user=request.user)  # type: ignore[arg-type]
    open_cards = open_card_counts(workspaces=[summary.workspace for summary in summaries])
    rows = [{"summary": summary, "open_cards": open_cards[summary.workspace.pk]} for summary in summaries]
    return render(request, "workspaces/home.html", {"rows": rows})


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page says; send them to the SVG icon.

    A temporary redirect: the target's name carries a content hash that changes with the icon.
    """
    response = redirect(static("favicon.svg"))
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_POST
@login_required
def switch(request: HttpRequest) -> HttpResponse:
    """The header's workspace switcher: remember the choice and open its inbox."""
    slug = request.POST.get("workspace", "")
    membership_for(request, slug)
    request.session[SESSION_KEY] = slug
    return redirect("review:inbox", slug=slug)


@require_GET
@login_required
def workspace_home(request: HttpRequest, slug: str) -> HttpResponse:
    membership_for(request, slug)
    return redirect("review:inbox", slug=slug)


@require_http_methods(["GET", "POST"])
@login_required
def members(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    workspace = membership.workspace
    if request.method == "POST":
        username = request.POST.get("username", "").strip()
        role = request.POST.get("role", "")
        user = get_user_model().objects.filter(username=username).first()
        if role not in Role.values:
            messages.error(request, "Pick a role: viewer, reviewer or admin.")
        elif user is None:
            messages.error(request, f"No user called {username!r}; invite them with a link below.")
        elif user.pk == request.user.pk and role != Role.ADMIN:
            messages.error(request, "You cannot take your own admin role away; ask another admin.")
        else:
            membership_set(workspace=workspace, user=user, role=Role(role))
            messages.success(request, f"{username} is now {role} in {workspace.name}.")
        return redirect("dashboard:members", slug=slug)
    return _members_page(request, membership)


@require_POST
@login_required
def invite(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    role = request.POST.get("role", "")
    if role not in Role.values:
        messages.error(request, "Pick a role: viewer, reviewer or admin.")
        return redirect("dashboard:members", slug=slug)
    try:
        invitation, token = invitation_create(
            workspace=membership.workspace,
            invited_by=request.user,  # type: ignore[arg-type]
            recipient=request.POST.get("recipient", ""),
            role=Role(role),
        )
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:members", slug=slug)
    # Rendered on this response only: the hub keeps the token's hash, so the link cannot be shown again.
    link = request.build_absolute_uri(reverse("dashboard:invitation", args=[token]))
    return _members_page(request, membership, invitation_link=link, invited=invitation.recipient)


def _members_page(
    request: HttpRequest, membership: Membership, *, invitation_link: str = "", invited: str = ""
) -> HttpResponse:
    workspace = membership.workspace
    rows = Membership.objects.filter(workspace=workspace).select_related("user").order_by("user__username")
    return render(
        request,
        "workspaces/members.html",
        {
            "membership": membership,
            "workspace": workspace,
            "rows": rows,
            "roles": Role.values,
            "invitations": invitations_pending(workspace=workspace),
            "invitation_link": invitation_link,
            "invited": invited,
        },
    )


@require_http_methods(["GET", "POST"])
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Where an invitation link leads: choose a username and password, join, and land in the inbox."""
    found = invitation_get(token=token)
    if found is None:
        return _refused(request, "This invitation link is not valid", "Check that the whole link was copied.", 404)
    if found.accepted_at is not None:
        return _refused(request, "This invitation was already used", "Ask an admin of the workspace for a new link.")
    if found.is_expired(timezone.now()):
        return _refused(request, "This invitation has expired", "Ask an admin of the workspace for a new link.")
    username = found.recipient if not found.recipient_is_email else ""
    error: InvalidInput | None = None
    if request.method == "POST":
        username = request.POST.get("username", "")
        try:
            user = invitation_accept(token=token, username=username, password=request.POST.get("password", ""))
        except ConflictError as exc:  # spent or expired between the page and the answer
            return _refused(request, "This invitation can no longer be used", exc.message)
        except InvalidInput as exc:
            error = exc
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome to {found.workspace.name}: you are a {found.role} here.")
            return redirect("review:inbox", slug=found.workspace.slug)
    return render(
        request,
        "workspaces/invitation.html",
        {"invitation": found, "username": username, "error": error},
        status=422 if error else 200,
    )


def _refused(request: HttpRequest, title: str, detail: str, status: int = 410) -> HttpResponse:
    return render(request, "workspaces/invitation.html", {"refused": title, "detail": detail}, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def keys(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    workspace = membership.workspace
    created_key = ""
    if request.method == "POST":
        try:
            # Rendered on this response only: the full key is never stored or shown again.
            _, created_key = agent_key_create(
                workspace=workspace,
                name=request.POST.get("name", ""),
                scopes=request.POST.getlist("scopes"),
                agent=request.POST.get("agent", ""),
            )
        except DomainError as exc:
            messages.error(request, exc.message)
    rows = AgentKey.objects.filter(workspace=workspace).order_by("revoked_at", "-created_at")
    return render(
        request,
        "workspaces/keys.html",
        {
            "membership": membership,
            "workspace": workspace,
            "rows": rows,
            "created_key": created_key,
            "scopes": [(scope, scope.label, scope.value in DEFAULT_SCOPES) for scope in Scope],
        },
    )


@require_POST
@login_required
def key_revoke(request: HttpRequest, slug: str, key_id: int) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    key = AgentKey.objects.filter(workspace=membership.workspace, pk=key_id).first()
    if key is None:
        messages.error(request, "No such key in this workspace.")
    else:
        agent_key_revoke(key=key)
        messages.success(request, f"Revoked {key.name}; agents using it get 401 from now on.")
    return redirect("dashboard:keys", slug=slug)
