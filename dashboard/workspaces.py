from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from conflicts.selectors import open_card_counts
from memories.selectors import workspaces_for_user
from memoryhub.errors import DomainError
from workspaces.access import SESSION_KEY, membership_for
from workspaces.models import DEFAULT_SCOPES, AgentKey, Membership, Role, Scope
from workspaces.services import agent_key_create, agent_key_revoke, membership_set


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
            messages.error(request, f"No user called {username!r}; create the login in the admin first.")
        elif user.pk == request.user.pk and role != Role.ADMIN:
            messages.error(request, "You cannot take your own admin role away; ask another admin.")
        else:
            membership_set(workspace=workspace, user=user, role=Role(role))
            messages.success(request, f"{username} is now {role} in {workspace.name}.")
        return redirect("dashboard:members", slug=slug)
    rows = Membership.objects.filter(workspace=workspace).select_related("user").order_by("user__username")
    return render(
        request,
        "workspaces/members.html",
        {"membership": membership, "workspace": workspace, "rows": rows, "roles": Role.values},
    )


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
