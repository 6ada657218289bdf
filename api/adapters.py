"""Between an agent and the services, for the REST API and the MCP server alike.

Inward: a validated request schema (``api.schemas``) becomes the service's
arguments (``recall_query``, ``context_request``, ``memory_input``). Outward: a
service's or selector's result becomes the plain dict that the matching ``*Out``
schema reads (``*_out``). Both interfaces go through these, so they cannot drift
apart in what they accept or answer.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from conflicts.detection.pipeline import Finding
from conflicts.ingestion import CheckedCommit
from conflicts.models import ConflictCard
from conflicts.surfacing import Surfaced
from memories.services import MemoryInput
from recall import context, hybrid, preaction
from workspaces.models import AgentKey

if TYPE_CHECKING:
    from api.schemas import ContextIn, MemoryIn, RecallIn


def memory_input(payload: MemoryIn, *, key: AgentKey) -> MemoryInput:
    """The fact to store, signed with the key's agent name (403 for another name where the key is pinned)."""
    fields = payload.dict(exclude={"on_conflict"})
    return MemoryInput(**{**fields, "agent": key.agent_name(payload.agent)})


def recall_query(payload: RecallIn) -> hybrid.RecallQuery:
    return hybrid.RecallQuery(
        query=payload.query,
        k=payload.k,
        mode=payload.mode,
        weights=payload.weights.dict(exclude_none=True) if payload.weights else {},
        kinds=list(payload.kind),
        scope=payload.scope,
        agent=payload.agent,
        tags_any=payload.tags,
        tags_all=payload.tags_all,
        min_confidence=payload.min_confidence,
        min_importance=payload.min_importance,
        include_superseded=payload.include_superseded,
        as_of=payload.as_of,
        expand=hybrid.Expand(**{**payload.expand.dict(), "rels": tuple(payload.expand.rels)})
        if payload.expand
        else None,
        diversity=payload.diversity,
        lexical_backend=payload.lexical,
    )


def context_request(payload: ContextIn) -> context.ContextRequest:
    return context.ContextRequest(
        recent_messages=[context.Message(m.role, m.content) for m in payload.recent_messages],
        tool_results=payload.tool_results,
        budget_tokens=payload.budget_tokens,
        facts=payload.facts,
        episodes=payload.episodes,
        scope=payload.scope,
    )


def finding_out(finding: Finding) -> dict[str, object]:
    return {
        "memory_id": finding.other.pk,
        "text": finding.other.text,
        "kind": str(finding.verdict.relation),
        "probability": round(finding.verdict.probability, 4),
        "tier": finding.verdict.tier,
        "reason": "; ".join(finding.verdict.reasons) or finding.verdict.reasoning,
        "similarity": round(finding.candidate.similarity, 4),
    }


def commit_out(result: CheckedCommit) -> dict[str, object]:
    """A stored commit (``MemoryCreateOut``); a rejected one has no memory and is answered as an error."""
    memory = result.memory
    if memory is None:
        raise ValueError("a rejected commit has no memory to show")
    return {
        "id": memory.id,
        "status": memory.status,
        "memory": memory,
        "action": result.action,
        "conflicts": [finding_out(f) for f in result.findings],
        "checked": result.checked,
    }


def hit_out(hit: hybrid.Hit) -> dict[str, object]:
    return {
        "memory": hit.memory,
        "score": round(hit.score, 6),
        "parts": asdict(hit.parts),
        "reliability": hit.reliability,
        "disputed": hit.disputed,
        "open_uncertainties": hit.open_uncertainties,
        "contradicted_by": hit.contradicted_by,
        "expanded": hit.expanded,
        "via": hit.via,
        "replaces": hit.replaces,
    }


def context_out(result: context.Context) -> dict[str, object]:
    return {
        "query": result.query,
        "budget_tokens": result.budget_tokens,
        "used_tokens": result.used_tokens,
        "messages": [{"role": m.item.role, "content": m.item.content, "tokens": m.tokens} for m in result.messages],
        "tool_results": [{"content": t.item, "tokens": t.tokens} for t in result.tool_results],
        "memories": [{**hit_out(h.item), "tokens": h.tokens} for h in result.memories],
        "dropped": {
            "messages": result.dropped_messages,
            "tool_results": result.dropped_tool_results,
            "memories": result.dropped_memories,
        },
    }


def check_action_out(checks: list[preaction.ActionCheck]) -> dict[str, object]:
    return {
        "proceed": all(c.proceed for c in checks),
        "results": [
            {
                "memory_id": c.memory.pk,
                "proceed": c.proceed,
                "reliability": c.memory.reliability,
                "status": c.memory.status,
                "confidence": c.memory.confidence,
                "adjusted_confidence": c.adjusted_confidence,
                "warning": c.warning,
                "clarification": c.clarification,
                "open_uncertainties": c.open_uncertainties,
                "conflicting": c.conflicting,
            }
            for c in checks
        ],
    }


def card_out(card: ConflictCard) -> dict[str, object]:
    return {
        "id": card.pk,
        "kind": card.kind,
        "question": card.question,
        "asked_memory_id": card.asked_memory_id,
        "facts": [fact.memory for fact in card.card_facts.all()],
        "detector": card.detector,
        "evidence": card.evidence,
        "severity": card.severity,
        "state": card.state,
        "uncertainty_id": card.uncertainty_id,
        "created_at": card.created_at,
        "answered_at": card.answered_at,
    }


def surfaced_out(surfaced: Surfaced) -> dict[str, object]:
    return {
        "uncertainty": surfaced.uncertainty,
        "relevance": round(surfaced.relevance, 4),
        "question": surfaced.question,
        "facts": [m for m in (surfaced.uncertainty.memory_a, surfaced.uncertainty.memory_b) if m is not None],
    }
