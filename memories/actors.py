"""Who caused a change (kept apart from the audit helpers so that ``hooks`` can name it without a cycle)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memories.models import ActorType

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from workspaces.models import AgentKey


@dataclass(frozen=True)
class Actor:
    """Who caused a change: an agent (by key), a person, or a system job."""

    type: ActorType
    name: str
    agent_key: AgentKey | None = None
    user: User | None = None

    @classmethod
    def for_agent(cls, key: AgentKey) -> Actor:
        return cls(type=ActorType.AGENT, name=key.name, agent_key=key)

    @classmethod
    def for_user(cls, user: User) -> Actor:
        return cls(type=ActorType.USER, name=user.get_username(), user=user)

    @classmethod
    def system(cls, job: str) -> Actor:
        return cls(type=ActorType.SYSTEM, name=job)
