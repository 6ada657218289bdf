from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.errors import InvalidInput
from workspaces.services import agent_key_create, workspace_get_or_create


class Command(BaseCommand):
    help = "Create an agent key for WORKSPACE (created if missing) and print it once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="workspace slug, e.g. acme")
        parser.add_argument("name", help="the agent's name, e.g. planner")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            workspace, created = workspace_get_or_create(slug=options["workspace"])
            _, full_key = agent_key_create(workspace=workspace, name=options["name"])
        except InvalidInput as exc:
            raise CommandError(exc.message) from exc
        if created:
            self.stderr.write(f"created workspace {workspace.slug}")
        self.stderr.write("store this key now; it cannot be shown again:")
        self.stdout.write(full_key)
