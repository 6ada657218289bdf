from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from portability.selectors import workspace_export_lines
from workspaces.models import Workspace


class Command(BaseCommand):
    help = (
        "Write a workspace (memories, links, cards, answers, uncertainties, tolerance, events) as JSON Lines "
        "on stdout, for import_workspace (docs/PORTABILITY.md). Agent keys are not exported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--output", "-o", help="write to this file instead of stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug=options["slug"]).first()
        if workspace is None:
            raise CommandError(f"no workspace {options['slug']!r}")
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as out:
                out.writelines(workspace_export_lines(workspace))
            return
        for line in workspace_export_lines(workspace):
            # ending="": each line carries its own newline already.
            self.stdout.write(line, ending="")
