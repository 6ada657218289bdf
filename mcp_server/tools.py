"""The MCP tools and resources: each one the REST operation of the same meaning, over the same services.

A tool is a name, a description written for the model that will choose it, the
request schema its arguments are validated with, the scope it needs and a
function ``(agent key, validated arguments) -> JSON object``. That function parses
nothing and decides nothing: it calls the service or selector the REST handler
calls and shapes the result with the same ``api.adapters`` and ``*Out`` schemas,
so a tool answers what the REST operation answers (lists are wrapped in an object,
which MCP's structured content must be).
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ninja import Schema
from ninja.responses import NinjaJSONEncoder
from pydantic import BaseModel

from api import adapters
from api.conflict_schemas import AnswerOut, CardOut, ConflictListQuery, SurfacedOut, SurfaceIn
from api.schemas import (
    ChainOut,
    ChangeOut,
    CheckActionIn,
    CheckActionOut,
    ContextIn,
    ContextOut,
    LinkIn,
    LinkOut,
    MemoryCreateOut,
    MemoryIn,
    MemoryOut,
    NeighborsOut,
    RecallHitOut,
    RecallIn,
)
from conflicts import selectors as conflict_selectors
from conflicts.feedback import card_answer
from conflicts.ingestion import memory_commit
from conflicts.surfacing import uncertainties_surface
from mcp_server.schemas import AnswerConflictArgs, NeighborsArgs, RestoreArgs, SupersedeArgs, UnlinkArgs
from memories import selectors, services
from memories.audit import Actor
from memoryhub.errors import ConflictError
from recall import context, hybrid, preaction
from workspaces.models import AgentKey, Scope

Args = TypeVar("Args", bound=BaseModel)


class CommitRejected(ConflictError):
    """``remember`` with ``on_conflict="raise"`` found clashes: nothing stored (REST's 409, with the clashes)."""

    def __init__(self, message: str, conflicts: list[dict[str, object]]) -> None:
        super().__init__(message)
        self.conflicts = conflicts


def rendered(schema: type[Schema], value: object) -> Any:
    """``value`` as the REST API renders it under ``schema``: the same fields, names and JSON formats."""
    return json.loads(json.dumps(schema.model_validate(value).model_dump(), cls=NinjaJSONEncoder))


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[BaseModel]
    scope: Scope
    run: Callable[[AgentKey, Any], dict[str, Any]]

    @property
    def read_only(self) -> bool:
        return self.scope == Scope.READ

    @property
    def input_schema(self) -> dict[str, Any]:
        return _input_schema(self.arguments)


@functools.cache
def _input_schema(arguments: type[BaseModel]) -> dict[str, Any]:
    # Generating a JSON Schema takes pydantic milliseconds; the SDK asks for it on every call (below).
    return arguments.model_json_schema()


def _actor(key: AgentKey) -> Actor:
    return Actor.for_agent(key)


def remember(key: AgentKey, args: MemoryIn) -> dict[str, Any]:
    result = memory_commit(
        workspace=key.workspace,
        actor=_actor(key),
        data=adapters.memory_input(args, key=key),
        on_conflict=args.on_conflict,
    )
    if result.action == "rejected":
        raise CommitRejected(result.refusal(), [adapters.finding_out(f) for f in result.findings])
    out: dict[str, Any] = rendered(MemoryCreateOut, adapters.commit_out(result))
    return out


def recall(key: AgentKey, args: RecallIn) -> dict[str, Any]:
    hits = hybrid.recall(workspace=key.workspace, query=adapters.recall_query(args))
    return {"hits": [rendered(RecallHitOut, adapters.hit_out(hit)) for hit in hits]}


def assemble_context(key: AgentKey, args: ContextIn) -> dict[str, Any]:
    result = context.context_assemble(workspace=key.workspace, request=adapters.context_request(args))
    out: dict[str, Any] = rendered(ContextOut, adapters.context_out(result))
    return out


def check_action(key: AgentKey, args: CheckActionIn) -> dict[str, Any]:
    checks = preaction.check_action(workspace=key.workspace, memory_ids=args.memory_ids)
    out: dict[str, Any] = rendered(CheckActionOut, adapters.check_action_out(checks))
    return out


def find_conflicts(key: AgentKey, args: ConflictListQuery) -> dict[str, Any]:
    cards = conflict_selectors.cards_list(workspace=key.workspace, state=args.state, kind=args.kind)
    page = cards[args.offset : args.offset + args.limit]
    return {"cards": [rendered(CardOut, adapters.card_out(card)) for card in page]}


def answer_conflict(key: AgentKey, args: AnswerConflictArgs) -> dict[str, Any]:
    card = conflict_selectors.card_get(workspace=key.workspace, card_id=args.card_id)
    result = card_answer(
        card=card, choice=args.answer, actor=_actor(key), current_memory=args.current_fact, note=args.note
    )
    fresh = conflict_selectors.card_get(workspace=key.workspace, card_id=args.card_id)
    out: dict[str, Any] = rendered(
        AnswerOut,
        {
            "card": adapters.card_out(fresh),
            "answer": result.answer.choice,
            "current_fact": result.answer.current_memory_id,
            "event": result.event.pk,
        },
    )
    return out


def supersede(key: AgentKey, args: SupersedeArgs) -> dict[str, Any]:
    old = selectors.memory_get(workspace=key.workspace, memory_id=args.memory_id)
    new = selectors.memory_referenced(workspace=key.workspace, memory_id=args.by, field="by")
    changed = services.memory_supersede(old=old, new=new, actor=_actor(key), reason=args.reason)
    old.refresh_from_db()
    out: dict[str, Any] = rendered(ChangeOut, {"changed": changed, "memory": old})
    return out


def restore(key: AgentKey, args: RestoreArgs) -> dict[str, Any]:
    memory = selectors.memory_get(workspace=key.workspace, memory_id=args.memory_id)
    changed = services.memory_restore(memory=memory, actor=_actor(key), reason=args.reason)
    memory.refresh_from_db()
    out: dict[str, Any] = rendered(ChangeOut, {"changed": changed, "memory": memory})
    return out


def link(key: AgentKey, args: LinkIn) -> dict[str, Any]:
    src = selectors.memory_referenced(workspace=key.workspace, memory_id=args.src, field="src")
    dst = selectors.memory_referenced(workspace=key.workspace, memory_id=args.dst, field="dst")
    created_link, created = services.link_create(src=src, dst=dst, rel=args.rel, weight=args.weight, actor=_actor(key))
    return {"created": created, "link": rendered(LinkOut, created_link)}


def unlink(key: AgentKey, args: UnlinkArgs) -> dict[str, Any]:
    found = selectors.link_get(workspace=key.workspace, link_id=args.link_id)
    services.link_delete(link=found, actor=_actor(key))
    return {"deleted": True, "link_id": args.link_id}


def neighbors(key: AgentKey, args: NeighborsArgs) -> dict[str, Any]:
    memory = selectors.memory_get(workspace=key.workspace, memory_id=args.memory_id)
    hood = selectors.memory_neighbors(memory=memory, rels=args.rel, direction=args.direction, depth=args.depth)
    out: dict[str, Any] = rendered(
        NeighborsOut, {"memory_id": memory.pk, "neighbors": hood.neighbors, "dangling": hood.dangling}
    )
    return out


def surface_uncertainties(key: AgentKey, args: SurfaceIn) -> dict[str, Any]:
    surfaced = uncertainties_surface(workspace=key.workspace, topic=args.topic, actor=_actor(key), limit=args.limit)
    return {"surfaced": [rendered(SurfacedOut, adapters.surfaced_out(s)) for s in surfaced]}


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in [
        ToolSpec(
            "remember",
            "Store a fact in the workspace's shared memory, which other agents and people read too. "
            "Write one self-contained fact per call ('The user lives in Lisbon', not 'he moved there'); "
            "give `key` for slot-like facts (home_city, deploy_tool) so that changes to them are tracked. "
            "`on_conflict` says what to do when the fact clashes with what is already known: "
            "'ignore' (default) stores it at once and checks in the background — clashes then show up in "
            "find_conflicts; 'warn' checks first and stores it anyway, listing the clashes; 'supersede' "
            "checks and makes the new fact replace the ones it clashes with (use it when the user tells you "
            "something changed); 'raise' refuses to store a clashing fact (an error listing the clashes).",
            MemoryIn,
            Scope.WRITE,
            remember,
        ),
        ToolSpec(
            "recall",
            "Search the shared memory for facts relevant to a question or topic (semantic and keyword ranking, "
            "current facts only unless include_superseded). Hits come best first. Before relying on a hit, look "
            "at `disputed` (an open conflict about it), `reliability` and `contradicted_by`; when a hit is "
            "disputed, ask the user or call check_action rather than acting on it.",
            RecallIn,
            Scope.READ,
            recall,
        ),
        ToolSpec(
            "context",
            "Assemble what memory should be in mind for the next turn: give the recent conversation (and tool "
            "results) and a token budget; get the relevant facts and episodes that fit, with what was dropped.",
            ContextIn,
            Scope.READ,
            assemble_context,
        ),
        ToolSpec(
            "check_action",
            "Before acting on remembered facts (sending, booking, paying, deploying), pass their memory ids: "
            "each comes back with `proceed`, and where it is disputed, superseded or unreliable a warning and "
            "a clarifying question to ask the user first. `proceed` at the top is true only if all may be used.",
            CheckActionIn,
            Scope.READ,
            check_action,
        ),
        ToolSpec(
            "find_conflicts",
            "List conflict cards: pairs of memories that contradict each other, each with a yes/no question for "
            "a person and the facts involved, newest first. Pass state='open' for the ones still awaiting an "
            "answer. Facts in an open card are disputed: do not state them as settled.",
            ConflictListQuery,
            Scope.READ,
            find_conflicts,
        ),
        ToolSpec(
            "answer_conflict",
            "Answer a conflict card's question (only keys with the 'answer' scope): 'yes' the asked fact still "
            "holds; 'no' it changed — superseded by `current_fact` or the newest other fact (forgotten instead "
            "when the note says it was never true); 'both' it is not a conflict; 'skip' ask later. "
            "An error if the card was already answered.",
            AnswerConflictArgs,
            Scope.ANSWER,
            answer_conflict,
        ),
        ToolSpec(
            "supersede",
            "Mark a memory as no longer current because another memory (`by`, remember it first) replaces it. "
            "The old one stays in the history ('used to …') and can be restored.",
            SupersedeArgs,
            Scope.WRITE,
            supersede,
        ),
        ToolSpec(
            "restore",
            "Undo a supersede or a forget: the memory becomes current again.",
            RestoreArgs,
            Scope.WRITE,
            restore,
        ),
        ToolSpec(
            "link",
            "Link two memories with a typed relation (refines, derived_from, example_of, related, … or a custom "
            "'x-name'), so that recall can expand from one to the other. Linking the same pair twice keeps one link.",
            LinkIn,
            Scope.WRITE,
            link,
        ),
        ToolSpec(
            "unlink",
            "Remove a link between two memories by its id.",
            UnlinkArgs,
            Scope.WRITE,
            unlink,
        ),
        ToolSpec(
            "neighbors",
            "The memories linked to one memory, up to `depth` hops, optionally only some relations or one direction.",
            NeighborsArgs,
            Scope.READ,
            neighbors,
        ),
        ToolSpec(
            "surface_uncertainties",
            "Open disputes worth raising with the user about a topic, each with a clarifying question. Each one "
            "returned is counted as raised; after three times it stops coming back, so ask when you get one.",
            SurfaceIn,
            Scope.READ,
            surface_uncertainties,
        ),
    ]
}


