"""Context assembly for an agent's next turn, within a token budget.

Order of claim on the budget: recent messages (newest first), then explicit tool
results (privileged: the agent asked for them), then memories streamed from
the last two turns — facts and episodes — which fill what is left and are
dropped, whole, when they do not fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memories.embeddings import embed_text
from memories.models import Kind
from recall.hybrid import Hit, RecallQuery, recall
from recall.tokens import count_tokens
from workspaces.models import Workspace

# Passive context is stricter than an explicit recall (0.3): it is not asked for.
PASSIVE_MIN_CONFIDENCE = 0.5
QUERY_TURNS = 2


@dataclass
class Message:
    role: str
    content: str


@dataclass
class ContextRequest:
    recent_messages: list[Message]
    tool_results: list[str] = field(default_factory=list)
    budget_tokens: int = 1500
    facts: int = 5
    episodes: int = 5
    scope: str | None = None


T = TypeVar("T")


@dataclass
class Included(Generic[T]):
    item: T
    tokens: int


@dataclass
class Context:
    query: str
    budget_tokens: int
    used_tokens: int
    messages: list[Included[Message]]
    tool_results: list[Included[str]]
    memories: list[Included[Hit]]
    dropped_messages: int
    dropped_tool_results: int
    dropped_memories: int


def context_assemble(*, workspace: Workspace, request: ContextRequest) -> Context:
    budget = request.budget_tokens
    messages = request.recent_messages
    # The last turns, not the input the agent is about to answer, steer the search.
    query = "\n".join(m.content for m in messages[-QUERY_TURNS:]).strip()

    kept_messages: list[Included[Message]] = []
    for message, tokens in reversed(list(zip(messages, count_tokens([m.content for m in messages]), strict=True))):
        if tokens > budget:
            break
        kept_messages.insert(0, Included(message, tokens))
        budget -= tokens

    kept_tools: list[Included[str]] = []
    for result, tokens in zip(request.tool_results, count_tokens(request.tool_results), strict=True):
        if tokens <= budget:
            kept_tools.append(Included(result, tokens))
            budget -= tokens

    streamed = _streamed(workspace, request, query) if query and budget > 0 else []
    kept_memories: list[Included[Hit]] = []
    for hit, tokens in zip(streamed, count_tokens([h.memory.text for h in streamed]), strict=True):
        if tokens > budget:
            break
        kept_memories.append(Included(hit, tokens))
        budget -= tokens

    return Context(
        query=query,
        budget_tokens=request.budget_tokens,
        used_tokens=request.budget_tokens - budget,
        messages=kept_messages,
        tool_results=kept_tools,
        memories=kept_memories,
        dropped_messages=len(messages) - len(kept_messages),
        dropped_tool_results=len(request.tool_results) - len(kept_tools),
        dropped_memories=len(streamed) - len(kept_memories),
    )


def _streamed(workspace: Workspace, request: ContextRequest, query: str) -> list[Hit]:
    vector = embed_text(query)
    hits: list[Hit] = []
    episode_kinds = [Kind.EPISODE.value]
    fact_kinds = [k.value for k in Kind if k != Kind.EPISODE]
    for kinds, k in ((fact_kinds, request.facts), (episode_kinds, request.episodes)):
        if k <= 0:
            continue
        hits += recall(
            workspace=workspace,
            query=RecallQuery(
                query=query, k=k, kinds=kinds, scope=request.scope, min_confidence=PASSIVE_MIN_CONFIDENCE
            ),
            query_vector=vector,
        )
    hits.sort(key=lambda h: -h.score)
    return hits
