from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memories.selectors import subject_corrections
from workspaces.models import Workspace


class Command(BaseCommand):
    help = "Print reviewers' subject corrections as JSON Lines (text, what the hub read, what the reviewer set)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="a workspace slug; every workspace when left out")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.get(slug=options["workspace"]) if options["workspace"] else None
        for row in subject_corrections(workspace=workspace):
            self.stdout.write(json.dumps(row, ensure_ascii=False))
