"""Agent REST endpoints for reading: hybrid recall, passive context, the pre-action check (under /api/v1)."""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpRequest
from ninja import Router

from api.schemas import CheckActionIn, CheckActionOut, ContextIn, ContextOut, RecallHitOut, RecallIn
from recall import context, hybrid, preaction
from workspaces.auth import AgentKeyAuth, request_agent_key
from workspaces.models import Scope

router = Router(auth=AgentKeyAuth(), tags=["recall"])
# POSTs that only read (the query is a body): the read scope is enough.
_read = AgentKeyAuth(Scope.READ)

_key = request_agent_key


def _hit_out(hit: hybrid.Hit) -> dict[str, object]:
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


@router.post("/recall", auth=_read, response=list[RecallHitOut], summary="Hybrid recall of current facts")
def recall_memories(request: HttpRequest, payload: RecallIn) -> list[dict[str, object]]:
    query = hybrid.RecallQuery(
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
    return [_hit_out(hit) for hit in hybrid.recall(workspace=_key(request).workspace, query=query)]


@router.post("/context", auth=_read, response=ContextOut, summary="Passive context for the next turn")
def assemble_context(request: HttpRequest, payload: ContextIn) -> dict[str, object]:
    result = context.context_assemble(
        workspace=_key(request).workspace,
        request=context.ContextRequest(
            recent_messages=[context.Message(m.role, m.content) for m in payload.recent_messages],
            tool_results=payload.tool_results,
            budget_tokens=payload.budget_tokens,
            facts=payload.facts,
            episodes=payload.episodes,
            scope=payload.scope,
        ),
    )
    return {
        "query": result.query,
        "budget_tokens": result.budget_tokens,
        "used_tokens": result.used_tokens,
        "messages": [{"role": m.item.role, "content": m.item.content, "tokens": m.tokens} for m in result.messages],
        "tool_results": [{"content": t.item, "tokens": t.tokens} for t in result.tool_results],
        "memories": [{**_hit_out(h.item), "tokens": h.tokens} for h in result.memories],
        "dropped": {
            "messages": result.dropped_messages,
            "tool_results": result.dropped_tool_results,
            "memories": result.dropped_memories,
        },
    }


@router.post("/check-action", auth=_read, response=CheckActionOut, summary="Is each memory safe to act on?")
def check_action(request: HttpRequest, payload: CheckActionIn) -> dict[str, object]:
    checks = preaction.check_action(workspace=_key(request).workspace, memory_ids=payload.memory_ids)
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
