"""The requests behind each client method, shared by the sync and async clients.

Each builder returns a :class:`Call`: what to send, and whether it writes (a
write gets one ``Idempotency-Key``, reused by every retry of that call).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Id = uuid.UUID | str
QueryItems = list[tuple[str, str | int | float | bool | None]]


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    params: QueryItems = field(default_factory=list)
    json: Any = None
    write: bool = False


def _clean(values: Mapping[str, Any]) -> dict[str, Any]:
    """Drop the arguments left at None (the server's default applies), and make the rest JSON."""
    return {name: _jsonable(value) for name, value in values.items() if value is not None}


def _jsonable(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _query(values: Mapping[str, Any]) -> QueryItems:
    """Query parameters; a list becomes a repeated parameter."""
    params: QueryItems = []
    for name, value in values.items():
        if value is None:
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, bool):
                item = "true" if item else "false"
            elif isinstance(item, dt.datetime):
                item = item.isoformat()
            params.append((name, str(item)))
    return params


def remember(fields: Mapping[str, Any]) -> Call:
    return Call("POST", "/memories", json=_clean(fields), write=True)


def remember_batch(memories: Sequence[Mapping[str, Any]]) -> Call:
    return Call("POST", "/memories/batch", json={"memories": [_clean(m) for m in memories]}, write=True)


def get_memory(memory_id: Id) -> Call:
    return Call("GET", f"/memories/{memory_id}")


def list_memories(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/memories", params=_query(filters))


def forget(memory_id: Id) -> Call:
    return Call("DELETE", f"/memories/{memory_id}", write=True)


def supersede(memory_id: Id, by: Id, reason: str) -> Call:
    return Call("POST", f"/memories/{memory_id}/supersede", json={"by": str(by), "reason": reason}, write=True)


def restore(memory_id: Id, reason: str) -> Call:
    return Call("POST", f"/memories/{memory_id}/restore", json={"reason": reason}, write=True)


def reinforce(memory_id: Id, reason: str) -> Call:
    return Call("POST", f"/memories/{memory_id}/reinforce", json={"reason": reason}, write=True)


def correct_subject(memory_id: Id, entity: str, attribute: str, note: str) -> Call:
    body = {"entity": entity, "attribute": attribute, "note": note}
    return Call("POST", f"/memories/{memory_id}/subject", json=body, write=True)


def chain(memory_id: Id) -> Call:
    return Call("GET", f"/memories/{memory_id}/chain")


def neighbors(memory_id: Id, rel: Iterable[str] | None, direction: str, depth: int) -> Call:
    return Call(
        "GET",
        f"/memories/{memory_id}/neighbors",
        params=_query({"rel": list(rel or []), "direction": direction, "depth": depth}),
    )


def subgraph(memory_ids: Iterable[Id], depth: int) -> Call:
    return Call("POST", "/subgraph", json={"memory_ids": [str(i) for i in memory_ids], "depth": depth})


def link(src: Id, dst: Id, rel: str, weight: float) -> Call:
    return Call("POST", "/links", json={"src": str(src), "dst": str(dst), "rel": rel, "weight": weight}, write=True)


def unlink(link_id: int) -> Call:
    return Call("DELETE", f"/links/{link_id}", write=True)


def recall(query: str, options: Mapping[str, Any]) -> Call:
    return Call("POST", "/recall", json=_clean({"query": query, **options}))


def context(recent_messages: Sequence[Mapping[str, str]], options: Mapping[str, Any]) -> Call:
    return Call("POST", "/context", json=_clean({"recent_messages": list(recent_messages), **options}))


def check_action(memory_ids: Iterable[Id]) -> Call:
    return Call("POST", "/check-action", json={"memory_ids": [str(i) for i in memory_ids]})


def list_conflicts(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/conflicts", params=_query(filters))


def get_conflict(card_id: Id) -> Call:
    return Call("GET", f"/conflicts/{card_id}")


def answer_conflict(card_id: Id, answer: str, current_fact: Id | None, note: str) -> Call:
    body = _clean({"answer": answer, "current_fact": current_fact, "note": note})
    return Call("POST", f"/conflicts/{card_id}/answer", json=body, write=True)


def list_uncertainties(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/uncertainties", params=_query(filters))


def surface_uncertainties(topic: str, limit: int) -> Call:
    return Call("POST", "/uncertainties/surface", json={"topic": topic, "limit": limit})


def find_conflicts(memory_id: Id | None, threshold: float | None, limit: int | None) -> Call:
    params = _query({"memory_id": memory_id, "threshold": threshold, "limit": limit})
    return Call("GET", "/find-conflicts", params=params)


def list_events(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/events", params=_query(filters))


def undo_event(event_id: int, reason: str) -> Call:
    return Call("POST", f"/events/{event_id}/undo", json={"reason": reason}, write=True)


def run_detective() -> Call:
    return Call("POST", "/detective/run", write=True)


def detective_runs() -> Call:
    return Call("GET", "/detective/runs")


def status() -> Call:
    return Call("GET", "/status")


def chunks(items: Sequence[Mapping[str, Any]], size: int) -> list[Sequence[Mapping[str, Any]]]:
    if not 1 <= size <= 1000:
        raise ValueError("batch_size must be 1 to 1000 (the API's limit per request)")
    return [items[start : start + size] for start in range(0, len(items), size)]
