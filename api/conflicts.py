"""Agent REST endpoints for uncertainties, conflict cards and the audit trail (/api/v1)."""

from __future__ import annotations

import uuid

from django.http import HttpRequest
from ninja import Query, Router, Status

from api import adapters
from api.conflict_schemas import (
    AnswerIn,
    AnswerOut,
    CardOut,
    ConflictListQuery,
    DetectiveRunOut,
    EventListQuery,
    EventOut,
    FindConflictsQuery,
    FoundConflictOut,
    SurfacedOut,
    SurfaceIn,
    UncertaintyListQuery,
    UncertaintyOut,
    UndoIn,
)
from api.idempotency import idempotent
from conflicts import selectors, tasks
from conflicts.feedback import card_answer
from conflicts.models import DetectiveRun
from conflicts.surfacing import uncertainties_surface
from memories.audit import Actor
from memories.models import Event
from memories.selectors import memory_get
from memories.services import event_undo
from memoryhub.errors import InvalidInput, NotFound
from workspaces.auth import AgentKeyAuth, request_agent_key
from workspaces.models import Scope

router = Router(auth=AgentKeyAuth(), tags=["conflicts"])


_key = request_agent_key


@router.get("/conflicts", response=list[CardOut], summary="Conflict cards, newest first")
def list_conflicts(request: HttpRequest, query: Query[ConflictListQuery]) -> list[dict[str, object]]:
    cards = selectors.cards_list(workspace=_key(request).workspace, state=query.state, kind=query.kind)
    return [adapters.card_out(card) for card in cards[query.offset : query.offset + query.limit]]


@router.get("/conflicts/{card_id}", response=CardOut, summary="One conflict card")
def get_conflict(request: HttpRequest, card_id: uuid.UUID) -> dict[str, object]:
    return adapters.card_out(selectors.card_get(workspace=_key(request).workspace, card_id=card_id))


@router.post(
    "/conflicts/{card_id}/answer",
    response=AnswerOut,
    auth=AgentKeyAuth(Scope.ANSWER),
    summary="Answer a conflict card",
    description=(
        "yes: the asked fact still holds; no: it changed (superseded by `current_fact` or the newest other fact; "
        "forgotten instead when the note starts with never/wrong/false or says 'never true'); both: not a conflict; "
        "skip: ask later. 409 when the card was already answered. Needs the `answer` scope."
    ),
)
@idempotent
def answer_conflict(request: HttpRequest, card_id: uuid.UUID, payload: AnswerIn) -> dict[str, object]:
    key = _key(request)
    card = selectors.card_get(workspace=key.workspace, card_id=card_id)
    result = card_answer(
        card=card,
        choice=payload.answer,
        actor=Actor.for_agent(key),
        current_memory=payload.current_fact,
        note=payload.note,
    )
    fresh = selectors.card_get(workspace=key.workspace, card_id=card_id)
    return {
        "card": adapters.card_out(fresh),
        "answer": result.answer.choice,
        "current_fact": result.answer.current_memory_id,
        "event": result.event.pk,
    }


@router.get("/uncertainties", response=list[UncertaintyOut], summary="Uncertainty records")
def list_uncertainties(request: HttpRequest, query: Query[UncertaintyListQuery]) -> list[object]:
    records = selectors.uncertainties_list(workspace=_key(request).workspace, state=query.state, memory_id=query.memory)
    return list(records[query.offset : query.offset + query.limit])


@router.get("/events", response=list[EventOut], tags=["audit"], summary="The audit trail, newest first")
def list_events(request: HttpRequest, query: Query[EventListQuery]) -> list[Event]:
    events = selectors.events_list(
        workspace=_key(request).workspace, automatic=query.automatic, verb=query.verb, memory_id=query.memory
    )
    return list(events[query.offset : query.offset + query.limit])


@router.post(
    "/events/{event_id}/undo",
    response=EventOut,
    auth=AgentKeyAuth(Scope.ADMIN),
    tags=["audit"],
    summary="Undo a recorded change (admin scope)",
)
def undo_event(request: HttpRequest, event_id: int, payload: UndoIn | None = None) -> Event:
    key = _key(request)
    event = selectors.event_get(workspace=key.workspace, event_id=event_id)
    return event_undo(event=event, actor=Actor.for_agent(key), reason=payload.reason if payload else "")


@router.post(
    "/detective/run",
    response={202: DetectiveRunOut},
    auth=AgentKeyAuth(Scope.ADMIN),
    tags=["detective"],
    summary="Run the detective now (admin scope)",
)
def run_detective(request: HttpRequest) -> Status[DetectiveRun]:
    """Queue a narrative pass over the workspace's history; the answer comes back at once."""
    return Status(202, tasks.detective_request(workspace=_key(request).workspace))


@router.get("/detective/runs", response=list[DetectiveRunOut], tags=["detective"], summary="Recent detective runs")
def list_detective_runs(request: HttpRequest) -> list[DetectiveRun]:
    """Newest first. ``partial`` / ``failed``: some / all of the LLM's batches failed and were read offline."""
    return selectors.detective_runs_recent(workspace=_key(request).workspace)


# Surfacing counts what was shown (anti-nag) but changes no fact: a reading agent may do it.
@router.post(
    "/uncertainties/surface",
    response=list[SurfacedOut],
    auth=AgentKeyAuth(Scope.READ),
    summary="Disputes worth raising for a topic",
)
def surface_uncertainties(request: HttpRequest, payload: SurfaceIn) -> list[dict[str, object]]:
    """Open uncertainties relevant to the topic, each counted as surfaced (anti-nag after 3)."""
    key = _key(request)
    surfaced = uncertainties_surface(
        workspace=key.workspace, topic=payload.topic, actor=Actor.for_agent(key), limit=payload.limit
    )
    return [adapters.surfaced_out(s) for s in surfaced]


@router.get(
    "/find-conflicts",
    response=list[FoundConflictOut],
    summary="Candidate conflicts by similarity: duplicates and contradictions (seed 003)",
)
def find_conflicts(request: HttpRequest, query: Query[FindConflictsQuery]) -> list[dict[str, object]]:
    workspace = _key(request).workspace
    memory = None
    if query.memory_id is not None:
        # An id in the query string, not the path: one not in the workspace is a bad value (422), as in bodies.
        try:
            memory = memory_get(workspace=workspace, memory_id=query.memory_id, field="memory_id")
        except NotFound as exc:
            raise InvalidInput(exc.message, field="memory_id") from exc
    found = selectors.conflicts_find(workspace=workspace, memory=memory, threshold=query.threshold, limit=query.limit)
    return [{"a": c.a, "b": c.b, "similarity": c.similarity, "kind": c.kind, "reason": c.reason} for c in found]
