"""A failed tool call as the REST API would have answered it: ``{detail, code}`` in an MCP tool error.

The body is the one ``api.root`` renders for the same failure — the same
``code`` (``memoryhub.errors.ERROR_CODES``) and the same ``detail`` sentence, or
for invalid input a list of ``{loc, msg, type}`` whose ``loc`` starts with
``"arguments"`` where REST's starts with ``"body"``. It travels as the tool
result's text (JSON) and structured content, with ``isError`` set, so the model
reads why and can correct its call.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from mcp_server.tools import CommitRejected
from memoryhub.error_views import DATABASE_DOWN, DATABASE_DOWN_DETAIL, OUTAGE_RETRY_AFTER
from memoryhub.errors import DomainError, InvalidInput, error_code

logger = logging.getLogger(__name__)

# What the REST API answers for a missing, unknown or revoked key (django-ninja's 401).
UNAUTHORIZED_DETAIL = "Unauthorized"


def unauthorized_body() -> dict[str, Any]:
    return {"detail": UNAUTHORIZED_DETAIL, "code": error_code(401)}


def error_body(exc: Exception, *, operation: str) -> dict[str, Any]:
    """``exc``, raised while serving ``operation``, as the API's error body."""
    if isinstance(exc, CommitRejected):
        return {"detail": exc.message, "code": error_code(409), "conflicts": exc.conflicts}
    if isinstance(exc, InvalidInput):
        loc = ["arguments", exc.field] if exc.field else ["arguments"]
        return {"detail": [{"loc": loc, "msg": exc.message, "type": "value_error"}], "code": error_code(422)}
    if isinstance(exc, DomainError):
        body: dict[str, Any] = {"detail": exc.message, "code": error_code(exc.status_code)}
        if exc.retry_after_seconds is not None:
            body["retry_after_seconds"] = exc.retry_after_seconds
        return body
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        detail = [{"loc": ["arguments", *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in errors]
        return {"detail": detail, "code": error_code(422)}
    if isinstance(exc, DATABASE_DOWN):
        logger.warning("database unavailable for MCP %s: %s", operation, exc)
        return {
            "detail": DATABASE_DOWN_DETAIL,
            "code": "database_unavailable",
            "retry_after_seconds": OUTAGE_RETRY_AFTER,
        }
    # A defect: logged with its traceback; the agent still gets the API's shape.
    logger.error("unhandled error in MCP %s", operation, exc_info=exc)
    return {"detail": "the server failed to answer; the error was logged", "code": error_code(500)}


def tool_error(body: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(body))], structured_content=body, is_error=True
    )
