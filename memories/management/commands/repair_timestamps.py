from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memories.audit import Actor
from memories.selectors import memories_with_unreadable_timestamps
from memories.services import memories_repair_timestamps
from memoryhub.storable import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP


class Command(BaseCommand):
    help = (
        f"Clamp memory timestamps outside {EARLIEST_TIMESTAMP.year}–{LATEST_TIMESTAMP.year} UTC into that range. "
        "Such values (stored before the API checked them) cannot be read back, and break every read of their "
        "workspace's memories. Prints each change and records a memory.repair event per memory; safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="list the memories to repair, change nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["dry_run"]:
            found = memories_with_unreadable_timestamps()
            for row in found:
                values = ", ".join(f"{column} {text}" for column, text in row.values.items())
                self.stdout.write(f"would repair memory {row.memory_id} (workspace {row.workspace_id}): {values}")
            self.stdout.write(f"{len(found)} memories to repair" if found else "every memory timestamp is in range")
            return
        repairs = memories_repair_timestamps(actor=Actor.system("repair_timestamps"))
        for repair in repairs:
            values = ", ".join(f"{column} {text} → {repair.after[column]}" for column, text in repair.before.items())
            self.stdout.write(f"repaired memory {repair.memory_id} (workspace {repair.workspace_id}): {values}")
        self.stdout.write(
            f"repaired {len(repairs)} memories" if repairs else "every memory timestamp is in range; nothing to do"
        )
