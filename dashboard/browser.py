"""The memory browser: search and filters, a memory's story, admin actions, supersede chains.

Searches a person reads keep only hits above the relevance floor
(``recall/relevance.py``), so a search that matches nothing says so. The
destructive actions (forget, supersede, unlink) take two steps: the first
button opens what will happen and the second does it; supersede picks the
replacing fact through a search box instead of a pasted id.
"""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from conflicts.models import ConflictCard
from dashboard.charts import Edge, Node, link_graph
from memories import browse
from memories.audit import Actor
from memories.event_kinds import event_label
from memories.models import Kind, Memory, Reliability
from memories.selectors import MemoryFilters, memory_chain, memory_get, memory_list
from memories.services import (
    MANAGED_RELS,
    link_delete,
    memory_forget,
    memory_restore,
    memory_subject_correct,
    memory_supersede,
)
from memoryhub.errors import DomainError
from recall.hybrid import RecallQuery, recall
from recall.relevance import relevant_hits
from workspaces.access import membership_for, not_found_as_404
from workspaces.models import Role

PAGE_SIZE = 30


@require_GET
@login_required
def browser_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug)
    workspace = membership.workspace
    params = {name: request.GET.get(name, "").strip()[:200] for name in ("q", "kind", "scope", "agent", "reliability")}
    status = request.GET.get("status", "live")
    statuses: list[str] = list(browse.STATUS_CHOICES.get(status, browse.STATUS_CHOICES["live"]))
    hits = None
    page = None
    if params["q"]:
        query = RecallQuery(
            query=params["q"],
            k=40,
            kinds=[params["kind"]] if params["kind"] else [],
            scope=params["scope"] or None,
            agent=params["agent"] or None,
            include_superseded=True,
            min_confidence=0.0,
            touch=False,
        )
        found = relevant_hits(recall(workspace=workspace, query=query))
        hits = [h for h in found if h.memory.status in statuses]
        if params["reliability"]:
            hits = [h for h in hits if h.memory.reliability == params["reliability"]]
    else:
        filters = MemoryFilters(
            kind=params["kind"] or None,
            scope=params["scope"] or None,
            agent=params["agent"] or None,
            reliability=params["reliability"] or None,
            statuses=statuses,
        )
        page = Paginator(memory_list(workspace=workspace, filters=filters), PAGE_SIZE).get_page(request.GET.get("page"))
    query_string = request.GET.copy()
    query_string.pop("page", None)
    context = {
        "membership": membership,
        "workspace": workspace,
        "params": params,
        "status": status,
        "hits": hits,
        "page": page,
        "query_string": query_string.urlencode(),
        "kinds": Kind.values,
        "reliabilities": Reliability.values,
        "statuses": list(browse.STATUS_CHOICES),
    }
    if getattr(request, "htmx", False) and request.headers.get("HX-Target") == "memory-results":
        return render(request, "memories/_results.html", context)
    return render(request, "memories/browser.html", context)


@require_GET
@login_required
@not_found_as_404
def memory_view(request: HttpRequest, slug: str, memory_id: uuid.UUID) -> HttpResponse:
    membership = membership_for(request, slug)
    workspace = membership.workspace
    memory = memory_get(workspace=workspace, memory_id=memory_id)
    links = browse.memory_links(memory=memory)
    replace_query = request.GET.get("replace_q", "").strip()[:200]
    graph = link_graph(
        Node(memory.text, "", memory.reliability),
        [
            Edge(
                Node(
                    row.other.text,
                    reverse("browser:memory", kwargs={"slug": slug, "memory_id": row.other.pk}),
                    row.other.reliability,
                ),
                row.link.rel,
                row.outgoing,
            )
            for row in links
        ],
        label="Links of this memory",
    )
    context = {
        "membership": membership,
        "workspace": workspace,
        "memory": memory,
        "chain": memory_chain(memory=memory),
        "links": links,
        "graph": graph if links else None,
        "events": [(event, event_label(event.verb)) for event in browse.memory_events(memory=memory)],
        "managed_rels": MANAGED_RELS,
        "replace_query": replace_query,
        "candidates": _replacements(memory, replace_query) if replace_query else None,
        "cards": list(ConflictCard.objects.filter(card_facts__memory=memory).order_by("-created_at")[:10]),
        "is_admin": membership.allows(Role.ADMIN),
        "can_correct_subject": membership.allows(Role.REVIEWER),
    }
    return render(request, "memories/memory.html", context)


