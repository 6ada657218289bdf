"""Which header section the current page belongs to, for ``aria-current`` and the highlighted link."""

from __future__ import annotations

from django.http import HttpRequest

from conflicts.models import CardState, ConflictCard
from workspaces.access import workspace_switcher

# view name → the header link that stands for it; a card and its answer belong to the inbox,
# a memory to the memories list, the tolerance form to insights.
SECTIONS = {
    "dashboard:home": "home",
    "review:inbox": "inbox",
    "review:card": "inbox",
    "review:answer": "inbox",
    "review:undo": "inbox",
    "review:pulse": "inbox",
    "review:dismiss": "inbox",
    "review:assign": "inbox",
    "review:reopen": "inbox",
    "review:decisions": "decisions",
    "review:confirm": "decisions",
    "review:revert": "decisions",
    "review:history": "history",
    "review:insights": "insights",
    "review:tolerance": "insights",
    "browser:memories": "memories",
    "browser:memory": "memories",
    "browser:restore": "memories",
    "browser:forget": "memories",
    "browser:supersede": "memories",
    "browser:replacements": "memories",
    "browser:unlink": "memories",
    "browser:chains": "chains",
    "dashboard:members": "members",
    "dashboard:invite": "members",
    "dashboard:keys": "keys",
    "dashboard:key_revoke": "keys",
    "dashboard:webhooks": "keys",
    "dashboard:webhook_delete": "keys",
    "upkeep:jobs": "jobs",
    "upkeep:job_run": "jobs",
    "upkeep:uncertainties": "uncertainties",
    "upkeep:uncertainty_resolve": "uncertainties",
    "upkeep:uncertainty_dismiss": "uncertainties",
    "upkeep:uncertainty_card": "uncertainties",
}


def nav_section(request: HttpRequest) -> dict[str, str]:
    match = getattr(request, "resolver_match", None)
    return {"nav_section": SECTIONS.get(match.view_name, "") if match else ""}


def open_cards(request: HttpRequest) -> dict[str, object]:
    """The current workspace's open-card count for the header and the tab title ("(3) Inbox").

    Lazy, like the switcher: an HTMX partial that never shows the header costs no query.
    The live inbox (static/js/review.js) keeps it current by polling ``review:pulse``.
    """
    if not request.user.is_authenticated:
        return {}
    found: dict[str, int | None] = {}

    def count() -> int | None:
        if "n" not in found:
            slug = workspace_switcher(request)["current_workspace"]()  # type: ignore[operator]
            found["n"] = (
                ConflictCard.objects.filter(workspace__slug=slug, state=CardState.OPEN).count() if slug else None
            )
        return found["n"]

    return {"open_card_count": count}
