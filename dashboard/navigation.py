"""Which header section the current page belongs to, for ``aria-current`` and the highlighted link."""

from __future__ import annotations

from django.http import HttpRequest

# view name → the header link that stands for it; a card and its answer belong to the inbox,
# a memory to the memories list, the tolerance form to insights.
SECTIONS = {
    "dashboard:home": "home",
    "review:inbox": "inbox",
    "review:card": "inbox",
    "review:answer": "inbox",
    "review:undo": "inbox",
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
