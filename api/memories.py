"""Agent REST endpoints for memories and links (mounted under /api/v1).

A commit goes through ``conflicts.ingestion``: stored, and checked at once when the
agent asks for it (``on_conflict``); everything else is a memories service or selector.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict

from django.http import HttpRequest
from ninja import Query, Router, Status
from pydantic import ValidationError as PydanticValidationError

from api import adapters
from api.idempotency import idempotent
from api.schemas import (
    BatchIn,
    BatchOut,
    ChainOut,
    ChangeOut,
    CommitRejectedOut,
    ErrorOut,
    LinkIn,
    LinkOut,
    MemoryCreateOut,
    MemoryIn,
    MemoryListQuery,
    MemoryOut,
    MemoryPage,
    NeighborsOut,
    NeighborsQuery,
    ReasonIn,
    StatusOut,
    SubgraphIn,
    SubgraphOut,
    SubjectIn,
    SupersedeIn,
)
from conflicts.ingestion import memory_commit
from memories import selectors, services
from memories.audit import Actor
from memories.models import Link, Memory
from memoryhub.broker import broker_depth
from memoryhub.llm import llm_enabled, llm_paused
from workspaces.auth import AgentKeyAuth, request_agent_key
from workspaces.models import Scope

router = Router(auth=AgentKeyAuth(), tags=["memories"])


_key = request_agent_key


def _memory(request: HttpRequest, memory_id: uuid.UUID) -> Memory:
    return selectors.memory_get(workspace=_key(request).workspace, memory_id=memory_id)


def _memory_named_in_body(request: HttpRequest, memory_id: uuid.UUID, *, field: str) -> Memory:
    """A memory the body refers to: missing is a bad field value (422), not a missing URL (404)."""
    return selectors.memory_referenced(workspace=_key(request).workspace, memory_id=memory_id, field=field)


@router.post(
    "/memories",
    response={201: MemoryCreateOut, 409: CommitRejectedOut, 503: ErrorOut},
    summary="Commit a fact",
    description=(
        "`on_conflict=raise` refuses a clashing fact (409) and stores nothing when its check cannot finish "
        "within the time box (503 with `Retry-After`); `warn` and `supersede` then store it with `checked: false`. "
        "A key pinned to an agent name signs with it (403 for another `agent`). Send `Idempotency-Key` to retry safely."
    ),
)
@idempotent
def create_memory(request: HttpRequest, payload: MemoryIn) -> Status[dict[str, object]]:
    key = _key(request)
    result = memory_commit(
        workspace=key.workspace,
        actor=Actor.for_agent(key),
        data=adapters.memory_input(payload, key=key),
        on_conflict=payload.on_conflict,
    )
    if result.action == "rejected":
        return Status(
            409,
            {
                "detail": result.refusal(),
                "code": "conflict",
                "conflicts": [adapters.finding_out(f) for f in result.findings],
            },
        )
    return Status(201, adapters.commit_out(result))


@router.post(
    "/memories/batch",
    response=BatchOut,
    summary="Commit many facts at once",
    description=(
        "Up to 1,000 facts in one request and one transaction; each item is validated on its own and gets its "
        "result: `stored`, `merged` (the same text is already a live fact in that scope: it is reinforced "
        "instead) or `rejected` with the reasons. Embedding and detection run in the background, in batches. "
        "Send `Idempotency-Key` to retry safely."
    ),
)
@idempotent
def create_memories_batch(request: HttpRequest, payload: BatchIn) -> dict[str, object]:
    key = _key(request)
    valid: list[tuple[int, services.MemoryInput]] = []
    results: list[dict[str, object]] = []
    for index, item in enumerate(payload.memories):
        try:
            parsed = MemoryIn.model_validate(item)
        except PydanticValidationError as exc:
            errors = [
                {"loc": ["body", "memories", index, *e["loc"]], "msg": e["msg"], "type": e["type"]}
                for e in exc.errors(include_url=False, include_context=False, include_input=False)
            ]
            results.append({"index": index, "action": "rejected", "errors": errors})
            continue
        if parsed.on_conflict != "ignore":
            msg = "a batch is checked in the background; commit alone for on_conflict=warn|supersede|raise"
            error = {"loc": ["body", "memories", index, "on_conflict"], "msg": msg, "type": "value_error"}
            results.append({"index": index, "action": "rejected", "errors": [error]})
            continue
        valid.append((index, services.MemoryInput(**parsed.dict(exclude={"on_conflict"}))))
    created = services.memories_create_batch(workspace=key.workspace, actor=Actor.for_agent(key), items=valid)
    results += [{"index": i.index, "action": i.action, "id": i.memory.pk, "status": i.memory.status} for i in created]
    results.sort(key=lambda r: int(str(r["index"])))
    count = {action: sum(1 for r in results if r["action"] == action) for action in ("stored", "merged", "rejected")}
    return {**count, "results": results}


@router.get("/memories", response=MemoryPage, summary="List memories with filters")
def list_memories(request: HttpRequest, query: Query[MemoryListQuery]) -> dict[str, object]:
    filters = selectors.MemoryFilters(
        kind=query.kind,
        scope=query.scope,
        key=query.key,
        agent=query.agent,
        source=query.source,
        reliability=query.reliability,
        statuses=list(query.status) or None,
        tags_any=query.tag,
        tags_all=query.tags_all,
        text=query.q,
        include_superseded=query.include_superseded,
        recorded_after=query.recorded_after,
        recorded_before=query.recorded_before,
    )
    qs = selectors.memory_list(workspace=_key(request).workspace, filters=filters)
    count = qs.count()
    items = list(qs[query.offset : query.offset + query.limit])
    next_offset = query.offset + query.limit if query.offset + query.limit < count else None
    return {"items": items, "count": count, "limit": query.limit, "offset": query.offset, "next_offset": next_offset}


@router.get("/memories/{memory_id}", response=MemoryOut, summary="Get one memory")
def get_memory(request: HttpRequest, memory_id: uuid.UUID) -> Memory:
    return _memory(request, memory_id)


@router.delete("/memories/{memory_id}", response=ChangeOut, summary="Forget a memory (soft)")
def forget_memory(request: HttpRequest, memory_id: uuid.UUID) -> dict[str, object]:
    memory = _memory(request, memory_id)
    changed = services.memory_forget(memory=memory, actor=Actor.for_agent(_key(request)))
    memory.refresh_from_db()
    return {"changed": changed, "memory": memory}


@router.post("/memories/{memory_id}/supersede", response=ChangeOut, summary="Mark as replaced by another memory")
@idempotent
def supersede_memory(request: HttpRequest, memory_id: uuid.UUID, payload: SupersedeIn) -> dict[str, object]:
    old = _memory(request, memory_id)
    new = _memory_named_in_body(request, payload.by, field="by")
    changed = services.memory_supersede(old=old, new=new, actor=Actor.for_agent(_key(request)), reason=payload.reason)
    old.refresh_from_db()
    return {"changed": changed, "memory": old}


@router.post("/memories/{memory_id}/restore", response=ChangeOut, summary="Undo a supersede or forget")
def restore_memory(request: HttpRequest, memory_id: uuid.UUID, payload: ReasonIn | None = None) -> dict[str, object]:
    memory = _memory(request, memory_id)
    reason = payload.reason if payload else ""
    changed = services.memory_restore(memory=memory, actor=Actor.for_agent(_key(request)), reason=reason)
    memory.refresh_from_db()
    return {"changed": changed, "memory": memory}


@router.post("/memories/{memory_id}/reinforce", response=MemoryOut, summary="Confirm a memory")
def reinforce_memory(request: HttpRequest, memory_id: uuid.UUID, payload: ReasonIn | None = None) -> Memory:
    memory = _memory(request, memory_id)
    reason = payload.reason if payload else ""
    return services.memory_reinforce(memory=memory, actor=Actor.for_agent(_key(request)), reason=reason)


@router.post(
    "/memories/{memory_id}/subject",
    response={200: MemoryOut, 422: ErrorOut},
    summary="Correct what a memory is about (entity and attribute); kept as training data",
)
def correct_subject(request: HttpRequest, memory_id: uuid.UUID, payload: SubjectIn) -> Memory:
    memory = _memory(request, memory_id)
    return services.memory_subject_correct(
        memory=memory,
        actor=Actor.for_agent(_key(request)),
        entity=payload.entity,
        attribute=payload.attribute,
        note=payload.note,
    )


@router.get("/memories/{memory_id}/chain", response=ChainOut, summary="The supersede chain through a memory")
def memory_chain(request: HttpRequest, memory_id: uuid.UUID) -> dict[str, object]:
    chain = selectors.memory_chain(memory=_memory(request, memory_id))
    return {"head": chain[-1].pk, "chain": chain}


@router.get("/memories/{memory_id}/neighbors", response=NeighborsOut, summary="Linked memories")
def memory_neighbors(request: HttpRequest, memory_id: uuid.UUID, query: Query[NeighborsQuery]) -> dict[str, object]:
    memory = _memory(request, memory_id)
    hood = selectors.memory_neighbors(memory=memory, rels=query.rel, direction=query.direction, depth=query.depth)
    return {"memory_id": memory.pk, "neighbors": hood.neighbors, "dangling": hood.dangling}


@router.post(
    "/subgraph",
    response=SubgraphOut,
    auth=AgentKeyAuth(Scope.READ),
    summary="The memories around some memories and their links",
)
def memory_subgraph(request: HttpRequest, payload: SubgraphIn) -> dict[str, object]:
    graph = selectors.memory_subgraph(
        workspace=_key(request).workspace, memory_ids=payload.memory_ids, depth=payload.depth
    )
    return {"nodes": list(graph.nodes.values()), "edges": graph.edges, "truncated": graph.truncated}


@router.post("/links", response={200: LinkOut, 201: LinkOut}, tags=["links"], summary="Link two memories")
@idempotent
def create_link(request: HttpRequest, payload: LinkIn) -> Status[Link]:
    src = _memory_named_in_body(request, payload.src, field="src")
    dst = _memory_named_in_body(request, payload.dst, field="dst")
    link, created = services.link_create(
        src=src, dst=dst, rel=payload.rel, weight=payload.weight, actor=Actor.for_agent(_key(request))
    )
    return Status(201 if created else 200, link)


@router.delete("/links/{link_id}", response={204: None}, tags=["links"], summary="Remove a link")
def delete_link(request: HttpRequest, link_id: int) -> Status[None]:
    link = selectors.link_get(workspace=_key(request).workspace, link_id=link_id)
    services.link_delete(link=link, actor=Actor.for_agent(_key(request)))
    return Status(204, None)


@router.get("/status", response=StatusOut, tags=["status"], summary="How far behind the pipeline is")
def pipeline_status(request: HttpRequest) -> dict[str, object]:
    """Facts waiting for embedding and for their conflict check, and the broker's depth: a backlog shows here first."""
    backlog = selectors.pipeline_backlog(workspace=_key(request).workspace)
    depth = broker_depth()
    pause = llm_paused()
    return {
        "embedding": asdict(backlog.embedding),
        "checking": asdict(backlog.checking),
        "subjects_to_reread": backlog.subjects_to_reread,
        "broker": asdict(depth) if depth else None,
        "llm": {
            "configured": llm_enabled(),
            "paused_until": pause.until if pause else None,
            "failures": pause.failures if pause else 0,
        },
    }
