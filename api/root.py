"""The root REST API: one router per app under /api/v1, one error format.

Errors always carry ``detail``: a list of ``{loc, msg, type}`` for 422 (so the
offending field is named), a sentence otherwise.
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError

from api.conflicts import router as conflicts_router
from api.memories import router as memories_router
from api.recall import router as recall_router
from memoryhub.errors import DomainError, InvalidInput

api = NinjaAPI(
    title="MemoryHub",
    version="1",
    description="Shared, self-correcting memory for AI agents. Authenticate with `Authorization: Bearer <agent key>`.",
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
)
api.add_router("/v1", memories_router)
api.add_router("/v1", recall_router)
api.add_router("/v1", conflicts_router)


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    if isinstance(exc, InvalidInput):
        loc = ["body", exc.field] if exc.field else ["body"]
        detail: object = [{"loc": loc, "msg": exc.message, "type": "value_error"}]
    else:
        detail = exc.message
    response = api.create_response(request, {"detail": detail}, status=exc.status_code)
    if exc.retry_after_seconds is not None:
        response["Retry-After"] = str(exc.retry_after_seconds)
    return response


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja reports an unparsable body as a bare 400; agents get the same 422 shape as for any bad field.
    if exc.status_code == 400 and isinstance(exc.__cause__, json.JSONDecodeError):
        msg = f"malformed JSON: {exc.__cause__.msg} at line {exc.__cause__.lineno} column {exc.__cause__.colno}"
        return api.create_response(
            request, {"detail": [{"loc": ["body"], "msg": msg, "type": "json_invalid"}]}, status=422
        )
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)
