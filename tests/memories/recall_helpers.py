from __future__ import annotations

import datetime as dt
from typing import Any

from memories.audit import Actor
from memories.models import Memory
from memories.services import MemoryInput, memories_embed_pending, memory_create
from workspaces.models import Workspace


def remember(workspace: Workspace, text: str, **fields: Any) -> Memory:
    """Create a memory through the service and embed it with the real model."""
    memory = memory_create(workspace=workspace, actor=Actor.system("test"), data=MemoryInput(text=text, **fields))
    memories_embed_pending(first_id=memory.pk, limit=1)
    memory.refresh_from_db()
    return memory


def day(month: int, day_of_month: int = 1) -> dt.datetime:
    return dt.datetime(2026, month, day_of_month, 9, 0, tzinfo=dt.UTC)
