"""The client stays in step with the API: every operation has a method, every answer a matching model.

The client is its own package and never imports the server, so its dataclasses mirror the response
schemas by hand; these tests read the server's OpenAPI document and fail when either side moves
without the other (a field added to a schema, an endpoint added to a router).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
from memoryhub_client import AsyncMemoryHub, MemoryHub, models

from api.root import api

# Each client model and the response schema it mirrors.
MIRRORS = {
    models.Memory: "MemoryOut",
    models.Conflict: "ConflictOut",
    models.CommitResult: "MemoryCreateOut",
    models.BatchItem: "BatchItemOut",
    models.BatchResult: "BatchOut",
    models.MemoryPage: "MemoryPage",
    models.Change: "ChangeOut",
    models.Link: "LinkOut",
    models.Subgraph: "SubgraphOut",
    models.Neighbor: "NeighborOut",
    models.Neighbors: "NeighborsOut",
    models.Chain: "ChainOut",
    models.ScoreParts: "ScorePartsOut",
    models.MemoryRef: "MemoryRefOut",
    models.RecallHit: "RecallHitOut",
    models.IncludedMessage: "IncludedMessageOut",
    models.IncludedText: "IncludedTextOut",
    models.IncludedMemory: "IncludedMemoryOut",
    models.Dropped: "DroppedOut",
    models.Context: "ContextOut",
    models.ActionCheck: "ActionCheckOut",
    models.CheckActionResult: "CheckActionOut",
    models.Card: "CardOut",
    models.AnswerResult: "AnswerOut",
    models.Uncertainty: "UncertaintyOut",
    models.SurfacedUncertainty: "SurfacedOut",
    models.FoundConflict: "FoundConflictOut",
    models.DetectiveRun: "DetectiveRunOut",
    models.Event: "EventOut",
    models.Backlog: "BacklogOut",
    models.BrokerDepth: "BrokerOut",
    models.LLMTier: "LLMTierOut",
    models.PipelineStatus: "StatusOut",
}

# Each API operation and the client method that calls it.
OPERATIONS = {
    ("POST", "/api/v1/memories"): "remember",
    ("GET", "/api/v1/memories"): "list_memories",
    ("POST", "/api/v1/memories/batch"): "remember_batch",
    ("GET", "/api/v1/memories/{memory_id}"): "get_memory",
    ("DELETE", "/api/v1/memories/{memory_id}"): "forget",
    ("POST", "/api/v1/memories/{memory_id}/supersede"): "supersede",
    ("POST", "/api/v1/memories/{memory_id}/restore"): "restore",
    ("POST", "/api/v1/memories/{memory_id}/reinforce"): "reinforce",
    ("POST", "/api/v1/memories/{memory_id}/subject"): "correct_subject",
    ("GET", "/api/v1/memories/{memory_id}/chain"): "chain",
    ("GET", "/api/v1/memories/{memory_id}/neighbors"): "neighbors",
    ("POST", "/api/v1/subgraph"): "subgraph",
    ("POST", "/api/v1/links"): "link",
    ("DELETE", "/api/v1/links/{link_id}"): "unlink",
    ("GET", "/api/v1/status"): "status",
    ("POST", "/api/v1/recall"): "recall",
    ("POST", "/api/v1/context"): "context",
    ("POST", "/api/v1/check-action"): "check_action",
    ("GET", "/api/v1/conflicts"): "conflicts",
    ("GET", "/api/v1/conflicts/{card_id}"): "get_conflict",
    ("POST", "/api/v1/conflicts/{card_id}/answer"): "answer_conflict",
    ("GET", "/api/v1/uncertainties"): "uncertainties",
    ("POST", "/api/v1/uncertainties/surface"): "surface_uncertainties",
    ("GET", "/api/v1/events"): "events",
    ("POST", "/api/v1/events/{event_id}/undo"): "undo_event",
    ("POST", "/api/v1/detective/run"): "run_detective",
    ("GET", "/api/v1/detective/runs"): "detective_runs",
    ("GET", "/api/v1/find-conflicts"): "find_conflicts",
}

# Whole-workspace archives are files for an operator (``manage.py export`` / ``import`` write and read
# the same format), not calls an agent makes between turns.
NOT_IN_THE_CLIENT = {("GET", "/api/v1/export"), ("POST", "/api/v1/import")}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    document: dict[str, Any] = api.get_openapi_schema()
    return document


def test_every_api_operation_has_a_client_method_in_both_clients(spec: dict[str, Any]) -> None:
    served = {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}

    assert served - NOT_IN_THE_CLIENT == set(OPERATIONS), "an endpoint was added or removed: update the client"
    for name in OPERATIONS.values():
        assert callable(getattr(MemoryHub, name, None)), f"MemoryHub lacks {name}"
        assert inspect.iscoroutinefunction(getattr(AsyncMemoryHub, name, None)), f"AsyncMemoryHub lacks {name}"


def test_every_response_model_has_exactly_its_schemas_fields(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    drift = {}
    for model, schema in MIRRORS.items():
        client_fields = {field.name for field in dataclasses.fields(model)}
        server_fields = set(schemas[schema].get("properties", {}))
        if client_fields != server_fields:
            drift[model.__name__] = {
                "client only": client_fields - server_fields,
                "server only": server_fields - client_fields,
            }

    assert drift == {}


def test_every_client_model_mirrors_a_schema() -> None:
    declared = {obj for obj in vars(models).values() if isinstance(obj, type) and dataclasses.is_dataclass(obj)}

    assert declared == set(MIRRORS)
