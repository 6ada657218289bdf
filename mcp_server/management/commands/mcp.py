"""``manage.py mcp --key KEY``: the MCP server over stdio, for desktop agents that start it themselves."""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from mcp_server.server import Context, build_server
from workspaces.auth import agent_key_from_token
from workspaces.models import AgentKey

KEY_VARIABLE = "MEMORYHUB_AGENT_KEY"


class Command(BaseCommand):
    help = (
        "Serve MemoryHub's MCP tools over stdin/stdout for one agent key "
        f"(--key, or the {KEY_VARIABLE} environment variable). docs/MCP.md has client configurations."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--key", default="", help=f"the agent key (mh_…); default: ${KEY_VARIABLE}")

    def handle(self, *args: Any, **options: Any) -> None:
        token = options["key"] or os.environ.get(KEY_VARIABLE, "")
        if not token:
            raise CommandError(f"no agent key: pass --key or set {KEY_VARIABLE}")
        if agent_key_from_token(token) is None:
            raise CommandError("the agent key is unknown or revoked (create one on the workspace's Keys page)")

        def key_for(ctx: Context) -> AgentKey | None:
            # Looked up on every call, as every REST request is: a key revoked meanwhile stops working.
            return agent_key_from_token(token)

        server = build_server(key_for=key_for)

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
