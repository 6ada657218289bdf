"""One table row ⇄ one JSON object of the ``memoryhub-workspace`` format (docs/PORTABILITY.md).

Rows are written field by field from the model's concrete fields, so a column
added to a model travels without touching this module. A foreign key is written
under the field's name (``superseded_by``, not ``superseded_by_id``) as the id of
the row it points at; users by username and agent keys by a readable label,
because neither travels (a key's secret must never leave the hub).
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models

from conflicts.models import Answer, ConflictCard, Tolerance, ToleranceChange, Uncertainty
from memories.embeddings import DIMENSIONS
from memories.models import Event, Link, Memory
from memoryhub.storable import first_unstorable, timestamp_in_range
from workspaces.models import KEY_PREFIX, AgentKey, Workspace

FORMAT_NAME = "memoryhub-workspace"
FORMAT_VERSION = 1

# Row types in file order: every reference points at a row written earlier.
MODEL_OF_TYPE: dict[str, type[models.Model]] = {
    "memory": Memory,
    "uncertainty": Uncertainty,
    "card": ConflictCard,
    "answer": Answer,
    "link": Link,
    "tolerance": Tolerance,
    "tolerance_change": ToleranceChange,
    "event": Event,
}
TYPE_OF_MODEL = {model: name for name, model in MODEL_OF_TYPE.items()}

# Not carried: the workspace is the file itself; the search vector is generated from the text;
# a check claim belongs to a worker of the source hub.
SKIPPED_FIELDS = {"workspace", "search_vector", "check_claimed_at"}

_KEY_LABEL = re.compile(rf"\({KEY_PREFIX}_([0-9a-f]+)_…\)$")


class RowError(Exception):
    """A row the importer cannot take; the caller adds the line number."""


def exported_fields(type_name: str) -> list[models.Field[Any, Any]]:
    model = MODEL_OF_TYPE[type_name]
    return [
        f for f in model._meta.concrete_fields if f.name not in SKIPPED_FIELDS and not getattr(f, "generated", False)
    ]


def agent_key_label(key: AgentKey) -> str:
    return f"{key.name} ({KEY_PREFIX}_{key.prefix}_…)"


def encode_row(
    type_name: str, instance: models.Model, *, users: dict[int, str], keys: dict[int, str]
) -> dict[str, Any]:
    """``instance`` as a JSON object; ``users``/``keys`` name the users and agent keys by id."""
    row: dict[str, Any] = {"type": type_name}
    for f in exported_fields(type_name):
        value = getattr(instance, f.attname)
        if value is not None and f.is_relation:
            related = f.related_model
            if related is AgentKey:
                value = keys.get(value)
            elif related is get_user_model():
                value = users.get(value)
        row[f.name] = encode_value(f, value)
    return row


def encode_value(f: models.Field[Any, Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if f.name == "embedding":
        # float32 printed shortest: it reads back to the same float32, so a second export is identical.
        return [float(str(x)) for x in np.asarray(value, dtype=np.float32)]
    return value


@dataclass
class IdMap:
    """Old id → new id for the rows imported so far, and which UUIDs had to change."""

    uuids: dict[str, uuid.UUID] = field(default_factory=dict)
    ints: dict[str, dict[int, int]] = field(default_factory=dict)
    # The UUIDs that were taken in this hub, old → new, for rewriting the JSON that mentions them.
    changed: dict[str, str] = field(default_factory=dict)


@dataclass
class Context:
    workspace: Workspace
    ids: IdMap
    users: dict[str, int]
    keys: dict[str, int]


def decode_row(type_name: str, row: dict[str, Any], context: Context) -> models.Model:
    """An unsaved instance of the row, references translated to the imported rows' ids.

    The primary key is left as the file's; the importer decides whether it stays.
    """
    model = MODEL_OF_TYPE[type_name]
    fields = exported_fields(type_name)
    known = {f.name for f in fields} | {"type"} | ({"facts"} if type_name == "card" else set())
    unknown = sorted(set(row) - known)
    if unknown:
        raise RowError(f"{type_name} has unknown field(s): {', '.join(unknown)}")
    found = first_unstorable(row)
    if found:
        raise RowError(f"{type_name}{found[0]} holds {found[1]}, which PostgreSQL cannot store")
    values: dict[str, Any] = {}
    for f in fields:
        if f.name not in row:
            continue  # an older file without this column: the model's default
        values[f.attname] = _decode_value(type_name, f, row[f.name], context)
    instance = model(workspace=context.workspace, **values) if _has_workspace(model) else model(**values)
    skip = [f.name for f in fields if f.is_relation or f.name in {"embedding", "id"}]
    try:
        instance.clean_fields(exclude=skip)
    except ValidationError as exc:
        problems = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in exc.message_dict.items())
        raise RowError(f"{type_name}: {problems}") from exc
    return instance


def _has_workspace(model: type[models.Model]) -> bool:
    return any(f.name == "workspace" for f in model._meta.concrete_fields)


def _decode_value(type_name: str, f: models.Field[Any, Any], value: Any, context: Context) -> Any:
    if value is None:
        if not f.null:
            raise RowError(f"{type_name}.{f.name} may not be null")
        return None
    if f.is_relation:
        return _decode_reference(type_name, f, value, context)
    if isinstance(f, models.DateTimeField):
        if not isinstance(value, str):
            raise RowError(f"{type_name}.{f.name} must be an ISO 8601 timestamp, not {value!r}")
        try:
            parsed = dt.datetime.fromisoformat(value)
            if parsed.tzinfo is None:
                raise ValueError(f"{value} has no UTC offset")
            return timestamp_in_range(parsed)
        except ValueError as exc:
            raise RowError(f"{type_name}.{f.name}: {exc}") from exc
    if isinstance(f, models.UUIDField):
        return _parse_uuid(type_name, f.name, value)
    if f.name == "embedding":
        if (
            not isinstance(value, list)
            or len(value) != DIMENSIONS
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
        ):
            raise RowError(f"{type_name}.embedding must be a list of {DIMENSIONS} numbers")
        return np.asarray(value, dtype=np.float32)
    if isinstance(f, models.FloatField) and not (isinstance(value, int | float) and not isinstance(value, bool)):
        raise RowError(f"{type_name}.{f.name} must be a number, not {value!r}")
    if isinstance(f, models.IntegerField | models.SmallIntegerField) and (
        not isinstance(value, int) or isinstance(value, bool)
    ):
        raise RowError(f"{type_name}.{f.name} must be an integer, not {value!r}")
    if isinstance(f, models.BooleanField) and not isinstance(value, bool):
        raise RowError(f"{type_name}.{f.name} must be true or false, not {value!r}")
    if isinstance(f, models.CharField | models.TextField) and not isinstance(value, str):
        raise RowError(f"{type_name}.{f.name} must be a string, not {value!r}")
    return value


def _parse_uuid(type_name: str, name: str, value: Any) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError as exc:
        raise RowError(f"{type_name}.{name} is not a UUID: {value!r}") from exc


def _decode_reference(type_name: str, f: models.Field[Any, Any], value: Any, context: Context) -> Any:
    related = f.related_model
    if related is AgentKey:
        # Keys do not travel; one of the target workspace with the same prefix is the same key.
        match = _KEY_LABEL.search(value) if isinstance(value, str) else None
        return context.keys.get(match.group(1)) if match else None
    if related is get_user_model():
        return context.users.get(value) if isinstance(value, str) else None
    target = TYPE_OF_MODEL.get(related)  # type: ignore[arg-type]
    if target is None:
        raise RowError(f"{type_name}.{f.name} refers to a table the format does not carry")
    new: int | uuid.UUID | None
    if isinstance(value, int) and not isinstance(value, bool):
        new = context.ids.ints.get(target, {}).get(value)
    else:
        new = context.ids.uuids.get(str(_parse_uuid(type_name, f.name, value)))
    if new is None:
        raise RowError(f"{type_name}.{f.name} refers to {target} {value}, which no earlier line of the file holds")
    return new


def replace_ids(value: Any, changed: dict[str, str]) -> Any:
    """``value`` with every string that is a changed UUID replaced by the new one (JSON of events, evidence)."""
    if not changed:
        return value
    if isinstance(value, str):
        return changed.get(value, value)
    if isinstance(value, list):
        return [replace_ids(item, changed) for item in value]
    if isinstance(value, dict):
        return {key: replace_ids(item, changed) for key, item in value.items()}
    return value
