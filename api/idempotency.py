"""``Idempotency-Key`` on the API's writes: ``@idempotent`` under the router's decorator.

The claim is taken once the request is authenticated and its body validated
(the operation's view function), so neither a 401 nor a malformed body uses a
key up; the answer is stored once ninja has rendered it (around the operation's
``run``), so a retry replays the same status and the same bytes. Answers of 500
and above, and 503's "send it again", are not stored: the key is released and
the retry runs afresh. The records live in ``workspaces.idempotency``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from ninja.decorators import decorate_view
from ninja.operation import Operation
from ninja.utils import contribute_operation_callback

from workspaces.auth import request_agent_key
from workspaces.idempotency import StoredResponse, idempotency_claim, idempotency_complete, idempotency_release
from workspaces.models import IdempotencyRecord

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
_CLAIM_ATTR = "_memoryhub_idempotency_claim"

Handler = TypeVar("Handler", bound=Callable[..., Any])


def idempotent(handler: Handler) -> Handler:
    """Make a write operation honour ``Idempotency-Key``; apply it below ``@router.post``."""
    contribute_operation_callback(handler, _claim_before_the_view)
    return decorate_view(_store_the_answer)(handler)


def fingerprint(request: HttpRequest) -> str:
    """What makes two requests the same: method, path and body (JSON compared by value, not by spacing)."""
    body = request.body
    with contextlib.suppress(ValueError):
        body = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    digest = hashlib.sha256()
    for part in (request.method.encode() if request.method else b"", request.path.encode(), body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def _claim_before_the_view(operation: Operation) -> None:
    view = operation.view_func

    # wraps: the OpenAPI operation id is taken from the view's name and module.
    @functools.wraps(view)
    def claimed_view(request: HttpRequest, **values: Any) -> Any:
        key = request.headers.get(HEADER)
        if key is None:
            return view(request, **values)
        claim = idempotency_claim(agent_key=request_agent_key(request), key=key, fingerprint=fingerprint(request))
        if claim.replay is not None:
            replay = HttpResponse(
                claim.replay.body, status=claim.replay.status_code, content_type=claim.replay.content_type or None
            )
            replay[REPLAYED_HEADER] = "true"
            return replay
        setattr(request, _CLAIM_ATTR, claim.record)
        return view(request, **values)

    operation.view_func = claimed_view


def _store_the_answer(run: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    def run_and_store(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            response = run(request, *args, **kwargs)
        except BaseException:
            record = _pop_claim(request)
            if record is not None:
                idempotency_release(record=record)
            raise
        record = _pop_claim(request)
        if record is not None:
            if response.status_code >= 500 or not isinstance(response, HttpResponse):
                idempotency_release(record=record)
            else:
                idempotency_complete(
                    record=record,
                    response=StoredResponse(
                        status_code=response.status_code,
                        body=response.content.decode(response.charset or "utf-8"),
                        content_type=response.get("Content-Type", ""),
                    ),
                )
        return response

    return run_and_store


def _pop_claim(request: HttpRequest) -> IdempotencyRecord | None:
    record = getattr(request, _CLAIM_ATTR, None)
    if record is not None:
        delattr(request, _CLAIM_ATTR)
    return record if isinstance(record, IdempotencyRecord) else None
