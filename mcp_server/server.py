"""The MCP server: MemoryHub's tools and resources on the official SDK's low-level ``Server``.

The low-level server, not ``MCPServer`` (the SDK's decorator API, formerly
FastMCP): ``MCPServer`` derives each tool's schema from a Python signature, which
would restate every field of the REST API's request schemas; here a tool's input
schema *is* that request schema's JSON Schema, and its arguments are validated by
it (``mcp_server.tools``). One server serves both transports; they differ only in
how a call finds its agent key (``key_for``): from the HTTP request the bearer
gate authenticated (``mcp_server.http``), or the key ``manage.py mcp`` was started
with (stdio).

Every call runs the service code in a worker thread (Django's ORM is synchronous)
and, like a REST request, counts once against the key's rate and needs its scope
(``workspaces.auth.agent_key_admit``). Listing tools shows only those the key's
scopes allow (``answer_conflict`` only with ``answer``).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import mcp_types as types
from django.db import close_old_connections
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from mcp_server.errors import error_body, tool_error, unauthorized_body
from mcp_server.tools import CHAIN_URI, MEMORY_URI, TOOLS, ToolSpec, resource_parse, resource_read
from workspaces.auth import agent_key_admit
from workspaces.models import AgentKey, Scope

Context = ServerRequestContext[Any, Any]
KeyFor = Callable[[Context], AgentKey | None]
T = TypeVar("T")

SERVER_NAME = "memoryhub"
INSTRUCTIONS = (
    "MemoryHub is memory shared by agents and people, that notices when facts contradict each other. "
    "Call recall before answering from memory and remember to store what the user tells you; "
    "recall's `disputed` and find_conflicts show facts that clash and are waiting for a person's answer; "
    "call check_action with the memory ids you are about to act on."
)


# Threads that run the tools' database work in each process, as many as a2wsgi gives Django
# (memoryhub.asgi): each keeps its connection open between calls (CONN_MAX_AGE), so a burst of MCP
# calls holds at most this many connections per process and reuses them, as REST requests do.
DB_THREADS = 4
_db_executor = ThreadPoolExecutor(max_workers=DB_THREADS, thread_name_prefix="mcp-db")


async def in_db_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` in one of the database threads, with the connection hygiene Django applies around a request."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_db_executor, functools.partial(_with_connection, fn, *args))


def _with_connection(fn: Callable[..., T], *args: Any) -> T:
    close_old_connections()
    try:
        return fn(*args)
    finally:
        close_old_connections()


class Unauthorized(Exception):
    """No valid agent key: the stdio server's key was revoked since it started."""


def build_server(*, key_for: KeyFor) -> Server[Any]:
    """A server whose calls act for the agent key ``key_for`` finds for each request."""

    def key_of(ctx: Context) -> AgentKey:
        key = key_for(ctx)
        if key is None:
            raise Unauthorized
        return key

    async def list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        key = await in_db_thread(_key_or_mcp_error, key_of, ctx)
        return types.ListToolsResult(tools=[_tool(spec) for spec in TOOLS.values() if key.has_scope(spec.scope)])

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = TOOLS.get(params.name)
        if spec is None:
            known = ", ".join(TOOLS)
            return tool_error({"detail": f"no tool named {params.name!r}; the tools are: {known}", "code": "not_found"})
        return await in_db_thread(_call, spec, key_of, ctx, params.arguments or {})

    async def list_resources(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        # A workspace holds too many memories to list; they are read by id through the templates.
        return types.ListResourcesResult(resources=[])

    async def list_templates(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    name="memory",
                    uri_template=MEMORY_URI,
                    description="One memory by id: its text, kind, reliability, status and both time axes.",
                    mime_type="application/json",
                ),
                types.ResourceTemplate(
                    name="memory-chain",
                    uri_template=CHAIN_URI,
                    description="The supersede chain through a memory, oldest first; `head` is the current fact.",
                    mime_type="application/json",
                ),
            ]
        )

    async def read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        what = resource_parse(uri)
        if what is None:
            body = {"detail": f"no resource {uri!r}; read {MEMORY_URI} or {CHAIN_URI}", "code": "not_found"}
            raise MCPError(code=types.INVALID_PARAMS, message=body["detail"], data=body)
        value = await in_db_thread(_read, key_of, ctx, what)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(value))]
        )

    def input_schema_of(name: str) -> dict[str, Any] | None:
        # The SDK checks a call's Mcp-Param-* headers against the tool's schema; without this lookup it
        # would run list_tools (a database round trip and every schema) on each call.
        spec = TOOLS.get(name)
        return spec.input_schema if spec else None

    return Server(
        SERVER_NAME,
        version="1",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema_of,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(read_only_hint=spec.read_only, open_world_hint=False),
    )


def _key_or_mcp_error(key_of: Callable[[Context], AgentKey], ctx: Context) -> AgentKey:
    try:
        return key_of(ctx)
    except Unauthorized:
        body = unauthorized_body()
        raise MCPError(code=types.INVALID_REQUEST, message=body["detail"], data=body) from None


def _call(spec: ToolSpec, key_of: Callable[[Context], AgentKey], ctx: Context, arguments: dict[str, Any]) -> Any:
    """One tool call as one REST request: rate and scope, then the arguments, then the service."""
    try:
        key = key_of(ctx)
        agent_key_admit(key=key, scope=spec.scope)
        value = spec.run(key, spec.arguments.model_validate(arguments))
    except Unauthorized:
        return tool_error(unauthorized_body())
    except Exception as exc:
        return tool_error(error_body(exc, operation=f"tool {spec.name}"))
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(value))], structured_content=value)


def _read(key_of: Callable[[Context], AgentKey], ctx: Context, what: Any) -> Any:
    try:
        key = key_of(ctx)
        agent_key_admit(key=key, scope=Scope.READ)
        return resource_read(key, what)
    except Unauthorized:
        body = unauthorized_body()
    except Exception as exc:
        body = error_body(exc, operation="resource read")
    raise MCPError(code=types.INVALID_PARAMS, message=str(body["detail"]), data=body)
