"""Writing a workspace in: a ``memoryhub-workspace`` file, or another memory system's export.

Every import runs in one transaction: a bad line anywhere leaves the hub as it
was. Rows go in with ``save_base(raw=True)``, as ``loaddata`` does, so the
times the file carries (``created_at``, ``updated_at``) are stored as they are
rather than replaced by "now".
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.db.models import Model

from conflicts.models import CardFact, ConflictCard, Tolerance
from memories import hooks
from memories.audit import Actor, Tracker, record_event
from memories.models import Event, Memory, Status
from memories.services import CREATED_FIELDS, MemoryInput, memory_build
from memoryhub.errors import InvalidInput
from portability.codec import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MODEL_OF_TYPE,
    TYPE_OF_MODEL,
    Context,
    IdMap,
    RowError,
    decode_row,
    replace_ids,
)
from portability.peers import PeerFact
from workspaces.models import AgentKey, Workspace

Progress = Callable[[int], None]
PROGRESS_EVERY = 1000


class ImportFailed(InvalidInput):
    """The file cannot be imported; the message names the line. Nothing was written."""


@dataclass
class ImportReport:
    workspace: Workspace
    counts: dict[str, int] = field(default_factory=dict)
    # UUIDs already taken in this hub (the same rows imported twice, or into a second workspace): new ones given.
    renamed_ids: int = 0
    waiting_for_embedding: int = 0


def _parse(line: str, number: int) -> Any:
    try:
        return json.loads(line, parse_constant=_refuse_constant)
    except ValueError as exc:
        raise ImportFailed(f"line {number}: not valid JSON ({exc})") from exc


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number PostgreSQL can store")


def workspace_has_rows(workspace: Workspace) -> bool:
    return (
        Memory.objects.filter(workspace=workspace).exists()
        or Event.objects.filter(workspace=workspace).exists()
        or ConflictCard.objects.filter(workspace=workspace).exists()
    )


def _target(slug: str, *, merge: bool, name: str = "", config: dict[str, Any] | None = None) -> Workspace:
    workspace, created = Workspace.objects.select_for_update().get_or_create(
        slug=slug, defaults={"name": name or slug, "config": config or {}}
    )
    if not created and not merge and workspace_has_rows(workspace):
        raise ImportFailed(
            f"workspace {slug!r} already holds memories or events; import into an empty or new workspace, "
            "or pass merge to add the file's rows beside them"
        )
    return workspace


def workspace_import(
    *,
    slug: str,
    lines: Iterable[str],
    merge: bool = False,
    progress: Progress | None = None,
    progress_every: int = PROGRESS_EVERY,
) -> ImportReport:
    """Import a ``memoryhub-workspace`` file into workspace ``slug`` (created when missing).

    Original UUIDs are kept when this hub has no row with them, and replaced
    (everywhere the file mentions them) when it has; integer ids are always new.
    Facts without a vector are embedded by the normal pipeline after the commit.
    """
    numbered: Iterator[tuple[int, str]] = ((n, line) for n, line in enumerate(lines, start=1) if line.strip())
    first = next(numbered, None)
    if first is None:
        raise ImportFailed("line 1: the file is empty; expected a header line")
    header = _parse(first[1], first[0])
    if not isinstance(header, dict) or header.get("type") != "header" or header.get("format") != FORMAT_NAME:
        raise ImportFailed(f"line {first[0]}: expected a {FORMAT_NAME!r} header line first")
    if header.get("version") != FORMAT_VERSION:
        raise ImportFailed(f"line {first[0]}: format version {header.get('version')!r} is not {FORMAT_VERSION}")
    source: dict[str, Any] = header["workspace"] if isinstance(header.get("workspace"), dict) else {}
    promised = header.get("counts") if isinstance(header.get("counts"), dict) else None

    with transaction.atomic():
        workspace = _target(slug, merge=merge, name=str(source.get("name") or ""), config=source.get("config") or {})
        report = ImportReport(workspace=workspace, counts=dict.fromkeys(MODEL_OF_TYPE, 0))
        context = Context(
            workspace=workspace,
            ids=IdMap(),
            users=dict(get_user_model().objects.values_list("username", "id")),
            keys=dict(AgentKey.objects.filter(workspace=workspace).values_list("prefix", "id")),
        )
        waiting: list[uuid.UUID] = []
        last = first[0]
        for number, line in numbered:
            last = number
            row = _parse(line, number)
            if not isinstance(row, dict) or row.get("type") not in MODEL_OF_TYPE:
                kinds = ", ".join(MODEL_OF_TYPE)
                raise ImportFailed(f"line {number}: expected an object whose type is one of {kinds}")
            try:
                instance = _import_row(row, context)
            except RowError as exc:
                raise ImportFailed(f"line {number}: {exc}") from exc
            except DatabaseError as exc:
                raise ImportFailed(f"line {number}: the database refused the {row['type']}: {exc}") from exc
            report.counts[row["type"]] += 1
            if isinstance(instance, Memory) and instance.status == Status.PENDING_EMBED:
                waiting.append(instance.pk)
            done = sum(report.counts.values())
            if progress is not None and done % progress_every == 0:
                progress(done)
        if promised is not None and {k: promised.get(k, 0) for k in MODEL_OF_TYPE} != report.counts:
            raise ImportFailed(
                f"line {last}: the header promised {promised} rows but the file holds {report.counts}; "
                "is the file cut short?"
            )
        report.renamed_ids = len(context.ids.changed)
        report.waiting_for_embedding = len(waiting)
        if waiting:
            transaction.on_commit(lambda: hooks.facts_waiting.announce(hooks.FactsWaiting(waiting)))
    return report


# The integer-keyed tables an event's ``changes`` may point at, by their model label.
_INT_TABLES = {
    CardFact._meta.label_lower: "cardfact",
    **{model._meta.label_lower: name for model, name in TYPE_OF_MODEL.items() if name != "memory"},
}


def _import_row(row: dict[str, Any], context: Context) -> Model | None:
    type_name = row["type"]
    own = Tolerance.objects.filter(workspace=context.workspace).first() if type_name == "tolerance" else None
    if own is not None:
        # A merge keeps the target's own tolerance (learned from its own reviewers); events name that row.
        if isinstance(row.get("id"), int):
            context.ids.ints.setdefault(type_name, {})[row["id"]] = own.pk
        return None
    instance = decode_row(type_name, row, context)
    changed = context.ids.changed
    old_id = row.get("id")
    model = type(instance)
    if model._meta.pk is not None and model._meta.pk.get_internal_type() == "UUIDField":
        old = str(instance.pk)
        if old in context.ids.uuids:
            raise RowError(f"{type_name} {old} appears twice in the file")
        new = uuid.uuid4() if model._default_manager.filter(pk=instance.pk).exists() else uuid.UUID(old)
        context.ids.uuids[old] = new
        instance.pk = new
        if str(new) != old:
            changed[old] = str(new)
    else:
        instance.pk = None
    if isinstance(instance, ConflictCard):
        instance.fact_set_key = ",".join(sorted(changed.get(i, i) for i in instance.fact_set_key.split(",")))
        instance.evidence = replace_ids(instance.evidence, changed)
    if isinstance(instance, Event):
        instance.changes = [_remap_change(change, context, changed) for change in instance.changes]
    instance.save_base(raw=True, force_insert=True)
    if isinstance(instance, ConflictCard):
        _import_card_facts(instance, row.get("facts", []), context)
    if isinstance(old_id, int) and not isinstance(old_id, bool):
        context.ids.ints.setdefault(type_name, {})[old_id] = instance.pk
    return instance


def _remap_change(change: Any, context: Context, changed: dict[str, str]) -> Any:
    change = replace_ids(change, changed)
    if isinstance(change, dict) and isinstance(change.get("pk"), int):
        table = _INT_TABLES.get(str(change.get("model")))
        if table is not None:
            # A row the file does not hold (a link deleted since) keeps its old number.
            change = {**change, "pk": context.ids.ints.get(table, {}).get(change["pk"], change["pk"])}
    return change


def _import_card_facts(card: ConflictCard, facts: Any, context: Context) -> None:
    if not isinstance(facts, list):
        raise RowError("card.facts must be a list of {id, memory, position}")
    for fact in facts:
        if not isinstance(fact, dict) or not isinstance(fact.get("position"), int):
            raise RowError("card.facts must be a list of {id, memory, position}")
        memory_id = context.ids.uuids.get(str(fact.get("memory")))
        if memory_id is None:
            raise RowError(f"card.facts refers to memory {fact.get('memory')}, which no earlier line holds")
        row = CardFact.objects.create(card=card, memory_id=memory_id, position=fact["position"])
        if isinstance(fact.get("id"), int):
            context.ids.ints.setdefault("cardfact", {})[fact["id"]] = row.pk


def workspace_import_facts(
    *,
    slug: str,
    facts: Iterable[PeerFact],
    importer: str,
    merge: bool = False,
    progress: Progress | None = None,
    progress_every: int = PROGRESS_EVERY,
) -> ImportReport:
    """Store facts read from another memory system's export, each with a ``memory.import`` event.

    They arrive as ``pending_embed`` (or ``forgotten`` when the peer had deleted
    them) and are embedded and checked for conflicts by the normal pipeline.
    """
    actor = Actor.system(f"import:{importer}")
    with transaction.atomic():
        workspace = _target(slug, merge=merge)
        report = ImportReport(workspace=workspace, counts={"memory": 0, "event": 0})
        waiting: list[uuid.UUID] = []
        for fact in facts:
            memory = memory_build(
                workspace=workspace,
                actor=actor,
                data=MemoryInput(
                    text=fact.text,
                    key=fact.key,
                    scope=fact.scope,
                    tags=fact.tags,
                    source=fact.source,
                    agent=fact.agent or importer,
                    valid_from=fact.valid_from,
                    metadata=fact.metadata,
                ),
            )
            memory.recorded_at = fact.recorded_at or memory.recorded_at
            if fact.forgotten_at is not None:
                memory.status = Status.FORGOTTEN
                memory.expired_at = fact.forgotten_at
            try:
                memory.full_clean(exclude=["embedding", "agent_key", "superseded_by"], validate_constraints=False)
            except ValidationError as exc:
                problems = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in exc.message_dict.items())
                raise ImportFailed(f"{fact.where}: {problems}") from exc
            memory.save(force_insert=True)
            tracker = Tracker()
            tracker.created(memory, [*CREATED_FIELDS, "metadata", "expired_at"])
            record_event(
                workspace=workspace,
                actor=actor,
                verb="memory.import",
                memory=memory,
                changes=tracker.changes,
                reason=f"imported from a {importer} export ({fact.where})",
            )
            report.counts["memory"] += 1
            report.counts["event"] += 1
            if memory.status == Status.PENDING_EMBED:
                waiting.append(memory.pk)
            if progress is not None and report.counts["memory"] % progress_every == 0:
                progress(report.counts["memory"])
        report.waiting_for_embedding = len(waiting)
        if waiting:
            transaction.on_commit(lambda: hooks.facts_waiting.announce(hooks.FactsWaiting(waiting)))
    return report