# Resources: a memory, and its supersede chain (oldest first, the current one last).
MEMORY_URI = "memoryhub://memories/{memory_id}"
CHAIN_URI = "memoryhub://memories/{memory_id}/chain"
_MEMORY_PREFIX = "memoryhub://memories/"


@dataclass(frozen=True)
class ResourceRead:
    """What a resource URI names: a memory, or its chain."""

    memory_id: str
    chain: bool


def resource_parse(uri: str) -> ResourceRead | None:
    if not uri.startswith(_MEMORY_PREFIX):
        return None
    rest = uri.removeprefix(_MEMORY_PREFIX)
    memory_id, _, tail = rest.partition("/")
    if tail not in ("", "chain") or not memory_id:
        return None
    return ResourceRead(memory_id=memory_id, chain=tail == "chain")


def resource_read(key: AgentKey, what: ResourceRead) -> dict[str, Any]:
    try:
        memory_id = uuid.UUID(what.memory_id)
    except ValueError:
        memory_id = uuid.UUID(int=0)  # no memory has it: answered like any unknown id
    memory = selectors.memory_get(workspace=key.workspace, memory_id=memory_id)
    if what.chain:
        chain = selectors.memory_chain(memory=memory)
        out: dict[str, Any] = rendered(ChainOut, {"head": chain[-1].pk, "chain": chain})
        return out
    memory_out: dict[str, Any] = rendered(MemoryOut, memory)
    return memory_out
