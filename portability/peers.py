"""Reading other memory systems' exports as MemoryHub facts (the field mapping: docs/PORTABILITY.md).

Only parsing lives here, no database: each reader turns the peer's JSON into
:class:`PeerFact` values, and ``services.workspace_import_facts`` stores them.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memoryhub.errors import InvalidInput
from memoryhub.storable import timestamp_in_range

FORMATS = ("memoryhub", "mem0", "engram")
TAG_LENGTH = 64


@dataclass(frozen=True)
class PeerFact:
    text: str
    where: str  # "mem0 item 3": names the item in error messages and the import event
    key: str = ""
    scope: str = ""
    tags: list[str] = field(default_factory=list)
    source: str = "explicit"
    agent: str = ""
    valid_from: dt.datetime | None = None
    recorded_at: dt.datetime | None = None
    forgotten_at: dt.datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def detect_format(text: str) -> str:
    """``memoryhub``, ``mem0`` or ``engram``, from the file's shape; InvalidInput when it is none of them."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    if not first:
        raise InvalidInput("the file is empty")
    try:
        head = json.loads(first)
    except ValueError:
        head = None
    if isinstance(head, dict) and head.get("type") == "header":
        return "memoryhub"
    data = _load(text, "the file")
    if isinstance(data, list) or (isinstance(data, dict) and isinstance(data.get("results"), list)):
        return "mem0"
    if isinstance(data, dict) and isinstance(data.get("observations"), list):
        return "engram"
    raise InvalidInput(
        "cannot tell the file's format: expected a memoryhub-workspace header line, a mem0 list of memories "
        "(or {results: [...]}), or an Engram export with observations; pass the format explicitly"
    )


def _load(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{what} is not valid JSON ({exc})") from exc


def _time(value: Any, where: str, name: str) -> dt.datetime | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{where}: {name} must be a timestamp string, not {value!r}")
    try:
        # Engram writes SQLite's "YYYY-MM-DD HH:MM:SS" in UTC; mem0 ISO 8601 with an offset. Naive means UTC.
        return timestamp_in_range(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError as exc:
        raise InvalidInput(f"{where}: {name}: {exc}") from exc


def _text(value: Any, where: str, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{where}: {name} must be a non-empty string")
    return value


def _optional(value: Any, where: str, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int):
        raise InvalidInput(f"{where}: {name} must be a string, not {value!r}")
    return str(value)


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v not in (None, "")}


def mem0_facts(text: str) -> Iterator[PeerFact]:
    """mem0's export: a JSON list of memories, or ``{"results": [...]}`` as its ``get_all`` returns."""
    data = _load(text, "the mem0 export")
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InvalidInput('the mem0 export must be a JSON list of memories or {"results": [...]}')
    for number, item in enumerate(items, start=1):
        where = f"mem0 item {number}"
        if not isinstance(item, dict):
            raise InvalidInput(f"{where}: expected an object")
        categories = item.get("categories") or []
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise InvalidInput(f"{where}: categories must be a list of strings")
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise InvalidInput(f"{where}: metadata must be an object")
        created = _time(item.get("created_at"), where, "created_at")
        user = _optional(item.get("user_id"), where, "user_id")
        yield PeerFact(
            text=_text(item.get("memory"), where, "memory"),
            where=where,
            scope=f"user:{user}" if user else "",
            tags=[c[:TAG_LENGTH] for c in categories],
            # mem0 extracts its memories from conversations with an LLM: inferred, not stated.
            source="inferred",
            agent=_optional(item.get("agent_id"), where, "agent_id"),
            valid_from=created,
            recorded_at=created,
            metadata={
                **metadata,
                "mem0": _present(
                    {
                        "id": item.get("id"),
                        "user_id": item.get("user_id"),
                        "run_id": item.get("run_id"),
                        "hash": item.get("hash"),
                        "updated_at": item.get("updated_at"),
                    }
                ),
            },
        )


def engram_facts(text: str) -> Iterator[PeerFact]:
    """Engram's ``engram export``: ``{version, exported_at, sessions, observations, prompts}``.

    Observations become facts; sessions only lend their directory and summary to
    the metadata; prompts (what the user typed) are not memories and are skipped.
    """
    data = _load(text, "the Engram export")
    if not isinstance(data, dict) or not isinstance(data.get("observations"), list):
        raise InvalidInput("the Engram export must be an object with an observations list")
    sessions = {
        str(s.get("id")): s for s in data.get("sessions") or [] if isinstance(s, dict) and s.get("id") is not None
    }
    for number, item in enumerate(data["observations"], start=1):
        where = f"engram observation {number}"
        if not isinstance(item, dict):
            raise InvalidInput(f"{where}: expected an object")
        created = _time(item.get("created_at"), where, "created_at")
        kind = _optional(item.get("type"), where, "type")
        session = sessions.get(str(item.get("session_id")), {})
        yield PeerFact(
            text=_text(item.get("content"), where, "content"),
            where=where,
            key=_optional(item.get("topic_key"), where, "topic_key"),
            scope=_optional(item.get("project") or session.get("project"), where, "project"),
            tags=[kind[:TAG_LENGTH]] if kind else [],
            # An agent saves an observation on purpose (mem_save): its own explicit word.
            source="explicit",
            agent="engram",
            valid_from=created,
            recorded_at=created,
            forgotten_at=_time(item.get("deleted_at"), where, "deleted_at"),
            metadata={
                "engram": _present(
                    {
                        "id": item.get("id"),
                        "sync_id": item.get("sync_id"),
                        "session_id": item.get("session_id"),
                        "title": item.get("title"),
                        "tool_name": item.get("tool_name"),
                        "scope": item.get("scope"),
                        "revision_count": item.get("revision_count"),
                        "duplicate_count": item.get("duplicate_count"),
                        "updated_at": item.get("updated_at"),
                        "directory": session.get("directory"),
                        "session_summary": session.get("summary"),
                    }
                )
            },
        )


def peer_facts(format_name: str, text: str) -> Iterator[PeerFact]:
    if format_name == "mem0":
        return mem0_facts(text)
    if format_name == "engram":
        return engram_facts(text)
    raise InvalidInput(f"no importer for {format_name!r}; choose one of {', '.join(FORMATS)}")
