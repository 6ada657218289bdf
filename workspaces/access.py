"""Who may see and do what in a workspace's dashboard pages."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse

from memoryhub.errors import NotFound
from workspaces.models import Membership, Role, Workspace

P = ParamSpec("P")

SESSION_KEY = "current_workspace"


def membership_for(request: HttpRequest, workspace_slug: str, role: Role = Role.VIEWER) -> Membership:
    """The signed-in person's membership of the workspace: 404 for outsiders, 403 below ``role``.

    A superuser counts as an admin of every workspace (as on the home page).
    Visiting a workspace makes it the current one in the header's switcher.
    """
    user = request.user
    if not user.is_authenticated:
        raise PermissionDenied
    membership = _find(user, workspace_slug)
    if membership is None:
        raise Http404("no such workspace")
    if not membership.allows(role):
        raise PermissionDenied(f"this needs the {role} role in {membership.workspace.name}")
    if request.session.get(SESSION_KEY) != workspace_slug:
        request.session[SESSION_KEY] = workspace_slug
    return membership


def not_found_as_404(view: Callable[P, HttpResponse]) -> Callable[P, HttpResponse]:
    """Pages answer a service's NotFound (a card or memory of another workspace) with a plain 404."""

    @functools.wraps(view)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> HttpResponse:
        try:
            return view(*args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from None

    return wrapper


def _find(user: AbstractBaseUser | AnonymousUser, slug: str) -> Membership | None:
    membership = (
        Membership.objects.select_related("workspace", "user")
        .filter(user_id=int(user.pk or 0), workspace__slug=slug)
        .first()
    )
    if membership is None and getattr(user, "is_superuser", False):
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is not None:
            return Membership(user=user, workspace=workspace, role=Role.ADMIN)  # type: ignore[misc]
    return membership


def workspace_switcher(request: HttpRequest) -> dict[str, object]:
    """Template context for the header: the person's workspaces and the current one.

    Lazy (templates call callables): HTMX partials, which have no header, cost no query.
    """
    if not request.user.is_authenticated:
        return {}
    found: dict[str, object] = {}

    def resolve() -> dict[str, object]:
        if not found:
            found.update(_switcher(request))
        return found

    return {
        "switcher_workspaces": lambda: resolve()["switcher_workspaces"],
        "current_workspace": lambda: resolve()["current_workspace"],
    }


def _switcher(request: HttpRequest) -> dict[str, object]:
    user = request.user
    if getattr(user, "is_superuser", False):
        choices = list(Workspace.objects.order_by("name").values_list("slug", "name"))
    else:
        mine = Workspace.objects.filter(memberships__user_id=int(user.pk or 0))
        choices = list(mine.order_by("name").values_list("slug", "name"))
    match = getattr(request, "resolver_match", None)
    current = (match.kwargs.get("slug") if match else None) or request.session.get(SESSION_KEY)
    if current not in {slug for slug, _ in choices}:
        current = choices[0][0] if choices else None
    return {"switcher_workspaces": choices, "current_workspace": current}