@require_POST
@login_required
def memory_subject_view(request: HttpRequest, slug: str, memory_id: uuid.UUID) -> HttpResponse:
    """A reviewer corrects what a fact is about (kept as training data: memory_subject_correct)."""
    membership = membership_for(request, slug, Role.REVIEWER)
    try:
        memory = memory_get(workspace=membership.workspace, memory_id=memory_id)
        memory_subject_correct(
            memory=memory,
            actor=Actor.for_user(request.user),  # type: ignore[arg-type]
            entity=request.POST.get("entity", "")[:400],
            attribute=request.POST.get("attribute", "")[:400],
            note=request.POST.get("note", "").strip()[:2000],
        )
        messages.success(request, "Subject corrected.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("browser:memory", slug=slug, memory_id=memory_id)


@require_POST
@login_required
def memory_action_view(request: HttpRequest, slug: str, memory_id: uuid.UUID, action: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    workspace = membership.workspace
    actor = Actor.for_user(request.user)  # type: ignore[arg-type]
    reason = request.POST.get("reason", "").strip()[:2000]
    try:
        memory = memory_get(workspace=workspace, memory_id=memory_id)
        if action == "restore":
            done = memory_restore(memory=memory, actor=actor, reason=reason)
            messages.success(request, "Restored." if done else "Nothing to restore.")
        elif action == "forget":
            done = memory_forget(memory=memory, actor=actor, reason=reason)
            messages.success(request, "Forgotten (restore brings it back)." if done else "Already forgotten.")
        elif not request.POST.get("by", "").strip():
            messages.error(request, "Choose the fact that replaces it.")
        else:
            by = memory_get(workspace=workspace, memory_id=_uuid_or_nil(request.POST.get("by", "")), field="by")
            done = memory_supersede(
                old=memory, new=by, actor=actor, reason=reason, annotation=f"used to: {memory.text}"
            )
            messages.success(request, "Superseded." if done else "Already superseded by that memory.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("browser:memory", slug=slug, memory_id=memory_id)


@require_GET
@login_required
@not_found_as_404
def replacements_view(request: HttpRequest, slug: str, memory_id: uuid.UUID) -> HttpResponse:
    """The typeahead behind "Supersede…": live facts matching the search box, to pick the replacing one."""
    membership = membership_for(request, slug, Role.ADMIN)
    memory = memory_get(workspace=membership.workspace, memory_id=memory_id)
    query = request.GET.get("replace_q", "").strip()[:200]
    context = {
        "workspace": membership.workspace,
        "memory": memory,
        "replace_query": query,
        "candidates": _replacements(memory, query) if query else None,
    }
    return render(request, "memories/_replacements.html", context)


def _replacements(memory: Memory, query: str, limit: int = 8) -> list[Memory]:
    """Live facts that could replace ``memory``: relevant to ``query``, not itself, not one it already replaced."""
    hits = relevant_hits(
        recall(
            workspace=memory.workspace,
            query=RecallQuery(query=query, k=limit + 4, min_confidence=0.0, touch=False, diversity=False),
        )
    )
    return [h.memory for h in hits if h.memory.pk != memory.pk and h.memory.superseded_by_id is None][:limit]


@require_POST
@login_required
def unlink_view(request: HttpRequest, slug: str, memory_id: uuid.UUID, link_id: int) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    actor = Actor.for_user(request.user)  # type: ignore[arg-type]
    try:
        link = browse.memory_link_get(workspace=membership.workspace, memory_id=memory_id, link_id=link_id)
        link_delete(link=link, actor=actor)
        messages.success(request, f"Unlinked ({link.rel.replace('_', ' ')}).")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("browser:memory", slug=slug, memory_id=memory_id)


def _uuid_or_nil(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        return uuid.UUID(int=0)  # matches nothing: reported as "no memory with this id"


@require_GET
@login_required
def chains_view(request: HttpRequest, slug: str) -> HttpResponse:
    membership = membership_for(request, slug, Role.ADMIN)
    workspace = membership.workspace
    page = Paginator(browse.supersede_chains(workspace=workspace), 20).get_page(request.GET.get("page"))
    return render(request, "memories/chains.html", {"membership": membership, "workspace": workspace, "page": page})
