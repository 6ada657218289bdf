"""Agent REST endpoints for reading: hybrid recall, passive context, the pre-action check (under /api/v1)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from api import adapters
from api.schemas import CheckActionIn, CheckActionOut, ContextIn, ContextOut, RecallHitOut, RecallIn
from recall import context, hybrid, preaction
from workspaces.auth import AgentKeyAuth, request_agent_key
from workspaces.models import Scope

router = Router(auth=AgentKeyAuth(), tags=["recall"])
# POSTs that only read (the query is a body): the read scope is enough.
_read = AgentKeyAuth(Scope.READ)

_key = request_agent_key


@router.post("/recall", auth=_read, response=list[RecallHitOut], summary="Hybrid recall of current facts")
def recall_memories(request: HttpRequest, payload: RecallIn) -> list[dict[str, object]]:
    hits = hybrid.recall(workspace=_key(request).workspace, query=adapters.recall_query(payload))
    return [adapters.hit_out(hit) for hit in hits]


@router.post("/context", auth=_read, response=ContextOut, summary="Passive context for the next turn")
def assemble_context(request: HttpRequest, payload: ContextIn) -> dict[str, object]:
    result = context.context_assemble(workspace=_key(request).workspace, request=adapters.context_request(payload))
    return adapters.context_out(result)


@router.post("/check-action", auth=_read, response=CheckActionOut, summary="Is each memory safe to act on?")
def check_action(request: HttpRequest, payload: CheckActionIn) -> dict[str, object]:
    return adapters.check_action_out(
        preaction.check_action(workspace=_key(request).workspace, memory_ids=payload.memory_ids)
    )
