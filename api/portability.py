"""Export and import of the key's whole workspace (/api/v1/export, /api/v1/import; admin scope).

The same services as ``manage.py export_workspace`` / ``import_workspace``
(docs/PORTABILITY.md): the export streams JSON Lines as it reads them, the import
takes the file as the request body and writes it in one transaction.
"""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router, Schema, Status

from memoryhub.errors import InvalidInput
from portability.peers import detect_format, peer_facts
from portability.selectors import workspace_export_lines
from portability.services import workspace_import, workspace_import_facts
from workspaces.auth import AgentKeyAuth, request_agent_key
from workspaces.models import Scope

router = Router(auth=AgentKeyAuth(Scope.ADMIN), tags=["portability"])


class ImportOut(Schema):
    workspace: str
    format: str
    counts: dict[str, int]
    renamed_ids: int
    waiting_for_embedding: int


@router.get(
    "/export",
    summary="The workspace as JSON Lines (admin scope)",
    response={200: None},
    openapi_extra={"responses": {200: {"description": "application/x-ndjson, one row per line"}}},
)
def export_workspace(request: HttpRequest) -> StreamingHttpResponse:
    workspace = request_agent_key(request).workspace
    response = StreamingHttpResponse(workspace_export_lines(workspace), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{workspace.slug}.jsonl"'
    return response


@router.post("/import", response={201: ImportOut}, summary="Import a file into the workspace (admin scope)")
def import_workspace(
    request: HttpRequest, merge: bool = False, format: Literal["auto", "memoryhub", "mem0", "engram"] = "auto"
) -> Status[ImportOut]:
    """The body is the file itself: an export of this format, or a mem0 or Engram export.

    All or nothing; refused (422, naming the line) when the workspace already
    holds memories or events and ``merge`` is false.
    """
    workspace = request_agent_key(request).workspace
    try:
        text = request.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"the body is not UTF-8 text ({exc})") from exc
    format_name = detect_format(text) if format == "auto" else format
    if format_name == "memoryhub":
        report = workspace_import(slug=workspace.slug, lines=text.split("\n"), merge=merge)
    else:
        report = workspace_import_facts(
            slug=workspace.slug, facts=peer_facts(format_name, text), importer=format_name, merge=merge
        )
    return Status(
        201,
        ImportOut(
            workspace=workspace.slug,
            format=format_name,
            counts=report.counts,
            renamed_ids=report.renamed_ids,
            waiting_for_embedding=report.waiting_for_embedding,
        ),
    )
