"""The root REST API: one router per concern under /api/v1, one error format.

Every error is ``{"detail": …, "code": …}``: ``code`` is stable
(``memoryhub.errors.ERROR_CODES``: ``invalid``, ``not_found``, ``conflict``,
``database_unavailable`` …); ``detail`` is a list of ``{loc, msg, type}`` for 422
(so the offending field is named) and a sentence otherwise. Errors before a route
is found (unknown paths, bodies too large to read, long URLs) take the same shape
in ``memoryhub/error_views.py``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Swagger
from ninja.errors import HttpError, ValidationError

from api.conflicts import router as conflicts_router
from api.memories import router as memories_router
from api.portability import router as portability_router
from api.recall import router as recall_router
from memoryhub.error_views import DATABASE_DOWN, database_unavailable
from memoryhub.errors import ERROR_CODES, DomainError, InvalidInput, error_code

logger = logging.getLogger(__name__)

ERROR_SCHEMA = {
    "title": "Error",
    "type": "object",
    "properties": {
        "detail": {
            "anyOf": [
                {"type": "string"},
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
                            "msg": {"type": "string"},
                            "type": {"type": "string"},
                        },
                        "required": ["loc", "msg", "type"],
                    },
                },
            ],
            "description": "for people: a sentence, or for 422 each offending field with the reason",
        },
        "code": {"type": "string", "enum": sorted({*ERROR_CODES.values(), "database_unavailable"})},
    },
    "required": ["detail", "code"],
}
# What any operation may answer besides its own responses (docs/API.md, Errors).
COMMON_ERRORS = {
    401: "missing, unknown or revoked agent key",
    403: "the key lacks the operation's scope",
    413: "body over the size limit",
    414: "request target too long",
    422: "invalid input; `detail` names each offending field",
    429: "the key's rate for this minute is spent; see `Retry-After`",
    500: "a defect (logged)",
    503: "the database does not answer, or a check could not finish in time; see `Retry-After`",
}


class MemoryHubAPI(NinjaAPI):
    """The API, with the error responses every operation can give written into its OpenAPI schema."""

    def get_openapi_schema(self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None) -> Any:
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        schema.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        for path, operations in schema["paths"].items():
            for method, operation in operations.items():
                errors = dict(COMMON_ERRORS)
                if "{" in path:
                    errors[404] = "no such id in the key's workspace"
                if method in ("post", "delete"):
                    errors[409] = "the request clashes with the current state"
                responses = operation.setdefault("responses", {})
                for status, description in errors.items():
                    responses.setdefault(str(status), {"description": description, "content": error})
        return schema


class DashboardSwagger(Swagger):
    """django-ninja's Swagger UI in a page with the dashboard's header and a link back to it."""

    template = "api/swagger.html"


api = MemoryHubAPI(
    title="MemoryHub",
    version="1",
    description="Shared, self-correcting memory for AI agents. Authenticate with `Authorization: Bearer <agent key>`.",
    urls_namespace="api",
    docs_url="/docs",
    docs=DashboardSwagger(),
    openapi_url="/openapi.json",
)
api.add_router("/v1", memories_router)
api.add_router("/v1", recall_router)
api.add_router("/v1", conflicts_router)
api.add_router("/v1", portability_router)


def _error(request: HttpRequest, status: int, detail: object, *, code: str | None = None) -> HttpResponse:
    return api.create_response(request, {"detail": detail, "code": code or error_code(status)}, status=status)


def _invalid(request: HttpRequest, loc: list[str], msg: str, kind: str) -> HttpResponse:
    return _error(request, 422, [{"loc": loc, "msg": msg, "type": kind}])


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    if isinstance(exc, InvalidInput):
        return _invalid(request, ["body", exc.field] if exc.field else ["body"], exc.message, "value_error")
    response = _error(request, exc.status_code, exc.message)
    if exc.retry_after_seconds is not None:
        response["Retry-After"] = str(exc.retry_after_seconds)
    return response


@api.exception_handler(ValidationError)
def validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return _error(request, 422, exc.errors)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja reports an unreadable body as a bare 400; agents get the same 422 shape as for any bad field.
    cause = exc.__cause__
    if exc.status_code == 400 and isinstance(cause, json.JSONDecodeError):
        msg = f"malformed JSON: {cause.msg} at line {cause.lineno} column {cause.colno}"
        return _invalid(request, ["body"], msg, "json_invalid")
    if exc.status_code == 400 and isinstance(cause, UnicodeDecodeError):
        return _invalid(
            request, ["body"], f"the body is not UTF-8: {cause.reason} at byte {cause.start}", "json_invalid"
        )
    if exc.status_code == 400 and isinstance(cause, RecursionError):
        return _invalid(request, ["body"], "the JSON body nests too deeply", "json_invalid")
    return _error(request, exc.status_code, str(exc))


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, 404, "Not Found")


@api.exception_handler(RequestDataTooBig)
def too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return _error(request, 413, f"the request body is too large: {exc}")


@api.exception_handler(Exception)
def unexpected(request: HttpRequest, exc: Exception) -> HttpResponse:
    if isinstance(exc, DATABASE_DOWN):
        logger.warning("database unavailable for %s: %s", request.path, exc)
        return database_unavailable(request)
    # A defect: logged with its traceback; the agent still gets the API's shape, not an HTML page.
    logger.error("unhandled error on %s", request.path, exc_info=exc)
    return _error(request, 500, "the server failed to answer; the error was logged")
