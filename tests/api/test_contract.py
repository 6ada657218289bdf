"""The API keeps its published contract under generated input (schemathesis, against a live server).

Every operation in ``/api/openapi.json`` is called with inputs generated from its
schema — valid ones and ones the schema forbids — over HTTP against a live test
server with a real agent key. A response must never be a server error, must use
a status code the schema documents, and must match the documented body schema.
Bounded to fit CI: a fixed number of examples per operation, derandomised so a
run is repeatable.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from api.root import api
from tests.factories import WorkspaceFactory, agent_key_for

EXAMPLES_PER_OPERATION = 12
# Not "positive data acceptance": a body naming an id that is not in the workspace is valid JSON for
# the schema and still a 422 by design (docs/API.md, Errors) — the schema cannot know the workspace.
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def key_header(transactional_db: None) -> dict[str, str]:
    _, key = agent_key_for(WorkspaceFactory(slug="contract"), "fuzzer")
    return {"Authorization": f"Bearer {key}"}


# The schema the server publishes at /api/openapi.json (a test checks they are the same document).
schema = schemathesis.openapi.from_dict(api.get_openapi_schema(path_prefix="/api/"))


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_keeps_its_contract(case: Any, live_server: Any, key_header: dict[str, str]) -> None:
    case.call_and_validate(base_url=live_server.url, headers=key_header, checks=CHECKS)


def test_the_schema_checked_is_the_one_served(client: Any) -> None:
    served = client.get("/api/openapi.json").json()
    assert served == json.loads(json.dumps(api.get_openapi_schema(path_prefix="/api/")))
    # Every operation documents the errors it can answer, in the one error shape.
    responses = served["paths"]["/api/v1/memories/{memory_id}"]["get"]["responses"]
    assert {"401", "404", "413", "414", "422", "500", "503"} <= set(responses)
    assert responses["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
