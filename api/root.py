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

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import HttpError, ValidationError

from api.conflicts import router as conflicts_router
from api.memories import router as memories_router
from api.recall import router as recall_router
from memoryhub.error_views import DATABASE_DOWN, database_unavailable
from memoryhub.errors import DomainError, InvalidInput, TryAgainLater, error_code

logger = logging.getLogger(__name__)

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


def _error(request: HttpRequest, status: int, detail: object, *, code: str | None = None) -> HttpResponse:
    return api.create_response(request, {"detail": detail, "code": code or error_code(status)}, status=status)


def _invalid(request: HttpRequest, loc: list[str], msg: str, kind: str) -> HttpResponse:
    return _error(request, 422, [{"loc": loc, "msg": msg, "type": kind}])


@api.exception_handler(DomainError)
def domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    if isinstance(exc, InvalidInput):
        return _invalid(request, ["body", exc.field] if exc.field else ["body"], exc.message, "value_error")
    response = _error(request, exc.status_code, exc.message)
    if isinstance(exc, TryAgainLater):
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
