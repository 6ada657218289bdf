from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from memoryhub.errors import InvalidInput
from workspaces.models import DEFAULT_SCOPES, Scope
from workspaces.services import agent_key_create, workspace_get_or_create


class Command(BaseCommand):
    help = "Create an agent key for WORKSPACE (created if missing) and print it once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="workspace slug, e.g. acme")
        parser.add_argument("name", help="the agent's name, e.g. planner")
        parser.add_argument(
            "--scopes",
            default=",".join(DEFAULT_SCOPES),
            help=f"comma-separated, from {', '.join(Scope.values)} (default: {','.join(DEFAULT_SCOPES)})",
        )
        parser.add_argument("--agent", default="", help="pin the agent name the key may sign its memories as")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            # One transaction: a bad scope or name leaves no new workspace behind.
            with transaction.atomic():
                workspace, created = workspace_get_or_create(slug=options["workspace"])
                _, full_key = agent_key_create(
                    workspace=workspace,
                    name=options["name"],
                    scopes=options["scopes"].split(","),
                    agent=options["agent"],
                )
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        if created:
            self.stderr.write(f"created workspace {workspace.slug}")
        self.stderr.write("store this key now; it cannot be shown again:")
        self.stdout.write(full_key)
