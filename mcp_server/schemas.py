"""Tool arguments: the REST API's request schemas, plus the id that REST carries in the URL.

Each tool's input schema is the JSON Schema of one of these models, and a call's
arguments are validated by it: the same fields, bounds and messages as the
matching REST operation (``api.schemas``), nothing re-stated.
"""

from __future__ import annotations

import uuid

from ninja import Field

from api.conflict_schemas import AnswerIn
from api.schemas import InputSchema, NeighborsQuery, ReasonIn, SupersedeIn


class MemoryIdArgs(InputSchema):
    memory_id: uuid.UUID = Field(description="The memory's id (as returned by remember or recall)")


class SupersedeArgs(SupersedeIn):
    memory_id: uuid.UUID = Field(description="The memory that is no longer current")


class RestoreArgs(ReasonIn):
    memory_id: uuid.UUID = Field(description="The superseded or forgotten memory to make current again")


class NeighborsArgs(NeighborsQuery):
    memory_id: uuid.UUID = Field(description="The memory whose linked memories to list")


class UnlinkArgs(InputSchema):
    link_id: int = Field(ge=1, le=2**63 - 1, description="The link's id (as returned by link or neighbors)")


class AnswerConflictArgs(AnswerIn):
    card_id: uuid.UUID = Field(description="The conflict card's id (from find_conflicts)")
